package dev.sluice.server.gateway;

import dev.sluice.core.Decision;
import dev.sluice.core.Rule;
import dev.sluice.netty.RateLimitListener;
import java.util.List;

/** Passes the handlers' reports on to {@link GatewayEvents}. */
final class EventsListener implements RateLimitListener {

  private final GatewayEvents events;

  EventsListener(GatewayEvents events) {
    this.events = events;
  }

  @Override
  public void decision(String kind, Decision decision) {
    events.decision(kind, decision);
  }

  @Override
  public void decision(String kind, List<Rule> rules, Decision decision) {
    events.decision(kind, rules, decision);
  }

  @Override
  public void decisionFailed(String kind, List<Rule> rules, Throwable error) {
    events.decisionFailed(kind, rules, error);
  }

  @Override
  public void banApplied(String kind, Decision decision, String key) {
    events.banApplied(kind, decision, key);
  }

  @Override
  public void allowlisted(String kind) {
    events.allowlisted(kind);
  }

  @Override
  public void delayed(String kind, String rule) {
    events.delayed(kind, rule);
  }

  @Override
  public void webSocketOpened() {
    events.webSocketOpened();
  }

  @Override
  public void webSocketClosed(int code) {
    events.webSocketClosed(code);
  }

  @Override
  public void generated(int status) {
    events.generated(status);
  }
}
