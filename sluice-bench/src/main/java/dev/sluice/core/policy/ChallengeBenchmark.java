package dev.sluice.core.policy;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.address.ClientAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The challenge's cryptography, each step alone: checking a clearance cookie (the hot path of a
 * cleared client past its limit: goal <= 1 us and 0 B/op), verifying a submitted proof-of-work
 * answer at difficulty 16 (goal <= 5 us), and making a puzzle page (what a flood of challenged
 * requests costs before the socket). In core's policy package, for its package-private
 * {@code Challenges}. The wall clock is fixed, so the cookie stays valid.
 *
 * <pre>
 * mvn -q -B -DskipTests -pl sluice-bench -am package
 * java -jar sluice-bench/target/benchmarks.jar ChallengeBenchmark -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ChallengeBenchmark {

  private Challenges challenges;
  private Challenges.Keys keys;
  private ClientAddress client;
  private long now;
  private String cookie;
  private String answer;

  @Setup
  public void setup() throws Exception {
    Instant at = Instant.parse("2026-01-01T00:00:00Z");
    Rule rule = Rule.builder("pages").limit(Limit.fixedWindow("w", 1, Duration.ofMinutes(1)))
        .action(Rule.Action.CHALLENGE).difficulty(16, 16).build();
    Policy policy = Policy.builder().rule(rule).global("pages")
        .challenge(Challenge.builder().keys(List.of(
            "bench-key-0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8)),
            "bench").clock(InstantSource.fixed(at)).build()).build();
    challenges = policy.challenges();
    keys = challenges.keys(rule);
    client = ClientAddress.ipv6(0x2001_0db8_0001_0001L, 0x10L, 64);
    now = at.getEpochSecond();
    cookie = challenges.clearance(keys, client, now, "bench-nonce");
    if (challenges.check(keys, cookie, client, now) != Challenges.VALID) {
      throw new IllegalStateException("the cookie does not check");
    }
    String puzzle = challenges.puzzle(keys, client, 16, now);
    MessageDigest md = MessageDigest.getInstance("SHA-256");
    for (long n = 0; ; n++) {
      byte[] d = md.digest((puzzle + "." + n).getBytes(StandardCharsets.US_ASCII));
      if (d[0] == 0 && d[1] == 0) {
        answer = puzzle + "." + n;
        break;
      }
    }
    if (verifyAnswer() != Challenges.Answer.RIGHT) {
      throw new IllegalStateException("the answer does not verify");
    }
  }

  /** A valid clearance cookie, checked: parse, HMAC-SHA256 over network and expiry, compare. */
  @Benchmark
  public int checkClearance() {
    return challenges.check(keys, cookie, client, now);
  }

  /** A right answer, verified: parse, the puzzle's HMAC, the answer's SHA-256 and its zeros. */
  @Benchmark
  public int verifyAnswer() {
    return challenges.answer(keys, answer, client, now).verdict;
  }

  /** A new puzzle (its nonce and HMAC) and its page's bytes. */
  @Benchmark
  public int page() {
    String puzzle = challenges.puzzle(keys, client, 16, now);
    return challenges.pages().puzzle(Challenges.nonceOf(puzzle), puzzle, 16).length;
  }
}
