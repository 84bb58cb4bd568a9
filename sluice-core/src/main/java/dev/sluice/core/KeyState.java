package dev.sluice.core;

import java.time.Duration;
import java.util.List;

/**
 * One key's state under a rule, as an operator sees it ({@link Store#keyStateAsync}): whether it
 * is banned and for how long, and per limit what a call of cost 1 would get now. Reading it
 * changes nothing.
 *
 * @param rule the rule's name
 * @param key the key as listed: the escaped dimension values joined by ':' ({@link Rule#keyText})
 * @param present false when the store holds no state for it (it decides as a fresh key)
 * @param banLeft how long the ban still runs; {@link Duration#ZERO} when not banned
 * @param limits one entry per limit of the rule, in order
 * @param refusedAgo how long ago the key was last seen refused, or null when unknown
 */
public record KeyState(String rule, String key, boolean present, Duration banLeft,
    List<LimitState> limits, Duration refusedAgo) {

  /** The most keys a listing returns, whatever it is asked for. */
  public static final int MAX_LIST = 1000;

  public KeyState {
    limits = List.copyOf(limits);
  }

  /**
   * What a call of cost 1 would get from one limit now.
   *
   * @param name the limit's name
   * @param remaining calls of cost 1 left
   * @param reset when the limit is full (fresh) again
   * @param retryAfter zero when a call would be allowed, else how long until it would
   */
  public record LimitState(String name, long remaining, Duration reset, Duration retryAfter) {}

  public boolean banned() {
    return !banLeft.isZero();
  }

  /** True when a call of cost 1 would be refused now: banned, or some limit is exhausted. */
  public boolean refusing() {
    return banned() || limits.stream().anyMatch(l -> !l.retryAfter().isZero());
  }

  /** This state, stamped with when the key was last refused. */
  KeyState refusedAgo(Duration ago) {
    return new KeyState(rule, key, present, banLeft, limits, ago);
  }
}
