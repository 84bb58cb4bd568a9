package dev.sluice.servlet;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import dev.sluice.core.Mode;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.http.Accept;
import dev.sluice.core.http.Bodies;
import dev.sluice.core.http.Cors;
import dev.sluice.core.http.ResponseSpec;
import dev.sluice.core.policy.Check;
import dev.sluice.policy.ConfigException;
import dev.sluice.policy.PolicyConfig;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A Jakarta Servlet 6 filter that applies a Sluice policy exactly as the gateway does: the same
 * routes and keys (client address through the policy's trusted proxies, headers, cookies, query
 * parameters, and here also the request's {@code Principal} and attributes), and the same
 * answers, from core's {@link ResponseSpec}: 429 with {@code Retry-After}, limit headers and a
 * JSON body or HTML page by {@code Accept}; 503 for a fail-closed rule while the store cannot
 * answer; CORS headers on both; shadow rules decide but allow; preflights pass unchecked unless
 * the policy limits them. Allowed responses carry the limit headers.
 *
 * <p>With a remote store (Redis) no request thread waits: the request goes asynchronous
 * ({@code startAsync}), and the decision dispatches it back to the chain, or answers it, when it
 * arrives. Register the filter for the {@code REQUEST} and {@code ASYNC} dispatcher types with
 * async support (Spring Boot's registration does both); without async support it waits for the
 * decision, which never takes longer than the store's deadline. With the in-memory store the
 * decision is made inline.
 *
 * <p>The decision of a request is left in the request attribute {@link #DECISION} for the
 * application (null when exempt or unlimited).
 */
public final class SluiceFilter implements Filter {

  /** The request attribute holding the request's {@link Decision}. */
  public static final String DECISION = "dev.sluice.decision";

  private static final String DECIDED = SluiceFilter.class.getName() + ".decided";
  private static final String HTTP = DecisionListener.HTTP;

  private final RateLimiter limiter;
  private final Supplier<PolicyConfig> policy;
  private final DecisionListener listener;
  private volatile Snapshot last;

  /** One policy and the answer spec built from it, rebuilt only when the policy changes. */
  private record Snapshot(PolicyConfig config, ResponseSpec spec) {}

  /** A decision that arrived while the request was asynchronous. */
  private record Decided(Snapshot snapshot, Check check, Decision decision) {}

  private SluiceFilter(Builder b) {
    this.limiter = b.limiter;
    this.policy = b.policy;
    this.listener = b.listener;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request)
        || !(res instanceof HttpServletResponse response)) {
      chain.doFilter(req, res);
      return;
    }
    if (request.getAttribute(DECIDED) instanceof Decided d) {
      request.removeAttribute(DECIDED);
      finish(request, response, chain, d.snapshot(), d.check(), d.decision());
      return;
    }
    if (request.getAttribute(DECISION) != null) {
      chain.doFilter(request, response);   // a forward or include of a request decided already
      return;
    }
    Snapshot s = snapshot();
    if (!s.spec().limitPreflights() && Cors.isPreflight(request.getMethod(),
        request.getHeader("Access-Control-Request-Method") != null)) {
      chain.doFilter(request, response);
      return;
    }
    Check check = null;
    Decision d = null;
    long start = System.nanoTime();
    try {
      check = s.config().policy().select(new ServletRequestView(request));
      if (check != null && !check.exempt()) {
        if (!limiter.store().isLocal() && request.isAsyncSupported()) {
          await(request, response, s, check, start);
          return;
        }
        d = limiter.store().isLocal() ? check.apply(limiter)
            : check.applyAsync(limiter).toCompletableFuture().join();
        decided(check, d, start);
      }
    } catch (RuntimeException e) {
      // A bug, not a limit: the rules' onStoreError decides, as for a store that cannot answer.
      List<Rule> rules = check == null ? List.of() : check.rules();
      listener.decisionFailed(HTTP, rules, e);
      d = rules.isEmpty() ? null : Decision.failed(rules);
    }
    finish(request, response, chain, s, check, d);
  }

  /** Goes asynchronous and comes back on the decision, so no request thread waits on Redis. */
  private void await(HttpServletRequest request, HttpServletResponse response, Snapshot s,
      Check check, long start) {
    AsyncContext async = request.startAsync(request, response);
    check.applyAsync(limiter).whenComplete((d, e) -> {
      Decision decision = d;
      if (e != null) {
        listener.decisionFailed(HTTP, check.rules(), e);
        decision = Decision.failed(check.rules());
      } else {
        decided(check, d, start);
      }
      if (decision.allowed()) {
        request.setAttribute(DECIDED, new Decided(s, check, decision));
        async.dispatch();
        return;
      }
      try {
        refuse(request, response, s, decision);
      } catch (IOException | RuntimeException ignored) {
        // the client went away; nothing more to answer
      } finally {
        async.complete();
      }
    });
  }

  private void decided(Check check, Decision d, long start) {
    if (d.rule() == null) {
      return;
    }
    listener.decision(HTTP, check.rules(), d, System.nanoTime() - start);
    if (d.banApplied()) {
      Rule rule = ruleNamed(check.rules(), d.rule());
      listener.banApplied(HTTP, d, rule == null ? null : rule.keyText(check.identity()));
    }
  }

  /** Passes an allowed request on with its limit headers; answers a refused one. */
  private void finish(HttpServletRequest request, HttpServletResponse response, FilterChain chain,
      Snapshot s, Check check, Decision d) throws IOException, ServletException {
    request.setAttribute(DECISION, d);
    if (d == null || d.allowed()) {
      if (d != null && d.rule() != null && check != null) {
        Rule rule = ruleNamed(check.rules(), d.rule());
        if (rule != null && rule.mode() != Mode.SHADOW) {
          s.spec().limitHeaders(d, new ServletHeaders(response));
        }
      }
      chain.doFilter(request, response);
      return;
    }
    refuse(request, response, s, d);
  }

  /** Core's answer, the same as the gateway's, written to the servlet response. */
  private void refuse(HttpServletRequest request, HttpServletResponse response, Snapshot s,
      Decision d) throws IOException {
    ResponseSpec spec = s.spec();
    boolean html = Accept.prefersHtml(
        java.util.Collections.list(request.getHeaders("Accept")));
    byte[] body = spec.body(d, html).getBytes(StandardCharsets.UTF_8);
    int status = spec.status(d);
    ServletHeaders headers = new ServletHeaders(response);
    response.resetBuffer();
    response.setStatus(status);
    response.setContentType(html ? Bodies.HTML : Bodies.JSON);
    spec.refusalHeaders(d, headers);
    spec.cors().apply(request.getHeader("Origin"), request.getMethod(), headers);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
    response.flushBuffer();
    listener.generated(status);
  }

  /**
   * Answers {@code decision} as this filter would: the limit headers of an allowed decision, or
   * the refusal (then the response is complete). For checks made elsewhere in the application,
   * such as a method-level limit; returns whether the request may go on.
   */
  public boolean answer(HttpServletRequest request, HttpServletResponse response, Check check,
      Decision decision) throws IOException {
    Snapshot s = snapshot();
    if (decision == null || decision.allowed()) {
      Rule rule = decision == null || decision.rule() == null || check == null ? null
          : ruleNamed(check.rules(), decision.rule());
      if (rule != null && rule.mode() != Mode.SHADOW) {
        s.spec().limitHeaders(decision, new ServletHeaders(response));
      }
      return true;
    }
    refuse(request, response, s, decision);
    return false;
  }

  /** The policy the next request runs under. */
  public PolicyConfig policy() {
    return snapshot().config();
  }

  /** The limiter the filter checks with. */
  public RateLimiter limiter() {
    return limiter;
  }

  /** A view of {@code request} as the policy reads it (context path left out). */
  public static dev.sluice.core.policy.RequestView view(HttpServletRequest request) {
    return new ServletRequestView(request);
  }

  private Snapshot snapshot() {
    PolicyConfig c = policy.get();
    Snapshot s = last;
    if (s == null || s.config() != c) {
      s = new Snapshot(c, c.responses());
      last = s;
    }
    return s;
  }

  private static Rule ruleNamed(List<Rule> rules, String name) {
    for (Rule rule : rules) {
      if (rule.name().equals(name)) {
        return rule;
      }
    }
    return null;
  }

  /** Builds a {@link SluiceFilter}. */
  public static final class Builder {
    private RateLimiter limiter;
    private Supplier<PolicyConfig> policy;
    private DecisionListener listener = DecisionListener.none();
    private Path file;
    private Map<String, String> env = System.getenv();
    private Duration reloadInterval = Duration.ofSeconds(1);

    private Builder() {}

    /** The limiter whose store holds the counters (required). */
    public Builder limiter(RateLimiter limiter) {
      this.limiter = Objects.requireNonNull(limiter, "limiter");
      return this;
    }

    /** A fixed policy, or one that changes: read once per request, so a swap is atomic. */
    public Builder policy(Supplier<PolicyConfig> policy) {
      this.policy = Objects.requireNonNull(policy, "policy");
      this.file = null;
      return this;
    }

    /** A policy file, in the gateway's format, reloaded when it changes. */
    public Builder policyFile(Path file) {
      this.file = Objects.requireNonNull(file, "file");
      this.policy = null;
      return this;
    }

    /** The variables {@code ${NAME}} reads in a policy file (default: the process's). */
    public Builder environment(Map<String, String> env) {
      this.env = Map.copyOf(env);
      return this;
    }

    /** How often the policy file is looked at (default 1 s); at most once per interval. */
    public Builder reloadInterval(Duration interval) {
      if (interval == null || interval.isNegative()) {
        throw new IllegalArgumentException("reloadInterval : " + interval
            + " (expected: a duration >= 0)");
      }
      this.reloadInterval = interval;
      return this;
    }

    public Builder listener(DecisionListener listener) {
      this.listener = listener == null ? DecisionListener.none() : listener;
      return this;
    }

    /**
     * The filter.
     *
     * @throws ConfigException when the policy file is invalid, with every error and its line
     */
    public SluiceFilter build() throws ConfigException {
      if (limiter == null) {
        throw new IllegalStateException("limiter : null (expected: a RateLimiter)");
      }
      if (file != null) {
        policy = new PolicyFile(file, env, reloadInterval);
      }
      if (policy == null) {
        throw new IllegalStateException("policy : null (expected: a policy or a policy file)");
      }
      return new SluiceFilter(this);
    }
  }
}
