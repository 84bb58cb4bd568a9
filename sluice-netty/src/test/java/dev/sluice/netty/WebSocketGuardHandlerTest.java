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
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Connection caps at the upgrade, in embedded channels (whose peer address is unresolvable). */
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
}
