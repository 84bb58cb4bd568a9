package dev.sluice.netty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.policy.Policy;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Store;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Connection caps, frame caps and the lingering close, in embedded channels (unresolvable peers). */
class WebSocketGuardHandlerTest {

  private final AtomicLong now = new AtomicLong();
  private final RateLimiter limiter = RateLimiter.of(Store.memory(now::get, 1000));
  private final WebSocketGuardSettings settings = WebSocketGuardSettings
      .newBuilder(Policy.builder().build())
      .maxConnectionsUnknown(2)
      .refuseBeforeUpgrade(true)
      .build();

  private EmbeddedChannel channel() {
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

  private static boolean passes(EmbeddedChannel ch) {
    ch.writeInbound(upgrade());
    Object in = ch.readInbound();
    if (in != null) {
      return true;
    }
    FullHttpResponse refusal = ch.readOutbound();
    assertThat(refusal.status()).isEqualTo(HttpResponseStatus.TOO_MANY_REQUESTS);
    assertThat(refusal.headers().get(HttpHeaderNames.RETRY_AFTER)).isEqualTo("1");
    refusal.release();
    return false;
  }

  @Test
  void unresolvableAddresses_shareOneCappedBucket_releasedOnClose() {
    EmbeddedChannel a = channel();
    EmbeddedChannel b = channel();
    EmbeddedChannel c = channel();
    assertThat(passes(a)).isTrue();
    assertThat(passes(b)).isTrue();
    assertThat(passes(c)).isFalse();
    a.close();
    assertThat(passes(channel())).isTrue();
    b.finishAndReleaseAll();
    c.finishAndReleaseAll();
  }

  @Test
  void upgradeAnsweredWithoutSwitching_givesTheSlotBack() {
    EmbeddedChannel a = channel();
    assertThat(passes(a)).isTrue();
    a.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_GATEWAY));
    ((FullHttpResponse) a.readOutbound()).release();
    assertThat(passes(channel())).isTrue();
    assertThat(passes(channel())).isTrue();
    assertThat(passes(channel())).isFalse();
  }

  /** A channel past the upgrade with {@code s}: frames written inbound reach the guard. */
  private EmbeddedChannel open(WebSocketGuardSettings s) {
    EmbeddedChannel ch = new EmbeddedChannel(new WebSocketGuardHandler(limiter, () -> s, now::get,
        RateLimitListener.none()));
    ch.writeInbound(upgrade());
    assertThat((Object) ch.readInbound()).isNotNull();
    ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
        HttpResponseStatus.SWITCHING_PROTOCOLS));
    ((FullHttpResponse) ch.readOutbound()).release();
    return ch;
  }

  private static WebSocketGuardSettings.Builder open() {
    return WebSocketGuardSettings.newBuilder(Policy.builder().build()).maxConnectionsUnknown(0);
  }

  private static int closeCode(EmbeddedChannel ch) {
    CloseWebSocketFrame close = ch.readOutbound();
    try {
      return close.statusCode();
    } finally {
      close.release();
    }
  }

  @Test
  void floodClose_discardsWhatFollows_andLingersUntilTheClientsCloseFrame() {
    EmbeddedChannel ch = open(open().flood(2, 1).build());
    ch.writeInbound(new TextWebSocketFrame("a"), new TextWebSocketFrame("b"));
    ((TextWebSocketFrame) ch.readInbound()).release();
    ((TextWebSocketFrame) ch.readInbound()).release();
    ch.writeInbound(new TextWebSocketFrame("c"));
    assertThat(closeCode(ch)).isEqualTo(1008);
    // The client goes on sending: nothing passes, everything is released, the socket stays.
    TextWebSocketFrame late = new TextWebSocketFrame("d");
    ch.writeInbound(late);
    assertThat((Object) ch.readInbound()).isNull();
    assertThat(late.refCnt()).isZero();
    assertThat(ch.isOpen()).isTrue();
    ch.writeInbound(new CloseWebSocketFrame(1008, ""));
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void lingeringClose_endsAtTheTimeout_whenTheClientNeverAnswers() {
    EmbeddedChannel ch = open(open().flood(1, 1).closeTimeout(Duration.ofMillis(500)).build());
    ch.freezeTime(); // only advanceTimeBy moves the loop's clock: a loaded machine cannot
    ch.writeInbound(new TextWebSocketFrame("a"));
    ((TextWebSocketFrame) ch.readInbound()).release();
    ch.writeInbound(new TextWebSocketFrame("b"));
    assertThat(closeCode(ch)).isEqualTo(1008);
    ch.advanceTimeBy(499, TimeUnit.MILLISECONDS);
    ch.runScheduledPendingTasks();
    assertThat(ch.isOpen()).isTrue();
    ch.advanceTimeBy(1, TimeUnit.MILLISECONDS);
    ch.runScheduledPendingTasks();
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void fragmentCap_closes1009_andPingsBetweenFragmentsDoNotResetIt() {
    EmbeddedChannel ch = open(open().maxFragments(3).build());
    ch.writeInbound(new TextWebSocketFrame(false, 0, "a"), new PingWebSocketFrame(),
        new ContinuationWebSocketFrame(false, 0, "b"), new PingWebSocketFrame(),
        new ContinuationWebSocketFrame(false, 0, "c"));
    for (int i = 0; i < 5; i++) {
      ReferenceCountUtil.release(ch.readInbound());
    }
    ch.writeInbound(new ContinuationWebSocketFrame(true, 0, "d"));
    assertThat((Object) ch.readInbound()).isNull();
    assertThat(closeCode(ch)).isEqualTo(1009);
    ch.finishAndReleaseAll();
  }

  @Test
  void messageOfMaxFragments_passes() {
    EmbeddedChannel ch = open(open().maxFragments(3).build());
    ch.writeInbound(new TextWebSocketFrame(false, 0, "a"),
        new ContinuationWebSocketFrame(false, 0, "b"), new ContinuationWebSocketFrame(true, 0, "c"));
    for (int i = 0; i < 3; i++) {
      Object f = ch.readInbound();
      assertThat(f).isNotNull();
      ReferenceCountUtil.release(f);
    }
    assertThat((Object) ch.readOutbound()).isNull();
    ch.finishAndReleaseAll();
  }
}
