package dev.sluice.moderation;

import java.util.Objects;
import java.util.Optional;

/**
 * What the moderator decided about one text: allowed or not, why, the list term that matched
 * (for logs; never show it back to the user) and the text's normalised form.
 *
 * <p>{@link #normalized()} is the UTS #39 skeleton of the text's NFKC case fold, case folded
 * again, with whitespace collapsed: two names with the same form look alike, so store it with a
 * unique index to stop "Bob" and "B\u043Eb" (Cyrillic o) both being registered. For a reaction it
 * is the text without emoji presentation selectors.
 */
public final class Ruling {

  private final Surface surface;
  private final Reason reason;
  private final String matchedTerm;
  private final String normalized;

  private Ruling(Surface surface, Reason reason, String matchedTerm, String normalized) {
    this.surface = surface;
    this.reason = reason;
    this.matchedTerm = matchedTerm;
    this.normalized = normalized;
  }

  static Ruling allowed(Surface surface, String normalized) {
    return new Ruling(surface, Reason.NONE, null, normalized);
  }

  static Ruling refused(Surface surface, Reason reason, String normalized) {
    return new Ruling(surface, reason, null, normalized);
  }

  static Ruling matched(Surface surface, Reason reason, String term, String normalized) {
    return new Ruling(surface, reason, term, normalized);
  }

  /** True when the text may be shown. */
  public boolean allowed() {
    return reason == Reason.NONE;
  }

  /** Why the text was refused; {@link Reason#NONE} when allowed. */
  public Reason reason() {
    return reason;
  }

  /** The surface the text was checked for. */
  public Surface surface() {
    return surface;
  }

  /** The block or reserved list's term as written in the list, when one matched. For logs only. */
  public Optional<String> matchedTerm() {
    return Optional.ofNullable(matchedTerm);
  }

  /** The confusable-insensitive form (see the class comment); empty for an oversized input. */
  public String normalized() {
    return normalized;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Ruling)) {
      return false;
    }
    Ruling r = (Ruling) o;
    return surface == r.surface && reason == r.reason && Objects.equals(matchedTerm, r.matchedTerm)
        && normalized.equals(r.normalized);
  }

  @Override
  public int hashCode() {
    return Objects.hash(surface, reason, matchedTerm, normalized);
  }

  @Override
  public String toString() {
    return "Ruling{" + surface.label() + ", " + (allowed() ? "allowed" : reason.label())
        + (matchedTerm == null ? "" : ", term=" + matchedTerm) + ", normalized=" + normalized + "}";
  }
}
