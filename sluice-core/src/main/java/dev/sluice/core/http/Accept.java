package dev.sluice.core.http;

import java.util.List;
import java.util.Locale;

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
    String h = header.length() > MAX_ACCEPT_CHARS ? header.substring(0, MAX_ACCEPT_CHARS) : header;
    try {
      return quality(h, "text", "html") > quality(h, "application", "json");
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** The quality the most specific matching range of {@code header} gives {@code type/sub}. */
  static double quality(String header, String type, String sub) {
    double best = 0;
    int specificity = -1;
    for (String range : header.split(",", 64)) {
      String[] parts = range.split(";", 16);
      String media = parts[0].trim().toLowerCase(Locale.ROOT);
      int slash = media.indexOf('/');
      if (slash < 0) {
        continue;
      }
      String t = media.substring(0, slash);
      String s = media.substring(slash + 1);
      int spec;
      if (t.equals(type) && s.equals(sub)) {
        spec = 2;
      } else if (t.equals(type) && s.equals("*")) {
        spec = 1;
      } else if (t.equals("*") && s.equals("*")) {
        spec = 0;
      } else {
        continue;
      }
      double q = 1;
      for (int i = 1; i < parts.length; i++) {
        String p = parts[i].trim();
        if (p.length() > 2 && (p.charAt(0) == 'q' || p.charAt(0) == 'Q') && p.charAt(1) == '=') {
          try {
            q = Double.parseDouble(p.substring(2).trim());
          } catch (NumberFormatException e) {
            q = 0;
          }
          if (!(q >= 0 && q <= 1)) {
            q = 0;
          }
        }
      }
      if (spec > specificity) {
        specificity = spec;
        best = q;
      }
    }
    return best;
  }
}
