package dev.sluice.core.policy;

/**
 * What happened to one request, in one vocabulary: the access log's {@code outcome} field,
 * {@code sluice_requests_total{verdict}}, the console and {@code sluice replay} all say it with
 * these words, and every adapter records it once, at the request's end. The admission step gives
 * it ({@link Admission.Outcome#verdict()}); the gateway adds what only it can see: a request it
 * refused for its form ({@link #INVALID}), one whose upstream failed ({@link #ERROR}), one its
 * moderation refused ({@link #MODERATED}).
 */
public enum RequestVerdict {
  /** Forwarded; every rule allowed (or none applied). */
  ALLOWED("allowed"),
  /** A rule refused (429, or the rule's status). */
  REFUSED("refused"),
  /** Forwarded, but a shadow rule (or one whose action is log) would have refused. */
  SHADOW_REFUSED("shadow-refused"),
  /** Waited for its token (a rule's {@code delay}), then forwarded. */
  DELAYED("delayed"),
  /** On the policy's deny list: 403, never forwarded. */
  DENIED("denied"),
  /** A challenge answered: the puzzle page, or a wrong, replayed or too frequent answer. */
  CHALLENGED("challenged"),
  /** A solved challenge's answer, or a request a clearance let past its rule. */
  CHALLENGE_PASSED("challenge-passed"),
  /** A human check's token was missing or failed: 403. */
  HUMAN_CHECK_FAILED("human-check-failed"),
  /** A human check's token was used before: 403. */
  HUMAN_CHECK_REPLAYED("human-check-replayed"),
  /** A cooldown's lock refused it (brute-force protection). */
  LOCKED("locked"),
  /** A concurrency cap was full. */
  OVER_CONCURRENCY("over-concurrency"),
  /** A fail-closed rule, or a human check's verifier, could not answer: 503. */
  UNAVAILABLE("unavailable"),
  /** Forwarded while the store could not answer: each rule's onStoreError allowed it. */
  DEGRADED("degraded"),
  /** Never limited: an exempt route, an allow-listed client, a CORS preflight. */
  EXEMPT("exempt"),
  /** The gateway refused the request's form itself (400, 405, 408, 413, 414, 417, 431). */
  INVALID("invalid"),
  /** Forwarded, and the upstream failed (502, 504). */
  ERROR("error"),
  /** The moderation of its body refused it (422). */
  MODERATED("moderated");

  private final String label;

  RequestVerdict(String label) {
    this.label = label;
  }

  /** The word logs and metrics use, like {@code shadow-refused}. */
  public String label() {
    return label;
  }

  /** The verdict named {@code label}, or null. */
  public static RequestVerdict of(String label) {
    for (RequestVerdict v : values()) {
      if (v.label.equals(label)) {
        return v;
      }
    }
    return null;
  }

  @Override
  public String toString() {
    return label;
  }
}
