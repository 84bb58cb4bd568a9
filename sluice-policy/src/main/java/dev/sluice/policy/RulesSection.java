package dev.sluice.policy;

import static dev.sluice.policy.Values.CORE_NAME;
import static dev.sluice.policy.Values.DURATION;
import static dev.sluice.policy.Values.POSITIVE_DURATION;
import static dev.sluice.policy.Values.POSITIVE_NUMBER;
import static dev.sluice.policy.Values.describe;
import static dev.sluice.policy.Values.oneOf;
import static dev.sluice.policy.Values.quote;
import static dev.sluice.policy.Values.wholeNumber;

import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.Rule;
import dev.sluice.core.StatusSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * The {@code rules:} section: named rules and their limits. Each value is parsed here and handed
 * to core's builders, whose {@code InvalidValueException} becomes an error at the value's line.
 * A rule's {@code offSwitch} names a variable whose value {@code 0} switches the rule off (seed
 * 004's {@code RATE_LIMIT_MAX=0}).
 */
final class RulesSection {

  /** A rule as the effective policy shows it: core's rule and its off switch, if any. */
  record Entry(Rule rule, String offSwitch) {}

  private static final String DIFFICULTY_EXPECTED = "a whole number 1.." + Rule.MAX_DIFFICULTY
      + " (leading zero bits; each one doubles a browser's work)";

  // One table: a rule's keys in the order they are shown, their reading (each default is that of
  // a rule as core builds it; a value left out of the rendering reads as null) and rendering.
  // Read by the section: the limits, the statuses counted on responses (countStatus or skip),
  // and a challenge's difficulties (only with action: challenge).
  private static final Field<Entry, String> KEY = Field.of("key",
      "dimension names joined by ':', like ip or event:user:ip", text -> {
        Rule.builder("x").key(text);
        return text;
      }, e -> e.rule().key());
  private static final Field<Entry, String> OFF_SWITCH = Field.of("offSwitch",
      "an environment variable name", text -> {
        if (!text.matches("[A-Za-z_][A-Za-z0-9_]*")) {
          throw new IllegalArgumentException("an environment variable name like RATE_LIMIT_MAX");
        }
        return text;
      }, Entry::offSwitch);
  private static final Field<Entry, List<Object>> LIMITS = Field.readBySection("limits",
      e -> limitsShown(e.rule()));
  private static final Field<Entry, String> SKIP = Field.readBySection("skip",
      e -> e.rule().countStatus() == null ? null : e.rule().countStatus().skipped());
  private static final Field<Entry, List<Integer>> COUNT_STATUS = Field.readBySection(
      "countStatus", e -> e.rule().countStatus() == null
          || e.rule().countStatus().skipped() != null ? null : e.rule().countStatus().statuses());
  private static final Field<Entry, Long> STATUS = Field.of("status",
      "an HTTP status 400..599 for this rule's refusals, like 403", wholeNumber(400, 599),
      e -> e.rule().status() > 0 ? (long) e.rule().status() : null, Long::intValue);
  private static final Field<Entry, Duration> BAN = Field.duration("ban", Durations.EXPECTED,
      DURATION, e -> e.rule().ban().isZero() ? null : e.rule().ban());
  private static final Field<Entry, String> MODE = Field.of("mode", "enforce, shadow or off",
      oneOf(List.of("enforce", "shadow", "off")), e -> lower(e.rule().mode()));
  private static final Field<Entry, String> ON_STORE_ERROR = Field.of("onStoreError",
      "allow or deny", oneOf(List.of("allow", "deny")), e -> lower(e.rule().onStoreError()));
  private static final Field<Entry, String> SHARED_BUCKET = Field.of("sharedBucket",
      "1..128 printable ASCII characters", CORE_NAME, e -> e.rule().sharedBucket());
  private static final Field<Entry, Duration> DELAY = Field.duration("delay",
      "a duration from 0 to " + Durations.format(Rule.MAX_DELAY) + ", like 500ms",
      Values.within(Duration.ZERO, Rule.MAX_DELAY),
      e -> e.rule().delay().isZero() ? null : e.rule().delay());
  private static final Field<Entry, Long> DELAY_QUEUE = Field.of("delayQueue",
      "a whole number 1..100000", wholeNumber(1, 100_000),
      e -> e.rule().delay().isZero() ? null : (long) e.rule().delayQueue(), Long::intValue);
  private static final Field<Entry, String> ACTION = Field.of("action", "refuse, challenge "
      + "(browsers solve a proof of work; see challenge:) or log (never refused: the rule runs "
      + "in shadow mode)", oneOf(List.of("refuse", "challenge", "log")),
      e -> e.rule().action() == Rule.Action.REFUSE ? null : lower(e.rule().action()));
  private static final Field<Entry, Integer> DIFFICULTY = Field.readBySection("difficulty",
      e -> e.rule().action() == Rule.Action.CHALLENGE ? e.rule().difficulty() : null);
  private static final Field<Entry, Integer> MAX_DIFFICULTY = Field.readBySection(
      "maxDifficulty",
      e -> e.rule().action() == Rule.Action.CHALLENGE ? e.rule().maxDifficulty() : null);
  private static final Fields<Entry> FIELDS = new Fields<>(KEY, OFF_SWITCH, LIMITS, SKIP,
      COUNT_STATUS, STATUS, BAN, MODE, ON_STORE_ERROR, SHARED_BUCKET, DELAY, DELAY_QUEUE, ACTION,
      DIFFICULTY, MAX_DIFFICULTY);
  /** What core builds for a rule that gives only its limits: every default of the table. */
  private static final Entry DEFAULTS = new Entry(Rule.builder("defaults")
      .limit(Limit.fixedWindow("defaults", 1, Duration.ofSeconds(1))).build(), null);

  static final List<String> KEYS = FIELDS.keys();
  /** The keys of each limit type, by its name in files ({@link Limit.Kind#configName()}). */
  static final Map<String, List<String>> LIMIT_KEYS = Map.of(
      Limit.Kind.TOKEN_BUCKET.configName(), List.of("type", "name", "burst", "refill", "period"),
      Limit.Kind.FIXED_WINDOW.configName(), List.of("type", "name", "limit", "window"),
      Limit.Kind.SLIDING_WINDOW.configName(), List.of("type", "name", "limit", "window"),
      Limit.Kind.SLIDING_LOG.configName(), List.of("type", "name", "limit", "window"),
      Limit.Kind.SCORE.configName(), List.of("type", "name", "maxScore", "perAction", "decay"),
      Limit.Kind.LEAKY_BUCKET.configName(), List.of("type", "name", "rate", "period", "burst"));
  /** Limits that are a rule of their own kind: alone in their rule, not in descriptors. */
  static final Map<String, List<String>> RULE_KINDS = Map.of(
      "cooldown", List.of("type", "name", "maxRetries", "retryWindow", "cooldown",
          "maxCooldown", "successResets"),
      "concurrency", List.of("type", "name", "max", "leaseTtl"));
  private static final List<String> TYPES = new ArrayList<>(new TreeSet<>(LIMIT_KEYS.keySet()));
  private static final List<String> RULE_TYPES = new ArrayList<>(new TreeSet<>(
      java.util.stream.Stream.concat(LIMIT_KEYS.keySet().stream(), RULE_KINDS.keySet().stream())
          .toList()));

  /** The rules that built, and every name the section declares (for references). */
  record Result(List<Rule> rules, Map<String, String> offSwitches, Set<String> names) {}

  private final Walk walk;
  private final Set<String> dimensions;

  private RulesSection(Walk walk, Set<String> dimensions) {
    this.walk = walk;
    this.dimensions = dimensions;
  }

  static Result read(Walk walk, Mapping doc, Set<String> dimensions) {
    return new RulesSection(walk, dimensions).read(doc);
  }

  private Result read(Mapping doc) {
    Map<String, String> offSwitches = new LinkedHashMap<>();
    List<Rule> rules = new ArrayList<>();
    Set<String> names = new java.util.LinkedHashSet<>();
    Mapping all = doc.section("rules", null, "a mapping of rule names to rules");
    if (all == null) {
      return new Result(rules, offSwitches, names);
    }
    for (Map.Entry<String, NodeTuple> e : all.fields.entrySet()) {
      String name = e.getKey();
      names.add(name);
      Rule.Builder b;
      try {
        b = Rule.builder(name);
      } catch (IllegalArgumentException ex) {
        walk.error(e.getValue().getKeyNode(), all.path(name), quote(name),
            Walk.expectation(ex, "a rule name"));
        continue;
      }
      Mapping r = Mapping.of(walk, e.getValue().getValueNode(), all.path(name), KEYS,
          "a mapping with key, limits, ban, mode, onStoreError");
      if (r == null) {
        continue;
      }
      int before = walk.errors.size();
      boolean keyOk = rule(name, r, b, offSwitches);
      if (keyOk && walk.errors.size() == before) {
        try {
          rules.add(b.build());
        } catch (IllegalArgumentException ex) {
          walk.coreError(r.node, all.path(name), ex, r);
        }
      }
    }
    return new Result(rules, offSwitches, names);
  }

  /**
   * Gives the rule's values to {@code b}, and its off switch to {@code offSwitches}; false when
   * its key names an undeclared dimension.
   */
  private boolean rule(String name, Mapping r, Rule.Builder b, Map<String, String> offSwitches) {
    Fields<Entry>.Row row = FIELDS.read(r, DEFAULTS);
    String key = row.get(KEY);
    b.key(key);
    boolean keyOk = true;
    for (String dim : key.split(":")) {
      if (!dimensions.contains(dim)) {
        walk.error(r.has("key") ? r.node("key") : r.node, r.path("key"), quote(key),
            "dimensions declared under dimensions:, one of " + dimensions
                + " (missing '" + dim + "')");
        keyOk = false;
        break;
      }
    }
    String offSwitch = row.get(OFF_SWITCH);
    boolean switchedOff = false;
    if (offSwitch != null) {
      offSwitches.put(name, offSwitch);
      walk.referenced.add(offSwitch);
      String v = walk.env.apply(offSwitch);
      if (v != null && v.trim().matches("0+(\\.0*)?")) {
        switchedOff = true;
        walk.quiet.add(offSwitch);
      }
    }
    cooldownRule = false;
    limits(name, r, b);
    Duration ban = row.get(BAN) == null ? Duration.ZERO : row.get(BAN);
    try {
      b.ban(ban);
    } catch (IllegalArgumentException ex) {
      walk.coreError(r.node("ban"), r.path("ban"), ex, r);
    }
    String mode = row.get(MODE);
    if (switchedOff) {
      mode = "off";
      walk.warnings.add(offSwitch + "=0 switches rule '" + name + "' off");
    }
    Mode m = Mode.valueOf(mode.toUpperCase(Locale.ROOT));
    b.mode(m);
    String onError = row.get(ON_STORE_ERROR);
    OnStoreError o = OnStoreError.valueOf(onError.toUpperCase(Locale.ROOT));
    b.onStoreError(o);
    b.sharedBucket(row.get(SHARED_BUCKET));
    b.delay(row.get(DELAY) == null ? Duration.ZERO : row.get(DELAY));
    long queue = row.get(DELAY_QUEUE) == null ? Rule.DEFAULT_DELAY_QUEUE : row.get(DELAY_QUEUE);
    b.delayQueue((int) queue);
    if (r.has("delayQueue") && !r.has("delay")) {
      walk.error(r.node("delayQueue"), r.path("delayQueue"), Long.toString(queue),
          "no delayQueue without a delay (set delay: too, like 500ms)");
    }
    StatusSet counted = counted(r, cooldownRule);
    if (counted != null) {
      b.countStatus(counted);
    }
    b.status(row.get(STATUS) == null ? 0 : row.get(STATUS).intValue());
    action(r, b, row.get(ACTION) == null ? "refuse" : row.get(ACTION));
    return keyOk;
  }

  /** Set by {@link #limits} when the rule is a cooldown: its statuses default to failures. */
  private boolean cooldownRule;

  /**
   * {@code countStatus: [401, 403]} or {@code skip: success|failure}: the statuses the rule
   * counts on responses, or null for a rule counted on requests.
   */
  private StatusSet counted(Mapping r, boolean cooldown) {
    int before = walk.errors.size();
    List<Long> statuses = r.list("countStatus", "HTTP statuses like [401, 403, 404]",
        wholeNumber(100, 599), null);
    if (walk.errors.size() > before) {
      return null;
    }
    String skip = r.get("skip", "success (count failed responses, 400..599) or failure (count "
        + "successful ones, 100..399)", oneOf(List.of("success", "failure")), null);
    if (statuses != null && skip != null) {
      walk.error(r.node("skip"), r.path("skip"), quote(skip),
          "countStatus or skip, not both (they say the same thing two ways)");
      return null;
    }
    if (statuses != null) {
      if (statuses.isEmpty()) {
        walk.error(r.node("countStatus"), r.path("countStatus"), "[]",
            "at least one status like 401");
        return null;
      }
      return StatusSet.of(statuses.stream().map(Long::intValue).toList());
    }
    if (skip != null) {
      return skip.equals("success") ? StatusSet.failures() : StatusSet.successes();
    }
    return cooldown ? StatusSet.failures() : null;
  }

  /** {@code action:} past the limit, and a challenge's {@code difficulty}/{@code maxDifficulty}. */
  private void action(Mapping r, Rule.Builder b, String action) {
    b.action(Rule.Action.valueOf(action.toUpperCase(Locale.ROOT)));
    if (!action.equals("challenge")) {
      for (String key : List.of("difficulty", "maxDifficulty")) {
        if (r.has(key)) {
          walk.error(r.node(key), r.path(key), describe(r.node(key)),
              "no " + key + " unless action: challenge");
        }
      }
      return;
    }
    Values.Parser<Long> zeroBits = text -> {
      try {
        return wholeNumber(1, Rule.MAX_DIFFICULTY).parse(text);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(DIFFICULTY_EXPECTED);
      }
    };
    long difficulty = r.get("difficulty", DIFFICULTY_EXPECTED, zeroBits,
        (long) Rule.DEFAULT_DIFFICULTY);
    long max = r.get("maxDifficulty", DIFFICULTY_EXPECTED, zeroBits,
        (long) Rule.defaultMaxDifficulty((int) difficulty));
    try {
      b.difficulty((int) difficulty, (int) max);
    } catch (IllegalArgumentException ex) {
      walk.coreError(r.node, r.path("maxDifficulty"), ex, r);
    }
  }

  private static String lower(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT);
  }

  /** A rule as the effective policy shows it, from the table. */
  static Map<String, Object> render(Rule rule, String offSwitch) {
    return FIELDS.render(new Entry(rule, offSwitch));
  }

  /** The limits as given, and a cooldown's or concurrency cap's as its one limit. */
  private static List<Object> limitsShown(Rule r) {
    List<Object> limits = new ArrayList<>();
    for (Limit l : r.limits()) {
      limits.add(EffectivePolicy.limit(l));
    }
    if (r.cooldown() != null) {
      Map<String, Object> lm = new LinkedHashMap<>();
      lm.put("type", "cooldown");
      lm.put("maxRetries", r.cooldown().maxRetries());
      lm.put("retryWindow", Durations.format(r.cooldown().retryWindow()));
      lm.put("cooldown", Durations.format(r.cooldown().cooldown()));
      lm.put("maxCooldown", Durations.format(r.cooldown().maxCooldown()));
      if (r.successResets() != null) {
        lm.put("successResets", r.successResets());
      }
      limits.add(lm);
    } else if (r.concurrency() > 0) {
      Map<String, Object> lm = new LinkedHashMap<>();
      lm.put("type", "concurrency");
      lm.put("max", r.concurrency());
      lm.put("leaseTtl", Durations.format(r.leaseTtl()));
      limits.add(lm);
    }
    return limits;
  }

  private void limits(String rule, Mapping r, Rule.Builder b) {
    Node limitsNode = r.node("limits");
    if (limitsNode == null) {
      walk.error(r.node, r.path("limits"), "missing", "a list of limits, each with a type: "
          + String.join(", ", RULE_TYPES));
      return;
    }
    if (!(limitsNode instanceof SequenceNode seq)) {
      walk.error(limitsNode, r.path("limits"), describe(limitsNode), "a list of limits");
      return;
    }
    if (seq.getValue().isEmpty()) {
      walk.error(limitsNode, r.path("limits"), "[]", "at least one limit");
    }
    int i = 0;
    int count = seq.getValue().size();
    for (Node ln : seq.getValue()) {
      String kind = kindOf(ln);
      if (kind != null) {
        String path = r.path("limits") + "[" + i++ + "]";
        if (count > 1) {
          walk.error(ln, path, kind, "a " + kind + " alone in the rule's limits (make another "
              + "rule for the other limits; a route can apply both)");
          continue;
        }
        ruleKind(ln, path, kind, b);
        continue;
      }
      Limit limit = limit(ln, r.path("limits") + "[" + i++ + "]", rule, count);
      if (limit != null) {
        try {
          b.limit(limit);
        } catch (IllegalArgumentException ex) {
          walk.coreError(ln, r.path("limits"), ex, null);
        }
      }
    }
  }

  /** The type of a cooldown or concurrency limit node, else null. */
  private static String kindOf(Node node) {
    if (node instanceof MappingNode m) {
      for (NodeTuple t : m.getValue()) {
        if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals("type")
            && t.getValueNode() instanceof ScalarNode v && RULE_KINDS.containsKey(v.getValue())) {
          return v.getValue();
        }
      }
    }
    return null;
  }

  /** A cooldown or a concurrency cap: the rule becomes that kind (core checks the rest). */
  private void ruleKind(Node node, String path, String kind, Rule.Builder b) {
    Mapping l = Mapping.of(walk, node, path, RULE_KINDS.get(kind), "a mapping");
    if (l == null) {
      return;
    }
    l.get("name", "1..128 printable ASCII characters", CORE_NAME, kind);
    int before = walk.errors.size();
    try {
      if (kind.equals("cooldown")) {
        cooldownRule = true;
        Long retries = l.get("maxRetries", "a whole number > 0 (failures that lock the key)",
            wholeNumber(1, Integer.MAX_VALUE), 8L);
        Duration window = l.get("retryWindow", Durations.EXPECTED, POSITIVE_DURATION,
            Duration.ofMinutes(5));
        Duration first = l.get("cooldown", Durations.EXPECTED, POSITIVE_DURATION,
            Duration.ofMinutes(1));
        Duration max = l.get("maxCooldown", Durations.EXPECTED, POSITIVE_DURATION,
            Duration.ofHours(1));
        Boolean resets = l.get("successResets", "true or false (left out: a success resets a "
            + "key that names the member, never an address-wide one)", Values.BOOLEAN, null);
        if (walk.errors.size() == before) {
          b.cooldown(retries.intValue(), window, first, max).successResets(resets);
        }
      } else {
        Long max = l.required("max", "a whole number > 0 (requests in flight per key)",
            wholeNumber(1, Integer.MAX_VALUE));
        Duration ttl = l.get("leaseTtl", Durations.EXPECTED, POSITIVE_DURATION,
            Rule.DEFAULT_LEASE_TTL);
        if (walk.errors.size() == before) {
          b.concurrency(max.intValue(), ttl);
        }
      }
    } catch (IllegalArgumentException e) {
      walk.coreError(node, path, e, l);
    }
  }

  /** One limit as the rules section reads it, for other sections with limits. */
  static Limit limitOf(Walk walk, Node node, String path, String owner, int count) {
    return new RulesSection(walk, Set.of()).limit(node, path, owner, count);
  }

  /** One limit, checked by core; null after reporting what is wrong with it. */
  private Limit limit(Node node, String path, String rule, int count) {
    if (!(node instanceof MappingNode)) {
      walk.error(node, path, describe(node), "a mapping with a type: " + String.join(", ", TYPES));
      return null;
    }
    Node typeNode = null;
    for (NodeTuple t : ((MappingNode) node).getValue()) {
      if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals("type")) {
        typeNode = t.getValueNode();
      }
    }
    if (typeNode == null) {
      walk.error(node, path + ".type", "missing", "one of " + String.join(", ",
          dimensions.isEmpty() ? TYPES : RULE_TYPES));
      return null;
    }
    String type = walk.scalar(typeNode, path + ".type", "one of " + String.join(", ",
        dimensions.isEmpty() ? TYPES : RULE_TYPES), oneOf(dimensions.isEmpty() ? TYPES
        : RULE_TYPES));
    if (type == null) {
      return null;
    }
    Mapping l = Mapping.of(walk, node, path, LIMIT_KEYS.get(type), "a mapping");
    String name = l.get("name", "1..128 printable ASCII characters", CORE_NAME,
        count == 1 ? rule : type);
    int before = walk.errors.size();
    Limit.Kind kind = Limit.Kind.valueOf(type.toUpperCase(Locale.ROOT).replace('-', '_'));
    try {
      switch (kind) {
        case TOKEN_BUCKET -> {
          Long burst = l.required("burst", "a whole number > 0",
              wholeNumber(1, Integer.MAX_VALUE));
          Long refill = l.required("refill", "a whole number > 0",
              wholeNumber(1, Integer.MAX_VALUE));
          Duration period = l.required("period", Durations.EXPECTED, POSITIVE_DURATION);
          return walk.errors.size() > before ? null
              : Limit.tokenBucket(name, burst, refill, period);
        }
        case LEAKY_BUCKET -> {
          Long rate = l.required("rate", "a whole number > 0",
              wholeNumber(1, Integer.MAX_VALUE));
          Duration period = l.get("period", "a whole number of seconds, like 1s or 1m",
              POSITIVE_DURATION, Duration.ofSeconds(1));
          Long burst = l.get("burst", "a whole number >= 0",
              wholeNumber(0, Integer.MAX_VALUE - 1), 0L);
          return walk.errors.size() > before ? null
              : Limit.leakyBucket(name, rate, period, burst);
        }
        case SCORE -> {
          Double max = l.required("maxScore", "a number > 0", POSITIVE_NUMBER);
          Double per = l.required("perAction", "a number > 0", POSITIVE_NUMBER);
          Duration decay = l.required("decay", Durations.EXPECTED, POSITIVE_DURATION);
          return walk.errors.size() > before ? null : Limit.score(name, max, per, decay);
        }
        default -> {
          long max = kind == Limit.Kind.SLIDING_LOG ? 100_000 : Integer.MAX_VALUE;
          Long n = l.required("limit", "a whole number > 0", wholeNumber(1, max));
          Duration window = l.required("window", Durations.EXPECTED, POSITIVE_DURATION);
          if (walk.errors.size() > before) {
            return null;
          }
          return switch (kind) {
            case FIXED_WINDOW -> Limit.fixedWindow(name, n, window);
            case SLIDING_WINDOW -> Limit.slidingWindow(name, n, window);
            default -> Limit.slidingLog(name, n.intValue(), window);
          };
        }
      }
    } catch (IllegalArgumentException e) {
      walk.coreError(node, path, e, l);
      return null;
    }
  }
}
