package dev.sluice.policy;

import dev.sluice.core.policy.Policy;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
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
 *
 * <p>The work is split by concern: {@link Walk} and {@link Mapping} walk the YAML document with
 * file:line errors, {@link Interpolation} applies the environment, {@link Values} parses scalars,
 * one class per section builds its settings, and {@link EffectivePolicy} renders the loaded model
 * back for {@code sluice check} and {@code /v1/policy}.
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
      "routes", "global", "response", "cors", "websocket", "gateway", "store", "moderation",
      "domains", "rls", "domain", "descriptors", "allow", "mode", "logging", "path", "deny",
      "humanChecks", "challenge");

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
    Walk ctx = new Walk(name, source, env::get);
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
    PolicyConfig config = build(ctx, root);
    ctx.errors.sort(java.util.Comparator.comparingInt(ConfigError::line));
    if (!ctx.errors.isEmpty() || config == null) {
      throw new ConfigException(ctx.errors, ctx.warnings);
    }
    if (config.policy().rules().isEmpty() && config.domains().names().isEmpty()) {
      // Valid (a file can switch every limit off), but rarely meant.
      ctx.warnings.add(name + " has no rules: every request is allowed (add a rules: section "
          + "and routes that use it)");
    }
    for (String var : WELL_KNOWN_VARIABLES) {
      String value = env.get(var);
      if (value != null && !ctx.referenced.contains(var)) {
        ctx.warnings.add(var + " is set but " + name + " does not read it (write ${" + var
            + "} in the policy to use it)");
      }
    }
    return LoadedPolicy.of(config, ctx.warnings, name);
  }

  /** Reads the document section by section; null when any error was found. */
  private static PolicyConfig build(Walk walk, Node root) {
    Mapping doc = Mapping.of(walk, root, "", TOP_KEYS,
        "a mapping with sections like rules: and routes:");
    if (doc == null) {
      return null;
    }
    doc.get("version", "1", Values.integer(1, 1), 1);
    Policy.Builder policy = Policy.builder();
    Toplevel.read(walk, doc, policy);
    TrustSettings trust = TrustSection.read(walk, doc, policy);
    Set<String> dimensions = DimensionsSection.read(walk, doc, policy);
    RulesSection.Result rules = RulesSection.read(walk, doc, dimensions);
    rules.rules().forEach(policy::rule);
    Set<String> humanChecks = HumanChecksSection.read(walk, doc, dimensions, policy);
    RoutesSection.read(walk, doc, rules.names(), rules.rules(), policy, humanChecks);
    ChallengeSection.read(walk, doc, policy);
    ResponseSettings response = ResponseSection.read(walk, doc);
    CorsSettings cors = CorsSection.read(walk, doc);
    Set<String> notForMessages = new java.util.HashSet<>();
    rules.rules().stream().filter(r -> !r.countedOnRequest())
        .forEach(r -> notForMessages.add(r.name()));
    WebSocketSettings websocket = WebSocketSection.read(walk, doc, dimensions, rules.names(),
        notForMessages);
    GatewaySettings gateway = GatewaySection.read(walk, doc);
    StoreSettings store = StoreSection.read(walk, doc);
    ModerationSettings moderation = ModerationSection.parse(walk, doc, websocket.actionField());
    RlsDomains domains = DomainsSection.read(walk, doc);
    RlsSettings rls = RlsSection.read(walk, doc);
    LoggingSettings logging = LoggingSection.read(walk, doc);
    if (!walk.errors.isEmpty()) {
      return null;
    }
    Policy built;
    try {
      built = policy.build();
    } catch (IllegalArgumentException e) {
      walk.coreError(root, "(policy)", e, null);
      return null;
    }
    return new PolicyConfig(built, response, cors, websocket, gateway, store, walk.source, trust,
        moderation, rules.offSwitches(), domains, rls, logging);
  }

  /** Checks a store URI; the store itself is opened by whoever runs the policy. */
  public static String storeUri(String text) {
    return Values.storeUri(text);
  }

  /** The URI without its password, for logs and the effective policy. */
  public static String redact(String uri) {
    return Values.redact(uri);
  }
}
