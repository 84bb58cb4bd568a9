package dev.sluice.netty;

import dev.sluice.core.Decision;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.http.Accept;
import dev.sluice.core.http.Bodies;
import dev.sluice.core.http.Cors;
import dev.sluice.core.http.ResponseSpec;
import dev.sluice.core.policy.Check;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;

/** What {@link HttpRateLimitHandler} answers with: refusals and the limit headers owed. */
final class RateLimitAnswers {

  /** An allowed response that gets no limit headers. */
  static final Object NO_HEADERS = new Object();

  private RateLimitAnswers() {}

  /**
   * What an allowed response carries: nothing when no rule decided, or when a shadow rule did
   * (only shadow rules applied), since nothing is enforced that a client should back off from.
   */
  static Object headersFor(Decision decision, Check check, HttpRateLimitSettings s) {
    if (decision == null || decision.rule() == null || check == null) {
      return NO_HEADERS;
    }
    Rule rule = ruleNamed(check.rules(), decision.rule());
    return rule == null || rule.mode() == Mode.SHADOW ? NO_HEADERS : new Pending(decision, s);
  }

  /** A CORS preflight: {@code OPTIONS} with {@code Access-Control-Request-Method}. */
  static boolean isPreflight(HttpRequest request) {
    return Cors.isPreflight(request.method().name(),
        request.headers().contains(HttpHeaderNames.ACCESS_CONTROL_REQUEST_METHOD));
  }

  static Rule ruleNamed(List<Rule> rules, String name) {
    for (Rule rule : rules) {
      if (rule.name().equals(name)) {
        return rule;
      }
    }
    return null;
  }

  /** Core's answer ({@link ResponseSpec}), the same as the servlet filter's, as a Netty response. */
  static FullHttpResponse refusal(HttpRequest request, Decision decision,
      HttpRateLimitSettings settings) {
    ResponseSpec spec = settings.responses();
    boolean html = Accept.prefersHtml(request.headers().getAll(HttpHeaderNames.ACCEPT));
    FullHttpResponse response = Responses.body(request,
        HttpResponseStatus.valueOf(spec.status(decision)), spec.body(decision, html),
        html ? Bodies.HTML : Bodies.JSON, settings.cors());
    spec.refusalHeaders(decision, new NettyHeaders(response.headers()));
    return response;
  }

  record Pending(Decision decision, HttpRateLimitSettings settings) {}
}
