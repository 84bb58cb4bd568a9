package dev.sluice.core.policy;

import dev.sluice.core.internal.Checks;
import java.util.HexFormat;
import java.util.Locale;

/**
 * A request target read once, by one rule, into the path that routes match and that is
 * forwarded (docs/SEMANTICS.md, "Request paths"): whatever spelling a client sends, the limiter
 * sees what the upstream will see, because the upstream is sent exactly this path.
 *
 * <ul>
 *   <li>Forms (RFC 9112, 3.2): origin form {@code /a/b?q}; absolute form
 *       {@code http://host/a/b?q}, reduced to its path and query, its authority kept for the
 *       caller to check against {@code Host}; {@code *} (for {@code OPTIONS} only; the caller
 *       checks the method). Anything else, a fragment, or userinfo in an authority is refused.
 *   <li>Percent-encoding (RFC 3986, 6.2.2): octets of unreserved characters are decoded
 *       ({@code /%61pi} is {@code /api}), the others kept with upper-case hex digits; a malformed
 *       escape or an encoded NUL is refused. An encoded slash or backslash ({@code %2F},
 *       {@code %5C}) is refused by default, because upstreams disagree on whether it separates
 *       segments; {@link EncodedSlashes#KEEP} keeps it as data inside a segment. A raw backslash
 *       is always refused (not a URI character; some servers read it as a slash).
 *   <li>Segments: empty ones are merged ({@code //a} is {@code /a}, as nginx's
 *       {@code merge_slashes}), dot segments removed after decoding (RFC 3986, 5.2.4:
 *       {@code /x/%2e%2e/strict} is {@code /strict}; {@code ..} never climbs above the root).
 *   <li>Path parameters ({@code /strict;x=1/a}): {@link Parameters#STRIP} (the default) removes
 *       them from each segment, as Tomcat, Jetty and Spring map requests, so {@code /strict;x/a}
 *       is {@code /strict/a} both here and upstream; {@link Parameters#KEEP} keeps {@code ;} as
 *       an ordinary character (for upstreams that do not strip, such as Express);
 *       {@link Parameters#REFUSE} refuses any {@code ;} in the path.
 *   <li>The query is kept as sent. Case is kept (routes compare case-sensitively unless they
 *       say otherwise).
 * </ul>
 *
 * <p>Normalising a normalised path changes nothing, and a path that needs no change (the usual
 * case) is returned as the same string.
 */
public final class RequestTarget {

  /** What path parameters ({@code ;name=value} in a segment) mean. */
  public enum Parameters { STRIP, KEEP, REFUSE }

  /** What {@code %2F} and {@code %5C} in a path mean. */
  public enum EncodedSlashes { REFUSE, KEEP }

  /** How a policy reads request paths; {@link #defaults()}: strip parameters, refuse %2F. */
  public record Rules(Parameters parameters, EncodedSlashes encodedSlashes) {
    private static final Rules DEFAULTS = new Rules(Parameters.STRIP, EncodedSlashes.REFUSE);

    public Rules {
      Checks.notNull(parameters, "path.parameters");
      Checks.notNull(encodedSlashes, "path.encodedSlashes");
    }

    public static Rules defaults() {
      return DEFAULTS;
    }
  }

  private static final RequestTarget ASTERISK = new RequestTarget("*", null, null, null);

  private final String path;
  private final String query;
  private final String authority;
  private final String problem;

  private RequestTarget(String path, String query, String authority, String problem) {
    this.path = path;
    this.query = query;
    this.authority = authority;
    this.problem = problem;
  }

  /** Reads {@code target} (a request line's target, or HTTP/2's {@code :path}). Never throws. */
  public static RequestTarget parse(String target, Rules rules) {
    if (target == null || target.isEmpty()) {
      return refused("an empty request target");
    }
    if (target.equals("*")) {
      return ASTERISK;
    }
    String authority = null;
    int start = 0;
    if (target.charAt(0) != '/') {
      int scheme = schemeEnd(target);
      if (scheme < 0) {
        return refused("a request target that is neither a path nor an absolute URI");
      }
      int hostStart = scheme + 3;
      int hostEnd = hostStart;
      while (hostEnd < target.length() && "/?#".indexOf(target.charAt(hostEnd)) < 0) {
        hostEnd++;
      }
      authority = target.substring(hostStart, hostEnd);
      if (authority.isEmpty() || authority.indexOf('@') >= 0) {
        return refused("an absolute URI without a host, or with userinfo");
      }
      start = hostEnd;
    }
    int hash = target.indexOf('#', start);
    if (hash >= 0) {
      return refused("a fragment ('#') in the request target");
    }
    int q = target.indexOf('?', start);
    int pathEnd = q < 0 ? target.length() : q;
    String query = q < 0 ? null : target.substring(q + 1);
    String raw = start == 0 && q < 0 ? target : target.substring(start, pathEnd);
    if (raw.isEmpty()) {
      raw = "/";
    }
    String path = normalize(raw, rules);
    if (path.startsWith(PROBLEM)) {
      return refused(path.substring(PROBLEM.length()));
    }
    return new RequestTarget(path, query, authority, null);
  }

  /**
   * The normalised form of {@code rawPath} (no query), for adapters whose server already split
   * the target; problems are not refused here: the path is matched as it would be with
   * {@link EncodedSlashes#KEEP} and {@link Parameters#KEEP} where it cannot be read otherwise.
   */
  public static String normalizePath(String rawPath, Rules rules) {
    if (rawPath == null || rawPath.isEmpty()) {
      return "/";
    }
    String p = normalize(rawPath.charAt(0) == '/' ? rawPath : "/" + rawPath, rules);
    if (p.startsWith(PROBLEM)) {
      p = normalize(rawPath.charAt(0) == '/' ? rawPath : "/" + rawPath,
          new Rules(Parameters.KEEP, EncodedSlashes.KEEP));
      return p.startsWith(PROBLEM) ? rawPath : p;
    }
    return p;
  }

  private static RequestTarget refused(String problem) {
    return new RequestTarget(null, null, null, problem);
  }

  /** The index of {@code ://} after an {@code http} or {@code https} scheme, or -1. */
  private static int schemeEnd(String t) {
    int colon = t.indexOf("://");
    if (colon < 0) {
      return -1;
    }
    String scheme = t.substring(0, colon).toLowerCase(Locale.ROOT);
    return scheme.equals("http") || scheme.equals("https") ? colon : -1;
  }

  private static final String PROBLEM = "\u0000";

  /** The normalised path, or {@link #PROBLEM} followed by why it is refused. */
  private static String normalize(String raw, Rules rules) {
    if (isNormal(raw, rules)) {
      return raw;
    }
    StringBuilder decoded = new StringBuilder(raw.length());
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c == '\\') {
        return PROBLEM + "a backslash in the path";
      }
      if (c != '%') {
        decoded.append(c);
        continue;
      }
      int hi = i + 2 < raw.length() ? hex(raw.charAt(i + 1)) : -1;
      int lo = i + 2 < raw.length() ? hex(raw.charAt(i + 2)) : -1;
      if (hi < 0 || lo < 0) {
        return PROBLEM + "a malformed percent-encoding in the path";
      }
      int v = hi * 16 + lo;
      if (v == 0) {
        return PROBLEM + "an encoded NUL in the path";
      }
      if ((v == '/' || v == '\\') && rules.encodedSlashes() == EncodedSlashes.REFUSE) {
        return PROBLEM + "an encoded slash or backslash in the path (path.encodedSlashes)";
      }
      if (isUnreserved(v)) {
        decoded.append((char) v);
      } else {
        decoded.append('%').append(HEX[v >> 4]).append(HEX[v & 15]);
      }
      i += 2;
    }
    // Segments, merged, stripped of parameters, dot segments resolved.
    int[] starts = new int[16];
    int[] ends = new int[16];
    int n = 0;
    boolean trailing = false;
    int len = decoded.length();
    int i = 0;
    while (i < len) {
      while (i < len && decoded.charAt(i) == '/') {
        i++;
      }
      if (i == len) {
        trailing = n > 0 || len > 1;
        break;
      }
      int s = i;
      while (i < len && decoded.charAt(i) != '/') {
        i++;
      }
      int e = i;
      int semi = indexOf(decoded, ';', s, e);
      if (semi >= 0) {
        if (rules.parameters() == Parameters.REFUSE) {
          return PROBLEM + "a path parameter (';') in the path (path.parameters: refuse)";
        }
        if (rules.parameters() == Parameters.STRIP) {
          e = semi;
        }
      }
      boolean last = i == len;
      if (e - s == 1 && decoded.charAt(s) == '.') {
        trailing = last;
        continue;
      }
      if (e - s == 2 && decoded.charAt(s) == '.' && decoded.charAt(s + 1) == '.') {
        if (n > 0) {
          n--;
        }
        trailing = last;
        continue;
      }
      if (e == s) {
        trailing = last;   // "/;x": a segment that is all parameters
        continue;
      }
      if (n == starts.length) {
        starts = java.util.Arrays.copyOf(starts, n * 2);
        ends = java.util.Arrays.copyOf(ends, n * 2);
      }
      starts[n] = s;
      ends[n] = e;
      n++;
      trailing = false;
    }
    StringBuilder out = new StringBuilder(len + 1);
    for (int k = 0; k < n; k++) {
      out.append('/').append(decoded, starts[k], ends[k]);
    }
    if (n == 0 || trailing) {
      out.append('/');
    }
    return out.toString();
  }

  /**
   * True when {@code p} needs no change: it starts with '/', has no escape, backslash or
   * parameter to read, no empty segment and no dot segment.
   */
  private static boolean isNormal(String p, Rules rules) {
    int n = p.length();
    if (n == 0 || p.charAt(0) != '/') {
      return false;
    }
    for (int i = 0; i < n; i++) {
      char c = p.charAt(i);
      if (c == '%' || c == '\\' || (c == ';' && rules.parameters() != Parameters.KEEP)) {
        return false;
      }
      if (c == '/') {
        // An empty segment ("//") or a dot segment ("/." or "/.." ending at '/' or the end).
        if (i + 1 < n && p.charAt(i + 1) == '/') {
          return false;
        }
        if (i + 1 < n && p.charAt(i + 1) == '.') {
          int j = i + 2;
          if (j < n && p.charAt(j) == '.') {
            j++;
          }
          if (j == n || p.charAt(j) == '/') {
            return false;
          }
        }
      }
    }
    return true;
  }

  private static int indexOf(CharSequence s, char c, int from, int to) {
    for (int i = from; i < to; i++) {
      if (s.charAt(i) == c) {
        return i;
      }
    }
    return -1;
  }

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  /** The value of ASCII hex digit {@code c} (no other script's digits), or -1. */
  private static int hex(char c) {
    return HexFormat.isHexDigit(c) ? HexFormat.fromHexDigit(c) : -1;
  }

  private static boolean isUnreserved(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '-' || c == '.' || c == '_' || c == '~';
  }

  /** True unless the target was refused ({@link #problem()} says why). */
  public boolean ok() {
    return problem == null;
  }

  /** Why the target is refused (the 400's detail), or null. */
  public String problem() {
    return problem;
  }

  /** The normalised path ({@code *} for the asterisk form); null when refused. */
  public String path() {
    return path;
  }

  /** The query as sent, without its {@code ?}; null when there is none. */
  public String query() {
    return query;
  }

  /** An absolute-form target's authority ({@code host[:port]}); null for the other forms. */
  public String authority() {
    return authority;
  }

  /** True for the asterisk form ({@code OPTIONS *}). */
  public boolean asterisk() {
    return this == ASTERISK;
  }

  /** What is forwarded upstream: the normalised path and the query as sent. */
  public String forwardTarget() {
    return query == null ? path : path + "?" + query;
  }

  @Override
  public String toString() {
    return ok() ? forwardTarget() + (authority == null ? "" : " (authority " + authority + ")")
        : "refused: " + problem;
  }
}
