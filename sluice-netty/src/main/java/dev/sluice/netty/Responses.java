package dev.sluice.netty;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/**
 * Netty responses around core's shared bodies ({@link dev.sluice.core.http.Bodies}): the bytes,
 * {@code Content-Length}, {@code Cache-Control: no-store} and CORS headers.
 */
final class Responses {

  private Responses() {}

  /** A complete response with a JSON body, {@code Cache-Control: no-store} and CORS headers. */
  static FullHttpResponse json(HttpRequest request, HttpResponseStatus status, String json,
      CorsHeaders cors) {
    return body(request, status, json, dev.sluice.core.http.Bodies.JSON, cors);
  }

  static FullHttpResponse body(HttpRequest request, HttpResponseStatus status, String text,
      String contentType, CorsHeaders cors) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    HttpVersion version = request == null ? HttpVersion.HTTP_1_1 : request.protocolVersion();
    FullHttpResponse r = new DefaultFullHttpResponse(version, status, Unpooled.wrappedBuffer(bytes));
    HttpHeaders h = r.headers();
    h.set(HttpHeaderNames.CONTENT_TYPE, contentType);
    h.set(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
    h.set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
    if (cors != null) {
      cors.apply(request, h);
    }
    return r;
  }
}
