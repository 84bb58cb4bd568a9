package dev.sluice.core;

import dev.sluice.core.internal.Checks;
import java.time.Duration;

/**
 * Escalating cooldown against brute force (seed 003, "Invites are separate"; login forms):
 * failures count per key; {@code maxRetries} failures within {@code retryWindow} lock the key for
 * {@code cooldown}, doubling on each repeat up to {@code maxCooldown}; a success resets the key.
 *
 * <p>Worked numbers with the seed's defaults (8 failures per 5 minutes) and a 1 minute base: the
 * 8th wrong invite code locks the key for 1 minute; after it, 8 more failures lock it for 2, then
 * 4, ... up to the maximum. Attempts while locked are refused and do not count, so hammering does
 * not extend the lock. The escalation level is forgotten after {@code maxCooldown} of quiet
 * following the last lock, which is also when the state becomes fresh and can be dropped. A
 * success clears the failures and the escalation, never a lock in force: a success answered
 * while parallel failures locked the key does not lift it.
 *
 * <p>Counted on responses, a request in flight is a failure not yet known: {@link #reserve}
 * admits one more only while failures plus the requests in flight stay below
 * {@code maxRetries}, so with {@code maxRetries} 8 at most 8 wrong codes reach the app before the
 * lock, however many are sent at once.
 *
 * <p>State: {@code [window start, failures, level, locked until]}.
 */
public final class Cooldown {

  /** What happened to the key. */
  public enum Event {
    /** Asks whether the key is locked; changes nothing. */
    CHECK,
    /** Records a failure (wrong password, wrong invite code). */
    FAILURE,
    /** Records a success: failures and escalation start over; a lock in force stays. */
    SUCCESS
  }

  static final int STATE_SIZE = 4;

  private final String name;
  private final KeyTemplate key;
  private final int maxRetries;
  private final long retryWindow;
  private final long cooldown;
  private final long maxCooldown;
  private final String sharedBucket;

  private Cooldown(Builder b) {
    this.name = b.name;
    this.key = b.key;
    this.maxRetries = b.maxRetries;
    this.retryWindow = b.retryWindow;
    this.cooldown = b.cooldown;
    this.maxCooldown = b.maxCooldown;
    this.sharedBucket = b.sharedBucket;
  }

  public static Builder builder(String name) {
    return new Builder(name);
  }

  public String name() {
    return name;
  }

  public int maxRetries() {
    return maxRetries;
  }

  public Duration retryWindow() {
    return Duration.ofNanos(retryWindow);
  }

  public Duration cooldown() {
    return Duration.ofNanos(cooldown);
  }

  public Duration maxCooldown() {
    return Duration.ofNanos(maxCooldown);
  }

  /** The store key of {@code identity}. */
  public String keyFor(Identity identity) {
    return key.keyOf(KeyTemplate.escape(name), identity, sharedBucket);
  }

  /** The key template, like {@code "ip"}. */
  public String key() {
    return key.source();
  }

  /** Every parameter that shapes the state, for the in-memory store's tables. */
  String layout() {
    return maxRetries + "," + retryWindow + "," + cooldown + "," + maxCooldown;
  }

  /** The lock length after {@code level} earlier locks. */
  long lockNanos(long level) {
    if (level >= 62 || cooldown > (maxCooldown >> level)) {
      return maxCooldown;
    }
    return Math.min(cooldown << level, maxCooldown);
  }

  void init(long[] s, long now) {
    s[0] = now;
    s[1] = 0;
    s[2] = 0;
    s[3] = now;
  }

  private long failures(long[] s, long now) {
    return now - s[0] >= retryWindow ? 0 : s[1];
  }

  private long level(long[] s, long now) {
    return s[2] > 0 && now - s[3] >= maxCooldown ? 0 : s[2];
  }

  boolean isFresh(long[] s, long now) {
    return failures(s, now) == 0 && s[3] - now <= 0 && level(s, now) == 0;
  }

  /** The pure transition; mutates {@code s}. */
  Verdict apply(long[] s, long now, Event event) {
    long lockedFor = s[3] - now;
    if (event == Event.SUCCESS) {
      long lockedUntil = s[3];
      init(s, now);
      if (lockedFor > 0) {
        s[3] = lockedUntil;
        return Verdict.banned(lockedFor);
      }
      return Verdict.allowed(0, maxRetries, 0, Double.NaN);
    }
    if (lockedFor > 0) {
      return Verdict.banned(lockedFor);
    }
    long failures = failures(s, now);
    if (event == Event.CHECK) {
      return Verdict.allowed(0, maxRetries - failures, resetNanos(s, now), Double.NaN);
    }
    if (failures == 0) {
      s[0] = now;
    }
    failures++;
    s[2] = level(s, now);
    if (failures >= maxRetries) {
      long lock = lockNanos(s[2]);
      s[1] = 0;
      s[2]++;
      s[3] = now + lock;
      return Verdict.refused(0, 0, lock + maxCooldown, lock, Double.NaN, true);
    }
    s[1] = failures;
    return Verdict.allowed(0, maxRetries - failures, resetNanos(s, now), Double.NaN);
  }

  /**
   * Whether one more request may be in flight while {@code pending} others are: a locked key is
   * refused (banned, the lock left); failures plus {@code pending} reaching {@code maxRetries}
   * refuse for {@link Reservation#IN_FLIGHT_RETRY_NANOS} (not banned). Reads {@code s} only.
   */
  Verdict reserve(long[] s, long now, long pending) {
    long lockedFor = s[3] - now;
    if (lockedFor > 0) {
      return Verdict.banned(lockedFor);
    }
    long left = maxRetries - failures(s, now) - pending;
    if (left <= 0) {
      return Verdict.refused(0, 0, resetNanos(s, now), Reservation.IN_FLIGHT_RETRY_NANOS,
          Double.NaN, false);
    }
    return Verdict.allowed(0, left - 1, resetNanos(s, now), Double.NaN);
  }

  private long resetNanos(long[] s, long now) {
    long window = s[1] > 0 ? Math.max(0, s[0] + retryWindow - now) : 0;
    long levels = s[2] > 0 ? Math.max(0, s[3] + maxCooldown - now) : 0;
    return Math.max(window, levels);
  }

  @Override
  public String toString() {
    return "Cooldown{" + name + ", key=" + key + ", maxRetries=" + maxRetries + ", retryWindow="
        + retryWindow() + ", cooldown=" + cooldown() + ", maxCooldown=" + maxCooldown() + "}";
  }

  /** Builds a {@link Cooldown}; defaults are seed 003's: 8 failures per 5 minutes. */
  public static final class Builder {
    private final String name;
    private KeyTemplate key = KeyTemplate.parse("ip");
    private int maxRetries = 8;
    private long retryWindow = Duration.ofMinutes(5).toNanos();
    private long cooldown = Duration.ofMinutes(1).toNanos();
    private long maxCooldown = Duration.ofHours(1).toNanos();
    private String sharedBucket = "unknown";

    private Builder(String name) {
      this.name = Checks.name(name, "name");
    }

    public Builder key(String template) {
      this.key = KeyTemplate.parse(template);
      return this;
    }

    /** The key of callers missing a key dimension (default {@code unknown}). */
    public Builder sharedBucket(String name) {
      Checks.name(name, "sharedBucket");
      this.sharedBucket = KeyTemplate.escape(name);
      return this;
    }

    public Builder maxRetries(int maxRetries) {
      this.maxRetries = (int) Checks.positive(maxRetries, "maxRetries");
      return this;
    }

    public Builder retryWindow(Duration window) {
      this.retryWindow = Checks.duration(window, "retryWindow");
      return this;
    }

    /** The first lock's length (default 1 minute). */
    public Builder cooldown(Duration cooldown) {
      this.cooldown = Checks.duration(cooldown, "cooldown");
      return this;
    }

    /** The longest lock (default 1 hour). */
    public Builder maxCooldown(Duration maxCooldown) {
      this.maxCooldown = Checks.duration(maxCooldown, "maxCooldown");
      return this;
    }

    public Cooldown build() {
      if (maxCooldown < cooldown) {
        throw Checks.invalid("maxCooldown", Duration.ofNanos(maxCooldown),
            ">= cooldown " + Duration.ofNanos(cooldown));
      }
      return new Cooldown(this);
    }
  }
}
