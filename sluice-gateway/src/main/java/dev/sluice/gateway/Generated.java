package dev.sluice.gateway;

import dev.sluice.core.http.Json;
import dev.sluice.netty.CorsHeaders;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import java.nio.charset.StandardCharsets;

/** Responses the gateway writes itself: small JSON bodies, never cached, with CORS headers. */
final class Generated {

  private Generated() {}

  static FullHttpResponse json(HttpRequest request, HttpResponseStatus status, String json,
      CorsHeaders cors, boolean keepAlive) {
    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
        Unpooled.wrappedBuffer(bytes));
    r.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json; charset=utf-8")
        .set(HttpHeaderNames.CONTENT_LENGTH, bytes.length)
        .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
    if (cors != null) {
      cors.apply(request, r.headers());
    }
    HttpUtil.setKeepAlive(r, keepAlive);
    return r;
  }

  /** The answer to a request the codec could not decode: 414, 431 or 400. */
  static HttpResponseStatus decodeFailure(Throwable cause) {
    return cause instanceof TooLongHttpLineException ? HttpResponseStatus.REQUEST_URI_TOO_LONG
        : cause instanceof TooLongHttpHeaderException
            ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
            : HttpResponseStatus.BAD_REQUEST;
  }

  /** {@code {"error":error,"detail":detail}} with both strings escaped. */
  static String error(String error, String detail) {
    StringBuilder sb = new StringBuilder(64).append("{\"error\":");
    quote(sb, error);
    if (detail != null) {
      sb.append(",\"detail\":");
      quote(sb, detail);
    }
    return sb.append('}').toString();
  }

  /** Core's escaper; texts past 512 characters are cut (they come from requests). */
  static void quote(StringBuilder sb, String s) {
    Json.quote(sb, s.length() > 512 ? s.substring(0, 512) : s);
  }

  /** A failure as the log tells it: what went wrong, without Netty's repeated address. */
  static String reason(Throwable t) {
    if (t == null) {
      return "unknown error";
    }
    String m = t.getMessage();
    if (m == null) {
      return t.getClass().getSimpleName();
    }
    // Netty's messages repeat the address, and the native transport prefixes the system call:
    // "finishConnect(..) failed with error(-111): Connection refused: /127.0.0.1:3000". Keep
    // the part that says what went wrong.
    int syscall = m.indexOf("failed with error(");
    int end = syscall < 0 ? -1 : m.indexOf("): ", syscall);
    if (end > 0) {
      m = m.substring(end + 3);
    }
    int colon = m.indexOf(": ");
    String head = colon > 0 ? m.substring(0, colon) : m;
    return head.toLowerCase(java.util.Locale.ROOT);
  }
}
