package dev.sluice.gateway;

import dev.sluice.core.Decision;
import dev.sluice.netty.Exchange;
import dev.sluice.netty.HttpRateLimitHandler;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.AttributeKey;

/**
 * The access log's facts about the channel's current exchange, gathered as it runs: begun by
 * {@link FrontHandler} at the request head (only while the access log is on), the upstream's
 * timing added by {@link ProxyHandler}, the status and bytes counted on the way out.
 */
final class AccessRecord {

  private static final AttributeKey<AccessRecord> KEY = AttributeKey.valueOf("sluice.access");

  private final Snapshot snapshot;
  private final Exchange exchange;
  private final String client;
  private final long startMicros;
  private final AccessEntry.Forwarding forwarding;
  private int status;
  private long bytes;
  private long upstreamSent = -1;
  private long upstreamMicros = -1;
  private boolean generated;

  private AccessRecord(Snapshot snapshot, Exchange exchange) {
    this.snapshot = snapshot;
    this.exchange = exchange;
    // Resolved now, before the proxy adds its own X-Forwarded-For to these headers; the view
    // keeps it, so the limiter resolving by the same policy does not repeat the work.
    String c;
    try {
      c = String.valueOf(exchange.view().clientAddress(snapshot.config.policy().clientAddress()));
    } catch (RuntimeException e) {
      c = exchange.view().peer();
    }
    this.client = c;
    this.startMicros = AccessEntry.nowMicros();
    // Only what the resolver may read, and only when it reads anything: replay resolves the
    // client again from these; without a trusted proxy the peer is the client.
    HttpRequest request = exchange.request();
    this.forwarding = AccessEntry.Forwarding.of(snapshot.config.trust(),
        name -> request.headers().getAll(name));
  }

  /** Begins the record of {@code exchange}, or clears the channel's when the log is off. */
  static AccessRecord begin(Channel ch, Snapshot snapshot, Exchange exchange) {
    AccessRecord r = snapshot.accessLog ? new AccessRecord(snapshot, exchange) : null;
    if (r != null || ch.hasAttr(KEY)) {
      // With the log off, a channel never touches the attribute.
      ch.attr(KEY).set(r);
    }
    return r;
  }

  /** The channel's current record, or null when the access log is off. */
  static AccessRecord of(Channel ch) {
    return ch.attr(KEY).get();
  }

  void upstreamSent() {
    upstreamSent = System.nanoTime();
  }

  void upstreamAnswered() {
    if (upstreamSent >= 0 && upstreamMicros < 0) {
      upstreamMicros = (System.nanoTime() - upstreamSent) / 1000;
    }
  }

  /** The gateway answered by itself (413, 431, 502...), not the upstream or the limiter. */
  void generated() {
    generated = true;
  }

  void status(int code) {
    status = code;
  }

  void counted(Object msg) {
    if (msg instanceof ByteBufHolder h) {
      bytes += h.content().readableBytes();
    } else if (msg instanceof ByteBuf b) {
      bytes += b.readableBytes();
    }
  }

  /** The entry, with the decision the limiter left on {@code ch}: read before the next request. */
  AccessEntry finish(Channel ch) {
    HttpRequest request = exchange.request();
    Decision d = ch.attr(HttpRateLimitHandler.DECISION).get();
    String rule = d == null ? null : d.allowed() && d.shadowRefused() ? d.shadowRule() : d.rule();
    String outcome;
    if (d != null && d.degraded()) {
      outcome = "degraded";
    } else if (d != null && !d.allowed()) {
      outcome = "refused";
    } else if (generated && status >= 500) {
      outcome = "error";
    } else if (generated && status >= 400) {
      outcome = "invalid";
    } else if (d != null && d.shadowRefused()) {
      outcome = "shadow-refused";
    } else {
      outcome = "allowed";
    }
    io.netty.handler.codec.http.HttpHeaders h = request.headers();
    String host = h.get("Host");
    return new AccessEntry(System.currentTimeMillis(), client, request.method().name(),
        request.uri(), status, bytes, exchange.route(), rule, outcome, upstreamMicros,
        snapshot.config.logging(), startMicros, request.protocolVersion().text(),
        h.get("Referer"), h.get("User-Agent"), exchange.view().peer(),
        host != null ? host : h.get(":authority"), forwarding, exchange.view().websocketUpgrade());
  }
}
