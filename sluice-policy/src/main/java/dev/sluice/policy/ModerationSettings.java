package dev.sluice.policy;

import dev.sluice.core.policy.Policy;
import dev.sluice.moderation.Moderator;
import dev.sluice.moderation.Surface;
import dev.sluice.moderation.SurfaceRules;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The policy's {@code moderation:} section: which JSON fields of which requests and WebSocket
 * messages the gateway checks, and as what.
 *
 * @param moderator the lists and surface rules; null when the section is absent
 * @param routes one rule-less route per {@code http} entry, named {@code moderation-N}, so the
 *     paths and methods match exactly as the policy's own routes do
 * @param http each route name's fields: JSON field name to surface
 * @param websocket each action's fields ({@link #ANY_ACTION} for every message)
 * @param lists the list directory as written, or null for the built-in lists
 * @param shortTermLength block-list terms up to this long must be whole words
 * @param surfaces the surfaces whose rules the file sets, by name ({@code room_name})
 */
public record ModerationSettings(Moderator moderator, Policy routes,
    Map<String, Map<String, Surface>> http, Map<String, Map<String, Surface>> websocket,
    String lists, int shortTermLength, Map<String, SurfaceRules> surfaces) {

  /** The websocket key of checks that apply to every message, whatever its action. */
  public static final String ANY_ACTION = "*";

  public ModerationSettings {
    http = Collections.unmodifiableMap(new LinkedHashMap<>(http));
    websocket = Collections.unmodifiableMap(new LinkedHashMap<>(websocket));
    surfaces = Collections.unmodifiableMap(new LinkedHashMap<>(surfaces));
  }

  /** Settings built in code: no list directory, the default short-term length. */
  public ModerationSettings(Moderator moderator, Policy routes,
      Map<String, Map<String, Surface>> http, Map<String, Map<String, Surface>> websocket) {
    this(moderator, routes, http, websocket, null, 4, Map.of());
  }

  /** No moderation: the gateway passes every body and message through unread. */
  public static ModerationSettings none() {
    return new ModerationSettings(null, null, Map.of(), Map.of());
  }

  /** True when some request or message is to be checked. */
  public boolean enabled() {
    return moderator != null && (!http.isEmpty() || !websocket.isEmpty());
  }
}
