package dev.sluice.core.address;

import java.util.List;

/**
 * The entries of one forwarding header, right to left, within {@link
 * ClientAddressResolver#MAX_HEADER_CHARS} and {@link ClientAddressResolver#MAX_HOPS}; and the
 * parser of an RFC 7239 element's {@code for=} node.
 *
 * <p>Entries are split on every comma, also inside quotes. RFC 7239 allows a comma in a quoted
 * value, but no {@code for=} node contains one, and quote-aware splitting would let a client
 * send an unterminated quote that swallows the entries the proxies append after it. The price:
 * an element such as {@code for=1.2.3.4;x="a,b"} reads as two entries.
 */
final class ForwardedChain {

  private final List<String> lines;
  private final boolean forwarded;
  private final boolean single;
  private int lineIndex;
  private String line; // null: load the previous line
  private int pos; // the unread part of line is [0, pos)
  private int budget = ClientAddressResolver.MAX_HEADER_CHARS;
  private int hops;
  boolean truncated;
  private String entry;
  private int start;
  private int end;

  ForwardedChain(List<String> lines, boolean forwarded, boolean single) {
    this.lines = lines;
    this.forwarded = forwarded;
    this.single = single;
    this.lineIndex = lines.size();
  }

  boolean next() {
    if (single && hops > 0) {
      return false;
    }
    for (;;) {
      if (line == null) {
        if (--lineIndex < 0) {
          return false;
        }
        if (--budget < 0) {
          truncated = true;
          return false;
        }
        line = lines.get(lineIndex);
        if (line == null) {
          continue;
        }
        pos = line.length();
      }
      String s = line;
      int e = pos;
      int b = e;
      int floor = Math.max(0, e - budget);
      if (single) {
        b = floor;
      } else {
        while (b > floor && s.charAt(b - 1) != ',') {
          b--;
        }
      }
      if (b == floor && b > 0) {
        truncated = true; // the entry starts beyond the budget
        return false;
      }
      budget -= e - b + 1;
      if (b == 0) {
        line = null;
      } else {
        pos = b - 1;
      }
      while (b < e && InetLiteral.isOws(s.charAt(b))) {
        b++;
      }
      while (e > b && InetLiteral.isOws(s.charAt(e - 1))) {
        e--;
      }
      if (b == e) {
        continue;
      }
      if (hops == ClientAddressResolver.MAX_HOPS) {
        truncated = true;
        return false;
      }
      hops++;
      entry = s;
      start = b;
      end = e;
      return true;
    }
  }

  /** The current entry's address, or null if it is not one. */
  byte[] address() {
    return forwarded ? forwardedFor(entry, start, end) : InetLiteral.parseEndpoint(entry, start, end);
  }

  /**
   * The node of the {@code for=} parameter of one RFC 7239 forwarded-element, or null when there
   * is none, it is {@code unknown} or obfuscated ({@code _abc}), appears twice, or is malformed.
   */
  static byte[] forwardedFor(String s, int from, int to) {
    byte[] result = null;
    boolean found = false;
    for (int p = from; p < to; ) {
      int semi = InetLiteral.indexOf(s, ';', p, to);
      if (semi < 0) {
        semi = to;
      }
      int eq = InetLiteral.indexOf(s, '=', p, semi);
      if (eq >= 0) {
        int ns = p;
        int ne = eq;
        while (ns < ne && InetLiteral.isOws(s.charAt(ns))) {
          ns++;
        }
        while (ne > ns && InetLiteral.isOws(s.charAt(ne - 1))) {
          ne--;
        }
        if (ne - ns == 3 && s.regionMatches(true, ns, "for", 0, 3)) {
          if (found) {
            return null; // RFC 7239 section 4: a parameter must not occur twice in one element
          }
          found = true;
          result = forwardedNode(s, eq + 1, semi);
        }
      }
      p = semi + 1;
    }
    return result;
  }

  private static byte[] forwardedNode(String s, int from, int to) {
    while (from < to && InetLiteral.isOws(s.charAt(from))) {
      from++;
    }
    while (to > from && InetLiteral.isOws(s.charAt(to - 1))) {
      to--;
    }
    boolean quoted = from < to && s.charAt(from) == '"';
    if (!quoted && InetLiteral.indexOf(s, '[', from, to) >= 0) {
      return null; // RFC 7239 section 6: an IPv6 node is quoted; bare, it is no node
    }
    if (quoted) {
      if (to - from < 2 || s.charAt(to - 1) != '"') {
        return null;
      }
      from++;
      to--;
      for (int i = from; i < to; i++) {
        char c = s.charAt(i);
        if (c == '"' || c == '\\') {
          return null; // no node needs quoted-pairs; refusing them keeps one reading of the text
        }
      }
    }
    if (from == to || s.charAt(from) == '_' || (to - from == 7 && s.regionMatches(true, from, "unknown", 0, 7))) {
      return null;
    }
    int colon = InetLiteral.indexOf(s, ':', from, to);
    if (s.charAt(from) != '[' && colon >= 0 && InetLiteral.indexOf(s, ':', colon + 1, to) >= 0) {
      return null; // RFC 7239 section 6: an IPv6 node is bracketed; bare, it is not a node
    }
    return InetLiteral.parseEndpoint(s, from, to);
  }
}
