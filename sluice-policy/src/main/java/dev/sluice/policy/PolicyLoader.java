package dev.sluice.policy;

import dev.sluice.core.InvalidValueException;
import dev.sluice.core.Limit;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.Mode;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Source;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Reads a policy file into a {@link PolicyConfig}. Every problem is reported, not just the first,
 * each with the file, the line, the field's path, the value and what was expected. Unknown keys
 * and wrong types are errors: a typo that silently disables a limit is the worst kind of bug a
 * rate limiter can have.
 *
 * <p>Scalars may read the environment: {@code ${NAME}} or {@code ${NAME:-default}} (an unset or
 * empty variable takes the default). When the variable's value makes the field invalid, the
 * default is used and one warning names the variable (seed 000: "Values must be positive numbers.
 * Anything else falls back to the default."). A rule's {@code offSwitch} names a variable whose
 * value {@code 0} switches the rule off (seed 004's {@code RATE_LIMIT_MAX=0}).
 */
public final class PolicyLoader {

  /** Where the embedded default policy (seed 000's table) lives on the class path. */
  public static final String DEFAULT_RESOURCE = "/dev/sluice/policy/default-policy.yaml";

  /** The source name of the embedded default in messages. */
  public static final String DEFAULT_NAME = "<embedded default>";

  /** Variables the embedded default reads; setting one while a file ignores it gets a warning. */
  static final List<String> WELL_KNOWN_VARIABLES = List.of(
      "LIMIT_CONNECT_BURST", "LIMIT_CONNECT_RATE", "LIMIT_READ_BURST", "LIMIT_READ_RATE",
      "LIMIT_ANALYSIS_BURST", "LIMIT_ANALYSIS_RATE", "LIMIT_WRITE_BURST", "LIMIT_WRITE_RATE",
      "TRUST_PROXY", "TRUSTED_PROXIES", "RATE_LIMIT_MAX", "RATE_LIMIT_WINDOW_MS");

  private static final List<String> TOP_KEYS = List.of("version", "trust", "dimensions", "rules",
      "routes", "global", "response", "cors", "websocket", "gateway", "store", "moderation");
  private static final List<String> TRUST_KEYS =
      List.of("hops", "proxies", "headers", "ipv6Prefix", "unknownBucket");
  private static final List<String> RULE_KEYS =
      List.of("key", "limits", "ban", "mode", "onStoreError", "sharedBucket", "offSwitch");
  private static final List<String> ROUTE_KEYS =
      List.of("name", "methods", "paths", "websocket", "rules", "exempt", "cost");
  private static final List<String> RESPONSE_KEYS = List.of("rateLimitHeaders", "ietfHeaders",
      "htmlTemplate", "unavailableStatus", "unavailableHtmlTemplate");
  private static final List<String> CORS_KEYS = List.of("allowOrigins", "allowMethods",
      "allowHeaders", "exposeHeaders", "allowCredentials", "maxAge", "limitPreflights");
  private static final List<String> WEBSOCKET_KEYS = List.of("refuseBeforeUpgrade",
      "maxConnectionsPerIp", "maxConnectionsUnknown", "maxConnectionsPerSession",
      "sessionDimension", "maxFrameBytes", "maxFragments", "floodBurst", "floodPerSecond",
      "actionField", "actionRules", "strikes", "strikeWindow", "closeTimeout");
  private static final List<String> GATEWAY_KEYS = List.of("maxBodyBytes", "maxHeaderBytes",
      "maxInitialLineBytes", "idleTimeout", "handshakeTimeout", "upstreamConnectTimeout",
      "upstreamResponseTimeout");
  private static final Map<String, List<String>> LIMIT_KEYS = Map.of(
      "token-bucket", List.of("type", "name", "burst", "refill", "period"),
      "fixed-window", List.of("type", "name", "limit", "window"),
      "sliding-window", List.of("type", "name", "limit", "window"),
      "sliding-log", List.of("type", "name", "limit", "window"),
      "score", List.of("type", "name", "maxScore", "perAction", "decay"));
  private static final List<String> HEADER_NAMES =
      List.of("forwarded", "x-forwarded-for", "x-real-ip");

  private static final Pattern VARIABLE =
      Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?}");

  private PolicyLoader() {}

  /** Loads the embedded default policy (seed 000's table) with {@code env} applied. */
  public static LoadedPolicy loadDefault(Map<String, String> env) throws ConfigException {
    try (InputStream in = PolicyLoader.class.getResourceAsStream(DEFAULT_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(DEFAULT_RESOURCE + " is missing from the class path");
      }
      return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), DEFAULT_NAME, null, env);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + DEFAULT_RESOURCE, e);
    }
  }

  /** Loads {@code file} with {@code env} applied. */
  public static LoadedPolicy load(Path file, Map<String, String> env) throws ConfigException {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException | RuntimeException e) {
      String why = e instanceof java.nio.file.NoSuchFileException ? "no such file"
          : e instanceof java.nio.charset.MalformedInputException ? "not UTF-8 text"
          : e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
      throw new ConfigException(List.of(new ConfigError(file.toString(), 1, "(file)",
          "cannot be read: " + why, "a readable UTF-8 policy file")), List.of());
    }
    return parse(text, file.toString(), file, env);
  }

  /**
   * Parses policy {@code text} named {@code name} in messages; {@code source} (may be null) is the
   * file it came from, against which relative paths in it are resolved.
   */
  public static LoadedPolicy parse(String text, String name, Path source, Map<String, String> env)
      throws ConfigException {
    Ctx ctx = new Ctx(name, source, env::get);
    Node root;
    try {
      LoaderOptions options = new LoaderOptions();
      options.setAllowDuplicateKeys(false);
      options.setMaxAliasesForCollections(20);
      options.setCodePointLimit(4 * 1024 * 1024);
      root = new Yaml(options).compose(new StringReader(text));
    } catch (MarkedYAMLException e) {
      Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
      String problem = e.getProblem() == null ? "invalid YAML" : e.getProblem();
      ctx.errors.add(new ConfigError(name, mark == null ? 1 : mark.getLine() + 1, "(yaml)",
          problem.replace('\n', ' '), "valid YAML"));
      throw new ConfigException(ctx.errors, ctx.warnings);
    } catch (YAMLException e) {
      ctx.errors.add(new ConfigError(name, 1, "(yaml)", String.valueOf(e.getMessage()),
          "valid YAML"));
      throw new ConfigException(ctx.errors, ctx.warnings);
    }
    if (root == null || (root instanceof ScalarNode s && s.getTag().equals(Tag.NULL))) {
      ctx.errors.add(new ConfigError(name, 1, "(document)", "empty",
          "a mapping with sections like rules: and routes:"));
      throw new ConfigException(ctx.errors, ctx.warnings);
    }
    PolicyConfig config = new Builder(ctx).build(root);
    ctx.errors.sort(java.util.Comparator.comparingInt(ConfigError::line));
    if (!ctx.errors.isEmpty() || config == null) {
      throw new ConfigException(ctx.errors, ctx.warnings);
    }
    for (String var : WELL_KNOWN_VARIABLES) {
      String value = env.get(var);
      if (value != null && !ctx.referenced.contains(var)) {
        ctx.warnings.add(var + " is set but " + name + " does not read it (write ${" + var
            + "} in the policy to use it)");
      }
    }
    return new LoadedPolicy(config, ctx.effective, ctx.warnings, name);
  }

  // ---------------------------------------------------------------------------------------------

  /** A value parser; throws {@link IllegalArgumentException} whose message is what was expected. */
  @FunctionalInterface
  interface Parser<T> {
    T parse(String text);
  }

  static final class Ctx {
    final String file;
    final Path source;
    final Function<String, String> env;
    final List<ConfigError> errors = new ArrayList<>();
    final List<String> warnings = new ArrayList<>();
    final Set<String> warned = new LinkedHashSet<>();
    final Set<String> referenced = new LinkedHashSet<>();
    final Set<String> quiet = new LinkedHashSet<>();
    final Map<String, Object> effective = new LinkedHashMap<>();

    Ctx(String file, Path source, Function<String, String> env) {
      this.file = file;
      this.source = source;
      this.env = env;
    }

    void error(Node at, String path, String value, String expected) {
      errors.add(new ConfigError(file, at == null ? 1 : at.getStartMark().getLine() + 1, path,
          value, expected));
    }

    /**
     * Reports a core builder's {@link InvalidValueException} at its field's line when
     * {@code owner} has that field (showing the value as written, {@code 500us} rather than
     * core's {@code PT0.0005S}), otherwise at {@code at}.
     */
    void coreError(Node at, String path, IllegalArgumentException e, Obj owner) {
      if (!(e instanceof InvalidValueException invalid)) {
        error(at, path, String.valueOf(e.getMessage()), "a valid value");
        return;
      }
      String field = invalid.field();
      Node fieldNode = owner == null ? null : owner.node(field);
      if (fieldNode instanceof ScalarNode scalar) {
        error(fieldNode, owner.path(field), quote(interpolate(scalar.getValue()).withEnv),
            invalid.expected());
      } else if (fieldNode != null) {
        error(fieldNode, owner.path(field), invalid.value(), invalid.expected());
      } else {
        error(at, path + (owner != null && owner.keys.contains(field) ? "." + field : ""),
            invalid.value(), invalid.expected());
      }
    }

    /** The scalar's text with variables applied, or null after reporting an error. */
    <T> T scalar(Node node, String path, String expected, Parser<T> parser) {
      if (!(node instanceof ScalarNode s)) {
        error(node, path, describe(node), expected);
        return null;
      }
      String raw = s.getValue();
      if (s.getTag().equals(Tag.NULL)) {
        error(node, path, "null", expected);
        return null;
      }
      Interpolation in = interpolate(raw);
      if (!in.missing.isEmpty()) {
        error(node, path, quote(raw), "environment variable " + in.missing.get(0)
            + " to be set, or a default: ${" + in.missing.get(0) + ":-value}");
        return null;
      }
      try {
        return parser.parse(in.withEnv);
      } catch (IllegalArgumentException | ArithmeticException e) {
        String why = expectation(e, expected);
        if (!in.fromEnv.isEmpty()) {
          try {
            T fallback = parser.parse(in.withDefaults);
            for (String var : in.fromEnv) {
              if (!quiet.contains(var) && warned.add(var)) {
                warnings.add(var + "=" + quote(env.apply(var)) + " is not valid for " + path
                    + " (expected: " + why + "); using the default " + in.withDefaults);
              }
            }
            return fallback;
          } catch (IllegalArgumentException | ArithmeticException e2) {
            error(node, path, quote(in.withDefaults), expectation(e2, expected));
            return null;
          }
        }
        error(node, path, quote(in.withEnv), why);
        return null;
      }
    }

    /**
     * What a parser said was expected: core's typed expectation, or the message of the loader's
     * own parsers, which is the expectation itself.
     */
    static String expectation(RuntimeException e, String fallback) {
      if (e instanceof InvalidValueException invalid) {
        return invalid.expected();
      }
      return e.getMessage() == null ? fallback : e.getMessage();
    }

    Interpolation interpolate(String raw) {
      Interpolation in = new Interpolation();
      Matcher m = VARIABLE.matcher(raw);
      StringBuilder withEnv = new StringBuilder();
      StringBuilder withDefaults = new StringBuilder();
      int last = 0;
      while (m.find()) {
        String var = m.group(1);
        String dflt = m.group(2);
        referenced.add(var);
        String value = env.apply(var);
        withEnv.append(raw, last, m.start());
        withDefaults.append(raw, last, m.start());
        if (value == null || value.isEmpty()) {
          if (dflt == null) {
            in.missing.add(var);
            dflt = "";
          }
          withEnv.append(dflt);
        } else {
          withEnv.append(value);
          in.fromEnv.add(var);
        }
        withDefaults.append(dflt == null ? "" : dflt);
        last = m.end();
      }
      withEnv.append(raw.substring(last));
      withDefaults.append(raw.substring(last));
      in.withEnv = withEnv.toString();
      in.withDefaults = withDefaults.toString();
      return in;
    }
  }

  static final class Interpolation {
    String withEnv;
    String withDefaults;
    final List<String> fromEnv = new ArrayList<>();
    final List<String> missing = new ArrayList<>();
  }

  /** A mapping node checked for unknown and duplicate keys. */
  static final class Obj {
    final Ctx ctx;
    final String path;
    final Node node;
    final List<String> keys;
    final Map<String, NodeTuple> fields = new LinkedHashMap<>();

    private Obj(Ctx ctx, Node node, String path, List<String> keys) {
      this.ctx = ctx;
      this.node = node;
      this.path = path;
      this.keys = keys;
    }

    /** Null (after reporting) when {@code node} is not a mapping. */
    static Obj of(Ctx ctx, Node node, String path, List<String> allowed, String what) {
      if (node == null) {
        return new Obj(ctx, null, path, allowed);
      }
      if (!(node instanceof MappingNode m)) {
        if (node instanceof ScalarNode s && s.getTag().equals(Tag.NULL)) {
          return new Obj(ctx, node, path, allowed);
        }
        ctx.error(node, path, describe(node), what);
        return null;
      }
      Obj obj = new Obj(ctx, node, path, allowed);
      for (NodeTuple t : m.getValue()) {
        Node k = t.getKeyNode();
        if (!(k instanceof ScalarNode ks)) {
          ctx.error(k, path, describe(k), "string keys");
          continue;
        }
        String key = ks.getValue();
        if (allowed != null && !allowed.contains(key)) {
          String hint = suggest(key, allowed);
          ctx.error(k, obj.path(key), "unknown key",
              (hint == null ? "" : "did you mean '" + hint + "'? ") + "one of "
                  + String.join(", ", allowed));
          continue;
        }
        if (obj.fields.put(key, t) != null) {
          ctx.error(k, obj.path(key), "appears twice", "each key once");
        }
      }
      return obj;
    }

    String path(String key) {
      String k = key.matches("[A-Za-z0-9_-]+") ? key : "\"" + key + "\"";
      return path.isEmpty() ? k : path + "." + k;
    }

    Node node(String key) {
      NodeTuple t = fields.get(key);
      return t == null ? null : t.getValueNode();
    }

    boolean has(String key) {
      return fields.containsKey(key);
    }

    <T> T get(String key, String expected, Parser<T> parser, T dflt) {
      Node n = node(key);
      if (n == null) {
        return dflt;
      }
      T v = ctx.scalar(n, path(key), expected, parser);
      return v == null ? dflt : v;
    }

    /** A list: a YAML sequence, or a scalar with comma-separated items (for variables). */
    <T> List<T> list(String key, String expected, Parser<T> item, List<T> dflt) {
      Node n = node(key);
      if (n == null) {
        return dflt;
      }
      String p = path(key);
      if (n instanceof SequenceNode seq) {
        List<T> out = new ArrayList<>();
        int i = 0;
        for (Node element : seq.getValue()) {
          T v = ctx.scalar(element, p + "[" + i++ + "]", expected, item);
          if (v != null) {
            out.add(v);
          }
        }
        return out;
      }
      if (n instanceof ScalarNode) {
        List<T> v = ctx.scalar(n, p, "a list of " + expected, text -> {
          List<T> out = new ArrayList<>();
          for (String part : text.split(",")) {
            if (!part.isBlank()) {
              out.add(item.parse(part.trim()));
            }
          }
          return out;
        });
        return v == null ? dflt : v;
      }
      ctx.error(n, p, describe(n), "a list of " + expected);
      return dflt;
    }
  }

  // --- value parsers ---------------------------------------------------------------------------

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

  // --- the document ----------------------------------------------------------------------------

  /** Walks the document section by section, collecting errors and the effective tree. */
  private static final class Builder {
    private final Ctx ctx;
    private final Map<String, Object> out;
    private final Set<String> dimensions = new LinkedHashSet<>();
    private final Set<String> ruleNames = new LinkedHashSet<>();
    /** Each route's cost where it is above 1, checked against its rules once all are known. */
    private final List<RouteCost> costs = new ArrayList<>();

    private record RouteCost(String path, Node node, long cost, List<String> rules) {}

    Builder(Ctx ctx) {
      this.ctx = ctx;
      this.out = ctx.effective;
    }

    PolicyConfig build(Node root) {
      Obj doc = Obj.of(ctx, root, "", TOP_KEYS, "a mapping with sections like rules: and routes:");
      if (doc == null) {
        return null;
      }
      doc.get("version", "1", integer(1, 1), 1);
      out.put("version", 1);
      Policy.Builder policy = Policy.builder();
      TrustSettings trust = trust(doc, policy);
      dimensions(doc, policy);
      List<Rule> rules = rules(doc);
      rules.forEach(policy::rule);
      routes(doc, policy);
      List<String> global = global(doc, policy);
      checkCosts(rules, global);
      ResponseSettings response = response(doc);
      CorsSettings cors = cors(doc);
      WebSocketSettings websocket = websocket(doc);
      GatewaySettings gateway = gateway(doc);
      StoreSettings store = store(doc);
      ModerationSettings moderation = ModerationSection.parse(ctx, doc, websocket.actionField(),
          out);
      if (!ctx.errors.isEmpty()) {
        return null;
      }
      Policy built;
      try {
        built = policy.build();
      } catch (IllegalArgumentException e) {
        ctx.coreError(root, "(policy)", e, null);
        return null;
      }
      return new PolicyConfig(built, response, cors, websocket, gateway, store, ctx.source, trust,
          moderation);
    }

    private Obj section(Obj doc, String key, List<String> keys, String what) {
      Node n = doc.node(key);
      if (n == null) {
        return Obj.of(ctx, null, key, keys, what);
      }
      return Obj.of(ctx, n, key, keys, what);
    }

    private TrustSettings trust(Obj doc, Policy.Builder policy) {
      TrustSettings d = TrustSettings.defaults();
      Obj t = section(doc, "trust", TRUST_KEYS, "a mapping with hops, proxies, headers, ...");
      if (t == null) {
        return d;
      }
      int hops = t.get("hops", "0..64", integer(0, 64), d.hops());
      List<String> proxies = t.list("proxies", "networks like 10.0.0.0/8 or 192.168.1.7",
          text -> {
            try {
              ClientAddressResolver.builder().trustedProxies(List.of(text));
            } catch (IllegalArgumentException e) {
              throw new IllegalArgumentException(
                  "networks like 10.0.0.0/8, 2001:db8::/32 or 192.168.1.7");
            }
            return text;
          }, d.proxies());
      List<String> headers = t.list("headers", "one of " + String.join(", ", HEADER_NAMES),
          oneOf(HEADER_NAMES), d.headers());
      int prefix = t.get("ipv6Prefix", "1..128", integer(1, 128), d.ipv6Prefix());
      String unknown = t.get("unknownBucket", "1..64 printable ASCII characters, no spaces",
          text -> {
            ClientAddressResolver.builder().unknownBucket(text);
            return text;
          }, d.unknownBucket());
      ClientAddressResolver.Builder resolver = ClientAddressResolver.builder()
          .ipv6Prefix(prefix).unknownBucket(unknown)
          .header(ClientAddressResolver.Header.FORWARDED, headers.contains("forwarded"))
          .header(ClientAddressResolver.Header.X_FORWARDED_FOR, headers.contains("x-forwarded-for"))
          .header(ClientAddressResolver.Header.X_REAL_IP, headers.contains("x-real-ip"));
      if (hops > 0 && !proxies.isEmpty()) {
        ctx.error(t.node("proxies"), t.path("proxies"), quote(String.join(",", proxies)),
            "either trust.hops (TRUST_PROXY) or trust.proxies (TRUSTED_PROXIES), not both; "
                + "hops is " + hops);
      } else {
        resolver.trustedHops(hops).trustedProxies(proxies);
      }
      policy.clientAddress(resolver.build());
      Map<String, Object> tree = new LinkedHashMap<>();
      tree.put("hops", hops);
      tree.put("proxies", proxies);
      tree.put("headers", headers);
      tree.put("ipv6Prefix", prefix);
      tree.put("unknownBucket", unknown);
      out.put("trust", tree);
      return new TrustSettings(hops, List.copyOf(proxies), List.copyOf(headers), prefix, unknown);
    }

    private void dimensions(Obj doc, Policy.Builder policy) {
      dimensions.add("ip");
      Map<String, Object> tree = new LinkedHashMap<>();
      tree.put("ip", "client-address");
      Obj dims = section(doc, "dimensions", null,
          "a mapping of dimension names to sources (client-address, header:NAME, cookie:NAME, "
              + "query:NAME)");
      if (dims != null) {
        for (Map.Entry<String, NodeTuple> e : dims.fields.entrySet()) {
          String name = e.getKey();
          Node keyNode = e.getValue().getKeyNode();
          try {
            policy.dimension(name, Source.clientAddress());
          } catch (IllegalArgumentException ex) {
            ctx.error(keyNode, dims.path(name), quote(name),
                "a dimension name: letters, digits, '-' or '_', starting with a letter");
            continue;
          }
          Source source = ctx.scalar(e.getValue().getValueNode(), dims.path(name),
              "client-address, header:NAME, cookie:NAME or query:NAME", PolicyLoader::source);
          if (source != null) {
            policy.dimension(name, source);
            tree.put(name, source.toString());
          }
          dimensions.add(name);
        }
      }
      out.put("dimensions", tree);
    }

    private List<Rule> rules(Obj doc) {
      List<Rule> rules = new ArrayList<>();
      Map<String, Object> tree = new LinkedHashMap<>();
      out.put("rules", tree);
      Obj all = section(doc, "rules", null, "a mapping of rule names to rules");
      if (all == null) {
        return rules;
      }
      for (Map.Entry<String, NodeTuple> e : all.fields.entrySet()) {
        String name = e.getKey();
        String path = all.path(name);
        ruleNames.add(name);
        Node keyNode = e.getValue().getKeyNode();
        Rule.Builder b;
        try {
          b = Rule.builder(name);
        } catch (IllegalArgumentException ex) {
          ctx.error(keyNode, path, quote(name), Ctx.expectation(ex, "a rule name"));
          continue;
        }
        Obj r = Obj.of(ctx, e.getValue().getValueNode(), path, RULE_KEYS,
            "a mapping with key, limits, ban, mode, onStoreError");
        if (r == null) {
          continue;
        }
        Map<String, Object> rt = new LinkedHashMap<>();
        String key = r.get("key", "dimension names joined by ':', like ip or event:user:ip",
            text -> {
              Rule.builder("x").key(text);
              return text;
            }, "ip");
        b.key(key);
        rt.put("key", key);
        boolean keyOk = true;
        for (String dim : key.split(":")) {
          if (!dimensions.contains(dim)) {
            ctx.error(r.has("key") ? r.node("key") : r.node, r.path("key"), quote(key),
                "dimensions declared under dimensions:, one of " + dimensions
                    + " (missing '" + dim + "')");
            keyOk = false;
            break;
          }
        }
        String offSwitch = r.get("offSwitch", "an environment variable name",
            text -> {
              if (!text.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw new IllegalArgumentException("an environment variable name like RATE_LIMIT_MAX");
              }
              return text;
            }, null);
        boolean switchedOff = false;
        if (offSwitch != null) {
          ctx.referenced.add(offSwitch);
          String v = ctx.env.apply(offSwitch);
          if (v != null && v.trim().matches("0+(\\.0*)?")) {
            switchedOff = true;
            ctx.quiet.add(offSwitch);
          }
          rt.put("offSwitch", offSwitch);
        }
        List<Map<String, Object>> lt = new ArrayList<>();
        int before = ctx.errors.size();
        Node limitsNode = r.node("limits");
        if (limitsNode == null) {
          ctx.error(r.node, r.path("limits"), "missing", "a list of limits, each with a type: "
              + String.join(", ", new TreeSet<>(LIMIT_KEYS.keySet())));
        } else if (!(limitsNode instanceof SequenceNode seq)) {
          ctx.error(limitsNode, r.path("limits"), describe(limitsNode), "a list of limits");
        } else {
          if (seq.getValue().isEmpty()) {
            ctx.error(limitsNode, r.path("limits"), "[]", "at least one limit");
          }
          int i = 0;
          int count = seq.getValue().size();
          for (Node ln : seq.getValue()) {
            Limit limit = limit(ln, r.path("limits") + "[" + i++ + "]", name, count, lt);
            if (limit != null) {
              try {
                b.limit(limit);
              } catch (IllegalArgumentException ex) {
                ctx.coreError(ln, r.path("limits"), ex, null);
              }
            }
          }
        }
        rt.put("limits", lt);
        Duration ban = r.get("ban", Durations.EXPECTED, DURATION, Duration.ZERO);
        try {
          b.ban(ban);
        } catch (IllegalArgumentException ex) {
          ctx.coreError(r.node("ban"), r.path("ban"), ex, r);
        }
        if (!ban.isZero()) {
          rt.put("ban", Durations.format(ban));
        }
        String mode = r.get("mode", "enforce, shadow or off",
            oneOf(List.of("enforce", "shadow", "off")), "enforce");
        if (switchedOff) {
          mode = "off";
          ctx.warnings.add(offSwitch + "=0 switches rule '" + name + "' off");
        }
        b.mode(Mode.valueOf(mode.toUpperCase(Locale.ROOT)));
        rt.put("mode", mode);
        String onError = r.get("onStoreError", "allow or deny", oneOf(List.of("allow", "deny")),
            "allow");
        b.onStoreError(OnStoreError.valueOf(onError.toUpperCase(Locale.ROOT)));
        rt.put("onStoreError", onError);
        String shared = r.get("sharedBucket", "1..128 printable ASCII characters", CORE_NAME,
            "unknown");
        b.sharedBucket(shared);
        rt.put("sharedBucket", shared);
        tree.put(name, rt);
        if (ctx.errors.size() == before && keyOk) {
          try {
            rules.add(b.build());
          } catch (IllegalArgumentException ex) {
            ctx.coreError(r.node, path, ex, r);
          }
        }
      }
      return rules;
    }

    private Limit limit(Node node, String path, String rule, int count,
        List<Map<String, Object>> tree) {
      if (!(node instanceof MappingNode)) {
        ctx.error(node, path, describe(node), "a mapping with a type: "
            + String.join(", ", new TreeSet<>(LIMIT_KEYS.keySet())));
        return null;
      }
      List<String> types = new ArrayList<>(new TreeSet<>(LIMIT_KEYS.keySet()));
      Node typeNode = null;
      for (NodeTuple t : ((MappingNode) node).getValue()) {
        if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals("type")) {
          typeNode = t.getValueNode();
        }
      }
      if (typeNode == null) {
        ctx.error(node, path + ".type", "missing", "one of " + String.join(", ", types));
        return null;
      }
      String type = ctx.scalar(typeNode, path + ".type", "one of " + String.join(", ", types),
          oneOf(types));
      if (type == null) {
        return null;
      }
      Obj l = Obj.of(ctx, node, path, LIMIT_KEYS.get(type), "a mapping");
      String name = l.get("name", "1..128 printable ASCII characters", CORE_NAME,
          count == 1 ? rule : type);
      Map<String, Object> lt = new LinkedHashMap<>();
      lt.put("type", type);
      lt.put("name", name);
      int before = ctx.errors.size();
      Limit limit = null;
      try {
        switch (type) {
          case "token-bucket": {
            Long burst = required(l, "burst", "a whole number > 0", wholeNumber(1, Integer.MAX_VALUE));
            Long refill = required(l, "refill", "a whole number > 0",
                wholeNumber(1, Integer.MAX_VALUE));
            Duration period = required(l, "period", Durations.EXPECTED, POSITIVE_DURATION);
            lt.put("burst", burst);
            lt.put("refill", refill);
            lt.put("period", period == null ? null : Durations.format(period));
            if (ctx.errors.size() == before) {
              limit = Limit.tokenBucket(name, burst, refill, period);
            }
            break;
          }
          case "score": {
            Double max = required(l, "maxScore", "a number > 0", POSITIVE_NUMBER);
            Double per = required(l, "perAction", "a number > 0", POSITIVE_NUMBER);
            Duration decay = required(l, "decay", Durations.EXPECTED, POSITIVE_DURATION);
            lt.put("maxScore", max);
            lt.put("perAction", per);
            lt.put("decay", decay == null ? null : Durations.format(decay));
            if (ctx.errors.size() == before) {
              limit = Limit.score(name, max, per, decay);
            }
            break;
          }
          default: {
            long max = type.equals("sliding-log") ? 100_000 : Integer.MAX_VALUE;
            Long n = required(l, "limit", "a whole number > 0", wholeNumber(1, max));
            Duration window = required(l, "window", Durations.EXPECTED, POSITIVE_DURATION);
            lt.put("limit", n);
            lt.put("window", window == null ? null : Durations.format(window));
            if (ctx.errors.size() == before) {
              limit = type.equals("fixed-window") ? Limit.fixedWindow(name, n, window)
                  : type.equals("sliding-window") ? Limit.slidingWindow(name, n, window)
                  : Limit.slidingLog(name, n.intValue(), window);
            }
            break;
          }
        }
      } catch (IllegalArgumentException e) {
        ctx.coreError(node, path, e, l);
      }
      tree.add(lt);
      return limit;
    }

    private <T> T required(Obj o, String key, String expected, Parser<T> parser) {
      if (!o.has(key)) {
        ctx.error(o.node, o.path(key), "missing", expected);
        return null;
      }
      return o.get(key, expected, parser, null);
    }

    private void routes(Obj doc, Policy.Builder policy) {
      List<Map<String, Object>> tree = new ArrayList<>();
      out.put("routes", tree);
      Node n = doc.node("routes");
      if (n == null) {
        return;
      }
      if (!(n instanceof SequenceNode seq)) {
        ctx.error(n, "routes", describe(n), "a list of routes, tried in order");
        return;
      }
      Set<String> names = new LinkedHashSet<>();
      int i = 0;
      for (Node rn : seq.getValue()) {
        String path = "routes[" + i++ + "]";
        Obj r = Obj.of(ctx, rn, path, ROUTE_KEYS,
            "a mapping with name, methods, paths, websocket, rules, exempt, cost");
        if (r == null) {
          continue;
        }
        int before = ctx.errors.size();
        String name = r.get("name", "1..128 printable ASCII characters", CORE_NAME,
            "route-" + i);
        if (!names.add(name)) {
          ctx.error(r.node("name"), r.path("name"), quote(name), "a name no other route has");
        }
        Route.Builder b = Route.builder(name);
        List<String> methods = r.list("methods", "HTTP methods like GET",
            text -> {
              if (!text.matches("[A-Za-z]{1,32}")) {
                throw new IllegalArgumentException("HTTP methods like GET, POST");
              }
              return text.toUpperCase(Locale.ROOT);
            }, List.of());
        List<String> paths = r.list("paths", "path patterns like /api/** or /healthz",
            text -> {
              Route.builder("x").path(text);
              return text;
            }, List.of());
        Boolean websocket = r.get("websocket", "true (only upgrades) or false (never upgrades); "
            + "leave it out for either", BOOLEAN, null);
        boolean exempt = r.get("exempt", "true or false", BOOLEAN, false);
        long cost = r.get("cost", "a whole number > 0", wholeNumber(1, Integer.MAX_VALUE), 1L);
        List<String> rules = r.list("rules", "rule names", CORE_NAME, List.of());
        Node rulesNode = r.node("rules");
        for (int k = 0; k < rules.size(); k++) {
          String rule = rules.get(k);
          if (!ruleNames.contains(rule)) {
            boolean listed = rulesNode instanceof SequenceNode rs && rs.getValue().size() == rules.size();
            ctx.error(listed ? ((SequenceNode) rulesNode).getValue().get(k) : rulesNode,
                r.path("rules") + (listed ? "[" + k + "]" : ""), quote(rule),
                "a rule defined under rules:, one of " + ruleNames);
          }
        }
        if (exempt && !rules.isEmpty()) {
          ctx.error(rulesNode, r.path("rules"), rules.toString(),
              "no rules on an exempt route (exempt requests are never limited)");
        }
        methods.forEach(b::method);
        paths.forEach(b::path);
        rules.forEach(b::rule);
        b.websocket(websocket).exempt(exempt).cost(cost);
        Map<String, Object> rt = new LinkedHashMap<>();
        rt.put("name", name);
        rt.put("methods", methods);
        rt.put("paths", paths);
        if (websocket != null) {
          rt.put("websocket", websocket);
        }
        rt.put("rules", rules);
        rt.put("exempt", exempt);
        rt.put("cost", cost);
        tree.add(rt);
        if (cost > 1) {
          costs.add(new RouteCost(r.path("cost"), r.node("cost"), cost, rules));
        }
        if (ctx.errors.size() == before) {
          policy.route(b.build());
        }
      }
    }

    /**
     * A route's cost above the capacity of a rule it applies (its own or a global one) can never
     * be paid: core throws on every such request. Rejected here, at the route's line, instead.
     * Rules that are off are never evaluated, so they do not count.
     */
    private void checkCosts(List<Rule> rules, List<String> global) {
      Map<String, Rule> byName = new LinkedHashMap<>();
      rules.forEach(rule -> byName.put(rule.name(), rule));
      for (RouteCost route : costs) {
        List<String> applied = new ArrayList<>(route.rules());
        applied.addAll(global);
        for (String name : applied) {
          Rule rule = byName.get(name);
          if (rule == null || rule.mode() == Mode.OFF) {
            continue;
          }
          for (Limit limit : rule.limits()) {
            if (route.cost() > limit.capacity()) {
              ctx.error(route.node(), route.path(), Long.toString(route.cost()), "<= "
                  + limit.capacity() + ", the capacity of limit '" + limit.name() + "' in "
                  + (route.rules().contains(name) ? "rule '" : "global rule '") + name + "'");
              break;
            }
          }
        }
      }
    }

    private List<String> global(Obj doc, Policy.Builder policy) {
      List<String> global = doc.list("global", "rule names", CORE_NAME, List.of());
      for (String name : global) {
        if (!ruleNames.contains(name)) {
          ctx.error(doc.node("global"), "global", quote(name),
              "a rule defined under rules:, one of " + ruleNames);
        } else {
          policy.global(name);
        }
      }
      out.put("global", global);
      return global;
    }

    private ResponseSettings response(Obj doc) {
      ResponseSettings d = ResponseSettings.defaults();
      Obj o = section(doc, "response", RESPONSE_KEYS, "a mapping");
      if (o == null) {
        return d;
      }
      boolean rl = o.get("rateLimitHeaders", "true or false", BOOLEAN, d.rateLimitHeaders());
      boolean ietf = o.get("ietfHeaders", "true or false", BOOLEAN, d.ietfHeaders());
      String templatePath = o.get("htmlTemplate", "a path to an HTML file", TEXT, null);
      String template = template(o, "htmlTemplate", templatePath);
      int unavailable = o.get("unavailableStatus", "429 or 500..599", text -> {
        Integer v = null;
        try {
          v = integer(429, 599).parse(text);
        } catch (IllegalArgumentException e) {
          // reported below with the whole range
        }
        if (v == null || (v != 429 && v < 500)) {
          throw new IllegalArgumentException("429 or 500..599");
        }
        return v;
      }, d.unavailableStatus());
      String unavailablePath = o.get("unavailableHtmlTemplate", "a path to an HTML file", TEXT,
          null);
      String unavailableTemplate = template(o, "unavailableHtmlTemplate", unavailablePath);
      Map<String, Object> tree = new LinkedHashMap<>();
      tree.put("rateLimitHeaders", rl);
      tree.put("ietfHeaders", ietf);
      if (templatePath != null) {
        tree.put("htmlTemplate", templatePath);
      }
      tree.put("unavailableStatus", unavailable);
      if (unavailablePath != null) {
        tree.put("unavailableHtmlTemplate", unavailablePath);
      }
      out.put("response", tree);
      return new ResponseSettings(rl, ietf, template, unavailable, unavailableTemplate,
          templatePath, unavailablePath);
    }

    /** The contents of the HTML file at {@code key}, relative to the policy file; null if none. */
    private String template(Obj o, String key, String path) {
      if (path == null) {
        return null;
      }
      Path p = Path.of(path);
      if (!p.isAbsolute() && ctx.source != null && ctx.source.toAbsolutePath().getParent() != null) {
        p = ctx.source.toAbsolutePath().getParent().resolve(p);
      }
      try {
        return Files.readString(p, StandardCharsets.UTF_8);
      } catch (IOException | RuntimeException e) {
        ctx.error(o.node(key), o.path(key), quote(path), "a readable UTF-8 file (looked at " + p
            + ")");
        return null;
      }
    }

    private CorsSettings cors(Obj doc) {
      Obj o = section(doc, "cors", CORS_KEYS, "a mapping");
      CorsSettings d = CorsSettings.disabled();
      if (o == null) {
        return d;
      }
      List<String> origins = o.list("allowOrigins", "origins like https://app.example.com, or *",
          text -> {
            if (!text.equals("*") && !text.matches("(?i)https?://[^/\\s]+")) {
              throw new IllegalArgumentException(
                  "origins like https://app.example.com (scheme and host, no path), or *");
            }
            return text;
          }, d.allowOrigins());
      List<String> methods = o.list("allowMethods", "HTTP methods", TEXT, d.allowMethods());
      List<String> headers = o.list("allowHeaders", "header names", TEXT, d.allowHeaders());
      List<String> expose = o.list("exposeHeaders", "header names", TEXT, d.exposeHeaders());
      boolean credentials = o.get("allowCredentials", "true or false", BOOLEAN, false);
      Duration maxAge = o.get("maxAge", Durations.EXPECTED, DURATION, Duration.ZERO);
      boolean limitPreflights = o.get("limitPreflights", "true or false", BOOLEAN, false);
      if (credentials && origins.contains("*")) {
        ctx.error(o.node("allowCredentials"), o.path("allowCredentials"), "true",
            "false when allowOrigins contains * (browsers reject credentials with a wildcard "
                + "origin; list the origins instead)");
      }
      Map<String, Object> tree = new LinkedHashMap<>();
      tree.put("allowOrigins", origins);
      tree.put("allowMethods", methods);
      tree.put("allowHeaders", headers);
      tree.put("exposeHeaders", expose);
      tree.put("allowCredentials", credentials);
      tree.put("maxAge", Durations.format(maxAge));
      tree.put("limitPreflights", limitPreflights);
      out.put("cors", tree);
      return new CorsSettings(List.copyOf(origins), List.copyOf(methods), List.copyOf(headers),
          List.copyOf(expose), credentials, maxAge, limitPreflights);
    }

    private WebSocketSettings websocket(Obj doc) {
      WebSocketSettings d = WebSocketSettings.defaults();
      Obj o = section(doc, "websocket", WEBSOCKET_KEYS, "a mapping");
      if (o == null) {
        return d;
      }
      boolean refuse = o.get("refuseBeforeUpgrade", "true or false", BOOLEAN,
          d.refuseBeforeUpgrade());
      int perIp = o.get("maxConnectionsPerIp", "0..1000000 (0: no cap)", integer(0, 1_000_000),
          d.maxConnectionsPerIp());
      int unknown = o.get("maxConnectionsUnknown", "0..1000000 (0: no cap)",
          integer(0, 1_000_000), d.maxConnectionsUnknown());
      int perSession = o.get("maxConnectionsPerSession", "0..1000000 (0: no cap)",
          integer(0, 1_000_000), d.maxConnectionsPerSession());
      String session = o.get("sessionDimension", "a dimension name", NAME, d.sessionDimension());
      if (session != null && !dimensions.contains(session)) {
        ctx.error(o.node("sessionDimension"), o.path("sessionDimension"), quote(session),
            "a dimension declared under dimensions:, one of " + dimensions);
      }
      long frame = o.get("maxFrameBytes", "a size in 125..64MiB", size(125, 64L << 20),
          (long) d.maxFrameBytes());
      int fragments = o.get("maxFragments", "1..1000000", integer(1, 1_000_000),
          d.maxFragments());
      long burst = o.get("floodBurst", "a whole number > 0", wholeNumber(1, Integer.MAX_VALUE),
          d.floodBurst());
      long perSecond = o.get("floodPerSecond", "a whole number > 0",
          wholeNumber(1, Integer.MAX_VALUE), d.floodPerSecond());
      String field = o.get("actionField", "a JSON field name like type", NAME, d.actionField());
      Map<String, String> actions = new LinkedHashMap<>();
      Node an = o.node("actionRules");
      if (an != null) {
        Obj a = Obj.of(ctx, an, o.path("actionRules"), null,
            "a mapping of action names to rule names");
        if (a != null) {
          for (Map.Entry<String, NodeTuple> e : a.fields.entrySet()) {
            String rule = ctx.scalar(e.getValue().getValueNode(), a.path(e.getKey()), "a rule name",
                CORE_NAME);
            if (rule == null) {
              continue;
            }
            if (!ruleNames.contains(rule)) {
              ctx.error(e.getValue().getValueNode(), a.path(e.getKey()), quote(rule),
                  "a rule defined under rules:, one of " + ruleNames);
            }
            actions.put(e.getKey(), rule);
          }
        }
        if (field == null && !actions.isEmpty()) {
          ctx.error(an, o.path("actionRules"), "set", "websocket.actionField to be set too "
              + "(the JSON field naming the action, like type)");
        }
      }
      int strikes = o.get("strikes", "0..1000 (0: never close)", integer(0, 1000), d.strikes());
      Duration strikeWindow = o.get("strikeWindow", Durations.EXPECTED, POSITIVE_DURATION,
          d.strikeWindow());
      Duration closeTimeout = o.get("closeTimeout", "a duration in 1ms..1m, like 2s",
          within(Duration.ofMillis(1), Duration.ofMinutes(1)), d.closeTimeout());
      Map<String, Object> tree = new LinkedHashMap<>();
      tree.put("refuseBeforeUpgrade", refuse);
      tree.put("maxConnectionsPerIp", perIp);
      tree.put("maxConnectionsUnknown", unknown);
      tree.put("maxConnectionsPerSession", perSession);
      if (session != null) {
        tree.put("sessionDimension", session);
      }
      tree.put("maxFrameBytes", Durations.formatSize(frame));
      tree.put("maxFragments", fragments);
      tree.put("floodBurst", burst);
      tree.put("floodPerSecond", perSecond);
      if (field != null) {
        tree.put("actionField", field);
      }
      tree.put("actionRules", actions);
      tree.put("strikes", strikes);
      tree.put("strikeWindow", Durations.format(strikeWindow));
      tree.put("closeTimeout", Durations.format(closeTimeout));
      out.put("websocket", tree);
      return new WebSocketSettings(refuse, perIp, unknown, perSession, session, (int) frame,
          fragments, burst, perSecond, field, Map.copyOf(actions), strikes, strikeWindow,
          closeTimeout);
    }

    private GatewaySettings gateway(Obj doc) {
      GatewaySettings d = GatewaySettings.defaults();
      Obj o = section(doc, "gateway", GATEWAY_KEYS, "a mapping");
      if (o == null) {
        return d;
      }
      long body = o.get("maxBodyBytes", "a size in 0..1TiB", size(0, 1L << 40), d.maxBodyBytes());
      long header = o.get("maxHeaderBytes", "a size in 1KiB..1MiB", size(1 << 10, 1 << 20),
          (long) d.maxHeaderBytes());
      long line = o.get("maxInitialLineBytes", "a size in 256..1MiB", size(256, 1 << 20),
          (long) d.maxInitialLineBytes());
      Duration idle = o.get("idleTimeout", Durations.EXPECTED, POSITIVE_DURATION, d.idleTimeout());
      Duration handshake = o.get("handshakeTimeout", Durations.EXPECTED, POSITIVE_DURATION,
          d.handshakeTimeout());
      Duration connect = o.get("upstreamConnectTimeout", Durations.EXPECTED, POSITIVE_DURATION,
          d.upstreamConnectTimeout());
      Duration response = o.get("upstreamResponseTimeout", Durations.EXPECTED, POSITIVE_DURATION,
          d.upstreamResponseTimeout());
      Map<String, Object> tree = new LinkedHashMap<>();
      tree.put("maxBodyBytes", Durations.formatSize(body));
      tree.put("maxHeaderBytes", Durations.formatSize(header));
      tree.put("maxInitialLineBytes", Durations.formatSize(line));
      tree.put("idleTimeout", Durations.format(idle));
      tree.put("handshakeTimeout", Durations.format(handshake));
      tree.put("upstreamConnectTimeout", Durations.format(connect));
      tree.put("upstreamResponseTimeout", Durations.format(response));
      out.put("gateway", tree);
      return new GatewaySettings(body, (int) header, (int) line, idle, handshake, connect, response);
    }

    private StoreSettings store(Obj doc) {
      return StoreSection.read(ctx, section(doc, "store", StoreSection.KEYS, "a mapping"), out);
    }
  }

  static Source source(String text) {
    String t = text.trim();
    if (t.equals("client-address")) {
      return Source.clientAddress();
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
          default: break;
        }
      }
    }
    throw new IllegalArgumentException("client-address, header:NAME, cookie:NAME or query:NAME");
  }

  /** Checks a store URI; the store itself is opened by the server. */
  public static String storeUri(String text) {
    String t = text.trim();
    if (t.equals("memory")) {
      return t;
    }
    try {
      URI uri = new URI(t);
      String scheme = uri.getScheme();
      if (scheme != null && Arrays.asList("redis", "rediss", "redis-cluster").contains(scheme)
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
  public static String redact(String uri) {
    Objects.requireNonNull(uri);
    return uri.replaceAll("(://[^:/@]*:)[^@/]*@", "$1***@");
  }
}
