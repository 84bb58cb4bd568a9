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
import dev.sluice.moderation.Moderator;
import dev.sluice.moderation.Surface;
import dev.sluice.moderation.SurfaceRules;
import java.io.UncheckedIOException;
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
 * problem at its line like the rest of the loader; a bad entry of a list file is reported at the
 * list file's own line.
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

  static final List<String> KEYS =
      List.of("lists", "shortTermLength", "surfaces", "http", "websocket");
  private static final List<String> SURFACE_KEYS = List.of("minLength", "maxLength",
      "separators", "allowEmpty", "identifier", "scripts");
  private static final List<String> HTTP_KEYS = List.of("paths", "methods", "fields");
  private static final List<String> WS_KEYS = List.of("action", "fields");
  private static final List<String> SURFACES = List.of("username", "display_name", "room_name",
      "reaction");
  private static final List<String> NAME_SURFACES = SURFACES.subList(0, 3);
  private static final List<String> SCRIPTS = List.of("single", "highly_restrictive",
      "moderately_restrictive", "any");
  private static final List<String> WRITE_METHODS = List.of("POST", "PUT", "PATCH");

  private final Walk ctx;
  private String lists;
  private final Map<String, SurfaceRules> surfaces = new LinkedHashMap<>();

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
    Moderator.Builder b = Moderator.builder();
    String lists = o.get("lists", "a directory of list files", NAME, null);
    if (lists != null) {
      Path dir = ctx.source == null || ctx.source.getParent() == null ? Path.of(lists)
          : ctx.source.getParent().resolve(lists).normalize();
      try {
        b.lists(dir);
        this.lists = lists;
      } catch (InvalidValueException e) {
        listError(o, e, dir);
      } catch (UncheckedIOException e) {
        ctx.error(o.node("lists"), o.path("lists"), quote(lists), "readable list files ("
            + e.getMessage() + ")");
      }
    }
    int shortLength = o.get("shortTermLength", "0..64", integer(0, 64), 4);
    b.shortTermLength(shortLength);
    surfaces(o, b);
    Policy.Builder routes = Policy.builder();
    Map<String, Map<String, Surface>> http = http(o, routes);
    Map<String, Map<String, Surface>> ws = websocket(o, actionField);
    Moderator moderator;
    try {
      moderator = b.build();
    } catch (InvalidValueException e) {
      listError(o, e, null);
      return ModerationSettings.none();
    }
    return new ModerationSettings(moderator, routes.build(), http, ws, lists, shortLength,
        surfaces);
  }

  /**
   * {@code /lists/blocked.txt:3 : "--" (...)} becomes an error at that file and line; a problem
   * of the directory (given) or of the lists together (dir null) at the section.
   */
  private void listError(Mapping o, InvalidValueException e, Path dir) {
    String field = e.field();
    int colon = field.lastIndexOf(':');
    if (colon > 0 && field.substring(colon + 1).matches("[0-9]+")) {
      ctx.errors.add(new ConfigError(field.substring(0, colon),
          Integer.parseInt(field.substring(colon + 1)), o.path("lists"), e.value(),
          e.expected()));
    } else if (dir != null) {
      ctx.error(o.node("lists"), o.path("lists"), quote(dir.toString()), e.expected());
    } else {
      ctx.error(o.node, o.path, e.field() + " " + e.value(), e.expected());
    }
  }

  private void surfaces(Mapping o, Moderator.Builder b) {
    Node n = o.node("surfaces");
    if (n == null) {
      return;
    }
    Mapping all = Mapping.of(ctx, n, o.path("surfaces"), NAME_SURFACES, "a mapping of surface names");
    if (all == null) {
      return;
    }
    for (Map.Entry<String, NodeTuple> e : all.fields.entrySet()) {
      Surface surface = Surface.valueOf(e.getKey().toUpperCase(Locale.ROOT));
      Mapping s = Mapping.of(ctx, e.getValue().getValueNode(), all.path(e.getKey()), SURFACE_KEYS,
          "a mapping with " + String.join(", ", SURFACE_KEYS));
      if (s == null) {
        continue;
      }
      SurfaceRules d = SurfaceRules.of(surface);
      try {
        SurfaceRules.Builder r = SurfaceRules.builder(surface)
            .minLength(s.get("minLength", "1..256", integer(0, Integer.MAX_VALUE), d.minLength()))
            .maxLength(s.get("maxLength", "1..256", integer(0, Integer.MAX_VALUE), d.maxLength()))
            .separators(s.get("separators", "punctuation characters", text -> text,
                d.separators()))
            .allowEmpty(s.get("allowEmpty", "true or false", BOOLEAN, d.allowEmpty()))
            .identifier(s.get("identifier", "true or false", BOOLEAN, d.identifier()));
        String scripts = s.get("scripts", String.join(", ", SCRIPTS), oneOf(SCRIPTS),
            d.scripts().name().toLowerCase(Locale.ROOT));
        SurfaceRules rules = r.scripts(SurfaceRules.Scripts.valueOf(
            scripts.toUpperCase(Locale.ROOT))).build();
        b.rules(rules);
        surfaces.put(e.getKey(), rules);
      } catch (InvalidValueException x) {
        ctx.coreError(s.node, s.path, x, s);
      }
    }
  }

  private Map<String, Map<String, Surface>> http(Mapping o, Policy.Builder routes) {
    Map<String, Map<String, Surface>> out = new LinkedHashMap<>();
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
      Map<String, Surface> fields = fields(h);
      String name = "moderation-" + i++;
      Route.Builder r = Route.builder(name).websocket(false);
      paths.forEach(r::path);
      methods.forEach(r::method);
      routes.route(r.build());
      out.put(name, fields);
    }
    return out;
  }

  private Map<String, Map<String, Surface>> websocket(Mapping o, String actionField) {
    Map<String, Map<String, Surface>> out = new LinkedHashMap<>();
    for (Mapping w : entries(o, "websocket", WS_KEYS)) {
      String action = w.get("action", "an action name", NAME, null);
      if (action != null && actionField == null) {
        ctx.error(w.node("action"), w.path("action"), quote(action), "websocket.actionField to "
            + "be set too (the JSON field naming the action, like type)");
      }
      Map<String, Surface> fields = fields(w);
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
  private Map<String, Surface> fields(Mapping entry) {
    Map<String, Surface> out = new LinkedHashMap<>();
    Node n = entry.node("fields");
    Mapping f = n == null ? null : Mapping.of(ctx, n, entry.path("fields"), null,
        "a mapping of JSON field names to surfaces");
    if (f != null) {
      for (Map.Entry<String, NodeTuple> e : f.fields.entrySet()) {
        String surface = ctx.scalar(e.getValue().getValueNode(), f.path(e.getKey()),
            String.join(", ", SURFACES), oneOf(SURFACES));
        if (surface != null) {
          out.put(e.getKey(), Surface.valueOf(surface.toUpperCase(Locale.ROOT)));
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
