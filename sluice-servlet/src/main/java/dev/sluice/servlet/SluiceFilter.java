package dev.sluice.servlet;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.http.Accept;
import dev.sluice.core.http.Bodies;
import dev.sluice.core.http.ResponseSpec;
import dev.sluice.core.policy.Admission;
import dev.sluice.core.policy.Admission.Outcome;
import dev.sluice.core.policy.Check;
import dev.sluice.core.policy.DelayGate;
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
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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
 * <p>What to do with a request is core's one admission step ({@link Admission}), the gateway's
 * too. With a remote store (Redis) no request thread waits: the request goes asynchronous
 * ({@code startAsync}), and the decision dispatches it back to the chain, or answers it, when it
 * arrives; a rule's {@code delay} waits on a timer the same way. Register the filter for the
 * {@code REQUEST} and {@code ASYNC} dispatcher types with async support (Spring Boot's
 * registration does both); without async support it waits for the decision, which never takes
 * longer than the store's deadline (and a delayed request for its token, never longer than the
 * rule's delay). With the in-memory store the decision is made inline.
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
  private final DelayGate delays = DelayGate.create(DelayGate.DEFAULT_MAX_WAITING);
  private volatile Snapshot last;

  /** One policy and the admission step built from it, rebuilt only when the policy changes. */
  private record Snapshot(PolicyConfig config, Admission admission) {}

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
    if (request.getAttribute(DECIDED) instanceof Outcome o) {
      request.removeAttribute(DECIDED);
      finish(request, response, chain, o);
      return;
    }
    if (request.getAttribute(DECISION) != null) {
      chain.doFilter(request, response);   // a forward or include of a request decided already
      return;
    }
    Snapshot s = snapshot();
    Outcome o = s.admission().admit(new ServletRequestView(request), HTTP);
    if ((o.pending() || o.delayed()) && request.isAsyncSupported()) {
      await(request, response, s.admission(), o, request.startAsync(request, response));
      return;
    }
    finish(request, response, chain, waitHere(s.admission(), o));
  }

  /**
   * Without async support: waits on this thread, for the store (never past its deadline) and for
   * a delayed request's token (never past the rule's delay).
   */
  private static Outcome waitHere(Admission admission, Outcome o) {
    while (o.pending() || o.delayed()) {
      if (o.pending()) {
        o = o.stage().toCompletableFuture().join();
        continue;
      }
      try {
        TimeUnit.NANOSECONDS.sleep(o.delayNanos());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        o.cancel();
        return o;
      }
      o = admission.redecide(o);
    }
    return o;
  }

  /**
   * Asynchronous, so no request thread waits on Redis or on a delayed request's token: the
   * outcome dispatches the request back to the chain, or answers it.
   */
  private void await(HttpServletRequest request, HttpServletResponse response,
      Admission admission, Outcome o, AsyncContext async) {
    if (o.delayed()) {
      Delays.SCHEDULER.schedule(() -> await(request, response, admission,
          admission.redecide(o), async), o.delayNanos(), TimeUnit.NANOSECONDS);
      return;
    }
    if (o.pending()) {
      o.stage().thenAccept(done -> await(request, response, admission, done, async));
      return;
    }
    if (o.forward()) {
      request.setAttribute(DECIDED, o);
      async.dispatch();
      return;
    }
    try {
      answer(request, response, o);
    } catch (IOException | RuntimeException ignored) {
      // the client went away; nothing more to answer
    } finally {
      async.complete();
    }
  }

  /** Passes an allowed request on with its limit headers; answers a refused one. */
  private void finish(HttpServletRequest request, HttpServletResponse response, FilterChain chain,
      Outcome o) throws IOException, ServletException {
    request.setAttribute(DECISION, o.decision());
    if (answer(request, response, o)) {
      boolean failed = true;
      try {
        chain.doFilter(request, response);
        failed = false;
      } finally {
        // Rules counted on responses read the status the application set (an application that
        // threw answers 500); concurrency leases go back when the chain returns (for an
        // asynchronous application: when it hands off).
        o.responded(failed ? 500 : response.getStatus());
        o.ended();
      }
    }
  }

  /**
   * Writes what {@code o} says: the limit headers of an allowed request (true: go on), or the
   * refusal, core's answer, the same as the gateway's (false: the response is complete).
   */
  private boolean answer(HttpServletRequest request, HttpServletResponse response, Outcome o)
      throws IOException {
    ResponseSpec spec = o.responses();
    Decision d = o.decision();
    if (o.action() == Admission.Action.DENY) {
      boolean html = Accept.prefersHtml(
          java.util.Collections.list(request.getHeaders("Accept")));
      byte[] body = Bodies.denied(o.denial(), html).getBytes(StandardCharsets.UTF_8);
      response.resetBuffer();
      response.setStatus(ResponseSpec.DENIED_STATUS);
      response.setContentType(html ? Bodies.HTML : Bodies.JSON);
      response.setHeader("Cache-Control", "no-store");
      spec.cors().apply(request.getHeader("Origin"), request.getMethod(),
          new ServletHeaders(response));
      response.setContentLength(body.length);
      response.getOutputStream().write(body);
      response.flushBuffer();
      listener.generated(ResponseSpec.DENIED_STATUS);
      return false;
    }
    if (o.action() == Admission.Action.CHALLENGE) {
      // The challenge's page or verdict, as the admission step made it.
      dev.sluice.core.http.Answer a = o.answer();
      response.resetBuffer();
      response.setStatus(a.status());
      a.fields(new ServletHeaders(response));
      response.setContentLength(a.bodyLength());
      response.getOutputStream().write(a.bodyBytes());
      response.flushBuffer();
      listener.generated(a.status());
      return false;
    }
    if (o.forward() || d == null) {
      if (o.limitHeaders()) {
        spec.limitHeaders(d, new ServletHeaders(response));
      }
      return true;
    }
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
    return false;
  }

  /**
   * Checks {@code check} (made elsewhere in the application, such as a method-level limit) as
   * this filter checks a request: the same admission step and listeners (metrics, latency), the
   * same answers. Waits for the store on this thread (never past its deadline). Returns whether
   * the request may go on; when not, the response is complete.
   */
  public boolean check(HttpServletRequest request, HttpServletResponse response, Check check)
      throws IOException {
    Admission admission = snapshot().admission();
    return answer(request, response, waitHere(admission, admission.admit(check, HTTP)));
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
      s = new Snapshot(c, Admission.builder().limiter(limiter).policy(c.policy())
          .responses(c.responses()).listener(listener).delays(delays).build());
      last = s;
    }
    return s;
  }

  /** The timer of delayed requests: one daemon thread for every filter of the process. */
  private static final class Delays {
    static final ScheduledExecutorService SCHEDULER = Executors.newSingleThreadScheduledExecutor(
        r -> {
          Thread t = new Thread(r, "sluice-delays");
          t.setDaemon(true);
          return t;
        });
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
