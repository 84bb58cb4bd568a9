package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import dev.sluice.policy.GatewaySettings;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.WebSocketSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 7: a client the gateway closes must receive the close frame, not a reset. Each scenario
 * runs 100 times with a raw-socket client that keeps writing past the limit, then reads to the
 * end of the stream: every run must see the close frame with the right code and a clean EOF.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GatewayWebSocketCloseIntegrationTests {

  private static final int RUNS = 100;

  private Fixtures.Harness h;
  private FrameCountingUpstream upstream;

  @AfterEach
  void stop() {
    if (h != null) {
      h.close();
    }
    if (upstream != null) {
      upstream.close();
    }
  }

  private static Policy policy(long connectBurst) {
    return Policy.builder()
        .rule(Rule.builder("connect")
            .limit(Limit.tokenBucket("connect", connectBurst, 240, Duration.ofMinutes(1))).build())
        .route(Route.builder("connect").websocket(true).rule("connect").build())
        .build();
  }

  private static WebSocketSettings ws(int perIp, int maxFrameBytes) {
    WebSocketSettings d = WebSocketSettings.defaults();
    return new WebSocketSettings(false, perIp, d.maxConnectionsUnknown(), 0, null, maxFrameBytes,
        d.maxFragments(), d.floodBurst(), d.floodPerSecond(), null, Map.of(), 0,
        d.strikeWindow(), d.closeTimeout());
  }

  private void start(Policy policy, WebSocketSettings w, GatewaySettings g) throws Exception {
    upstream = new FrameCountingUpstream();
    PolicyConfig c = Fixtures.withWebSocket(Fixtures.config(policy), w);
    h = new Fixtures.Harness(Fixtures.withGateway(c, g), upstream.uri());
  }

  private RawWsClient connect() throws Exception {
    return RawWsClient.connect(h.gateway.port(), "/socket");
  }

  @Test
  void floodingClient_receives1008_notAReset() throws Exception {
    start(policy(1000), ws(55, 65536), GatewaySettings.defaults());
    List<RawWsClient.Outcome> failed = new ArrayList<>();
    for (int run = 0; run < RUNS; run++) {
      try (RawWsClient c = connect()) {
        // The bucket holds 120 and the fake clock never refills it: the 121st closes, and the
        // client goes on writing 279 more.
        for (int i = 0; i < 400; i++) {
          c.text("message " + i);
        }
        RawWsClient.Outcome o = c.readToEnd();
        if (o.closeCode() != 1008 || !o.cleanEof() || !"too many messages".equals(o.closeReason())) {
          failed.add(o);
        }
      }
    }
    assertThat(failed).as("runs without a 1008 close frame and a clean EOF").isEmpty();
  }

  @Test
  void fragmentFlood_receives1009_notAReset() throws Exception {
    start(policy(1000), ws(55, 65536), GatewaySettings.defaults());
    List<RawWsClient.Outcome> failed = new ArrayList<>();
    byte[] one = {'x'};
    for (int run = 0; run < RUNS; run++) {
      try (RawWsClient c = connect()) {
        // 4 times the fragment cap, far below the size cap: only the fragment count refuses it.
        c.frame(RawWsClient.TEXT, false, one);
        for (int i = 1; i < 4096; i++) {
          c.frame(RawWsClient.CONTINUATION, false, one);
        }
        RawWsClient.Outcome o = c.readToEnd();
        if (o.closeCode() != 1009 || !o.cleanEof()) {
          failed.add(o);
        }
      }
    }
    assertThat(failed).as("runs without a 1009 close frame and a clean EOF").isEmpty();
  }

  @Test
  void refusedConnect_receives1013_notAReset() throws Exception {
    start(policy(1), ws(55, 65536), GatewaySettings.defaults());
    try (RawWsClient first = connect()) {
      assertThat(first.text("hello")).isTrue();
      assertThat(first.nextText()).isEqualTo("hello");
      List<RawWsClient.Outcome> failed = new ArrayList<>();
      for (int run = 0; run < RUNS; run++) {
        try (RawWsClient c = connect()) {
          // A client that starts talking as soon as the upgrade succeeds.
          for (int i = 0; i < 200; i++) {
            c.text("early " + i);
          }
          RawWsClient.Outcome o = c.readToEnd();
          if (o.closeCode() != 1013 || !o.cleanEof() || !"try again later".equals(o.closeReason())) {
            failed.add(o);
          }
        }
      }
      assertThat(failed).as("runs without a 1013 close frame and a clean EOF").isEmpty();
    }
  }

  @Test
  void idleClient_receives1001_notASilentClose() throws Exception {
    GatewaySettings d = GatewaySettings.defaults();
    start(policy(1000), ws(0, 65536), d.toBuilder()
        .idleTimeout(Duration.ofSeconds(2)).build());
    // All 100 wait out the idle timeout together; it counts from the connect, so it leaves
    // room for 100 handshakes on a busy machine.
    List<RawWsClient> clients = new ArrayList<>();
    List<RawWsClient.Outcome> failed = new ArrayList<>();
    try {
      for (int run = 0; run < RUNS; run++) {
        clients.add(connect());
      }
      for (RawWsClient c : clients) {
        RawWsClient.Outcome o = c.readToEnd();
        if (o.closeCode() != 1001 || !o.cleanEof()) {
          failed.add(o);
        }
      }
    } finally {
      for (RawWsClient c : clients) {
        c.close();
      }
    }
    assertThat(failed).as("runs without a 1001 close frame and a clean EOF").isEmpty();
    String told = upstream.closes.poll(5, TimeUnit.SECONDS);
    assertThat(told).as("the upstream is closed properly too").startsWith("1001 ");
  }
}
