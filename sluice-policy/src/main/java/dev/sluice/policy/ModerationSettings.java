package dev.sluice.policy;

import dev.sluice.core.policy.Policy;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The policy's {@code moderation:} section as plain values: which JSON fields of which requests
 * and WebSocket messages are checked, as which surface, with which lists and rules. Whoever
 * moderates builds its checker from these (the gateway builds a {@code Moderator}, loading the
 * lists), and reports what only the checker can judge (a list file's line, a separator) at
 * {@link #at()}, {@link #listsAt()} or a surface's {@link SurfaceSettings#separatorsAt()}.
 *
 * @param routes one rule-less route per {@code http} entry, named {@code moderation-N}, so the
 *     paths and methods match exactly as the policy's own routes do; null when the section is
 *     absent
 * @param http each route name's fields: JSON field name to surface name ({@code username})
 * @param websocket each action's fields ({@link #ANY_ACTION} for every message)
 * @param lists the list directory as written, or null for the built-in lists
 * @param listsDirectory {@code lists} resolved against the policy file, or null
 * @param shortTermLength block-list terms up to this long must be whole words
 * @param surfaces the surfaces whose rules the file sets, by name ({@code room_name}), every
 *     value not written at its default
 * @param at where the section was written; null when absent
 * @param listsAt where {@code lists} was written; null when not
 */
public record ModerationSettings(Policy routes, Map<String, Map<String, String>> http,
    Map<String, Map<String, String>> websocket, String lists, Path listsDirectory,
    int shortTermLength, Map<String, SurfaceSettings> surfaces, Where at, Where listsAt) {

  /** The websocket key of checks that apply to every message, whatever its action. */
  public static final String ANY_ACTION = "*";

  /** The surfaces a JSON field may be checked as; the first three have {@link SurfaceSettings}. */
  public static final List<String> SURFACES = List.of("username",
      "display_name", "room_name", "reaction");

  public ModerationSettings {
    http = Collections.unmodifiableMap(new LinkedHashMap<>(http));
    websocket = Collections.unmodifiableMap(new LinkedHashMap<>(websocket));
    surfaces = Collections.unmodifiableMap(new LinkedHashMap<>(surfaces));
  }

  /** No moderation: the gateway passes every body and message through unread. */
  public static ModerationSettings none() {
    return new ModerationSettings(null, Map.of(), Map.of(), null, null, 4, Map.of(), null, null);
  }

  /** True when the policy has a {@code moderation:} section. */
  public boolean present() {
    return routes != null;
  }

  /** True when some request or message is to be checked. */
  public boolean enabled() {
    return present() && (!http.isEmpty() || !websocket.isEmpty());
  }

  /** Where a value was written, so a later check reports it as the loader reports its own. */
  public record Where(String file, int line, String path) {

    /** The error {@code file:line: path : value (expected: ...)}. */
    public ConfigError error(String value, String expected) {
      return new ConfigError(file, line, path, value, expected);
    }
  }
}
