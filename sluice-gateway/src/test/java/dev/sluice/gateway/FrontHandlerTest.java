package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.policy.GatewaySettings;
import dev.sluice.policy.PolicyConfig;
import io.netty.channel.embedded.EmbeddedChannel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** FrontHandler on Netty's embedded channel, whose clock the test moves. */
class FrontHandlerTest {

  /** A connection with a head timeout of 1 ms, on a frozen clock. */
  private static EmbeddedChannel connection() {
    GatewaySettings d = GatewaySettings.defaults();
    PolicyConfig c = Fixtures.withGateway(Fixtures.config(Fixtures.seed000()),
        d.toBuilder().handshakeTimeout(Duration.ofMillis(1)).build());
    EmbeddedChannel ch = new EmbeddedChannel();
    ch.freezeTime();
    ch.pipeline().addLast(new FrontHandler(new Snapshot.Source(() -> c, dev.sluice.core.RateLimiter.of(
        dev.sluice.core.Store.memory(dev.sluice.core.Ticker.system(), 100)), GatewayEvents.none()), GatewayEvents.none()));
    ch.pipeline().fireChannelActive();
    return ch;
  }

  @Test
  void headTimeout_closesAConnectionThatSentNothing() {
    EmbeddedChannel ch = connection();
    // The deadline also reads the system clock: move the loop's until that has passed 1 ms.
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (ch.isOpen() && System.nanoTime() < giveUp) {
      ch.advanceTimeBy(1, TimeUnit.SECONDS);
      ch.runScheduledPendingTasks();
    }
    assertThat(ch.isOpen()).isFalse();
  }

  /** A connection that turned to HTTP/2 removes FrontHandler: its timer must go with it. */
  @Test
  void removedForHttp2_itsHeadTimerClosesNothing() {
    EmbeddedChannel ch = connection();
    assertThat(ch.runScheduledPendingTasks()).as("the head timer").isPositive();
    ch.pipeline().remove(FrontHandler.class);
    assertThat(ch.runScheduledPendingTasks()).as("nothing scheduled").isEqualTo(-1);
    ch.advanceTimeBy(1, TimeUnit.HOURS);
    ch.runScheduledPendingTasks();
    assertThat(ch.isOpen()).isTrue();
    ch.close();
  }
}
