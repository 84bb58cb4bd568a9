package dev.sluice.policy;

import static dev.sluice.policy.Values.oneOf;

import dev.sluice.core.address.Networks;
import dev.sluice.core.policy.Policy;
import java.util.List;

/**
 * The top-level switches of a policy: {@code allow:}, client networks that are never limited,
 * and {@code mode:}, where {@code shadow} runs every enforcing rule as a shadow rule (a dry run
 * for a first deployment; {@code sluice serve --dry-run} does the same).
 */
final class Toplevel {

  static final String NETWORK = "an IPv4 or IPv6 network like 10.0.0.0/8 or ::1/128";

  private Toplevel() {}

  static void read(Walk walk, Mapping doc, Policy.Builder policy) {
    List<String> allow = doc.list("allow", NETWORK, Toplevel::network, List.of());
    policy.allow(allow);
    String mode = doc.get("mode", "enforce (rules as written) or shadow (every rule a dry run)",
        oneOf(List.of("enforce", "shadow")), "enforce");
    policy.dryRun(mode.equals("shadow"));
  }

  /** A network in canonical form; the message of a bad one is what was expected. */
  static String network(String text) {
    if (!Networks.isNetwork(text)) {
      throw new IllegalArgumentException(NETWORK);
    }
    return text.strip();
  }
}
