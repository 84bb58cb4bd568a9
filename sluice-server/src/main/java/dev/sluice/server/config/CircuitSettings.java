package dev.sluice.server.config;

import java.time.Duration;

/**
 * The circuit in front of a remote store: after {@code failures} consecutive errors or timeouts
 * the store is not asked for {@code open}, and every decision takes its rule's on-store-error
 * outcome at once instead of waiting for the deadline (a dead store costs nothing per request).
 *
 * @param failures consecutive failures that open the circuit (default 5)
 * @param open how long the circuit stays open before one trial call (default 1 s, at most 4 s)
 */
public record CircuitSettings(int failures, Duration open) {

  public static CircuitSettings defaults() {
    return new CircuitSettings(5, Duration.ofSeconds(1));
  }
}
