package dev.sluice.policy;

import static dev.sluice.policy.Values.BOOLEAN;
import static dev.sluice.policy.Values.NAME;
import static dev.sluice.policy.Values.describe;
import static dev.sluice.policy.Values.integer;
import static dev.sluice.policy.Values.oneOf;
import static dev.sluice.policy.Values.quote;

import dev.sluice.core.InvalidValueException;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Parses the policy's {@code moderation:} section into {@link ModerationSettings}, reporting each
 * problem at its line like the rest of the loader. The list files are read by whoever builds the
 * checker from the settings (the gateway), which reports a bad entry at the list file's own line.
 *
 * <pre>
 * moderation:
 *   lists: lists/                 # blocked.txt, reserved.txt, allowed.txt, palette.txt
 *   surfaces:
 *     room_name: {maxLength: 40}
 *   http:
 *     - paths: [/api/players/**]
 *       methods: [POST, PUT, PATCH]
 *       fields: {username: username, displayName: display_name}
 *   websocket:
 *     - action: SEND_REACTION       # needs websocket.actionField
 *       fields: {emoji: reaction}
 * </pre>
 */
final class ModerationSection {

  // A surface's table: keys, reading (defaults: the surface's own, SurfaceSettings.defaults)
  // and rendering. The lengths are checked together once read.
  private static final Field<SurfaceSettings, Integer> MIN_LENGTH = Field.of("minLength",
      "1..256", integer(0, Integer.MAX_VALUE), SurfaceSettings::minLength);
  private static final Field<SurfaceSettings, Integer> MAX_LENGTH = Field.of("maxLength",
      "1..256", integer(0, Integer.MAX_VALUE), SurfaceSettings::maxLength);
  private static final Field<SurfaceSettings, String> SEPARATORS = Field.of("separators",
      "punctuation characters", text -> text, SurfaceSettings::separators);
  private static final Field<SurfaceSettings, Boolean> ALLOW_EMPTY = Field.of("allowEmpty",
      "true or false", BOOLEAN, SurfaceSettings::allowEmpty);
  private static final Field<SurfaceSettings, Boolean> IDENTIFIER = Field.of("identifier",
      "true or false", BOOLEAN, SurfaceSettings::identifier);
  private static final Field<SurfaceSettings, String> SCRIPTS_FIELD = Field.of("scripts",
      String.join(", ", SurfaceSettings.SCRIPTS), oneOf(SurfaceSettings.SCRIPTS),
      SurfaceSettings::scripts);
  private static final Fields<SurfaceSettings> SURFACE = new Fields<>(MIN_LENGTH, MAX_LENGTH,
      SEPARATORS, ALLOW_EMPTY, IDENTIFIER, SCRIPTS_FIELD);
  private static final List<String> SURFACE_KEYS = SURFACE.keys();

  // The section's table (defaults: ModerationSettings.none()); surfaces, http and websocket are
  // read by the section, which checks them against each other and websocket.actionField.
  private static final Field<ModerationSettings, String> LISTS = Field.of("lists",
      "a directory of list files", NAME, ModerationSettings::lists);
  private static final Field<ModerationSettings, Integer> SHORT_TERM_LENGTH = Field.of(
      "shortTermLength", "0..64", integer(0, 64), ModerationSettings::shortTermLength);
  private static final Field<ModerationSettings, Map<String, Object>> SURFACES_FIELD =
      Field.readBySection("surfaces", m -> m.surfaces().isEmpty() ? null : surfacesShown(m));
  private static final Field<ModerationSettings, List<Object>> HTTP = Field.readBySection("http",
      ModerationSection::httpShown);
  private static final Field<ModerationSettings, List<Object>> WEBSOCKET = Field.readBySection(
      "websocket", ModerationSection::websocketShown);
  private static final Fields<ModerationSettings> FIELDS = new Fields<>(LISTS,
      SHORT_TERM_LENGTH, SURFACES_FIELD, HTTP, WEBSOCKET);

  static final List<String> KEYS = FIELDS.keys();
  private static final List<String> HTTP_KEYS = List.of("paths", "methods", "fields");
  private static final List<String> WS_KEYS = List.of("action", "fields");
  private static final List<String> SURFACES = ModerationSettings.SURFACES;
  private static final List<String> NAME_SURFACES = SurfaceSettings.NAMES;
  private static final List<String> WRITE_METHODS = List.of("POST", "PUT", "PATCH");

  private final Walk ctx;
  private final Map<String, SurfaceSettings> surfaces = new LinkedHashMap<>();

  private ModerationSection(Walk ctx) {
    this.ctx = ctx;
  }

  /** The section's settings (none when absent); errors go to {@code ctx}. */
  static ModerationSettings parse(Walk ctx, Mapping doc, String actionField) {
    Node n = doc.node("moderation");
    if (n == null) {
      return ModerationSettings.none();
    }
    Mapping o = Mapping.of(ctx, n, "moderation", KEYS, "a mapping with lists, surfaces, http, websocket");
    if (o == null) {
      return ModerationSettings.none();
    }
    ModerationSection s = new ModerationSection(ctx);
    return s.build(o, actionField);
  }

  private ModerationSettings build(Mapping o, String actionField) {
    Fields<ModerationSettings>.Row row = FIELDS.read(o, ModerationSettings.none());
    String lists = row.get(LISTS);
    Path dir = null;
    if (lists != null) {
      dir = ctx.source == null || ctx.source.getParent() == null ? Path.of(lists)
          : ctx.source.getParent().resolve(lists).normalize();
    }
    int shortLength = row.get(SHORT_TERM_LENGTH);
    surfaces(o);
    Policy.Builder routes = Policy.builder();
    Map<String, Map<String, String>> http = http(o, routes);
    Map<String, Map<String, String>> ws = websocket(o, actionField);
    return new ModerationSettings(routes.build(), http, ws, lists, dir, shortLength, surfaces,
        where(o.node, o.path), lists == null ? null : where(o.node("lists"), o.path("lists")));
  }

  /** The section as the effective policy shows it, from the tables. */
  static Map<String, Object> render(ModerationSettings s) {
    return FIELDS.render(s);
  }

  private static Map<String, Object> surfacesShown(ModerationSettings s) {
    Map<String, Object> surfaces = new LinkedHashMap<>();
    s.surfaces().forEach((name, r) -> surfaces.put(name, SURFACE.render(r)));
    return surfaces;
  }

  /** Null for the defaults ({@link ModerationSettings#none()}, which has no routes). */
  private static List<Object> httpShown(ModerationSettings s) {
    if (!s.present()) {
      return null;
    }
    List<Object> http = new ArrayList<>();
    for (Route route : s.routes().routes()) {
      Map<String, Object> h = new LinkedHashMap<>();
      h.put("paths", route.paths());
      h.put("methods", List.copyOf(route.methods()));
      h.put("fields", new LinkedHashMap<>(s.http().get(route.name())));
      http.add(h);
    }
    return http;
  }

  private static List<Object> websocketShown(ModerationSettings s) {
    List<Object> websocket = new ArrayList<>();
    s.websocket().forEach((action, fields) -> {
      Map<String, Object> w = new LinkedHashMap<>();
      if (!action.equals(ModerationSettings.ANY_ACTION)) {
        w.put("action", action);
      }
      w.put("fields", new LinkedHashMap<>(fields));
      websocket.add(w);
    });
    return websocket;
  }

  private ModerationSettings.Where where(Node at, String path) {
    return new ModerationSettings.Where(ctx.file, at.getStartMark().getLine() + 1, path);
  }

  private void surfaces(Mapping o) {
    Node n = o.node("surfaces");
    if (n == null) {
      return;
    }
    Mapping all = Mapping.of(ctx, n, o.path("surfaces"), NAME_SURFACES, "a mapping of surface names");
    if (all == null) {
      return;
    }
    for (Map.Entry<String, NodeTuple> e : all.fields.entrySet()) {
      Mapping s = Mapping.of(ctx, e.getValue().getValueNode(), all.path(e.getKey()), SURFACE_KEYS,
          "a mapping with " + String.join(", ", SURFACE_KEYS));
      if (s == null) {
        continue;
      }
      Fields<SurfaceSettings>.Row row = SURFACE.read(s, SurfaceSettings.defaults(e.getKey()));
      int min = row.get(MIN_LENGTH);
      int max = row.get(MAX_LENGTH);
      String separators = row.get(SEPARATORS);
      boolean allowEmpty = row.get(ALLOW_EMPTY);
      boolean identifier = row.get(IDENTIFIER);
      String scripts = row.get(SCRIPTS_FIELD);
      String range = "1.." + SurfaceSettings.MAX_LENGTH;
      InvalidValueException bad = min < 1 || min > SurfaceSettings.MAX_LENGTH
          ? new InvalidValueException("minLength", String.valueOf(min), range)
          : max < 1 || max > SurfaceSettings.MAX_LENGTH
              ? new InvalidValueException("maxLength", String.valueOf(max), range)
              : max < min ? new InvalidValueException("maxLength", String.valueOf(max),
                  ">= minLength " + min) : null;
      if (bad != null) {
        ctx.coreError(s.node, s.path, bad, s);
        continue;
      }
      Node written = s.node("separators");
      surfaces.put(e.getKey(), new SurfaceSettings(min, max, separators, allowEmpty, identifier,
          scripts, written == null ? null : where(written, s.path("separators"))));
    }
  }

  private Map<String, Map<String, String>> http(Mapping o, Policy.Builder routes) {
    Map<String, Map<String, String>> out = new LinkedHashMap<>();
    int i = 0;
    for (Mapping h : entries(o, "http", HTTP_KEYS)) {
      List<String> paths = h.list("paths", "path patterns like /api/players/**", text -> {
        Route.builder("x").path(text);
        return text;
      }, List.of());
      if (paths.isEmpty()) {
        ctx.error(h.node, h.path("paths"), "none", "at least one path pattern");
      }
      List<String> methods = h.list("methods", "HTTP methods like POST", text -> {
        if (!text.matches("[A-Za-z]{1,32}")) {
          throw new IllegalArgumentException("HTTP methods like POST, PUT");
        }
        return text.toUpperCase(Locale.ROOT);
      }, WRITE_METHODS);
      Map<String, String> fields = fields(h);
      String name = "moderation-" + i++;
      Route.Builder r = Route.builder(name).websocket(false);
      paths.forEach(r::path);
      methods.forEach(r::method);
      routes.route(r.build());
      out.put(name, fields);
    }
    return out;
  }

  private Map<String, Map<String, String>> websocket(Mapping o, String actionField) {
    Map<String, Map<String, String>> out = new LinkedHashMap<>();
    for (Mapping w : entries(o, "websocket", WS_KEYS)) {
      String action = w.get("action", "an action name", NAME, null);
      if (action != null && actionField == null) {
        ctx.error(w.node("action"), w.path("action"), quote(action), "websocket.actionField to "
            + "be set too (the JSON field naming the action, like type)");
      }
      Map<String, String> fields = fields(w);
      String key = action == null ? ModerationSettings.ANY_ACTION : action;
      if (out.containsKey(key)) {
        ctx.error(w.node, w.path, action == null ? "no action" : quote(action),
            "each action in one entry");
      }
      out.put(key, fields);
    }
    return out;
  }

  private List<Mapping> entries(Mapping o, String key, List<String> keys) {
    List<Mapping> out = new ArrayList<>();
    Node n = o.node(key);
    if (n == null) {
      return out;
    }
    if (!(n instanceof SequenceNode seq)) {
      ctx.error(n, o.path(key), describe(n), "a list of mappings with " + String.join(", ", keys));
      return out;
    }
    int i = 0;
    for (Node e : seq.getValue()) {
      Mapping entry = Mapping.of(ctx, e, o.path(key) + "[" + i++ + "]", keys,
          "a mapping with " + String.join(", ", keys));
      if (entry != null) {
        out.add(entry);
      }
    }
    return out;
  }

  /** {@code fields: {name: display_name}}: JSON field names to surfaces, at least one. */
  private Map<String, String> fields(Mapping entry) {
    Map<String, String> out = new LinkedHashMap<>();
    Node n = entry.node("fields");
    Mapping f = n == null ? null : Mapping.of(ctx, n, entry.path("fields"), null,
        "a mapping of JSON field names to surfaces");
    if (f != null) {
      for (Map.Entry<String, NodeTuple> e : f.fields.entrySet()) {
        String surface = ctx.scalar(e.getValue().getValueNode(), f.path(e.getKey()),
            String.join(", ", SURFACES), oneOf(SURFACES));
        if (surface != null) {
          out.put(e.getKey(), surface);
        }
      }
    }
    if (out.isEmpty() && (f != null || n == null)) {
      ctx.error(n == null ? entry.node : n, entry.path("fields"), n == null ? "none" : "empty",
          "JSON field names mapped to surfaces, like {username: username}");
    }
    return out;
  }
}
