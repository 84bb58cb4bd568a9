package dev.sluice.policy;

import dev.sluice.core.Rule;
import dev.sluice.core.policy.Source;
import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Parsers of scalar values, each throwing {@link IllegalArgumentException} whose message is what
 * was expected (or core's {@link dev.sluice.core.InvalidValueException}, whose {@code expected()}
 * is read), and the texts errors show values in.
 */
final class Values {

  private Values() {}

  /** A value parser; throws {@link IllegalArgumentException} whose message is what was expected. */
  @FunctionalInterface
  interface Parser<T> {
    T parse(String text);
  }

  static Parser<Long> wholeNumber(long min, long max) {
    String expected = min == 1 ? "a whole number > 0" : "a whole number in " + min + ".." + max;
    return text -> {
      long v;
      try {
        v = new BigDecimal(text.trim().replace("_", "")).stripTrailingZeros().longValueExact();
      } catch (NumberFormatException | ArithmeticException e) {
        throw new IllegalArgumentException(expected);
      }
      if (v < min) {
        throw new IllegalArgumentException(expected);
      }
      if (v > max) {
        throw new IllegalArgumentException("a whole number <= " + max);
      }
      return v;
    };
  }

  static Parser<Integer> integer(int min, int max) {
    Parser<Long> p = wholeNumber(min, max);
    return text -> p.parse(text).intValue();
  }

  static final Parser<Double> POSITIVE_NUMBER = text -> {
    try {
      double d = Double.parseDouble(text.trim());
      if (d > 0 && !Double.isInfinite(d) && !text.trim().matches("(?i).*[a-z].*")) {
        return d;
      }
    } catch (NumberFormatException e) {
      // falls through
    }
    throw new IllegalArgumentException("a number > 0");
  };

  static final Parser<Boolean> BOOLEAN = text -> {
    switch (text.trim().toLowerCase(Locale.ROOT)) {
      case "true": return true;
      case "false": return false;
      default: throw new IllegalArgumentException("true or false");
    }
  };

  static final Parser<Duration> POSITIVE_DURATION = Durations::parsePositive;

  static final Parser<Duration> DURATION = Durations::parse;

  static Parser<Duration> within(Duration min, Duration max) {
    return text -> {
      Duration d = Durations.parseSigned(text);
      if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
        throw new IllegalArgumentException("a duration in " + Durations.format(min) + ".."
            + Durations.format(max));
      }
      return d;
    };
  }

  static final Parser<String> TEXT = text -> {
    if (text.isBlank() || text.length() > 1024) {
      throw new IllegalArgumentException("a non-blank string");
    }
    return text;
  };

  /**
   * A rule, limit, route or shared-bucket name: core's rule (1..128 printable ASCII, not blank),
   * asked of core so the two cannot drift; such names end up in headers, logs and keys.
   */
  static final Parser<String> CORE_NAME = text -> {
    Rule.builder(text);
    return text;
  };

  static final Parser<String> NAME = text -> {
    if (text.isBlank() || text.length() > 128) {
      throw new IllegalArgumentException("1..128 non-blank characters");
    }
    return text;
  };

  static final Parser<String> METHOD = text -> {
    if (!text.matches("[A-Za-z]{1,32}")) {
      throw new IllegalArgumentException("HTTP methods like GET, POST");
    }
    return text.toUpperCase(Locale.ROOT);
  };

  static Parser<String> oneOf(List<String> values) {
    return text -> {
      String t = text.trim().toLowerCase(Locale.ROOT);
      if (!values.contains(t)) {
        throw new IllegalArgumentException("one of " + String.join(", ", values));
      }
      return t;
    };
  }

  static Parser<Long> size(long min, long max) {
    return text -> {
      long v = Durations.parseSize(text);
      if (v < min || v > max) {
        throw new IllegalArgumentException("a size in " + Durations.formatSize(min) + ".."
            + Durations.formatSize(max));
      }
      return v;
    };
  }

  static final String SOURCES = "client-address, header:NAME, cookie:NAME, query:NAME, principal "
      + "or attribute:NAME";

  static Source source(String text) {
    String t = text.trim();
    if (t.equals("client-address")) {
      return Source.clientAddress();
    }
    if (t.equals("principal")) {
      return Source.principal();
    }
    int colon = t.indexOf(':');
    if (colon > 0) {
      String kind = t.substring(0, colon).trim().toLowerCase(Locale.ROOT);
      String name = t.substring(colon + 1).trim();
      if (!name.isEmpty() && name.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
        switch (kind) {
          case "header": return Source.header(name);
          case "cookie": return Source.cookie(name);
          case "query": return Source.query(name);
          case "attribute": return Source.attribute(name);
          default: break;
        }
      }
    }
    throw new IllegalArgumentException(SOURCES);
  }

  /** Checks a store URI; the store itself is opened by whoever runs the policy. */
  static String storeUri(String text) {
    String t = text.trim();
    if (t.equals("memory")) {
      return t;
    }
    try {
      URI uri = new URI(t);
      String scheme = uri.getScheme();
      if (scheme != null && List.of("redis", "rediss", "redis-cluster").contains(scheme)
          && (uri.getHost() != null || uri.getAuthority() != null)) {
        return t;
      }
    } catch (java.net.URISyntaxException e) {
      // falls through
    }
    throw new IllegalArgumentException(
        "memory, redis://HOST:PORT, rediss://HOST:PORT or redis-cluster://H1:P1,H2:P2");
  }

  /** The URI without its password, for logs and the effective policy. */
  static String redact(String uri) {
    Objects.requireNonNull(uri);
    return dev.sluice.core.Secrets.mask(uri);
  }

  static String describe(Node node) {
    if (node instanceof MappingNode) {
      return "a mapping";
    }
    if (node instanceof SequenceNode) {
      return "a list";
    }
    if (node instanceof ScalarNode s) {
      return s.getTag().equals(Tag.NULL) ? "null" : quote(s.getValue());
    }
    return String.valueOf(node);
  }

  /** Numbers and booleans as written; anything else in double quotes. */
  static String quote(String text) {
    if (text == null) {
      return "null";
    }
    if (text.matches("-?[0-9][0-9_]*(\\.[0-9]+)?") || text.equals("true") || text.equals("false")) {
      return text;
    }
    return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
  }

  /** The allowed key nearest to {@code key}, within two edits, for "did you mean". */
  static String suggest(String key, List<String> allowed) {
    String best = null;
    int bestDistance = 3;
    for (String candidate : allowed) {
      int d = distance(key.toLowerCase(Locale.ROOT), candidate.toLowerCase(Locale.ROOT));
      if (d < bestDistance) {
        best = candidate;
        bestDistance = d;
      }
    }
    return best;
  }

  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
