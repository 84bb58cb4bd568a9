package dev.sluice.gateway;

import dev.sluice.core.InvalidValueException;
import dev.sluice.core.policy.Policy;
import dev.sluice.moderation.Moderator;
import dev.sluice.moderation.Surface;
import dev.sluice.moderation.SurfaceRules;
import dev.sluice.policy.ConfigError;
import dev.sluice.policy.ModerationSettings;
import dev.sluice.policy.SurfaceSettings;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The policy's {@code moderation:} section as the gateway runs it: the {@link Moderator} built
 * from its lists and surface rules, and each checked field's {@link Surface}. The policy module
 * only reads the section; what only the moderation library can judge (a list file's entries, a
 * surface's separators) is judged here, and reported at the file and line the loader would use.
 *
 * @param moderator null when the policy has no moderation section
 * @param routes the section's routes, null when absent
 * @param http each route name's fields: JSON field name to surface
 * @param websocket each action's fields ({@link ModerationSettings#ANY_ACTION} for every message)
 */
public record Moderation(Moderator moderator, Policy routes,
    Map<String, Map<String, Surface>> http, Map<String, Map<String, Surface>> websocket) {

  private static final Moderation NONE = new Moderation(null, null, Map.of(), Map.of());

  /**
   * The problems of {@code settings} that only building its Moderator finds, like {@code
   * lists/blocked.txt:3: moderation.lists : "***" (expected: ...)}; none when it builds. The
   * server runs this on every load and reload, so such a policy is rejected as a bad key is.
   */
  public static List<ConfigError> check(ModerationSettings settings) {
    List<ConfigError> errors = new ArrayList<>();
    build(settings, errors);
    return errors;
  }

  /** The section of a config the loader accepted, built now. */
  static Moderation of(ModerationSettings settings) {
    List<ConfigError> errors = new ArrayList<>();
    Moderation m = build(settings, errors);
    if (m == null) {
      throw new IllegalArgumentException("moderation : " + errors.get(0));
    }
    return m;
  }

  /**
   * The last section one server checked, found again by its gateway when it installs that same
   * settings object: the lists are read once per load, and no Moderator (10 to 30 ms, more on
   * ICU4J's first use) is built on an event loop after a reload.
   */
  public static final class Cache {
    private volatile Built last;

    /** {@link Moderation#check}, keeping the section built for {@link #of}. */
    public List<ConfigError> check(ModerationSettings settings) {
      List<ConfigError> errors = new ArrayList<>();
      Moderation m = build(settings, errors);
      if (m != null) {
        last = new Built(settings, m);
      }
      return errors;
    }

    /** The section {@link #check} built for this very object, otherwise built now. */
    Moderation of(ModerationSettings settings) {
      Built b = last;
      return b != null && b.settings == settings ? b.moderation : Moderation.of(settings);
    }
  }

  private record Built(ModerationSettings settings, Moderation moderation) {}

  private static Moderation build(ModerationSettings s, List<ConfigError> errors) {
    if (s == null || !s.present()) {
      return NONE;
    }
    Moderator.Builder b = Moderator.builder();
    Path dir = s.listsDirectory();
    if (dir != null) {
      try {
        b.lists(dir);
      } catch (InvalidValueException e) {
        listError(s, e, dir, errors);
      } catch (UncheckedIOException e) {
        errors.add(s.listsAt().error(ConfigError.quote(s.lists()), "readable list files ("
            + e.getMessage() + ")"));
      }
    }
    try {
      b.shortTermLength(s.shortTermLength());
    } catch (InvalidValueException e) {
      errors.add(s.at().error(e.field() + " " + e.value(), e.expected()));
    }
    s.surfaces().forEach((name, r) -> {
      try {
        b.rules(rules(name, r));
      } catch (InvalidValueException e) {
        errors.add(e.field().equals("separators") && r.separatorsAt() != null
            ? r.separatorsAt().error(ConfigError.quote(r.separators()), e.expected())
            : s.at().error("surfaces." + name + "." + e.field() + " " + e.value(),
                e.expected()));
      }
    });
    if (!errors.isEmpty()) {
      return null;
    }
    Moderator moderator;
    try {
      moderator = b.build();
    } catch (InvalidValueException e) {
      listError(s, e, null, errors);
      return null;
    }
    return new Moderation(moderator, s.routes(), surfaces(s.http()), surfaces(s.websocket()));
  }

  /** A surface's rules as the moderation library holds them. */
  static SurfaceRules rules(String surface, SurfaceSettings r) {
    return SurfaceRules.builder(surface(surface)).minLength(r.minLength())
        .maxLength(r.maxLength()).separators(r.separators()).allowEmpty(r.allowEmpty())
        .identifier(r.identifier())
        .scripts(SurfaceRules.Scripts.valueOf(r.scripts().toUpperCase(Locale.ROOT))).build();
  }

  /** {@code room_name} as {@link Surface#ROOM_NAME}. */
  static Surface surface(String label) {
    return Surface.valueOf(label.toUpperCase(Locale.ROOT));
  }

  /**
   * {@code /lists/blocked.txt:3 : "--" (...)} becomes an error at that file and line; a problem
   * of the directory (given) or of the lists together (dir null) at the section.
   */
  private static void listError(ModerationSettings s, InvalidValueException e, Path dir,
      List<ConfigError> errors) {
    String field = e.field();
    int colon = field.lastIndexOf(':');
    if (colon > 0 && field.substring(colon + 1).matches("[0-9]+")) {
      errors.add(new ConfigError(field.substring(0, colon),
          Integer.parseInt(field.substring(colon + 1)), "moderation.lists", e.value(),
          e.expected()));
    } else if (dir != null) {
      errors.add(s.listsAt().error(ConfigError.quote(dir.toString()), e.expected()));
    } else {
      errors.add(s.at().error(e.field() + " " + e.value(), e.expected()));
    }
  }

  private static Map<String, Map<String, Surface>> surfaces(Map<String, Map<String, String>> in) {
    Map<String, Map<String, Surface>> out = new LinkedHashMap<>();
    in.forEach((key, fields) -> {
      Map<String, Surface> f = new LinkedHashMap<>();
      fields.forEach((field, label) -> f.put(field, surface(label)));
      out.put(key, Collections.unmodifiableMap(f));
    });
    return Collections.unmodifiableMap(out);
  }
}
