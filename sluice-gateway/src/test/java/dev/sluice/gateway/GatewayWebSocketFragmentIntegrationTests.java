package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.WebSocketSettings;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 7's fragment flood: 1 MiB in 1-byte fragments reached the upstream as a million frames.
 * The guard caps the fragments of a message (1,024 by default) and the relay joins the fragments
 * of a message it lets through into one frame.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GatewayWebSocketFragmentIntegrationTests {

  private Fixtures.Harness h;
  private FrameCountingUpstream upstream;

  @BeforeEach
  void start() throws Exception {
    upstream = new FrameCountingUpstream();
    PolicyConfig c = Fixtures.withWebSocket(Fixtures.config(Fixtures.seed000()),
        WebSocketSettings.defaults());
    h = new Fixtures.Harness(c, upstream.uri());
  }

  @AfterEach
  void stop() {
    h.close();
    upstream.close();
  }

  @Test
  void oneMebibyteOf1ByteFragments_closes1009_andTheUpstreamGetsNoneOfThem() throws Exception {
    try (RawWsClient c = RawWsClient.connect(h.gateway.port(), "/socket")) {
      byte[] one = {'x'};
      c.frame(RawWsClient.TEXT, false, one);
      for (int i = 1; i < (1 << 20); i++) {
        c.frame(RawWsClient.CONTINUATION, i == (1 << 20) - 1, one);
      }
      RawWsClient.Outcome o = c.readToEnd();
      assertThat(o.closeCode()).as("%s", o).isEqualTo(1009);
      assertThat(o.closeReason()).isEqualTo("too many fragments");
      assertThat(o.cleanEof()).as("%s", o).isTrue();
    }
    // The upstream is told, and got no piece of the refused message (it used to get every one).
    assertThat(upstream.closes.poll(5, TimeUnit.SECONDS))
        .isEqualTo("1001 1009 too many fragments");
    assertThat(upstream.dataFrames.get()).isZero();
  }

  @Test
  void messageInManySmallFragments_reachesTheUpstreamAsOneFrame_intact() throws Exception {
    StringBuilder sent = new StringBuilder();
    try (RawWsClient c = RawWsClient.connect(h.gateway.port(), "/socket")) {
      // 1,000 fragments of 60 bytes: under both caps (1,024 fragments, 64 KiB).
      for (int i = 0; i < 1000; i++) {
        String part = String.format("%059d|", i);
        sent.append(part);
        c.frame(i == 0 ? RawWsClient.TEXT : RawWsClient.CONTINUATION, i == 999,
            part.getBytes(StandardCharsets.UTF_8));
      }
      assertThat(c.nextText()).isEqualTo(sent.toString());
    }
    assertThat(upstream.messages.poll(5, TimeUnit.SECONDS)).isEqualTo(sent.toString());
    assertThat(upstream.dataFrames.get()).isEqualTo(1);
  }

  @Test
  void messagesAroundFragmentedOnes_keepTheirOrder() throws Exception {
    try (RawWsClient c = RawWsClient.connect(h.gateway.port(), "/socket")) {
      c.text("before");
      c.frame(RawWsClient.TEXT, false, "frag".getBytes(StandardCharsets.UTF_8));
      c.frame(RawWsClient.CONTINUATION, true, "mented".getBytes(StandardCharsets.UTF_8));
      c.text("after");
      assertThat(c.nextText()).isEqualTo("before");
      assertThat(c.nextText()).isEqualTo("fragmented");
      assertThat(c.nextText()).isEqualTo("after");
    }
    assertThat(upstream.dataFrames.get()).isEqualTo(3);
  }
}
