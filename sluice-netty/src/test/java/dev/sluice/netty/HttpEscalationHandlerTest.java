package dev.sluice.netty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.StatusSet;
import dev.sluice.core.Store;
import dev.sluice.core.policy.HumanCheck;
import dev.sluice.core.policy.HumanVerifier;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The escalation outcomes on the Netty path (HTTP/2 streams and WebSocket upgrades run this
 * handler): a human check's body gathered, forwarded whole or refused with its buffers released;
 * a response's status counted; a concurrency lease given back with the response's last part.
 */
class HttpEscalationHandlerTest {

  private final AtomicLong now = new AtomicLong(-Duration.ofMinutes(5).toNanos());
  private final Store store = Store.memory(now::get, 1000);
  private final RateLimiter limiter = RateLimiter.of(store);
  private final List<String> tokens = new ArrayList<>();
  private final HumanVerifier verifier = (check, token, ip) -> {
    tokens.add(token);
    return CompletableFuture.completedFuture(token.startsWith("good")
        ? HumanCheck.Verification.passed() : HumanCheck.Verification.failed("hostname"));
  };

  private EmbeddedChannel channel() {
    Rule failed = Rule.builder("login").countStatus(StatusSet.of(List.of(401)))
        .limit(Limit.fixedWindow("login", 2, Duration.ofHours(1))).build();
    Rule conn = Rule.builder("conn").concurrency(1, Duration.ofMinutes(1)).build();
    HumanCheck h = HumanCheck.builder("turnstile", HumanCheck.Provider.TURNSTILE).secret("s")
        .maxBodyBytes(256).build();
    Policy p = Policy.builder().rule(failed).rule(conn).humanCheck(h)
        .route(Route.builder("signin").path("/signin").humanCheck("turnstile").build())
        .route(Route.builder("login").path("/login").rule("login").rule("conn").build())
        .build();
    return new EmbeddedChannel(new HttpRateLimitHandler(limiter,
        HttpRateLimitSettings.newBuilder(p).verifier(verifier).build()));
  }

  private static HttpRequest post(String uri, int length) {
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, uri);
    HttpUtil.setContentLength(r, length);
    return r;
  }

  private static ByteBuf text(String s) {
    return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
  }

  @Test
  void humanCheck_bodyGathered_forwardedWhole_onceItsTokenPassed() {
    EmbeddedChannel ch = channel();
    ByteBuf a = text("user=a&cf-turnstile-");
    ByteBuf b = text("response=good-1");
    ch.writeInbound(post("/signin", 35), new DefaultHttpContent(a), new DefaultLastHttpContent(b));
    HttpRequest forwarded = ch.readInbound();
    assertThat(forwarded.uri()).isEqualTo("/signin");
    LastHttpContent body = ch.readInbound();
    assertThat(body.content().toString(StandardCharsets.UTF_8))
        .isEqualTo("user=a&cf-turnstile-response=good-1");
    body.release();
    assertThat(a.refCnt()).isZero();
    assertThat(b.refCnt()).isZero();
    assertThat(tokens).containsExactly("good-1");
    ch.finishAndReleaseAll();
  }

  @Test
  void humanCheck_failedOrTooLarge_isAnsweredHere_andItsBuffersReleased() {
    EmbeddedChannel ch = channel();
    ByteBuf bad = text("cf-turnstile-response=bad-1");
    ch.writeInbound(post("/signin", 27), new DefaultLastHttpContent(bad));
    assertThat((Object) ch.readInbound()).isNull();
    FullHttpResponse denied = ch.readOutbound();
    assertThat(denied.status()).isEqualTo(HttpResponseStatus.FORBIDDEN);
    assertThat(denied.content().toString(StandardCharsets.UTF_8))
        .isEqualTo("{\"error\":\"forbidden\",\"reason\":\"human check failed\"}");
    denied.release();
    assertThat(bad.refCnt()).isZero();
    assertThat(ch.isOpen()).isTrue();
    ByteBuf big = text("x".repeat(300));
    ByteBuf rest = text("y");
    ch.writeInbound(post("/signin", 301), new DefaultHttpContent(big),
        new DefaultLastHttpContent(rest));
    FullHttpResponse tooLarge = ch.readOutbound();
    assertThat(tooLarge.status()).isEqualTo(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE);
    tooLarge.release();
    assertThat(big.refCnt()).isZero();
    assertThat(rest.refCnt()).isZero();
    assertThat((Object) ch.readInbound()).isNull();
    ch.finishAndReleaseAll();
  }

  @Test
  void countedStatus_andTheLease_followTheResponse() {
    EmbeddedChannel ch = channel();
    for (int i = 0; i < 2; i++) {
      ch.writeInbound(post("/login", 0), new DefaultLastHttpContent());
      assertThat((Object) ch.readInbound()).isInstanceOf(HttpRequest.class);
      ((LastHttpContent) ch.readInbound()).release();
      assertThat(store.leases("conn:unknown")).isEqualTo(1);
      // A second request while the first is in flight: the cap of one refuses it.
      if (i == 0) {
        ch.writeInbound(post("/login", 0), new DefaultLastHttpContent());
        assertThat((Object) ch.readInbound()).isNull();
        FullHttpResponse full = ch.readOutbound();
        assertThat(full.content().toString(StandardCharsets.UTF_8)).contains("\"rule\":\"conn\"");
        full.release();
        HttpContent part = new DefaultHttpContent(text("z"));
        ch.writeOutbound(new DefaultHttpResponse(HttpVersion.HTTP_1_1,
            HttpResponseStatus.UNAUTHORIZED), part);
        assertThat(store.leases("conn:unknown")).isEqualTo(1);   // not ended yet
        ch.writeOutbound(new DefaultLastHttpContent());
      } else {
        ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
            HttpResponseStatus.UNAUTHORIZED));
      }
      assertThat(store.leases("conn:unknown")).isZero();
      ch.outboundMessages().forEach(io.netty.util.ReferenceCountUtil::release);
      ch.outboundMessages().clear();
    }
    ch.writeInbound(post("/login", 0), new DefaultLastHttpContent());
    assertThat((Object) ch.readInbound()).isNull();                // two 401s: refused
    FullHttpResponse refused = ch.readOutbound();
    assertThat(refused.status()).isEqualTo(HttpResponseStatus.TOO_MANY_REQUESTS);
    assertThat(refused.content().toString(StandardCharsets.UTF_8)).contains("\"rule\":\"login\"");
    refused.release();
    assertThat(store.leases("conn:unknown")).isZero();
    ch.finishAndReleaseAll();
  }
}
