package dev.sluice.netty;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.policy.Route;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The handler alone, in an embedded channel: what it passes on, writes and releases. */
class HttpRateLimitHandlerTest {

  private final AtomicLong now = new AtomicLong(-Duration.ofMinutes(5).toNanos());
  private final RateLimiter limiter = RateLimiter.of(Store.memory(now::get, 1000));

  private Policy policy(Limit limit) {
    return Policy.builder()
        .rule(Rule.builder("analysis").limit(limit).build())
        .route(Route.builder("health").path("/healthz").exempt(true).build())
        .route(Route.builder("analysis").path("/api/analysis/**").rule("analysis").build())
        .build();
  }

  private EmbeddedChannel channel(Limit limit) {
    return new EmbeddedChannel(new HttpRateLimitHandler(limiter,
        HttpRateLimitSettings.newBuilder(policy(limit)).build()));
  }

  private static HttpRequest post(String uri, int length) {
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, uri);
    HttpUtil.setContentLength(r, length);
    return r;
  }

  @Test
  void refusedRequest_bodyIsReleased_connectionKeptAlive() {
    EmbeddedChannel ch = channel(Limit.tokenBucket("analysis", 1, 30, Duration.ofMinutes(1)));
    assertThat(ch.writeInbound(post("/api/analysis/1", 0), new DefaultLastHttpContent())).isTrue();
    ch.readInbound();
    ch.readInbound();

    ByteBuf part = Unpooled.copiedBuffer("aaaa", StandardCharsets.UTF_8);
    ByteBuf last = Unpooled.copiedBuffer("bbbb", StandardCharsets.UTF_8);
    ch.writeInbound(post("/api/analysis/1", 8), new DefaultHttpContent(part),
        new DefaultLastHttpContent(last));
    assertThat((Object) ch.readInbound()).isNull();
    assertThat(part.refCnt()).isZero();
    assertThat(last.refCnt()).isZero();
    FullHttpResponse response = ch.readOutbound();
    assertThat(response.status()).isEqualTo(HttpResponseStatus.TOO_MANY_REQUESTS);
    assertThat(response.headers().get(HttpHeaderNames.RETRY_AFTER)).isEqualTo("2");
    assertThat(response.headers().get(HttpHeaderNames.CACHE_CONTROL)).isEqualTo("no-store");
    assertThat(response.content().toString(StandardCharsets.UTF_8)).isEqualTo(
        "{\"error\":\"too many requests\",\"retryAfter\":2,\"retryAfterMs\":2000,\"rule\":\"analysis\"}");
    response.release();
    assertThat(ch.isOpen()).isTrue();

    now.addAndGet(Duration.ofSeconds(2).toNanos());
    ch.writeInbound(post("/api/analysis/1", 0));
    assertThat((Object) ch.readInbound()).isInstanceOf(HttpRequest.class);
    ch.finishAndReleaseAll();
  }

  @Test
  void allowedResponse_getsHeaders_onItsWayOut() {
    EmbeddedChannel ch = channel(Limit.tokenBucket("analysis", 15, 30, Duration.ofMinutes(1)));
    ch.writeInbound(post("/api/analysis/1", 0));
    ch.readInbound();
    ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
    FullHttpResponse response = ch.readOutbound();
    assertThat(response.headers().get("X-RateLimit-Limit")).isEqualTo("15");
    assertThat(response.headers().get("X-RateLimit-Remaining")).isEqualTo("14");
    assertThat(response.headers().get("RateLimit-Policy")).isEqualTo("\"analysis\";q=15;w=30");
    assertThat(response.headers().get("RateLimit")).isEqualTo("\"analysis\";r=14;t=2");
    response.release();
    ch.finishAndReleaseAll();
  }

  @Test
  void exemptRequest_isNotCounted_andGetsNoHeaders() {
    EmbeddedChannel ch = channel(Limit.tokenBucket("analysis", 1, 30, Duration.ofMinutes(1)));
    for (int i = 0; i < 5; i++) {
      ch.writeInbound(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/healthz"));
      assertThat((Object) ch.readInbound()).isNotNull();
      ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
      FullHttpResponse r = ch.readOutbound();
      assertThat(r.headers().contains("X-RateLimit-Limit")).isFalse();
      r.release();
    }
    ch.finishAndReleaseAll();
  }

  @Test
  void scoreRefusal_reportsScores() {
    EmbeddedChannel ch = channel(Limit.score("analysis", 2, 1, Duration.ofSeconds(2)));
    ch.writeInbound(post("/api/analysis/1", 0), post("/api/analysis/1", 0));
    ch.writeInbound(post("/api/analysis/1", 0));
    FullHttpResponse r = ch.readOutbound();
    assertThat(r.status().code()).isEqualTo(429);
    assertThat(r.content().toString(StandardCharsets.UTF_8))
        .contains("\"currentScore\":2,\"maxScore\":2");
    r.release();
    ch.finishAndReleaseAll();
  }

  @Test
  void connectionClose_request_isClosedAfterTheRefusal() {
    EmbeddedChannel ch = channel(Limit.tokenBucket("analysis", 1, 30, Duration.ofMinutes(1)));
    ch.writeInbound(post("/api/analysis/1", 0));
    HttpRequest r = post("/api/analysis/1", 0);
    r.headers().set(HttpHeaderNames.CONNECTION, "close");
    ch.writeInbound(r);
    FullHttpResponse response = ch.readOutbound();
    assertThat(response.status().code()).isEqualTo(429);
    response.release();
    ch.runPendingTasks();
    assertThat(ch.isOpen()).isFalse();
    ch.finishAndReleaseAll();
  }

  @Test
  void banApplied_isReportedOnce_withTheBannedKey() {
    Policy banning = Policy.builder()
        .rule(Rule.builder("login").limit(Limit.fixedWindow("login", 1, Duration.ofMinutes(1)))
            .ban(Duration.ofMinutes(10)).build())
        .route(Route.builder("login").path("/login").rule("login").build())
        .build();
    java.util.List<String> bans = new java.util.ArrayList<>();
    RateLimitListener listener = new RateLimitListener() {
      @Override
      public void banApplied(String kind, dev.sluice.core.Decision decision, String key) {
        bans.add(kind + " " + decision.rule() + " " + key + " " + decision.retryAfterSeconds());
      }
    };
    EmbeddedChannel ch = new EmbeddedChannel(new HttpRateLimitHandler(limiter,
        () -> HttpRateLimitSettings.newBuilder(banning).build(), listener));
    for (int i = 0; i < 4; i++) {
      ch.writeInbound(post("/login", 0), new DefaultLastHttpContent());
      Object in;
      while ((in = ch.readInbound()) != null) {
        io.netty.util.ReferenceCountUtil.release(in);
      }
      Object out;
      while ((out = ch.readOutbound()) != null) {
        io.netty.util.ReferenceCountUtil.release(out);
      }
    }
    // EmbeddedChannel's peer is an EmbeddedSocketAddress, which resolves to the unknown bucket.
    assertThat(bans).as("the key text, as the admin API takes it")
        .containsExactly("http login unknown 600");
  }
  /** Issue 7: a shadow rule sent X-RateLimit-Remaining: 0 although nothing was enforced. */
  @Test
  void shadowRule_addsNoLimitHeaders() {
    Policy shadow = Policy.builder()
        .rule(Rule.builder("edge").limit(Limit.fixedWindow("edge", 1, Duration.ofMinutes(1)))
            .mode(dev.sluice.core.Mode.SHADOW).build())
        .global("edge")
        .build();
    EmbeddedChannel ch = new EmbeddedChannel(new HttpRateLimitHandler(limiter,
        HttpRateLimitSettings.newBuilder(shadow).build()));
    for (int i = 0; i < 3; i++) {
      ch.writeInbound(post("/any", 0));
      assertThat((Object) ch.readInbound()).isInstanceOf(HttpRequest.class);
      ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
      FullHttpResponse r = ch.readOutbound();
      assertThat(r.headers().names()).as("request " + i)
          .doesNotContain("X-RateLimit-Remaining", "X-RateLimit-Limit", "RateLimit",
              "RateLimit-Policy");
      r.release();
    }
    ch.finishAndReleaseAll();
  }

  /** Issue 7: preflights were counted and refused, which browsers report as a CORS failure. */
  @Test
  void corsPreflight_isNotLimited_unlessConfigured() {
    Policy global = Policy.builder()
        .rule(Rule.builder("global").limit(Limit.fixedWindow("global", 2, Duration.ofMinutes(1)))
            .build())
        .global("global")
        .build();
    HttpRateLimitSettings settings = HttpRateLimitSettings.newBuilder(global).build();
    EmbeddedChannel ch = new EmbeddedChannel(new HttpRateLimitHandler(limiter, settings));
    for (int i = 0; i < 5; i++) {
      ch.writeInbound(preflight());
      assertThat((Object) ch.readInbound()).as("preflight " + i).isInstanceOf(HttpRequest.class);
      ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
      FullHttpResponse r = ch.readOutbound();
      assertThat(r.headers().contains("X-RateLimit-Limit")).isFalse();
      r.release();
    }
    // The quota is untouched: both real requests pass.
    for (int i = 0; i < 2; i++) {
      ch.writeInbound(post("/graphql", 0));
      assertThat((Object) ch.readInbound()).isInstanceOf(HttpRequest.class);
    }
    ch.finishAndReleaseAll();

    EmbeddedChannel limited = new EmbeddedChannel(new HttpRateLimitHandler(limiter,
        settings.toBuilder().limitPreflights(true).build()));
    limited.writeInbound(preflight());
    FullHttpResponse refused = limited.readOutbound();
    assertThat(refused.status().code()).isEqualTo(429);
    refused.release();
    limited.finishAndReleaseAll();
  }

  private static HttpRequest preflight() {
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.OPTIONS, "/graphql");
    r.headers().set(HttpHeaderNames.ORIGIN, "https://explorer.example.com")
        .set(HttpHeaderNames.ACCESS_CONTROL_REQUEST_METHOD, "POST");
    return r;
  }

  /** Issue 7: listeners saw only the deciding rule, so a global rule's spending was invisible. */
  @Test
  void listener_getsTheCheckedRules_withEveryRulesOutcome() {
    Policy twoRules = Policy.builder()
        .rule(Rule.builder("api").limit(Limit.fixedWindow("api", 1, Duration.ofMinutes(1)))
            .build())
        .rule(Rule.builder("backstop")
            .limit(Limit.fixedWindow("backstop", 100, Duration.ofMinutes(1))).build())
        .route(Route.builder("api").path("/api/**").rule("api").build())
        .global("backstop")
        .build();
    java.util.List<String> seen = new java.util.ArrayList<>();
    RateLimitListener listener = new RateLimitListener() {
      @Override
      public void decision(String kind, java.util.List<Rule> rules, dev.sluice.core.Decision d,
          long nanos) {
        StringBuilder sb = new StringBuilder(d.rule());
        for (int i = 0; i < rules.size(); i++) {
          sb.append(' ').append(rules.get(i).name()).append('=').append(d.refusedBy(i));
        }
        seen.add(sb.toString());
      }
    };
    EmbeddedChannel ch = new EmbeddedChannel(new HttpRateLimitHandler(limiter,
        () -> HttpRateLimitSettings.newBuilder(twoRules).build(), listener));
    ch.writeInbound(post("/api/1", 0), post("/api/1", 0));
    assertThat(seen).containsExactly("api api=false backstop=false",
        "api api=true backstop=false");
    ch.finishAndReleaseAll();
  }
}
