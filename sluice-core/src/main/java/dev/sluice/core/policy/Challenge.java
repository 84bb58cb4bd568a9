package dev.sluice.core.policy;

import dev.sluice.core.internal.Checks;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The policy's challenge settings: how a rule whose action is {@code challenge} answers a browser
 * past its limit. Immutable; validated where set.
 *
 * <p>A challenged browser (a {@code GET} whose {@code Accept} prefers HTML) gets a page, status
 * {@link #status()} (429 by default, with {@code Retry-After}, so monitors see it), that finds a
 * SHA-256 proof of work in a Web Worker: a number that, appended to the page's signed puzzle,
 * gives a hash with the rule's difficulty in leading zero bits. It sends the answer back by
 * reloading the page with it in a cookie; the next refusal by that rule reads it and, if it
 * holds, answers with a clearance cookie and a page that reloads again. Every other client gets
 * the rule's refusal (429, its JSON naming {@code "action":"challenge"}), never a page.
 *
 * <ul>
 *   <li>The puzzle is signed (HMAC-SHA256) and bound to the rule, these settings, the client's
 *       network and its time; it must be solved within {@link #solveWithin()}, and its nonce is
 *       single use: remembered in the store until then, so a solved puzzle cannot be replayed,
 *       on this instance or another sharing the store.
 *   <li>The clearance cookie (HttpOnly, SameSite=Lax) carries a key id, an expiry, its own id and
 *       an HMAC-SHA256 over the rule, these settings, the client's address ({@link #ipv4Prefix()}
 *       bits, the whole address by default; {@link #ipv6Prefix()}, a /64) and the rest: no
 *       address, no personal data. A clearance is a budget, not an exemption: while valid, each
 *       request the rule refuses spends one of its {@link #clearanceRequests()} (counted in the
 *       store per clearance) and passes; spent, the holder is challenged again. Keys come from a
 *       file shared by a fleet; the first signs, every one verifies, so a rotated key keeps
 *       working for an overlap.
 *   <li>The challenge has its own limit per client ({@link #maxScore()} points, one per page,
 *       {@link #failureCost()} per failed answer, {@link #raiseEvery()} per solved one, decaying
 *       one per {@link #decay()}): past it the client is refused. The score raises the
 *       difficulty, one bit per {@link #raiseEvery()} points, up to the rule's
 *       {@code maxDifficulty}: each clearance a client spends makes its next puzzle harder.
 *   <li>Without JavaScript: {@link NoScript#REFUSE} (the default) tells the person to turn
 *       JavaScript on; {@link NoScript#REFRESH}, an opt-in, reloads the page after
 *       {@link #noscriptWait()} and passes it: a clearance for waiting, which a script gets as
 *       cheaply as a person.
 *   <li>Paths matching {@link #skip()} ({@code /robots.txt} and {@code /.well-known/**} by
 *       default) are never challenged: a challenging rule refuses them instead.
 * </ul>
 */
public final class Challenge {

  /** Never challenged by default: crawlers read robots.txt, ACME and security.txt live here. */
  public static final List<String> DEFAULT_SKIP = List.of("/robots.txt", "/.well-known/**");
  public static final String DEFAULT_COOKIE = "sluice-clearance";
  public static final Duration DEFAULT_CLEARANCE = Duration.ofHours(1);
  public static final Duration DEFAULT_SOLVE_WITHIN = Duration.ofMinutes(5);
  public static final Duration DEFAULT_NOSCRIPT_WAIT = Duration.ofSeconds(5);
  public static final Duration DEFAULT_DECAY = Duration.ofSeconds(15);
  public static final int DEFAULT_STATUS = 429;
  public static final double DEFAULT_MAX_SCORE = 20;
  public static final int DEFAULT_FAILURE_COST = 4;
  public static final int DEFAULT_RAISE_EVERY = 4;

  /** The key a process uses without a key file: random, the same across reloads, not restarts. */
  private static final byte[] PROCESS_KEY = new byte[32];

  static {
    new SecureRandom().nextBytes(PROCESS_KEY);
  }

  /** What a browser without JavaScript gets. */
  public enum NoScript {
    /** The page reloads after {@code noscriptWait} and passes. */
    REFRESH,
    /** The page asks for JavaScript; the client stays refused. */
    REFUSE
  }

  private final List<byte[]> keys;
  private final String keySource;
  private final Duration clearance;
  private final Duration solveWithin;
  private final int ipv4Prefix;
  private final int ipv6Prefix;
  private final NoScript noscript;
  private final Duration noscriptWait;
  private final int status;
  private final List<String> skip;
  private final List<PathPattern> skipPatterns;
  private final String cookie;
  private final boolean secureCookie;
  private final double maxScore;
  private final Duration decay;
  private final int failureCost;
  private final int raiseEvery;
  private final int clearanceRequests;
  private final InstantSource clock;

  private Challenge(Builder b) {
    this.keys = b.keys.isEmpty() ? List.of(PROCESS_KEY.clone()) : List.copyOf(b.keys);
    this.keySource = b.keys.isEmpty() ? null : b.keySource;
    this.clearance = b.clearance;
    this.solveWithin = b.solveWithin;
    this.ipv4Prefix = b.ipv4Prefix;
    this.ipv6Prefix = b.ipv6Prefix;
    this.noscript = b.noscript;
    this.noscriptWait = b.noscriptWait;
    this.status = b.status;
    this.skip = List.copyOf(b.skip);
    this.skipPatterns = b.skip.stream().map(PathPattern::parse).toList();
    this.cookie = b.cookie;
    this.secureCookie = b.secureCookie;
    this.maxScore = b.maxScore;
    this.decay = b.decay;
    this.failureCost = b.failureCost;
    this.raiseEvery = b.raiseEvery;
    this.clearanceRequests = b.clearanceRequests;
    this.clock = b.clock;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Every default: a random key of this process, 1 h clearances, /24 and /64, 429. */
  public static Challenge defaults() {
    return builder().build();
  }

  /** How many signing keys there are (the first signs); never the keys themselves. */
  public int keyCount() {
    return keys.size();
  }

  /** Where the keys came from (a file's path), or null for this process's random key. */
  public String keySource() {
    return keySource;
  }

  byte[] key(int i) {
    return keys.get(i);
  }

  /**
   * Requests a clearance lets past its rule's limit, or 0 for the rule's own limit (its
   * smallest capacity). Counted in the store per clearance, so every gateway spends the same.
   */
  public int clearanceRequests() {
    return clearanceRequests;
  }

  /** How long a clearance cookie lets its holder past the rule that challenged. */
  public Duration clearance() {
    return clearance;
  }

  /** How long a puzzle may be solved; its nonce is remembered in the store this long. */
  public Duration solveWithin() {
    return solveWithin;
  }

  /** The bits of an IPv4 address a clearance is bound to (the /24 by default). */
  public int ipv4Prefix() {
    return ipv4Prefix;
  }

  /** The bits of an IPv6 address a clearance is bound to (the /64 by default). */
  public int ipv6Prefix() {
    return ipv6Prefix;
  }

  public NoScript noscript() {
    return noscript;
  }

  /** How long a browser without JavaScript waits before its page reloads and passes. */
  public Duration noscriptWait() {
    return noscriptWait;
  }

  /** The challenge page's status: 429 by default (with {@code Retry-After}). */
  public int status() {
    return status;
  }

  /** Path globs never challenged (refused instead). */
  public List<String> skip() {
    return skip;
  }

  boolean skips(String path) {
    for (PathPattern p : skipPatterns) {
      if (p.matches(path)) {
        return true;
      }
    }
    return false;
  }

  /** The clearance cookie's name, before {@code -<rule>}. */
  public String cookie() {
    return cookie;
  }

  /** Whether the cookies are {@code Secure} (only sent over HTTPS): set it behind HTTPS. */
  public boolean secureCookie() {
    return secureCookie;
  }

  /** The challenge's own limit per client: a page costs 1, past this the client is refused. */
  public double maxScore() {
    return maxScore;
  }

  /** How long one point of a client's challenge score takes to decay. */
  public Duration decay() {
    return decay;
  }

  /** Points a wrong answer (a forged or unsolved puzzle) costs. */
  public int failureCost() {
    return failureCost;
  }

  /** Points of a client's challenge score that raise the difficulty by one bit. */
  public int raiseEvery() {
    return raiseEvery;
  }

  /** The wall clock of puzzles and clearances (epoch time: cookies outlive a process). */
  public InstantSource clock() {
    return clock;
  }

  /**
   * The settings a clearance is bound to, as text: a change to any of them makes every issued
   * clearance and puzzle invalid (the keys are not part of it: they sign).
   */
  String fingerprint() {
    return "clearance=" + clearance.toSeconds() + ";solveWithin=" + solveWithin.toSeconds()
        + ";v4=" + ipv4Prefix + ";v6=" + ipv6Prefix + ";noscript=" + noscript + ";wait="
        + noscriptWait.toMillis() + ";budget=" + clearanceRequests;
  }

  @Override
  public String toString() {
    return "Challenge{keys=" + keys.size() + (keySource == null ? " (random)" : " from "
        + keySource) + ", clearance=" + clearance + ", solveWithin=" + solveWithin + ", /"
        + ipv4Prefix + ", /" + ipv6Prefix + ", noscript=" + noscript + ", status=" + status
        + ", skip=" + skip + "}";
  }

  /** Builds a {@link Challenge}; each setter validates its argument. */
  public static final class Builder {
    private final List<byte[]> keys = new ArrayList<>();
    private String keySource;
    private Duration clearance = DEFAULT_CLEARANCE;
    private Duration solveWithin = DEFAULT_SOLVE_WITHIN;
    private int ipv4Prefix = 32;
    private int ipv6Prefix = 64;
    private NoScript noscript = NoScript.REFUSE;
    private Duration noscriptWait = DEFAULT_NOSCRIPT_WAIT;
    private int status = DEFAULT_STATUS;
    private List<String> skip = DEFAULT_SKIP;
    private String cookie = DEFAULT_COOKIE;
    private boolean secureCookie;
    private double maxScore = DEFAULT_MAX_SCORE;
    private Duration decay = DEFAULT_DECAY;
    private int failureCost = DEFAULT_FAILURE_COST;
    private int raiseEvery = DEFAULT_RAISE_EVERY;
    private int clearanceRequests;
    private InstantSource clock = InstantSource.system();

    private Builder() {}

    /**
     * The signing keys, each at least 32 bytes; the first signs, all verify (a rotated key
     * stays last for as long as its clearances live). {@code source} names where they came from,
     * for messages; none at all: a random key of this process.
     */
    public Builder keys(List<byte[]> keys, String source) {
      Checks.notNull(keys, "keys");
      List<byte[]> copy = new ArrayList<>();
      for (int i = 0; i < keys.size(); i++) {
        byte[] k = keys.get(i);
        if (k == null || k.length < 32) {
          throw Checks.invalid("keys[" + i + "]", k == null ? "null" : k.length + " bytes",
              "at least 32 bytes");
        }
        copy.add(k.clone());
      }
      for (int i = 0; i < copy.size(); i++) {
        for (int j = 0; j < i; j++) {
          if (Arrays.equals(copy.get(i), copy.get(j))) {
            throw Checks.invalid("keys[" + i + "]", "the same as keys[" + j + "]",
                "distinct keys");
          }
        }
      }
      if (copy.size() > 8) {
        throw Checks.invalid("keys", copy.size() + " keys", "at most 8");
      }
      this.keys.clear();
      this.keys.addAll(copy);
      this.keySource = source;
      return this;
    }

    public Builder clearance(Duration d) {
      this.clearance = within(d, "clearance", Duration.ofMinutes(1), Duration.ofDays(30));
      return this;
    }

    public Builder solveWithin(Duration d) {
      this.solveWithin = within(d, "solveWithin", Duration.ofSeconds(10), Duration.ofHours(1));
      return this;
    }

    /** The network bits a clearance is bound to: 8..32 for IPv4, 16..128 for IPv6. */
    public Builder prefixes(int ipv4, int ipv6) {
      if (ipv4 < 8 || ipv4 > 32) {
        throw Checks.invalid("ipv4Prefix", ipv4, "8..32");
      }
      if (ipv6 < 16 || ipv6 > 128) {
        throw Checks.invalid("ipv6Prefix", ipv6, "16..128");
      }
      this.ipv4Prefix = ipv4;
      this.ipv6Prefix = ipv6;
      return this;
    }

    /**
     * Requests a clearance lets past its rule's limit before it is spent: 0 (the default) for
     * the rule's own limit (its smallest capacity), else 1..1000000.
     */
    public Builder clearanceRequests(int n) {
      if (n < 0 || n > 1_000_000) {
        throw Checks.invalid("clearanceRequests", n, "0 (the rule's own limit) or 1..1000000");
      }
      this.clearanceRequests = n;
      return this;
    }

    public Builder noscript(NoScript noscript) {
      this.noscript = Checks.notNull(noscript, "noscript");
      return this;
    }

    public Builder noscriptWait(Duration d) {
      this.noscriptWait = within(d, "noscriptWait", Duration.ofSeconds(1),
          Duration.ofMinutes(1));
      return this;
    }

    /** The challenge page's status: 200..599 but 204, 205 and 304, which carry no page. */
    public Builder status(int status) {
      if (status < 200 || status > 599 || status == 204 || status == 205 || status == 304) {
        throw Checks.invalid("status", status, "200..599 but 204, 205 and 304 (a page is sent)");
      }
      this.status = status;
      return this;
    }

    /** Path globs ({@code /robots.txt}, {@code /.well-known/**}) never challenged. */
    public Builder skip(List<String> globs) {
      Checks.notNull(globs, "skip");
      globs.forEach(PathPattern::parse);
      this.skip = List.copyOf(globs);
      return this;
    }

    /** The clearance cookie's name (before {@code -<rule>}): a cookie token. */
    public Builder cookie(String name) {
      Checks.notNull(name, "cookie");
      if (!name.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}")) {
        throw Checks.invalid("cookie", "\"" + name + "\"",
            "a cookie name: 1..64 letters, digits or !#$%&'*+.^_`|~-");
      }
      this.cookie = name;
      return this;
    }

    public Builder secureCookie(boolean on) {
      this.secureCookie = on;
      return this;
    }

    /**
     * The challenge's own limit per client: {@code maxScore} points, a page costing 1 and a wrong
     * answer {@code failureCost}, one point decaying per {@code decay}; the difficulty rises a
     * bit per {@code raiseEvery} points.
     */
    public Builder limit(double maxScore, Duration decay, int failureCost, int raiseEvery) {
      if (!(maxScore >= 2) || maxScore > 1e9) {
        throw Checks.invalid("maxScore", maxScore, "2..1e9");
      }
      this.decay = within(decay, "decay", Duration.ofMillis(10), Duration.ofHours(1));
      if (failureCost < 1 || failureCost > maxScore) {
        throw Checks.invalid("failureCost", failureCost, "1.." + (long) maxScore
            + " (at most maxScore)");
      }
      if (raiseEvery < 1 || raiseEvery > 10_000) {
        throw Checks.invalid("raiseEvery", raiseEvery, "1..10000");
      }
      this.maxScore = maxScore;
      this.failureCost = failureCost;
      this.raiseEvery = raiseEvery;
      return this;
    }

    public Builder clock(InstantSource clock) {
      this.clock = Checks.notNull(clock, "clock");
      return this;
    }

    private static Duration within(Duration d, String field, Duration min, Duration max) {
      if (d == null || d.compareTo(min) < 0 || d.compareTo(max) > 0) {
        throw Checks.invalid(field, d, format(min) + " to " + format(max));
      }
      return d;
    }

    private static String format(Duration d) {
      long s = d.toSeconds();
      if (d.toMillis() % 1000 != 0) {
        return d.toMillis() + "ms";
      }
      return s % 86400 == 0 ? s / 86400 + "d" : s % 3600 == 0 ? s / 3600 + "h"
          : s % 60 == 0 ? s / 60 + "m" : s + "s";
    }

    public Challenge build() {
      if (noscriptWait.compareTo(solveWithin) >= 0) {
        throw Checks.invalid("noscriptWait", noscriptWait, "shorter than solveWithin ("
            + solveWithin + ")");
      }
      return new Challenge(this);
    }
  }
}
