package dev.sluice.netty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.FailingStore;
import dev.sluice.core.Cooldown;
import dev.sluice.core.Decision;
import dev.sluice.core.Limit;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.StoreException;
import dev.sluice.core.Verdict;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** What the handler answers when the store cannot, and when the check itself throws (issue 7). */
class HttpRateLimitFailureTest {

  static Rule rule(String name, OnStoreError onError, long capacity) {
    return Rule.builder(name).limit(Limit.fixedWindow(name, capacity, Duration.ofMinutes(1)))
        .onStoreError(onError).build();
  }

  static Policy policy(Rule rule, long cost) {
    return Policy.builder().rule(rule)
        .route(Route.builder("api").path("/api/**").rule(rule.name()).cost(cost).build())
        .build();
  }

  static HttpRequest get(String uri, String accept) {
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, uri);
    if (accept != null) {
      r.headers().set("Accept", accept);
    }
    return r;
  }

  final List<String> events = new ArrayList<>();
  final RateLimitListener listener = new RateLimitListener() {
    @Override
    public void decision(String kind, List<Rule> rules, Decision d, long nanos) {
      events.add("decision " + d.rule() + (d.degraded() ? " degraded" : ""));
    }

    @Override
    public void decisionFailed(String kind, List<Rule> rules, Throwable error) {
      events.add("failed " + FailureLog.names(rules) + " " + error.getClass().getSimpleName());
    }

    @Override
    public void generated(int status) {
      events.add("generated " + status);
    }
  };

  EmbeddedChannel channel(RateLimiter limiter, HttpRateLimitSettings settings) {
    return new EmbeddedChannel(new HttpRateLimitHandler(limiter, () -> settings, listener));
  }

  /** Issue 7: a fail-closed refusal during a store outage was the same 429 as a real limit. */
  @Test
  void storeDown_failClosedRule_is503WithItsOwnBody_notThe429() {
    RateLimiter down = RateLimiter.of(new FailingStore());
    EmbeddedChannel ch = channel(down, HttpRateLimitSettings.newBuilder(
        policy(rule("payments", OnStoreError.DENY, 10), 1)).build());
    ch.writeInbound(get("/api/pay", null));
    FullHttpResponse r = ch.readOutbound();
    assertThat(r.status()).isEqualTo(HttpResponseStatus.SERVICE_UNAVAILABLE);
    assertThat(r.headers().get("Retry-After")).isEqualTo("1");
    assertThat(r.headers().get("Cache-Control")).isEqualTo("no-store");
    assertThat(r.headers().contains("X-RateLimit-Limit")).isFalse();
    assertThat(r.content().toString(StandardCharsets.UTF_8))
        .isEqualTo("{\"error\":\"rate limiter unavailable\",\"retryAfter\":1}");
    r.release();
    assertThat(events).containsExactly("decision payments degraded", "generated 503");
    ch.finishAndReleaseAll();
  }

  @Test
  void storeDown_failClosedRule_forBrowser_isAnHtmlPage_andTheStatusIsConfigurable() {
    RateLimiter down = RateLimiter.of(new FailingStore());
    HttpRateLimitSettings s = HttpRateLimitSettings.newBuilder(
        policy(rule("payments", OnStoreError.DENY, 10), 1)).build();
    EmbeddedChannel ch = channel(down, s);
    ch.writeInbound(get("/api/pay", "text/html,*/*;q=0.8"));
    FullHttpResponse page = ch.readOutbound();
    assertThat(page.status().code()).isEqualTo(503);
    assertThat(page.headers().get("Content-Type")).startsWith("text/html");
    assertThat(page.content().toString(StandardCharsets.UTF_8))
        .contains("Temporarily unavailable").contains("try again in 1 seconds")
        .doesNotContain("Too many requests");
    page.release();
    ch.finishAndReleaseAll();

    ch = channel(down, s.toBuilder().unavailableStatus(429)
        .unavailableHtmlTemplate("<p>down, {{retryAfter}}s</p>").build());
    ch.writeInbound(get("/api/pay", "text/html"));
    FullHttpResponse custom = ch.readOutbound();
    assertThat(custom.status().code()).isEqualTo(429);
    assertThat(custom.content().toString(StandardCharsets.UTF_8)).isEqualTo("<p>down, 1s</p>");
    custom.release();
    ch.finishAndReleaseAll();
  }

  @Test
  void storeDown_failOpenRule_letsTheRequestThrough() {
    RateLimiter down = RateLimiter.of(new FailingStore());
    EmbeddedChannel ch = channel(down, HttpRateLimitSettings.newBuilder(
        policy(rule("api", OnStoreError.ALLOW, 10), 1)).build());
    ch.writeInbound(get("/api/x", null));
    assertThat((Object) ch.readInbound()).isInstanceOf(HttpRequest.class);
    ch.finishAndReleaseAll();
  }

  /**
   * Issue 7: a route cost above a rule's capacity threw in every request, logged a stack trace
   * per request and let the request through even on a fail-closed rule.
   */
  @Test
  void throwingCheck_isReported_andTheRulesOnStoreErrorDecides() {
    RateLimiter limiter = RateLimiter.of(Store.memory(new AtomicLong()::get, 100));
    EmbeddedChannel closed = channel(limiter, HttpRateLimitSettings.newBuilder(
        policy(rule("payments", OnStoreError.DENY, 5), 10)).build());
    closed.writeInbound(get("/api/pay", null));
    assertThat((Object) closed.readInbound()).isNull();
    FullHttpResponse r = closed.readOutbound();
    assertThat(r.status().code()).isEqualTo(503);
    r.release();
    assertThat(events).containsExactly("failed [payments] InvalidValueException", "generated 503");
    closed.finishAndReleaseAll();

    events.clear();
    EmbeddedChannel open = channel(limiter, HttpRateLimitSettings.newBuilder(
        policy(rule("api", OnStoreError.ALLOW, 5), 10)).build());
    open.writeInbound(get("/api/x", null));
    assertThat((Object) open.readInbound()).isInstanceOf(HttpRequest.class);
    open.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
    FullHttpResponse passed = open.readOutbound();
    assertThat(passed.headers().contains("X-RateLimit-Limit")).isFalse();
    passed.release();
    assertThat(events).containsExactly("failed [api] InvalidValueException");
    open.finishAndReleaseAll();
  }

  @Test
  void failureLog_logsOncePerRulePerMinute_withTheStackTrace() {
    AtomicLong now = new AtomicLong(Long.MAX_VALUE - 1);
    List<String> lines = new ArrayList<>();
    FailureLog log = new FailureLog(now::get, (message, error) -> lines.add(message + " "
        + (error.getStackTrace().length > 0 ? "with trace" : "no trace")));
    List<Rule> api = List.of(rule("api", OnStoreError.ALLOW, 5));
    RuntimeException bug = new IllegalStateException("bug");
    log.failed("http", api, bug);
    log.failed("http", api, bug);
    now.addAndGet(Duration.ofSeconds(59).toNanos());
    log.failed("http", api, bug);
    log.failed("http", List.of(rule("other", OnStoreError.ALLOW, 5)), bug);
    now.addAndGet(Duration.ofSeconds(1).toNanos());
    log.failed("http", api, bug);
    assertThat(lines).containsExactly(
        "rate limit decision failed (a bug; each rule's onStoreError decided) kind=http rules=[api] with trace",
        "rate limit decision failed (a bug; each rule's onStoreError decided) kind=http rules=[other] with trace",
        "rate limit decision failed (a bug; each rule's onStoreError decided) kind=http rules=[api] with trace");
  }
}
