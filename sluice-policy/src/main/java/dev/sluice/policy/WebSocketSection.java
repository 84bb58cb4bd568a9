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

  static final List<String> KEYS = List.of("refuseBeforeUpgrade",
      "maxConnectionsPerIp", "maxConnectionsUnknown", "maxConnectionsPerSession",
      "sessionDimension", "maxFrameBytes", "maxFragments", "floodBurst", "floodPerSecond",
      "actionField", "actionRules", "strikes", "strikeWindow", "closeTimeout");

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
      walk.error(o.node("sessionDimension"), o.path("sessionDimension"), quote(session),
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
    Map<String, String> actions = actionRules(walk, o, field, ruleNames, notForMessages);
    int strikes = o.get("strikes", "0..1000 (0: never close)", integer(0, 1000), d.strikes());
    Duration strikeWindow = o.get("strikeWindow", Durations.EXPECTED, POSITIVE_DURATION,
        d.strikeWindow());
    Duration closeTimeout = o.get("closeTimeout", "a duration in 1ms..1m, like 2s",
        within(Duration.ofMillis(1), Duration.ofMinutes(1)), d.closeTimeout());
    return new WebSocketSettings(refuse, perIp, unknown, perSession, session, (int) frame,
        fragments, burst, perSecond, field, Collections.unmodifiableMap(actions), strikes,
        strikeWindow, closeTimeout);
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
