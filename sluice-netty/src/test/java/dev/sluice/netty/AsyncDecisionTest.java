package dev.sluice.netty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A decision that waits for a remote store pauses the channel instead of its event loop. */
class AsyncDecisionTest {

  private final AtomicLong now = new AtomicLong();
  private final RemoteStore store = new RemoteStore(Store.memory(now::get, 1000));
  private final RateLimiter limiter = RateLimiter.of(store);

  private EmbeddedChannel channel() {
    Policy policy = Policy.builder()
        .rule(Rule.builder("api").limit(Limit.fixedWindow("w", 1, Duration.ofMinutes(1))).build())
        .route(Route.builder("api").path("/api/**").rule("api").build())
        .build();
    return new EmbeddedChannel(new HttpRateLimitHandler(limiter,
        HttpRateLimitSettings.newBuilder(policy).build()));
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
  void pendingDecision_pausesReads_holdsTheBody_andResumesInOrder() {
    EmbeddedChannel ch = channel();
    HttpRequest request = post("/api/x", 4);
    ch.writeInbound(request, new DefaultHttpContent(text("ab")),
        new DefaultLastHttpContent(text("cd")));
    assertThat((Object) ch.readInbound()).as("nothing passes while the store is asked").isNull();
    assertThat(ch.config().isAutoRead()).isFalse();
    assertThat(store.pending()).isEqualTo(1);

    assertThat(store.answer()).isTrue();
    ch.runPendingTasks();
    assertThat((Object) ch.readInbound()).isSameAs(request);
    HttpContent first = ch.readInbound();
    LastHttpContent last = ch.readInbound();
    assertThat(first.content().toString(StandardCharsets.UTF_8)).isEqualTo("ab");
    assertThat(last.content().toString(StandardCharsets.UTF_8)).isEqualTo("cd");
    first.release();
    last.release();
    assertThat(ch.config().isAutoRead()).isTrue();
    ch.finishAndReleaseAll();
  }

  @Test
  void pendingRefusal_answers429_andReleasesTheHeldBody() {
    EmbeddedChannel ch = channel();
    ch.writeInbound(post("/api/x", 0), new DefaultLastHttpContent());
    store.answer();
    ch.runPendingTasks();
    ch.readInbound();
    ((LastHttpContent) ch.readInbound()).release();

    ByteBuf body = text("abcd");
    ch.writeInbound(post("/api/x", 4), new DefaultLastHttpContent(body));
    store.answer();
    ch.runPendingTasks();
    assertThat((Object) ch.readInbound()).isNull();
    assertThat(body.refCnt()).isZero();
    FullHttpResponse response = ch.readOutbound();
    assertThat(response.status()).isEqualTo(HttpResponseStatus.TOO_MANY_REQUESTS);
    response.release();
    assertThat(ch.config().isAutoRead()).isTrue();
    ch.finishAndReleaseAll();
  }

  @Test
  void channelClosedWhileWaiting_dropsTheDecision_andReleasesEverything() {
    EmbeddedChannel ch = channel();
    HttpRequest request = post("/api/x", 4);
    ByteBuf body = text("abcd");
    ch.writeInbound(request, new DefaultLastHttpContent(body));
    ch.close();
    assertThat(body.refCnt()).as("held content released at close").isZero();
    store.answer();
    ch.runPendingTasks();
    assertThat((Object) ch.readInbound()).isNull();
    assertThat((Object) ch.readOutbound()).isNull();
  }

  @Test
  void requestsAfterAPendingOne_waitBehindIt() {
    EmbeddedChannel ch = channel();
    HttpRequest first = post("/api/x", 0);
    HttpRequest second = post("/api/x", 0);
    ch.writeInbound(first, new DefaultLastHttpContent(), second, new DefaultLastHttpContent());
    assertThat(store.pending()).as("the second is not even asked yet").isEqualTo(1);
    store.answer();
    ch.runPendingTasks();
    assertThat((Object) ch.readInbound()).isSameAs(first);
    ((LastHttpContent) ch.readInbound()).release();
    assertThat((Object) ch.readInbound()).isNull();
    assertThat(store.pending()).isEqualTo(1);
    store.answer();
    ch.runPendingTasks();
    FullHttpResponse refused = ch.readOutbound();
    assertThat(refused.status()).isEqualTo(HttpResponseStatus.TOO_MANY_REQUESTS);
    refused.release();
    ch.finishAndReleaseAll();
  }

  private EmbeddedChannel guarded(WebSocketGuardSettings settings) {
    return new EmbeddedChannel(new WebSocketGuardHandler(limiter, () -> settings, now::get,
        RateLimitListener.none()));
  }

  private static HttpRequest upgrade() {
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/ws");
    r.headers().set(HttpHeaderNames.CONNECTION, "Upgrade").set(HttpHeaderNames.UPGRADE, "websocket")
        .set(HttpHeaderNames.SEC_WEBSOCKET_VERSION, "13")
        .set(HttpHeaderNames.SEC_WEBSOCKET_KEY, "dGhlIHNhbXBsZSBub25jZQ==");
    return r;
  }

  @Test
  void webSocketLease_isAskedWithoutWaiting_andTheUpgradeGoesOnWhenGranted() {
    EmbeddedChannel ch = guarded(WebSocketGuardSettings.newBuilder(Policy.builder().build())
        .maxConnectionsUnknown(1).refuseBeforeUpgrade(true).build());
    HttpRequest up = upgrade();
    ch.writeInbound(up);
    assertThat((Object) ch.readInbound()).isNull();
    assertThat(ch.config().isAutoRead()).isFalse();
    store.answer();
    ch.runPendingTasks();
    assertThat((Object) ch.readInbound()).isSameAs(up);
    assertThat(ch.config().isAutoRead()).isTrue();

    EmbeddedChannel second = guarded(WebSocketGuardSettings.newBuilder(Policy.builder().build())
        .maxConnectionsUnknown(1).refuseBeforeUpgrade(true).build());
    second.writeInbound(upgrade());
    store.answer();
    second.runPendingTasks();
    FullHttpResponse full = second.readOutbound();
    assertThat(full.status()).isEqualTo(HttpResponseStatus.TOO_MANY_REQUESTS);
    full.release();
    ch.finishAndReleaseAll();
    second.finishAndReleaseAll();
  }

  @Test
  void actionDecisions_keepMessagesInOrder_whileTheStoreAnswers() {
    Rule chat = Rule.builder("chat").key("event:ip")
        .limit(Limit.fixedWindow("w", 2, Duration.ofMinutes(1))).build();
    Policy policy = Policy.builder().rule(chat).build();
    EmbeddedChannel ch = guarded(WebSocketGuardSettings.newBuilder(policy)
        .actionField("type").actionRule("chat", "chat").build());
    ch.writeInbound(upgrade());
    store.answer(); // the connection cap's lease
    ch.runPendingTasks();
    assertThat((Object) ch.readInbound()).isInstanceOf(HttpRequest.class);
    ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
        HttpResponseStatus.SWITCHING_PROTOCOLS));
    ((FullHttpResponse) ch.readOutbound()).release();

    ch.writeInbound(new TextWebSocketFrame("{\"type\":\"chat\",\"n\":1}"),
        new TextWebSocketFrame("{\"type\":\"other\",\"n\":2}"),
        new TextWebSocketFrame("{\"type\":\"chat\",\"n\":3}"),
        new TextWebSocketFrame("{\"type\":\"chat\",\"n\":4}"),
        new TextWebSocketFrame("{\"type\":\"other\",\"n\":5}"));
    StringBuilder passed = new StringBuilder();
    for (int round = 0; round < 10; round++) {
      store.answer();
      ch.runPendingTasks();
      TextWebSocketFrame f;
      while ((f = ch.readInbound()) != null) {
        passed.append(f.text().replaceAll("[^0-9]", ""));
        f.release();
      }
    }
    assertThat(passed.toString()).as("the third chat message is refused, the rest in order")
        .isEqualTo("1235");
    TextWebSocketFrame told = ch.readOutbound();
    assertThat(told.text()).startsWith("{\"error\":\"rate_limited\",\"action\":\"chat\"");
    told.release();
    ch.finishAndReleaseAll();
  }
}
