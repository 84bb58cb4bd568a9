/**
 * Netty handlers for Sluice: {@link dev.sluice.netty.HttpRateLimitHandler} (429s and limit
 * headers) and {@link dev.sluice.netty.WebSocketGuardHandler} (connection caps, message size,
 * flood and per-action limits), configured by immutable settings read once per request or
 * connection, and reporting through a {@link dev.sluice.netty.RateLimitListener}.
 *
 * <pre>{@code
 * ch.pipeline().addLast(new HttpServerCodec(),
 *     new HttpRateLimitHandler(limiter, () -> httpSettings, listener),
 *     new WebSocketGuardHandler(limiter, () -> wsSettings, Ticker.system(), listener),
 *     new HttpObjectAggregator(65536),
 *     new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
 *         .websocketPath("/ws").maxFramePayloadLength(wsSettings.maxMessageBytes())
 *         .closeOnProtocolViolation(false).build()),
 *     new MyAppHandler());
 * }</pre>
 */
package dev.sluice.netty;
