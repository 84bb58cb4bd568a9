package dev.sluice.gateway;

import dev.sluice.core.Decision;
import dev.sluice.core.http.ResponseSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The bytes of one shape of refusal (the same response spec, rule, limit, body kind, origin,
 * method and persistence) as the fixed texts between its numbers: {@code Retry-After} seconds,
 * the wait in milliseconds, the calls remaining, the seconds to reset, and the body's length.
 * A flood is refused by the same rule over and over, with numbers that change every millisecond:
 * each refusal copies the texts and prints five numbers, with no body or header made again and
 * nothing allocated (issue 21).
 *
 * <p>Compiled from the one way an answer is written ({@link Renderer}), never from a second
 * copy of it: the answer of the decision with marker numbers (unusual values of different
 * lengths) is split at the markers, and the template is kept only if filling it with a second
 * set of numbers gives exactly what the renderer writes for them. A custom page that happens to
 * print a marker, or prints a number next to other digits, fails that test and is written the
 * slow way every time, never wrongly.
 */
final class RefusalTemplate {

  /** Writes the answer of a decision: its head (with this content-length, or null for the
   * body's own) and its body. */
  interface Renderer {
    byte[][] render(ResponseSpec spec, Decision d, boolean html, String origin, String method,
        boolean keepAlive, String contentLength);
  }

  private static final int RETRY_AFTER = 0;
  private static final int RETRY_AFTER_MS = 1;
  private static final int REMAINING = 2;
  private static final int RESET = 3;
  private static final int LENGTH = 4;

  /** 7,340,022 s and 7,340,021,123,457 ms; the other markers are as long as the first. */
  private static final long MARK_RETRY_NANOS = 7_340_021_123_456_789L;
  private static final long MARK_REMAINING = 6_110_033L;
  private static final long MARK_RESET_SECONDS = 5_220_044L;
  private static final String MARK_LENGTH = "4330055";
  /** The numbers the compiled template is checked with: 82 s, 81,235 ms, 9 left, 3 s. */
  private static final long CHECK_RETRY_NANOS = 81_234_567_891L;
  private static final long CHECK_REMAINING = 9;
  private static final long CHECK_RESET_SECONDS = 3;

  private final ResponseSpec spec;
  private final String rule;
  private final String limitName;
  private final long limit;
  private final long windowNanos;
  private final boolean banned;
  private final boolean html;
  private final String origin;
  private final String method;
  private final boolean keepAlive;
  /** parts[i] comes before the number holes[i]; the last part ends the text. Null parts: the
   * renderer's answers of this shape cannot be a template (written the slow way). */
  private final byte[][] headParts;
  private final int[] headHoles;
  private final byte[][] bodyParts;
  private final int[] bodyHoles;
  private final int bodyFixed;

  private RefusalTemplate(ResponseSpec spec, Decision d, boolean html, String origin,
      String method, boolean keepAlive, Split head, Split body) {
    this.spec = spec;
    this.rule = d.rule();
    this.limitName = d.limitName();
    this.limit = d.limit();
    this.windowNanos = d.windowNanos();
    this.banned = d.banned();
    this.html = html;
    this.origin = origin;
    this.method = method;
    this.keepAlive = keepAlive;
    this.headParts = head == null ? null : head.parts;
    this.headHoles = head == null ? null : head.holes;
    this.bodyParts = body == null ? null : body.parts;
    this.bodyHoles = body == null ? null : body.holes;
    int fixed = 0;
    for (byte[] p : body == null ? new byte[0][] : bodyParts) {
      fixed += p.length;
    }
    this.bodyFixed = fixed;
  }

  /** Whether a template can stand for {@code d}'s answers at all: a limit's refusal. */
  static boolean applies(Decision d) {
    return !d.allowed() && !d.degraded() && Double.isNaN(d.currentScore());
  }

  /**
   * The template of {@code d}'s shape; not {@link #usable()} when the renderer's answers of it
   * cannot be one (see the class comment).
   */
  static RefusalTemplate compile(ResponseSpec spec, Decision d, boolean html, String origin,
      String method, boolean keepAlive, Renderer renderer) {
    Decision marked = d.withNumbers(MARK_REMAINING, MARK_RESET_SECONDS * 1_000_000_000L,
        MARK_RETRY_NANOS);
    String[] marks = new String[LENGTH + 1];
    for (int k = 0; k < LENGTH; k++) {
      marks[k] = Long.toString(value(marked, k));
    }
    marks[LENGTH] = MARK_LENGTH;
    byte[][] text = renderer.render(spec, marked, html, origin, method, keepAlive, MARK_LENGTH);
    Split head = Split.of(text[0], marks);
    Split body = Split.of(text[1], marks);
    RefusalTemplate t = new RefusalTemplate(spec, d, html, origin, method, keepAlive, head, body);
    RefusalTemplate none = new RefusalTemplate(spec, d, html, origin, method, keepAlive, null,
        null);
    for (int hole : body.holes) {
      if (hole == LENGTH) {
        return none;
      }
    }
    Decision check = d.withNumbers(CHECK_REMAINING, CHECK_RESET_SECONDS * 1_000_000_000L,
        CHECK_RETRY_NANOS);
    byte[][] expected = renderer.render(spec, check, html, origin, method, keepAlive, null);
    HeadWriter w = new HeadWriter();
    t.write(check, w);
    byte[] want = Arrays.copyOf(expected[0], expected[0].length + expected[1].length);
    System.arraycopy(expected[1], 0, want, expected[0].length, expected[1].length);
    return Arrays.equals(w.copy(), want) ? t : none;
  }

  /** False when answers of this shape are written the slow way. */
  boolean usable() {
    return headParts != null;
  }

  /** Whether this template writes the answer of {@code d} for these request values. */
  boolean fits(ResponseSpec spec, Decision d, boolean html, String origin, String method,
      boolean keepAlive) {
    return this.spec == spec && this.html == html && this.keepAlive == keepAlive
        && limit == d.limit() && windowNanos == d.windowNanos() && banned == d.banned()
        && Objects.equals(rule, d.rule()) && Objects.equals(limitName, d.limitName())
        && Objects.equals(this.origin, origin) && Objects.equals(this.method, method);
  }

  /** Writes {@code d}'s answer into {@code w}, which is reset first; returns the body length. */
  int write(Decision d, HeadWriter w) {
    int bodyLength = bodyFixed;
    for (int hole : bodyHoles) {
      bodyLength += digits(value(d, hole));
    }
    w.reset();
    fill(w, headParts, headHoles, d, bodyLength);
    fill(w, bodyParts, bodyHoles, d, bodyLength);
    return bodyLength;
  }

  private static void fill(HeadWriter w, byte[][] parts, int[] holes, Decision d,
      int bodyLength) {
    for (int i = 0; i < holes.length; i++) {
      w.put(parts[i]).putDecimal(holes[i] == LENGTH ? bodyLength : value(d, holes[i]));
    }
    w.put(parts[holes.length]);
  }

  /** Number {@code kind} of {@code d} as every answer prints it. */
  private static long value(Decision d, int kind) {
    return switch (kind) {
      case RETRY_AFTER -> d.retryAfterSeconds();
      case RETRY_AFTER_MS -> Math.max(0, d.retryAfterMillis());
      case REMAINING -> Math.max(0, d.remaining());
      default -> d.resetNanos() <= 0 ? 0 : -Math.floorDiv(-d.resetNanos(), 1_000_000_000L);
    };
  }

  private static int digits(long v) {
    int n = 1;
    while (v >= 10) {
      v /= 10;
      n++;
    }
    return n;
  }

  /** A text cut at every run of digits that is one of the markers. */
  private record Split(byte[][] parts, int[] holes) {
    static Split of(byte[] text, String[] marks) {
      List<byte[]> parts = new ArrayList<>();
      List<Integer> holes = new ArrayList<>();
      int from = 0;
      int i = 0;
      while (i < text.length) {
        if (!isDigit(text[i])) {
          i++;
          continue;
        }
        int end = i;
        while (end < text.length && isDigit(text[end])) {
          end++;
        }
        int kind = kind(text, i, end, marks);
        if (kind >= 0) {
          parts.add(Arrays.copyOfRange(text, from, i));
          holes.add(kind);
          from = end;
        }
        i = end;
      }
      parts.add(Arrays.copyOfRange(text, from, text.length));
      return new Split(parts.toArray(new byte[0][]),
          holes.stream().mapToInt(Integer::intValue).toArray());
    }

    private static int kind(byte[] text, int start, int end, String[] marks) {
      for (int k = 0; k < marks.length; k++) {
        String m = marks[k];
        if (m.length() == end - start) {
          boolean same = true;
          for (int j = 0; j < m.length() && same; j++) {
            same = text[start + j] == m.charAt(j);
          }
          if (same) {
            return k;
          }
        }
      }
      return -1;
    }

    private static boolean isDigit(byte b) {
      return b >= '0' && b <= '9';
    }
  }
}
