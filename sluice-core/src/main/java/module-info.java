/**
 * Sluice's engine: rules, limits, decisions and stores ({@code dev.sluice.core}), request policy
 * ({@code dev.sluice.core.policy}) and client address resolution ({@code dev.sluice.core.address}).
 */
module dev.sluice.core {
  exports dev.sluice.core;
  exports dev.sluice.core.policy;
  exports dev.sluice.core.address;
}
