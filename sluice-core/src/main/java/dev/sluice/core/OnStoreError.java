package dev.sluice.core;

/**
 * What a rule decides when its store cannot answer within the deadline. Either way the decision
 * is marked degraded. Allow is the default: a protection must not become the outage (seed 002).
 */
public enum OnStoreError {
  ALLOW,
  /** For high-risk routes, like seed 001's {@code /ws} and {@code /api/game-results}. */
  DENY
}
