package dev.sluice.policy;

import dev.sluice.core.policy.Policy;
import dev.sluice.moderation.Moderator;
import dev.sluice.moderation.Surface;
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
 */
public record ModerationSettings(Moderator moderator, Policy routes,
    Map<String, Map<String, Surface>> http, Map<String, Map<String, Surface>> websocket) {

  /** The websocket key of checks that apply to every message, whatever its action. */
  public static final String ANY_ACTION = "*";

  public ModerationSettings {
    http = Map.copyOf(http);
    websocket = Map.copyOf(websocket);
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
