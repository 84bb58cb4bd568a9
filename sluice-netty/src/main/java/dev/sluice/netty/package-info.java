/**
 * Netty handlers for Sluice: {@link dev.sluice.netty.HttpRateLimitHandler} (429s and limit
 * headers) and {@link dev.sluice.netty.WebSocketGuardHandler} (connection caps, message size,
 * flood and per-action limits), configured by immutable settings read once per request or
 * connection, and reporting through a {@link dev.sluice.netty.RateLimitListener}.
 * {@link dev.sluice.netty.GeneratedResponses} gives a gateway's own errors (502, 504) the same
 * shape as the handler's 429s: JSON or HTML by {@code Accept}, never cached, with CORS headers.
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
