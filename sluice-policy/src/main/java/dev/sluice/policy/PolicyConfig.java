package dev.sluice.policy;

import dev.sluice.core.http.ResponseSpec;
import dev.sluice.core.policy.Policy;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A loaded policy file: the request policy and every section's settings, read alike by the
 * gateway, the servlet filter and the Spring Boot starter. Immutable; a reload builds a new one
 * and swaps it in whole.
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
 * @param offSwitches each rule's {@code offSwitch} variable, by rule name (the rules themselves,
 *     as given, are {@code policy.rules()})
 * @param domains the {@code domains:} descriptor trees the rate limit service answers by
 * @param rls the {@code rls:} section: the rate limit service's address and answers
 * @param logging the {@code logging:} section: the gateway's access log
 */
public record PolicyConfig(
    Policy policy,
    ResponseSettings response,
    CorsSettings cors,
    WebSocketSettings websocket,
    GatewaySettings gateway,
    StoreSettings store,
    Path source,
    TrustSettings trust,
    ModerationSettings moderation,
    Map<String, String> offSwitches,
    RlsDomains domains,
    RlsSettings rls,
    LoggingSettings logging) {

  public PolicyConfig {
    logging = logging == null ? LoggingSettings.defaults() : logging;
    domains = domains == null ? RlsDomains.none() : domains;
    rls = rls == null ? RlsSettings.defaults() : rls;
    moderation = moderation == null ? ModerationSettings.none() : moderation;
    offSwitches = offSwitches == null ? Map.of()
        : Collections.unmodifiableMap(new LinkedHashMap<>(offSwitches));
  }

  /** {@code policy} with every other section at its defaults, for a config built in code. */
  public static PolicyConfig of(Policy policy) {
    return new PolicyConfig(policy, ResponseSettings.defaults(), CorsSettings.disabled(),
        WebSocketSettings.defaults(), GatewaySettings.defaults(), StoreSettings.defaults(), null,
        TrustSettings.defaults(), null, null, null, null, null);
  }

  /** The {@code response:} and {@code cors:} sections as core's spec, which adapters answer by. */
  public ResponseSpec responses() {
    ResponseSettings r = response == null ? ResponseSettings.defaults() : response;
    CorsSettings c = cors == null ? CorsSettings.disabled() : cors;
    ResponseSpec.Builder b = ResponseSpec.newBuilder().refusalStatus(r.status());
    for (dev.sluice.core.Rule rule : policy.rules().values()) {
      if (rule.status() > 0) {
        b.ruleStatus(rule.name(), rule.status());
      }
    }
    return b.rateLimitHeaders(r.rateLimitHeaders())
        .ietfHeaders(r.ietfHeaders()).htmlTemplate(r.htmlTemplate())
        .unavailableStatus(r.unavailableStatus())
        .unavailableHtmlTemplate(r.unavailableHtmlTemplate())
        .jsonTemplate(r.jsonTemplate()).unavailableJsonTemplate(r.unavailableJsonTemplate())
        .cors(c.toCors())
        .limitPreflights(c.limitPreflights()).build();
  }

  /**
   * This config with every enforcing rule in shadow mode ({@code sluice serve --dry-run}); every
   * other section stays as it is.
   */
  public PolicyConfig withDryRun() {
    return withPolicy(policy.withDryRun());
  }

  public PolicyConfig withPolicy(Policy policy) {
    return new PolicyConfig(policy, response, cors, websocket, gateway, store, source, trust,
        moderation, offSwitches, domains, rls, logging);
  }

  public PolicyConfig withResponse(ResponseSettings response) {
    return new PolicyConfig(policy, response, cors, websocket, gateway, store, source, trust,
        moderation, offSwitches, domains, rls, logging);
  }

  public PolicyConfig withCors(CorsSettings cors) {
    return new PolicyConfig(policy, response, cors, websocket, gateway, store, source, trust,
        moderation, offSwitches, domains, rls, logging);
  }

  public PolicyConfig withWebSocket(WebSocketSettings websocket) {
    return new PolicyConfig(policy, response, cors, websocket, gateway, store, source, trust,
        moderation, offSwitches, domains, rls, logging);
  }

  public PolicyConfig withGateway(GatewaySettings gateway) {
    return new PolicyConfig(policy, response, cors, websocket, gateway, store, source, trust,
        moderation, offSwitches, domains, rls, logging);
  }

  public PolicyConfig withStore(StoreSettings store) {
    return new PolicyConfig(policy, response, cors, websocket, gateway, store, source, trust,
        moderation, offSwitches, domains, rls, logging);
  }

  public PolicyConfig withLogging(LoggingSettings logging) {
    return new PolicyConfig(policy, response, cors, websocket, gateway, store, source, trust,
        moderation, offSwitches, domains, rls, logging);
  }
}
