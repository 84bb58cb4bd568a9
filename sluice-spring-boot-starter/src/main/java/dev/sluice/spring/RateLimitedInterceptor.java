package dev.sluice.spring;

import dev.sluice.core.Identity;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Check;
import dev.sluice.core.policy.Policy;
import dev.sluice.servlet.SluiceFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.HandlerMapping;

/**
 * Applies {@link RateLimited} before the handler runs, with the filter's policy, limiter and
 * answers. The check waits for the store (at most its deadline): a handler is about to run on
 * this thread anyway.
 */
class RateLimitedInterceptor implements HandlerInterceptor {

  private final SluiceFilter filter;
  private final SpelExpressionParser parser = new SpelExpressionParser();
  private final Map<String, Expression> expressions = new ConcurrentHashMap<>();

  RateLimitedInterceptor(SluiceFilter filter) {
    this.filter = filter;
  }

  @Override
  public boolean preHandle(HttpServletRequest request, HttpServletResponse response,
      Object handler) throws Exception {
    if (!(handler instanceof HandlerMethod method)) {
      return true;
    }
    RateLimited limit = AnnotatedElementUtils.findMergedAnnotation(method.getMethod(),
        RateLimited.class);
    if (limit == null) {
      limit = AnnotatedElementUtils.findMergedAnnotation(method.getBeanType(), RateLimited.class);
    }
    if (limit == null) {
      return true;
    }
    Policy policy = filter.policy().policy();
    Rule rule = policy.rules().get(limit.value());
    if (rule == null) {
      throw new IllegalStateException("@RateLimited(\"" + limit.value() + "\") on " + method
          + ": no such rule in the policy, one of " + policy.rules().keySet());
    }
    List<Rule> rules = List.of(rule);
    Identity who = policy.identify(SluiceFilter.view(request), rules);
    if (!limit.key().isEmpty()) {
      Object key = key(limit.key(), request);
      who = who.with(rule.dimensions().get(0), key == null ? null : key.toString());
    }
    // The filter's admission step: the same listeners (metrics, latency) and answers.
    return filter.check(request, response, Check.of(rules, who, limit.cost()));
  }

  private Object key(String expression, HttpServletRequest request) {
    SimpleEvaluationContext ctx = SimpleEvaluationContext.forReadOnlyDataBinding()
        .withInstanceMethods().build();
    ctx.setVariable("request", request);
    ctx.setVariable("principal", request.getUserPrincipal());
    ctx.setVariable("pathVariables",
        request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE));
    return expressions.computeIfAbsent(expression, parser::parseExpression).getValue(ctx);
  }
}
