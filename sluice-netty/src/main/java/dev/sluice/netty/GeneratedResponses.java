package dev.sluice.netty;

import dev.sluice.core.http.Accept;
import dev.sluice.core.http.Bodies;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * Error responses a gateway writes itself (502, 504, 400...) in the same shape as the 429s of
 * {@link HttpRateLimitHandler}: JSON ({@code {"error":"bad gateway"}}) or, for a client that
 * prefers {@code text/html} in {@code Accept}, a small page; {@code Cache-Control: no-store};
 * CORS headers. The text is the caller's; it should never carry internal detail (an upstream's
 * address, an exception message), which belongs in the log.
 */
public final class GeneratedResponses {

  private GeneratedResponses() {}

  /** {@code status} with {@code error} as the body's text, JSON or HTML by {@code Accept}. */
  public static FullHttpResponse error(HttpRequest request, HttpResponseStatus status,
      String error, CorsHeaders cors) {
    if (prefersHtml(request)) {
      return Responses.body(request, status,
          Bodies.errorHtml(status.code(), status.reasonPhrase(), error), Bodies.HTML, cors);
    }
    return Responses.json(request, status, Bodies.errorJson(error), cors);
  }

  /** True when {@code request}'s {@code Accept} ranks {@code text/html} above JSON. */
  public static boolean prefersHtml(HttpRequest request) {
    return request != null
        && Accept.prefersHtml(request.headers().getAll(HttpHeaderNames.ACCEPT));
  }
}
