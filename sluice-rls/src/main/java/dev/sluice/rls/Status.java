package dev.sluice.rls;

import dev.sluice.core.Limit;
import dev.sluice.policy.RlsDescriptor;

/**
 * The answer for one descriptor, in the request's order.
 *
 * @param overLimit whether this descriptor refuses (never for a shadow descriptor)
 * @param node the configuration node that matched, or null (no limit, or a request override)
 * @param limit the limit that decided (the most restrictive when several allow), or null when
 *     the descriptor is not limited (no match, unlimited, replaced)
 * @param name the name the limit is reported by: the node's {@code rate_limit.name}, else the
 *     limit's name
 * @param remaining calls left in that limit after this one
 * @param resetNanos until the limit is fresh again (allowed) or until a call would pass (refused)
 * @param shadowRefused a shadow descriptor that would have refused
 * @param degraded the store did not answer; the descriptor's {@code onStoreError} decided
 */
record Status(boolean overLimit, RlsDescriptor node, Limit limit, String name, long remaining,
    long resetNanos, boolean shadowRefused, boolean degraded) {

  static final Status NO_LIMIT = new Status(false, null, null, null, 0, 0, false, false);

  static Status unlimited(RlsDescriptor node) {
    return new Status(false, node, null, null, 0, 0, false, false);
  }
}
