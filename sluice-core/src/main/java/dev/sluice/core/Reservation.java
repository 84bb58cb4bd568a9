package dev.sluice.core;

import java.util.concurrent.TimeUnit;

/**
 * A share of a rule counted on responses (a {@link Rule#countStatus()} rule or a
 * {@link Rule#cooldown()}), held by one request from its admission until its answer settles it
 * ({@link Store#reserveAsync}, {@link Store#settleAsync}).
 *
 * <p>Why: a rule that counts failed answers (wrong passwords, wrong invite codes) learns of a
 * failure only when the answer comes back. Read without holding anything, it lets through every
 * request sent before the first answer: 30 guesses on 30 connections all reach the app against a
 * limit of 3. Held, each request in flight counts as a failure until its answer says otherwise,
 * so at most what is left of the limit is in flight at once, however the requests are sent.
 *
 * <p>Worked numbers, a cooldown of 3 failures: 30 guesses at once, 3 are admitted (3 held) and 27
 * refused as {@linkplain #inFlight() in flight}; the 3 answers are 404s, so 3 failures settle and
 * lock the key. A sliding window of 10 per 15 minutes with 7 failures counted: 3 more may be in
 * flight; a success gives its share back, a counted status spends it.
 */
public final class Reservation {

  /** What a refusal because of requests in flight tells the client to wait. */
  public static final long IN_FLIGHT_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** How a held reservation ends. */
  public enum Settlement {
    /** The answer is a failure (a counted status), or never came: the rule spends the cost. */
    FAILURE,
    /**
     * The answer is a success (100..399): a cooldown whose key names the member who succeeded
     * starts over (see {@link Rule#resetsOnSuccess}); the share goes back.
     */
    SUCCESS,
    /** Neither (a status the rule does not count, or the request was never forwarded). */
    NONE
  }

  private final long id;
  private final Verdict verdict;
  private final boolean inFlight;

  private Reservation(long id, Verdict verdict, boolean inFlight) {
    this.id = id;
    this.verdict = verdict;
    this.inFlight = inFlight;
  }

  /** A held reservation: {@code id} is positive; {@code verdict} allows. */
  public static Reservation held(long id, Verdict verdict) {
    if (id <= 0 || !verdict.allowed()) {
      throw new IllegalArgumentException("id : " + id + " (expected: > 0 with an allowing "
          + "verdict)");
    }
    return new Reservation(id, verdict, false);
  }

  /** A refusal by the key's settled state: exhausted, banned (or a ban started) or locked. */
  public static Reservation refused(Verdict verdict) {
    return new Reservation(0, verdict, false);
  }

  /**
   * A refusal because the requests already in flight hold what is left: no ban starts, and the
   * client is told to try again in a second.
   */
  public static Reservation inFlight(Verdict verdict) {
    return new Reservation(0, verdict, true);
  }

  /** The reservation's id, or 0 when refused. */
  public long id() {
    return id;
  }

  public boolean held() {
    return id > 0;
  }

  /** Whether the refusal is only because of the requests in flight. */
  public boolean inFlight() {
    return inFlight;
  }

  public Verdict verdict() {
    return verdict;
  }

  @Override
  public String toString() {
    return held() ? "Reservation{" + id + "}" : "Reservation{" + (inFlight ? "in flight, " : "")
        + verdict + "}";
  }
}
