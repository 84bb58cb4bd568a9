package dev.sluice.server.serve;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import dev.sluice.gateway.Fixtures;
import dev.sluice.gateway.FrameCountingUpstream;
import dev.sluice.gateway.RawWsClient;
import dev.sluice.policy.GatewaySettings;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.WebSocketSettings;
import dev.sluice.core.testing.NodeScripts;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 7 with the client that reported it: Node's {@code ws}, 100 runs per scenario, each
 * still sending when the gateway closes. Every run must report the gateway's code; a reset shows
 * as 1006 and an ECONNRESET error.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GatewayWebSocketNodeIntegrationTests {

  private static final int RUNS = 100;

  private Fixtures.Harness h;
  private FrameCountingUpstream upstream;

  @BeforeAll
  static void install() throws Exception {
    NodeScripts.install();
  }

  @AfterEach
  void stop() {
    if (h != null) {
      h.close();
    }
    if (upstream != null) {
      upstream.close();
    }
  }

  private void start(long connectBurst, int perIp, Duration idle) throws Exception {
    Policy policy = Policy.builder()
        .rule(Rule.builder("connect")
            .limit(Limit.tokenBucket("connect", connectBurst, 240, Duration.ofMinutes(1))).build())
        .route(Route.builder("connect").websocket(true).rule("connect").build())
        .build();
    WebSocketSettings d = WebSocketSettings.defaults();
    WebSocketSettings w = new WebSocketSettings(false, perIp, d.maxConnectionsUnknown(), 0, null,
        d.maxFrameBytes(), d.maxFragments(), d.floodBurst(), d.floodPerSecond(), null, Map.of(),
        0, d.strikeWindow(), d.closeTimeout());
    GatewaySettings g = GatewaySettings.defaults();
    g = g.toBuilder().idleTimeout(idle).build();
    upstream = new FrameCountingUpstream();
    PolicyConfig c = Fixtures.withGateway(Fixtures.withWebSocket(Fixtures.config(policy), w), g);
    h = new Fixtures.Harness(c, upstream.uri());
  }

  private String run(String scenario) throws Exception {
    return NodeWsClient.scenario(h.ws("/socket").toString(), scenario, RUNS);
  }

  @Test
  void nodeFloodingClient_receives1008_notAReset() throws Exception {
    start(1000, 55, Duration.ofMinutes(1));
    assertThat(run("flood")).isEqualTo("{\"codes\":{\"1008\":100},\"failures\":[],\"failed\":0}");
  }

  @Test
  void nodeFragmentFlood_receives1009_notAReset() throws Exception {
    start(1000, 55, Duration.ofMinutes(1));
    assertThat(run("fragments"))
        .isEqualTo("{\"codes\":{\"1009\":100},\"failures\":[],\"failed\":0}");
    assertThat(upstream.dataFrames.get()).as("fragments relayed upstream").isZero();
  }

  @Test
  void nodeRefusedConnect_receives1013_notAReset() throws Exception {
    start(1, 55, Duration.ofMinutes(1));
    try (RawWsClient first = RawWsClient.connect(h.gateway.port(), "/socket")) {
      assertThat(run("refused"))
          .isEqualTo("{\"codes\":{\"1013\":100},\"failures\":[],\"failed\":0}");
    }
  }

  @Test
  void nodeIdleClient_receives1001() throws Exception {
    // Long enough for 100 handshakes at once on a busy machine: idle counts from the connect.
    start(1000, 0, Duration.ofSeconds(2));
    assertThat(run("idle")).isEqualTo("{\"codes\":{\"1001\":100},\"failures\":[],\"failed\":0}");
  }
}
