package dev.sluice.server.gateway;

import dev.sluice.core.Decision;
import dev.sluice.netty.RateLimitListener;

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
  public void banApplied(String kind, Decision decision, String key) {
    events.banApplied(kind, decision, key);
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
