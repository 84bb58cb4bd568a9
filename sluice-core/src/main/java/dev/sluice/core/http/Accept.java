package dev.sluice.core.http;

import java.util.List;

/** {@code Accept} negotiation between the JSON body and the HTML page of a generated response. */
public final class Accept {

  private static final int MAX_ACCEPT_CHARS = 2048;

  private Accept() {}

  /** {@link #prefersHtml(String)} over every {@code Accept} line of a request. */
  public static boolean prefersHtml(List<String> accept) {
    if (accept == null || accept.isEmpty()) {
      return false;
    }
    return prefersHtml(accept.size() == 1 ? accept.get(0) : String.join(",", accept));
  }

  /**
   * True when the client prefers HTML to JSON: {@code text/html} has a higher quality than
   * {@code application/json} in {@code Accept} (a browser's {@code text/html,...,*}{@code /*;q=0.8}).
   * Ties, a missing header and garbage all give JSON. At most 2,048 characters are read.
   */
  public static boolean prefersHtml(String header) {
    if (header == null || header.isEmpty()) {
      return false;
    }
    Last last = LAST.get();
    if (header == last.header || header.equals(last.header)) {
      return last.html;
    }
    boolean html = judge(header);
    last.header = header;
    last.html = html;
    return html;
  }

  /**
   * The last header a thread judged and its verdict: a flood repeats one {@code Accept} line
   * (a browser's is about 100 characters, read range by range), and a connection's repeated
   * line is one string.
   */
  private static final class Last {
    String header;
    boolean html;
  }

  private static final ThreadLocal<Last> LAST = ThreadLocal.withInitial(Last::new);

  /** {@link #prefersHtml(String)} without the memo. */
  static boolean judge(String header) {
    String h = header.length() > MAX_ACCEPT_CHARS ? header.substring(0, MAX_ACCEPT_CHARS) : header;
    try {
      return quality(h, "text", "html") > quality(h, "application", "json");
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * The quality the most specific matching range of {@code header} gives {@code type/sub}. Read
   * in place (a refusal answers every request of a flood, and reads its {@code Accept}): no
   * string is made. A quality that is not an RFC 9110 qvalue ({@code 0.8}, {@code 1}) counts as 0.
   */
  static double quality(String header, String type, String sub) {
    double best = 0;
    int specificity = -1;
    int n = header.length();
    int ranges = 0;
    for (int i = 0; i <= n && ranges < 64; ranges++) {
      int end = header.indexOf(',', i);
      if (end < 0) {
        end = n;
      }
      int semi = indexOf(header, ';', i, end);
      int ms = skipOws(header, i, semi < 0 ? end : semi);
      int me = trimOws(header, ms, semi < 0 ? end : semi);
      int slash = indexOf(header, '/', ms, me);
      if (slash >= 0) {
        int spec = spec(header, ms, slash, me, type, sub);
        if (spec > specificity) {
          specificity = spec;
          best = semi < 0 ? 1 : q(header, semi, end);
        }
      }
      i = end + 1;
    }
    return best;
  }

  /** 2: type/sub, 1: type/*, 0: * /*, -1: no match (case ignored). */
  private static int spec(String h, int ms, int slash, int me, String type, String sub) {
    boolean typeIs = slash - ms == type.length() && h.regionMatches(true, ms, type, 0, slash - ms);
    int ss = slash + 1;
    boolean star = me - ss == 1 && h.charAt(ss) == '*';
    if (typeIs && me - ss == sub.length() && h.regionMatches(true, ss, sub, 0, me - ss)) {
      return 2;
    }
    if (typeIs && star) {
      return 1;
    }
    return slash - ms == 1 && h.charAt(ms) == '*' && star ? 0 : -1;
  }

  /** The last {@code q=} parameter in {@code [from, to)}, 1 without one, 0 when malformed. */
  private static double q(String h, int from, int to) {
    double q = 1;
    int p = from;
    int params = 0;
    while (p < to && params++ < 16) {
      int next = indexOf(h, ';', p + 1, to);
      int ps = skipOws(h, p + 1, next < 0 ? to : next);
      int pe = trimOws(h, ps, next < 0 ? to : next);
      if (pe - ps > 2 && (h.charAt(ps) == 'q' || h.charAt(ps) == 'Q') && h.charAt(ps + 1) == '=') {
        q = qvalue(h, skipOws(h, ps + 2, pe), pe);
      }
      p = next < 0 ? to : next;
    }
    return q;
  }

  /** RFC 9110 12.4.2: {@code 0[.ddd]} or {@code 1[.000]}; anything else is 0. */
  private static double qvalue(String h, int from, int to) {
    if (from >= to || (h.charAt(from) != '0' && h.charAt(from) != '1')) {
      return 0;
    }
    int whole = h.charAt(from) - '0';
    if (to - from == 1) {
      return whole;
    }
    if (h.charAt(from + 1) != '.' || to - from > 5) {
      return 0;
    }
    int frac = 0;
    int scale = 1;
    for (int i = from + 2; i < to; i++) {
      char c = h.charAt(i);
      if (c < '0' || c > '9') {
        return 0;
      }
      frac = frac * 10 + (c - '0');
      scale *= 10;
    }
    double v = whole + (double) frac / scale;
    return v > 1 ? 0 : v;
  }

  private static int indexOf(String s, char c, int from, int to) {
    for (int i = from; i < to; i++) {
      if (s.charAt(i) == c) {
        return i;
      }
    }
    return -1;
  }

  private static int skipOws(String s, int from, int to) {
    while (from < to && (s.charAt(from) == ' ' || s.charAt(from) == '\t')) {
      from++;
    }
    return from;
  }

  private static int trimOws(String s, int from, int to) {
    while (to > from && (s.charAt(to - 1) == ' ' || s.charAt(to - 1) == '\t')) {
      to--;
    }
    return to;
  }
}
