package dev.sluice.bench;

import dev.sluice.moderation.Moderator;
import dev.sluice.moderation.Surface;
import java.text.Normalizer;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Name checks per second with the built-in lists, over typical 3 to 20 character names: plain
 * ASCII usernames, names in other scripts, and disguised terms (a third of each). The peer is
 * seed 001's approach, measured in the same run: NFKC, lower case, a-z0-9 filter, and a set
 * lookup of each segment and the whole string (no confusables, no leetspeak, no script check).
 *
 * <p>Run: {@code java -jar sluice-bench/target/benchmarks.jar ModerationBenchmark -f 1 -wi 3
 * -w 2s -i 5 -r 2s -t 1 -prof gc}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class ModerationBenchmark {

  static final String[] ASCII = {"bob", "alice_99", "xX_Sniper_Xx", "night-owl", "mia2010",
      "Captain_Kirk", "the_real_dave", "zoe-k", "PixelPanda", "gg_ez_42"};
  static final String[] SCRIPTS = {"Zo\u00EB", "Jos\u00E9 Mar\u00EDa", "\u0418\u0432\u0430\u043D",
      "\u6771\u4EAC\u592A\u90CE", "\u0645\u062D\u0645\u062F", "\u0930\u093E\u0939\u0941\u0932",
      "\uAE40\uCCA0\uC218", "\u03A3\u03C9\u03BA\u03C1\u03AC\u03C4\u03B7\u03C2", "M\u00FCller",
      "\u0141ukasz"};
  static final String[] ATTACKS = {"p\u0430ypal", "n4zi99", "h1tl3r88", "f.u.c.k", "5h1t",
      "\uFF41\uFF44\uFF4D\uFF49\uFF4E", "a55ho1e", "fuuuuck", "f\u200Buck", "sh!t_lord"};

  private Moderator moderator;
  private Set<String> seedBlocked;
  private String[] mixed;
  private int next;

  @Setup
  public void setUp() {
    moderator = Moderator.builder().build();
    seedBlocked = new HashSet<>(List.of("fuck", "shit", "nazi", "hitler", "admin", "asshole"));
    mixed = new String[ASCII.length * 3];
    for (int i = 0; i < ASCII.length; i++) {
      mixed[3 * i] = ASCII[i];
      mixed[3 * i + 1] = SCRIPTS[i];
      mixed[3 * i + 2] = ATTACKS[i];
    }
  }

  private String nextName(String[] names) {
    String n = names[next];
    next = next + 1 == names.length ? 0 : next + 1;
    return n;
  }

  @Benchmark
  public boolean mixed() {
    return moderator.check(nextName(mixed), Surface.DISPLAY_NAME).allowed();
  }

  @Benchmark
  public boolean ascii() {
    return moderator.check(nextName(ASCII), Surface.USERNAME).allowed();
  }

  @Benchmark
  public boolean otherScripts() {
    return moderator.check(nextName(SCRIPTS), Surface.DISPLAY_NAME).allowed();
  }

  @Benchmark
  public boolean attacks() {
    return moderator.check(nextName(ATTACKS), Surface.DISPLAY_NAME).allowed();
  }

  @Benchmark
  public boolean reaction() {
    return moderator.check("\uD83D\uDC4D\uD83C\uDFFD", Surface.REACTION).allowed();
  }

  /** Seed 001's normaliser and segment lookup, as the peer. */
  @Benchmark
  public boolean seedNormalizer() {
    String folded = Normalizer.normalize(nextName(mixed), Normalizer.Form.NFKC)
        .toLowerCase(Locale.ROOT);
    StringBuilder whole = new StringBuilder(folded.length());
    for (String segment : folded.split("[\\s\\-_.!]+")) {
      String s = segment.replaceAll("[^a-z0-9]", "");
      if (seedBlocked.contains(s)) {
        return false;
      }
      whole.append(s);
    }
    return !seedBlocked.contains(whole.toString());
  }
}
