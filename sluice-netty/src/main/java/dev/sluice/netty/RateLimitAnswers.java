package dev.sluice.netty;

import dev.sluice.core.Decision;
import dev.sluice.core.http.Accept;
import dev.sluice.core.http.Bodies;
import dev.sluice.core.http.ResponseSpec;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;

/** What {@link HttpRateLimitHandler} answers with: refusals and the limit headers owed. */
final class RateLimitAnswers {

  /** An allowed response that gets no limit headers. */
  static final Object NO_HEADERS = new Object();

  private RateLimitAnswers() {}

  /** Core's answer ({@link ResponseSpec}), the same as the servlet filter's, as a Netty response. */
  static FullHttpResponse refusal(HttpRequest request, Decision decision,
      HttpRateLimitSettings settings) {
    return refusal(request, decision, settings.responses(), settings.cors());
  }

  /** The refusal by {@code spec} (a challenging rule's names the challenge). */
  static FullHttpResponse refusal(HttpRequest request, Decision decision, ResponseSpec spec,
      CorsHeaders cors) {
    boolean html = Accept.prefersHtml(request.headers().getAll(HttpHeaderNames.ACCEPT));
    FullHttpResponse response = Responses.body(request,
        HttpResponseStatus.valueOf(spec.status(decision)), spec.body(decision, html),
        html ? Bodies.HTML : Bodies.JSON, cors);
    spec.refusalHeaders(decision, new NettyHeaders(response.headers()));
    return response;
  }

  record Pending(Decision decision, HttpRateLimitSettings settings) {}
}
