package dev.sluice.core;

import dev.sluice.core.internal.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A named set of limits counted per key, with an optional ban, a mode and a store-failure
 * behaviour. All limits of a rule must pass (seed 003: window AND score). Immutable.
 *
 * <pre>{@code
 * Rule send = Rule.builder("chat:send")
 *     .key("event:user:ip")
 *     .limit(Limit.slidingLog("window", 20, Duration.ofSeconds(10)))
 *     .limit(Limit.score("score", 10, 1, Duration.ofSeconds(2)))
 *     .ban(Duration.ofSeconds(30))
 *     .build();
 * }</pre>
 */
public final class Rule {

  static final int MAX_LIMITS = 8;

  private final String name;
  private final String escapedName;
  private final KeyTemplate key;
  private final List<Limit> limits;
  private final long banNanos;
  private final Mode mode;
  private final OnStoreError onStoreError;
  private final String sharedBucket;
  private final int stateSize;
  private final String layout;
  private final long seedA;
  private final long seedB;
  private final long minCapacity;
  private final List<Rule> self;
  private final Algorithm[] algorithms;
  private final long delayNanos;
  private final int delayQueue;
  private final StatusSet countStatus;
  private final Cooldown cooldown;
  private final int concurrency;
  private final long leaseTtlNanos;
  private final int status;
  private final Action action;
  private final int difficulty;
  private final int maxDifficulty;
  /** A cooldown's {@code successResets}: null for the default, by the key. */
  private final Boolean successResets;
  /** The in-memory stores' tables for this rule, cached by the stores that use it. */
  Object memoryBinding;

  private Rule(Builder b) {
    this.name = b.name;
    this.key = b.key;
    this.limits = List.copyOf(b.limits);
    this.banNanos = b.banNanos;
    // A rule that only logs runs as a shadow rule: decided, counted and logged, never refused.
    this.mode = b.action == Action.LOG && b.mode == Mode.ENFORCE ? Mode.SHADOW : b.mode;
    this.onStoreError = b.onStoreError;
    this.sharedBucket = b.sharedBucket;
    this.delayNanos = b.delayNanos;
    this.delayQueue = b.delayQueue;
    this.countStatus = b.countStatus;
    // The cooldown keyed as this rule is: Cooldown#keyFor then equals keyFor.
    this.cooldown = b.cooldown == null ? null : Cooldown.builder(b.name).key(b.key.source())
        .sharedBucket(b.sharedBucketName).maxRetries(b.cooldown.maxRetries())
        .retryWindow(b.cooldown.retryWindow()).cooldown(b.cooldown.cooldown())
        .maxCooldown(b.cooldown.maxCooldown()).build();
    this.successResets = b.successResets;
    this.concurrency = b.concurrency;
    this.leaseTtlNanos = b.leaseTtlNanos;
    this.status = b.status;
    this.action = b.action;
    boolean challenges = b.action == Action.CHALLENGE;
    this.difficulty = !challenges ? 0 : b.difficulty == 0 ? DEFAULT_DIFFICULTY : b.difficulty;
    this.maxDifficulty = !challenges ? 0 : b.difficulty == 0
        ? defaultMaxDifficulty(DEFAULT_DIFFICULTY) : b.maxDifficulty;
    this.escapedName = KeyTemplate.escape(name);
    int size = banNanos > 0 ? 1 : 0;
    long min = Long.MAX_VALUE;
    StringBuilder layout = new StringBuilder(banNanos > 0 ? "ban;" : "");
    for (Limit limit : limits) {
      size += limit.algorithm().stateSize();
      layout.append(limit.layout()).append(';');
      min = Math.min(min, limit.capacity());
    }
    this.stateSize = size;
    this.layout = layout.toString();
    this.minCapacity = min;
    long[] seeds = KeyHash.seeds(name);
    this.seedA = seeds[0];
    this.seedB = seeds[1];
    this.self = List.of(this);
    this.algorithms = new Algorithm[limits.size()];
    for (int i = 0; i < algorithms.length; i++) {
      algorithms[i] = limits.get(i).algorithm();
    }
  }

  /** Starts a rule; the name must be unique within a policy. */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  public String name() {
    return name;
  }

  /** The key template, like {@code "event:user:ip"}. */
  public String key() {
    return key.source();
  }

  /** The limits, all of which must pass. */
  public List<Limit> limits() {
    return limits;
  }

  /** How long the first refusal bans the key, or {@link Duration#ZERO} for no ban. */
  public Duration ban() {
    return Duration.ofNanos(banNanos);
  }

  long banNanos() {
    return banNanos;
  }

  public Mode mode() {
    return mode;
  }

  public OnStoreError onStoreError() {
    return onStoreError;
  }

  /**
   * How long an HTTP request this rule refuses may wait for its token instead (nginx's
   * {@code burst ... delay}); {@link Duration#ZERO} (the default) refuses at once. Only adapters
   * that can wait without blocking apply it (the Netty handler, hence the gateway).
   */
  public Duration delay() {
    return Duration.ofNanos(delayNanos);
  }

  public long delayNanos() {
    return delayNanos;
  }

  /** At most this many requests wait per key of this rule; the rest are refused at once. */
  public int delayQueue() {
    return delayQueue;
  }

  /**
   * The response statuses this rule counts, or null for a rule counted when its request is
   * decided (the default). A counted rule is read, not spent, when a request comes (refused once
   * it is exhausted or its cooldown runs) and spent when the upstream's answer has one of these
   * statuses: from the next request on it refuses. For a {@link #cooldown()} rule these are the
   * failures; a success (100..399) resets the key.
   */
  public StatusSet countStatus() {
    return countStatus;
  }

  /**
   * The escalating cooldown this rule is (failures lock the key, each lock twice the last up to a
   * maximum, a success resets it), or null; such a rule has no limits and is counted on responses.
   */
  public Cooldown cooldown() {
    return cooldown;
  }

  /**
   * Whether a success (100..399) starts this cooldown's key for {@code identity} over. A success
   * proves only that whoever sent it knew the answer, so by default only a key that names that
   * member resets: one with a dimension besides {@code ip} ({@code user:ip}, {@code session}),
   * each such value present. An address-wide key ({@code ip}) or a shared bucket never resets:
   * an attacker's own valid code would launder the failures of everyone behind the address;
   * there failures only age out of {@code retryWindow}. {@link Builder#successResets} overrides.
   */
  public boolean resetsOnSuccess(Identity identity) {
    if (successResets != null) {
      return successResets;
    }
    boolean member = false;
    for (String dimension : key.dimensionArray()) {
      if (dimension.equals(DEFAULT_KEY)) {
        continue;
      }
      String value = identity.get(dimension);
      if (value == null || value.isBlank()) {
        return false;
      }
      member = true;
    }
    return member;
  }

  /** A cooldown's {@code successResets} as set; null for the default (by the key). */
  public Boolean successResets() {
    return successResets;
  }

  /**
   * The most requests of one key in flight at once (nginx's {@code limit_conn}), or 0 when this
   * is not a concurrency rule; such a rule has no limits. Each request holds a lease from its
   * admission to its response's end (or its client's going away).
   */
  public int concurrency() {
    return concurrency;
  }

  /** How long a concurrency lease lives unless given back: a crashed holder's slot returns. */
  public Duration leaseTtl() {
    return Duration.ofNanos(leaseTtlNanos);
  }

  public long leaseTtlNanos() {
    return leaseTtlNanos;
  }

  /** The status this rule's refusals are answered with, or 0 for the response's (429). */
  public int status() {
    return status;
  }

  /** True for a rule the store evaluates when its request is decided: limits, no countStatus. */
  public boolean countedOnRequest() {
    return countStatus == null && cooldown == null && concurrency == 0;
  }

  /**
   * What the rule does to an HTTP request past its limit: refuse it (the default), challenge a
   * browser to a proof of work ({@link Action#CHALLENGE}: the policy's {@code challenge}
   * settings), or only log it ({@link Action#LOG}, which runs the rule in shadow mode).
   */
  public Action action() {
    return action;
  }

  /**
   * The leading zero bits a challenged browser's proof of work needs, before the client's score
   * raises it; 0 for a rule that does not challenge.
   */
  public int difficulty() {
    return difficulty;
  }

  /** The most a client's score raises {@link #difficulty()} to; 0 for a rule that does not challenge. */
  public int maxDifficulty() {
    return maxDifficulty;
  }

  /** The name of the shared bucket for callers missing a key dimension. */
  public String sharedBucket() {
    return sharedBucket;
  }

  /**
   * The store key of {@code identity} under this rule: the rule name and the escaped dimension
   * values, colon-separated.
   */
  public String keyFor(Identity identity) {
    return key.keyOf(escapedName, identity, sharedBucket);
  }

  /**
   * The key text of {@code identity} under this rule: {@link #keyFor} without the rule name and
   * its ':', such as {@code 203.0.113.7} or {@code e1:alice:203.0.113.7}. Admin tools list keys
   * and take them back in this form.
   */
  public String keyText(Identity identity) {
    return keyFor(identity).substring(escapedName.length() + 1);
  }

  /**
   * The identity whose {@link #keyText} is {@code key}: one escaped value per dimension, joined
   * by ':', or {@code ~<shared bucket>} for a missing one.
   *
   * @throws InvalidValueException naming {@code key} when it is not such a text, or names a value
   *     longer than 256 characters (kept as a digest, which cannot be reversed)
   */
  public Identity identityOf(String key) {
    return this.key.identityOf(key, sharedBucket);
  }

  /** The dimensions the key reads, like {@code [event, user, ip]}. */
  public java.util.List<String> dimensions() {
    return key.dimensions();
  }

  /** The key template's dimension names; never modified. */
  String[] dimensionArray() {
    return key.dimensionArray();
  }

  long seedA() {
    return seedA;
  }

  long seedB() {
    return seedB;
  }

  /** The smallest capacity of the rule's limits: the largest cost a check may ask for. */
  long minCapacity() {
    return minCapacity;
  }

  /** The limits' algorithms, in order; never modified. */
  Algorithm[] algorithms() {
    return algorithms;
  }

  /** True when the rule's whole state is one long: one token bucket, no ban. */
  boolean oneLong() {
    return stateSize == 1;
  }

  /** This rule as a one-element list, built once. */
  List<Rule> asList() {
    return self;
  }

  /** Longs of state per key: every limit's, then the ban's expiry if the rule bans. */
  int stateSize() {
    return stateSize;
  }

  /**
   * Equal for rules whose per-key state is laid out and interpreted the same way: the same
   * algorithms with the same parameters in the same order, and a ban or none. Limit names and the
   * ban's length do not count, so a reload that renames a limit keeps its state.
   */
  String layout() {
    return layout;
  }

  /** Returns a builder holding this rule's settings. */
  public Builder toBuilder() {
    Builder b = new Builder(name).key(key.source()).mode(mode).onStoreError(onStoreError)
        .sharedBucket(sharedBucket);
    b.banNanos = banNanos;
    b.delayNanos = delayNanos;
    b.delayQueue = delayQueue;
    b.countStatus = countStatus;
    b.cooldown = cooldown;
    b.concurrency = concurrency;
    b.successResets = successResets;
    b.leaseTtlNanos = leaseTtlNanos;
    b.status = status;
    b.action = action;
    b.difficulty = difficulty;
    b.maxDifficulty = maxDifficulty;
    limits.forEach(b::limit);
    return b;
  }

  @Override
  public String toString() {
    return "Rule{" + name + ", key=" + key + ", limits=" + limits
        + (banNanos > 0 ? ", ban=" + ban() : "") + ", mode=" + mode
        + ", onStoreError=" + onStoreError
        + (delayNanos > 0 ? ", delay=" + delay() + ", delayQueue=" + delayQueue : "")
        + (countStatus != null ? ", countStatus=" + countStatus : "")
        + (cooldown != null ? ", " + cooldown : "")
        + (successResets != null ? ", successResets=" + successResets : "")
        + (concurrency > 0 ? ", concurrency=" + concurrency + ", leaseTtl=" + leaseTtl() : "")
        + (status > 0 ? ", status=" + status : "")
        + (action == Action.REFUSE ? "" : ", action=" + action)
        + (action == Action.CHALLENGE ? ", difficulty=" + difficulty
            + (maxDifficulty > difficulty ? ".." + maxDifficulty : "") : "") + "}";
  }

  /**
   * What a rule does past its limit (Cloudflare's rate limiting rules: block, managed challenge,
   * log). Only an HTTP request can be challenged; a WebSocket upgrade, a WebSocket message and a
   * check outside the admission step are refused by a challenging rule.
   */
  public enum Action {
    /** Refuse (429). */
    REFUSE,
    /**
     * Challenge: a browser gets a page that solves a proof of work and earns a clearance cookie,
     * any other client the refusal. See {@code dev.sluice.core.policy.Challenge}.
     */
    CHALLENGE,
    /** Log only: the rule decides, counts and logs, and never refuses (its mode is shadow). */
    LOG
  }

  /** The key of a rule that names none: the client address. */
  public static final String DEFAULT_KEY = "ip";
  /** Where callers missing a key dimension go unless a rule names another bucket. */
  public static final String DEFAULT_SHARED_BUCKET = "unknown";
  public static final Mode DEFAULT_MODE = Mode.ENFORCE;
  /** Fail open: a limiter outage must not become an outage of the application. */
  public static final OnStoreError DEFAULT_ON_STORE_ERROR = OnStoreError.ALLOW;
  /** Requests that may wait per key of a rule with a delay. */
  public static final int DEFAULT_DELAY_QUEUE = 16;
  /** The longest delay: a waiting request holds its connection and a timer. */
  public static final Duration MAX_DELAY = Duration.ofMinutes(1);
  /** A concurrency lease's default life: longer than any response the gateway waits for. */
  public static final Duration DEFAULT_LEASE_TTL = Duration.ofMinutes(10);
  /** A challenge's leading zero bits unless set: 65,536 hashes, a fraction of a second. */
  public static final int DEFAULT_DIFFICULTY = 16;

  /**
   * The most a client's challenges rise to unless set: four bits (16 times the work) above
   * {@code difficulty}, so a client that keeps spending clearances pays more for each.
   */
  public static int defaultMaxDifficulty(int difficulty) {
    return Math.min(MAX_DIFFICULTY, difficulty + 4);
  }
  /**
   * The hardest challenge: 2^24 hashes take a browser's worker about 10 s; past that a person
   * gives up before a script does.
   */
  public static final int MAX_DIFFICULTY = 24;

  /** Builds a {@link Rule}; each setter validates its argument at once. */
  public static final class Builder {
    private final String name;
    private KeyTemplate key = KeyTemplate.parse(DEFAULT_KEY);
    private final List<Limit> limits = new ArrayList<>();
    private long banNanos;
    private Mode mode = DEFAULT_MODE;
    private OnStoreError onStoreError = DEFAULT_ON_STORE_ERROR;
    private String sharedBucket = DEFAULT_SHARED_BUCKET;
    private String sharedBucketName = DEFAULT_SHARED_BUCKET;
    private long delayNanos;
    private int delayQueue = DEFAULT_DELAY_QUEUE;
    private StatusSet countStatus;
    private Cooldown cooldown;
    private int concurrency;
    private long leaseTtlNanos = DEFAULT_LEASE_TTL.toNanos();
    private int status;
    private Action action = Action.REFUSE;
    private int difficulty;
    private int maxDifficulty;
    private Boolean successResets;

    private Builder(String name) {
      this.name = Checks.name(name, "name");
    }

    /** The key template (default {@code "ip"}). */
    public Builder key(String template) {
      this.key = KeyTemplate.parse(template);
      return this;
    }

    /** Adds a limit; names must be unique within the rule. */
    public Builder limit(Limit limit) {
      Checks.notNull(limit, "limit");
      if (limits.size() == MAX_LIMITS) {
        throw Checks.invalid("limits", MAX_LIMITS + 1, "at most " + MAX_LIMITS + " per rule");
      }
      limits.add(limit);
      return this;
    }

    /** Bans the key for {@code ban} on its first refusal; {@link Duration#ZERO} for none. */
    public Builder ban(Duration ban) {
      Checks.notNull(ban, "ban");
      this.banNanos = ban.isZero() ? 0 : Checks.duration(ban, "ban");
      return this;
    }

    public Builder mode(Mode mode) {
      this.mode = Checks.notNull(mode, "mode");
      return this;
    }

    public Builder onStoreError(OnStoreError onStoreError) {
      this.onStoreError = Checks.notNull(onStoreError, "onStoreError");
      return this;
    }

    /** The longest a refused request may wait for its token; zero (the default) for none. */
    public Builder delay(Duration delay) {
      Checks.notNull(delay, "delay");
      if (delay.isNegative() || delay.compareTo(MAX_DELAY) > 0) {
        throw Checks.invalid("delay", delay, "0 to " + MAX_DELAY.toSeconds() + "s");
      }
      this.delayNanos = delay.toNanos();
      return this;
    }

    /** Requests that may wait at once per key (default {@value #DEFAULT_DELAY_QUEUE}). */
    public Builder delayQueue(int n) {
      if (n < 1 || n > 100_000) {
        throw Checks.invalid("delayQueue", n, "1..100000");
      }
      this.delayQueue = n;
      return this;
    }

    /** What the rule does past its limit (default {@link Action#REFUSE}). */
    public Builder action(Action action) {
      this.action = Checks.notNull(action, "action");
      return this;
    }

    /**
     * A challenge's difficulty in leading zero bits, {@code bits} at first and up to {@code max}
     * as the client's challenge score grows (equal for a fixed difficulty); only with
     * {@link Action#CHALLENGE}, whose default is {@value #DEFAULT_DIFFICULTY}.
     */
    public Builder difficulty(int bits, int max) {
      if (bits < 1 || bits > MAX_DIFFICULTY) {
        throw Checks.invalid("difficulty", bits, "1.." + MAX_DIFFICULTY + " leading zero bits ("
            + "2^" + MAX_DIFFICULTY + " hashes take a browser about 10 s)");
      }
      if (max < bits || max > MAX_DIFFICULTY) {
        throw Checks.invalid("maxDifficulty", max, bits + ".." + MAX_DIFFICULTY
            + " (at least the difficulty)");
      }
      this.difficulty = bits;
      this.maxDifficulty = max;
      return this;
    }

    /** The shared bucket for callers missing a key dimension (default {@code "unknown"}). */
    public Builder sharedBucket(String name) {
      Checks.name(name, "sharedBucket");
      this.sharedBucket = KeyTemplate.escape(name);
      this.sharedBucketName = name;
      return this;
    }

    /**
     * Counts this rule on the upstream's answers with these statuses (see
     * {@link Rule#countStatus()}); null (the default) counts it when its request is decided.
     */
    public Builder countStatus(StatusSet statuses) {
      this.countStatus = statuses;
      return this;
    }

    /**
     * Makes this rule an escalating cooldown (core's {@link Cooldown}, seed 003's invite codes):
     * {@code maxRetries} failures within {@code retryWindow} lock the key for {@code cooldown},
     * doubling on each repeat up to {@code maxCooldown}. Needs {@link #countStatus}; no limits.
     */
    public Builder cooldown(int maxRetries, Duration retryWindow, Duration cooldown,
        Duration maxCooldown) {
      this.cooldown = Cooldown.builder(name).maxRetries(maxRetries).retryWindow(retryWindow)
          .cooldown(cooldown).maxCooldown(maxCooldown).build();
      return this;
    }

    /**
     * Whether a success starts a cooldown's key over: null (the default) when the key names the
     * member who succeeded, true always, false never (see {@link Rule#resetsOnSuccess}).
     */
    public Builder successResets(Boolean resets) {
      this.successResets = resets;
      return this;
    }

    /** Makes this rule a cap of {@code max} requests in flight per key; no limits. */
    public Builder concurrency(int max, Duration leaseTtl) {
      this.concurrency = (int) Checks.capacity(max, "max");
      this.leaseTtlNanos = Checks.duration(leaseTtl, "leaseTtl");
      return this;
    }

    /** The status of this rule's refusals, 400..599; 0 (the default) for the response's. */
    public Builder status(int status) {
      if (status != 0 && (status < 400 || status > 599)) {
        throw Checks.invalid("status", status, "400..599");
      }
      this.status = status;
      return this;
    }

    public Rule build() {
      boolean special = cooldown != null || concurrency > 0;
      if (cooldown != null && concurrency > 0) {
        throw Checks.invalid("concurrency", concurrency, "a rule that is not a cooldown too ('"
            + name + "')");
      }
      if (special && !limits.isEmpty()) {
        throw Checks.invalid("limits", limits, "no other limit beside a "
            + (cooldown != null ? "cooldown" : "concurrency cap") + " in rule '" + name + "'");
      }
      if (special && banNanos > 0) {
        throw Checks.invalid("ban", Duration.ofNanos(banNanos), "no ban on a " + (cooldown != null ? "cooldown"
            : "concurrency") + " rule ('" + name + "'): its lock or cap is the answer");
      }
      if (special && delayNanos > 0) {
        throw Checks.invalid("delay", Duration.ofNanos(delayNanos), "no delay on rule '" + name
            + "'");
      }
      if (cooldown != null && countStatus == null) {
        throw Checks.invalid("countStatus", null, "the failure statuses of cooldown rule '"
            + name + "', like [404]");
      }
      if (successResets != null && cooldown == null) {
        throw Checks.invalid("successResets", successResets, "only on a cooldown rule ('"
            + name + "')");
      }
      if (concurrency > 0 && countStatus != null) {
        throw Checks.invalid("countStatus", countStatus, "none on concurrency rule '" + name
            + "' (it counts requests in flight)");
      }
      if (!special && limits.isEmpty()) {
        throw Checks.invalid("limits", "[]", "at least one limit in rule '" + name + "'");
      }
      Set<String> names = new HashSet<>();
      for (Limit limit : limits) {
        if (!names.add(limit.name())) {
          throw Checks.invalid("limits", "'" + limit.name() + "' appears twice",
              "unique limit names in rule '" + name + "'");
        }
      }
      if (action != Action.CHALLENGE && difficulty != 0) {
        throw Checks.invalid("difficulty", difficulty, "no difficulty unless the rule's action "
            + "is challenge (rule '" + name + "')");
      }
      if (action == Action.CHALLENGE) {
        if (banNanos > 0) {
          throw Checks.invalid("ban", Duration.ofNanos(banNanos), "no ban on a rule whose action is challenge: a ban "
              + "refuses whoever solves (rule '" + name + "')");
        }
        if (special || countStatus != null || status != 0) {
          throw Checks.invalid("action", "challenge", "a rule counted on requests, with no "
              + "countStatus, cooldown, concurrency or status: a challenge is its answer (rule '"
              + name + "')");
        }
      }
      return new Rule(this);
    }
  }
}
