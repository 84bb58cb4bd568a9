package dev.sluice.server.config;

import dev.sluice.core.policy.Policy;
import java.nio.file.Path;

/**
 * Everything {@code sluice serve} runs with: the policy and the gateway's settings. Immutable;
 * a reload builds a new one and swaps it in whole.
 *
 * @param policy routes, rules, key dimensions and trusted proxies
 * @param response 429 bodies and rate-limit headers
 * @param cors CORS headers put on responses the gateway generates (429, 413, 502, 504)
 * @param websocket WebSocket guards
 * @param gateway self-protection limits and timeouts
 * @param store where counters live
 * @param source the policy file, or null for the embedded default
 * @param trust the trusted-proxy settings as written (the resolver is {@code policy.clientAddress()})
 * @param moderation the JSON fields and WebSocket messages the gateway checks
 */
public record ServerConfig(
    Policy policy,
    ResponseSettings response,
    CorsSettings cors,
    WebSocketSettings websocket,
    GatewaySettings gateway,
    StoreSettings store,
    Path source,
    TrustSettings trust,
    ModerationSettings moderation) {

  public ServerConfig {
    moderation = moderation == null ? ModerationSettings.none() : moderation;
  }

  /** A config without moderation. */
  public ServerConfig(Policy policy, ResponseSettings response, CorsSettings cors,
      WebSocketSettings websocket, GatewaySettings gateway, StoreSettings store, Path source,
      TrustSettings trust) {
    this(policy, response, cors, websocket, gateway, store, source, trust, null);
  }

  /** A config with default trust settings. */
  public ServerConfig(Policy policy, ResponseSettings response, CorsSettings cors,
      WebSocketSettings websocket, GatewaySettings gateway, StoreSettings store, Path source) {
    this(policy, response, cors, websocket, gateway, store, source, TrustSettings.defaults());
  }

  /** This config with other store settings. */
  public ServerConfig withStore(StoreSettings store) {
    return new ServerConfig(policy, response, cors, websocket, gateway, store, source, trust,
        moderation);
  }
}
