/**
 * Sluice's engine: rules, limits, decisions and stores ({@code dev.sluice.core}), request policy
 * ({@code dev.sluice.core.policy}), client address resolution ({@code dev.sluice.core.address})
 * and the HTTP answers every adapter gives ({@code dev.sluice.core.http}: 429/503 bodies, limit
 * headers, CORS, {@code Accept}, the JSON escaper), kept here so adapters share them without
 * depending on each other.
 */
module dev.sluice.core {
  exports dev.sluice.core;
  exports dev.sluice.core.policy;
  exports dev.sluice.core.address;
  exports dev.sluice.core.http;
}
