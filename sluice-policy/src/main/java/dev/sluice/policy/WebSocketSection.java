package dev.sluice.policy;

import static dev.sluice.policy.Values.BOOLEAN;
import static dev.sluice.policy.Values.CORE_NAME;
import static dev.sluice.policy.Values.NAME;
import static dev.sluice.policy.Values.POSITIVE_DURATION;
import static dev.sluice.policy.Values.integer;
import static dev.sluice.policy.Values.quote;
import static dev.sluice.policy.Values.size;
import static dev.sluice.policy.Values.within;
import static dev.sluice.policy.Values.wholeNumber;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;

/** The {@code websocket:} section: connection caps, message size, floods, per-action rules. */
final class WebSocketSection {

  private static final String CAP = "0..1000000 (0: no cap)";
  private static final Field<WebSocketSettings, Boolean> REFUSE = Field.of(
      "refuseBeforeUpgrade", "true or false", BOOLEAN, WebSocketSettings::refuseBeforeUpgrade);
  private static final Field<WebSocketSettings, Integer> PER_IP = Field.of(
      "maxConnectionsPerIp", CAP, integer(0, 1_000_000), WebSocketSettings::maxConnectionsPerIp);
  private static final Field<WebSocketSettings, Integer> UNKNOWN = Field.of(
      "maxConnectionsUnknown", CAP, integer(0, 1_000_000),
      WebSocketSettings::maxConnectionsUnknown);
  private static final Field<WebSocketSettings, Integer> PER_SESSION = Field.of(
      "maxConnectionsPerSession", CAP, integer(0, 1_000_000),
      WebSocketSettings::maxConnectionsPerSession);
  private static final Field<WebSocketSettings, String> SESSION = Field.of("sessionDimension",
      "a dimension name", NAME, WebSocketSettings::sessionDimension);
  private static final Field<WebSocketSettings, Long> FRAME = Field.size("maxFrameBytes",
      "a size in 125..64MiB", size(125, 64L << 20), w -> (long) w.maxFrameBytes());
  private static final Field<WebSocketSettings, Integer> FRAGMENTS = Field.of("maxFragments",
      "1..1000000", integer(1, 1_000_000), WebSocketSettings::maxFragments);
  private static final Field<WebSocketSettings, Long> BURST = Field.of("floodBurst",
      "a whole number > 0", wholeNumber(1, Integer.MAX_VALUE), WebSocketSettings::floodBurst);
  private static final Field<WebSocketSettings, Long> PER_SECOND = Field.of("floodPerSecond",
      "a whole number > 0", wholeNumber(1, Integer.MAX_VALUE),
      WebSocketSettings::floodPerSecond);
  private static final Field<WebSocketSettings, String> ACTION_FIELD = Field.of("actionField",
      "a JSON field name like type", NAME, WebSocketSettings::actionField);
  private static final Field<WebSocketSettings, Map<String, String>> ACTION_RULES =
      Field.readBySection("actionRules", WebSocketSettings::actionRules);
  private static final Field<WebSocketSettings, Integer> STRIKES = Field.of("strikes",
      "0..1000 (0: never close)", integer(0, 1000), WebSocketSettings::strikes);
  private static final Field<WebSocketSettings, Duration> STRIKE_WINDOW = Field.duration(
      "strikeWindow", Durations.EXPECTED, POSITIVE_DURATION, WebSocketSettings::strikeWindow);
  private static final Field<WebSocketSettings, Duration> CLOSE_TIMEOUT = Field.duration(
      "closeTimeout", "a duration in 1ms..1m, like 2s",
      within(Duration.ofMillis(1), Duration.ofMinutes(1)), WebSocketSettings::closeTimeout);
  private static final Fields<WebSocketSettings> FIELDS = new Fields<>(REFUSE, PER_IP, UNKNOWN,
      PER_SESSION, SESSION, FRAME, FRAGMENTS, BURST, PER_SECOND, ACTION_FIELD, ACTION_RULES,
      STRIKES, STRIKE_WINDOW, CLOSE_TIMEOUT);

  static final List<String> KEYS = FIELDS.keys();

  private WebSocketSection() {}

  static WebSocketSettings read(Walk walk, Mapping doc, Set<String> dimensions,
      Set<String> ruleNames) {
    return read(walk, doc, dimensions, ruleNames, Set.of());
  }

  /** {@code notForMessages}: rules counted on responses or in flight, which no message applies. */
  static WebSocketSettings read(Walk walk, Mapping doc, Set<String> dimensions,
      Set<String> ruleNames, Set<String> notForMessages) {
    WebSocketSettings d = WebSocketSettings.defaults();
    Mapping o = doc.section("websocket", KEYS, "a mapping");
    if (o == null) {
      return d;
    }
    Fields<WebSocketSettings>.Row r = FIELDS.read(o, d);
    String session = r.get(SESSION);
    if (session != null && !dimensions.contains(session)) {
      walk.error(o.node("sessionDimension"), o.path("sessionDimension"), quote(session),
          "a dimension declared under dimensions:, one of " + dimensions);
    }
    String field = r.get(ACTION_FIELD);
    Map<String, String> actions = actionRules(walk, o, field, ruleNames, notForMessages);
    return new WebSocketSettings(r.get(REFUSE), r.get(PER_IP), r.get(UNKNOWN),
        r.get(PER_SESSION), session, r.get(FRAME).intValue(), r.get(FRAGMENTS), r.get(BURST),
        r.get(PER_SECOND), field, Collections.unmodifiableMap(actions), r.get(STRIKES),
        r.get(STRIKE_WINDOW), r.get(CLOSE_TIMEOUT));
  }

  static Map<String, Object> render(WebSocketSettings w) {
    return FIELDS.render(w);
  }

  /** Action name to rule name, in file order; {@code "*"} for every other action. */
  private static Map<String, String> actionRules(Walk walk, Mapping o, String field,
      Set<String> ruleNames, Set<String> notForMessages) {
    Map<String, String> actions = new LinkedHashMap<>();
    Node an = o.node("actionRules");
    if (an == null) {
      return actions;
    }
    Mapping a = Mapping.of(walk, an, o.path("actionRules"), null,
        "a mapping of action names to rule names");
    if (a != null) {
      for (Map.Entry<String, NodeTuple> e : a.fields.entrySet()) {
        String rule = walk.scalar(e.getValue().getValueNode(), a.path(e.getKey()), "a rule name",
            CORE_NAME);
        if (rule == null) {
          continue;
        }
        if (!ruleNames.contains(rule)) {
          walk.error(e.getValue().getValueNode(), a.path(e.getKey()), quote(rule),
              "a rule defined under rules:, one of " + ruleNames);
        } else if (notForMessages.contains(rule)) {
          walk.error(e.getValue().getValueNode(), a.path(e.getKey()), quote(rule),
              "a rule counted when a message comes (this one counts responses, or requests in "
                  + "flight: only routes apply it)");
        }
        actions.put(e.getKey(), rule);
      }
    }
    if (field == null && !actions.isEmpty()) {
      walk.error(an, o.path("actionRules"), "set", "websocket.actionField to be set too "
          + "(the JSON field naming the action, like type)");
    }
    return actions;
  }
}
