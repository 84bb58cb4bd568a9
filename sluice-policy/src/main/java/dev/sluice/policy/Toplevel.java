package dev.sluice.policy;

import static dev.sluice.policy.Values.oneOf;

import dev.sluice.core.address.Networks;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.RequestTarget;
import java.util.List;
import java.util.Locale;

/**
 * The top-level switches of a policy: {@code allow:}, client networks that are never limited;
 * {@code deny:}, client networks answered 403 and never forwarded (checked first);
 * {@code mode:}, where {@code shadow} runs every enforcing rule as a shadow rule (a dry run for a
 * first deployment; {@code sluice serve --dry-run} does the same); and {@code path:}, how request
 * paths are read ({@link RequestTarget}: path parameters, encoded slashes), for every adapter.
 */
final class Toplevel {

  static final String NETWORK = "an IPv4 or IPv6 network like 10.0.0.0/8 or ::1/128";

  private Toplevel() {}

  static void read(Walk walk, Mapping doc, Policy.Builder policy) {
    List<String> allow = doc.list("allow", NETWORK, Toplevel::network, List.of());
    policy.allow(allow);
    policy.deny(doc.list("deny", NETWORK, Toplevel::network, List.of()));
    String mode = doc.get("mode", "enforce (rules as written) or shadow (every rule a dry run)",
        oneOf(List.of("enforce", "shadow")), "enforce");
    policy.dryRun(mode.equals("shadow"));
    Mapping path = Mapping.of(walk, doc.node("path"), "path", PATH_KEYS,
        "a mapping with parameters and encodedSlashes");
    if (path != null) {
      String parameters = path.get("parameters", "strip (as Tomcat, Jetty and Spring read "
          + "paths), keep (; is a plain character) or refuse (400)",
          oneOf(List.of("strip", "keep", "refuse")), "strip");
      String slashes = path.get("encodedSlashes", "refuse (400 for %2F and %5C) or keep (kept "
          + "encoded, as data inside a segment)", oneOf(List.of("refuse", "keep")), "refuse");
      policy.paths(new RequestTarget.Rules(
          RequestTarget.Parameters.valueOf(parameters.toUpperCase(Locale.ROOT)),
          RequestTarget.EncodedSlashes.valueOf(slashes.toUpperCase(Locale.ROOT))));
    }
  }

  static final List<String> PATH_KEYS = List.of("parameters", "encodedSlashes");

  /** A network in canonical form; the message of a bad one is what was expected. */
  static String network(String text) {
    if (!Networks.isNetwork(text)) {
      throw new IllegalArgumentException(NETWORK);
    }
    return text.strip();
  }
}
