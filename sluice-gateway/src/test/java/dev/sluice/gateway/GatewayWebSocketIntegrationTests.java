package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Limit;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Source;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.WebSocketSettings;
import java.net.http.WebSocketHandshakeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** WebSockets proxied to the demo upstream (which echoes) with the guards on the client side. */
class GatewayWebSocketIntegrationTests {

  private Fixtures.Harness h;
  private final List<WsClient> clients = new ArrayList<>();

  @AfterEach
  void stop() {
    for (WsClient c : clients) {
      c.ws.abort();
    }
    if (h != null) {
      h.close();
    }
  }

  private static WebSocketSettings ws(boolean before, int perIp, int perSession, String session,
      int maxFrame, String actionField, Map<String, String> actions, int strikes) {
    WebSocketSettings d = WebSocketSettings.defaults();
    return new WebSocketSettings(before, perIp, 75, perSession, session, maxFrame,
        d.maxFragments(), 120, 40, actionField, actions, strikes, Duration.ofSeconds(30),
        d.closeTimeout());
  }

  private static Policy.Builder policy(long connectBurst) {
    return Policy.builder()
        .rule(Rule.builder("connect").limit(Limit.tokenBucket("connect", connectBurst, 240, Duration.ofMinutes(1))).build())
        .rule(Rule.builder("reaction").key("event:ip")
            .limit(Limit.fixedWindow("reaction", 2, Duration.ofSeconds(10))).build())
        .route(Route.builder("connect").websocket(true).rule("connect").build())
        .dimension("session", Source.header("X-Session"));
  }

  private void start(Policy policy, WebSocketSettings w) {
    PolicyConfig c = Fixtures.withWebSocket(Fixtures.config(policy), w);
    h = new Fixtures.Harness(c);
  }

  private WsClient open(String... headers) throws Exception {
    WsClient c = WsClient.connect(h.ws("/socket"), headers);
    clients.add(c);
    return c;
  }

  @Test
  void messages_areRelayedBothWays_andCloseCodesPropagate() throws Exception {
    start(policy(120).build(), WebSocketSettings.defaults());
    WsClient c = open();
    assertThat(c.send("hello")).isTrue();
    assertThat(c.next()).isEqualTo("hello");
    c.ws.sendClose(4001, "bye").get(10, TimeUnit.SECONDS);
    assertThat(c.closeCode()).isEqualTo(4001);
    assertThat(h.events.opened.get()).isEqualTo(1);
  }

  @Test
  void refusedConnect_isClosedWith1013() throws Exception {
    start(policy(1).build(), WebSocketSettings.defaults());
    WsClient first = open();
    assertThat(first.send("x")).isTrue();
    assertThat(first.next()).isEqualTo("x");
    WsClient second = open();
    assertThat(second.closeCode()).isEqualTo(1013);
    assertThat(second.closeReason.get(5, TimeUnit.SECONDS)).isEqualTo("try again later");
    assertThat(h.events.decisions).containsExactly("ws-connect:allowed", "ws-connect:refused");
  }

  @Test
  void allowListedClient_skipsConnectRuleAndConnectionCaps() throws Exception {
    // One connect per minute, one connection per address: the allow list lifts both.
    start(policy(1).allow(java.util.List.of("127.0.0.0/8")).build(),
        ws(false, 1, 3, null, 65536, null, Map.of(), 0));
    for (int i = 0; i < 3; i++) {
      WsClient c = open();
      assertThat(c.send("x" + i)).isTrue();
      assertThat(c.next()).isEqualTo("x" + i);
    }
    assertThat(h.events.opened.get()).isEqualTo(3);
    assertThat(h.events.allowlisted).containsExactly("ws-connect", "ws-connect", "ws-connect");
    assertThat(h.events.decisions).isEmpty();
  }

  @Test
  void refusedConnect_beforeUpgrade_is429() throws Exception {
    start(policy(1).build(), ws(true, 55, 3, null, 65536, null, Map.of(), 0));
    open();
    assertThatThrownBy(() -> WsClient.connect(h.ws("/socket")))
        .isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(WebSocketHandshakeException.class)
        .satisfies(e -> assertThat(((WebSocketHandshakeException) e).getResponse().statusCode())
            .isEqualTo(429));
  }

  @Test
  void upstreamDown_upgradeIs502() throws Exception {
    PolicyConfig c = Fixtures.config(policy(120).build());
    h = new Fixtures.Harness(c, EchoUpstream.deadPort());
    assertThatThrownBy(() -> WsClient.connect(h.ws("/socket")))
        .cause().isInstanceOf(WebSocketHandshakeException.class)
        .satisfies(e -> assertThat(((WebSocketHandshakeException) e).getResponse().statusCode())
            .isEqualTo(502));
    // the refused upgrade gave its connection slot back
    assertThat(h.events.opened.get()).isZero();
  }

  @Test
  void oversizedMessage_closes1009() throws Exception {
    start(policy(120).build(), ws(false, 55, 3, null, 65536, null, Map.of(), 0));
    WsClient c = open();
    c.send("a".repeat(65536 + 1));
    assertThat(c.closeCode()).isEqualTo(1009);
  }

  @Test
  void oversizedMessage_inContinuationFrames_closes1009() throws Exception {
    start(policy(120).build(), ws(false, 55, 3, null, 65536, null, Map.of(), 0));
    WsClient c = open();
    String part = "b".repeat(16 * 1024);
    for (int i = 0; i < 5 && !c.closed.isDone(); i++) {
      c.send(part, false);
    }
    c.send("end", true);
    assertThat(c.closeCode()).isEqualTo(1009);
    awaitClose(1009);
  }

  @Test
  void messageAtTheCap_passes() throws Exception {
    start(policy(120).build(), ws(false, 55, 3, null, 65536, null, Map.of(), 0));
    WsClient c = open();
    String part = "c".repeat(16 * 1024);
    for (int i = 0; i < 3; i++) {
      c.send(part, false);
    }
    c.send(part, true);
    assertThat(c.next()).hasSize(65536);
  }

  @Test
  void flood_closes1008_andRefillsWithTime() throws Exception {
    start(policy(120).build(), WebSocketSettings.defaults());
    WsClient c = open();
    for (int i = 0; i < 120; i++) {
      assertThat(c.send("m" + i)).isTrue();
    }
    for (int i = 0; i < 120; i++) {
      assertThat(c.next()).isEqualTo("m" + i);
    }
    h.ticker.advance(Duration.ofMillis(25));
    assertThat(c.send("one more")).isTrue();
    assertThat(c.next()).isEqualTo("one more");
    c.send("too many");
    assertThat(c.closeCode()).isEqualTo(1008);
    assertThat(c.closeReason.get(5, TimeUnit.SECONDS)).isEqualTo("too many messages");
  }

  @Test
  void perIpCap_refusesTheThird_andAbruptDisconnectReleasesTheSlot() throws Exception {
    start(policy(120).build(), ws(false, 2, 3, null, 65536, null, Map.of(), 0));
    WsClient a = open();
    WsClient b = open();
    WsClient third = open();
    assertThat(third.closeCode()).isEqualTo(1013);
    a.ws.abort();
    awaitClose(1006);
    WsClient again = open();
    assertThat(again.send("back")).isTrue();
    assertThat(again.next()).isEqualTo("back");
    assertThat(b.send("still")).isTrue();
    assertThat(b.next()).isEqualTo("still");
  }

  @Test
  void perSessionCap_countsPerToken() throws Exception {
    start(policy(120).build(), ws(true, 55, 2, "session", 65536, null, Map.of(), 0));
    open("X-Session", "s1");
    open("X-Session", "s1");
    assertThatThrownBy(() -> WsClient.connect(h.ws("/socket"), "X-Session", "s1"))
        .cause().isInstanceOf(WebSocketHandshakeException.class);
    WsClient other = open("X-Session", "s2");
    assertThat(other.send("ok")).isTrue();
    assertThat(other.next()).isEqualTo("ok");
  }

  @Test
  void actionLimit_dropsTheMessage_andTellsTheClient() throws Exception {
    start(policy(120).build(), ws(false, 55, 3, null, 65536, "type",
        Map.of("SEND_REACTION", "reaction"), 0));
    WsClient c = open();
    String msg = "{\"type\":\"SEND_REACTION\",\"emoji\":\"x\"}";
    assertThat(c.send(msg)).isTrue();
    assertThat(c.next()).isEqualTo(msg);
    assertThat(c.send(msg)).isTrue();
    assertThat(c.next()).isEqualTo(msg);
    assertThat(c.send(msg)).isTrue();
    assertThat(c.next()).isEqualTo(
        "{\"error\":\"rate_limited\",\"action\":\"SEND_REACTION\",\"retryAfterMs\":10000}");
    // other actions are not limited by this rule
    assertThat(c.send("{\"type\":\"JOIN\"}")).isTrue();
    assertThat(c.next()).isEqualTo("{\"type\":\"JOIN\"}");
    h.ticker.advance(Duration.ofSeconds(10));
    assertThat(c.send(msg)).isTrue();
    assertThat(c.next()).isEqualTo(msg);
  }

  @Test
  void actionRefusedByAScore_toldCurrentAndMaxScore() throws Exception {
    // Seed 003: currentScore and maxScore are present only when a score refused.
    Policy p = policy(120).rule(Rule.builder("chat").key("event:ip")
        .limit(Limit.score("score", 2, 1, Duration.ofSeconds(10))).build()).build();
    start(p, ws(false, 55, 3, null, 65536, "type", Map.of("SEND", "chat"), 0));
    WsClient c = open();
    String msg = "{\"type\":\"SEND\"}";
    for (int i = 0; i < 2; i++) {
      assertThat(c.send(msg)).isTrue();
      assertThat(c.next()).isEqualTo(msg);
    }
    assertThat(c.send(msg)).isTrue();
    assertThat(c.next()).isEqualTo("{\"error\":\"rate_limited\",\"action\":\"SEND\","
        + "\"retryAfterMs\":10000,\"currentScore\":2,\"maxScore\":2}");
  }

  @Test
  void strikes_closeWith1008() throws Exception {
    start(policy(120).build(), ws(false, 55, 3, null, 65536, "type",
        Map.of("HEARTBEAT", "reaction"), 3));
    WsClient c = open();
    String msg = "{\"type\":\"HEARTBEAT\"}";
    c.send(msg);
    c.send(msg);
    assertThat(c.next()).isEqualTo(msg);
    assertThat(c.next()).isEqualTo(msg);
    for (int i = 0; i < 3; i++) {
      c.send(msg);
    }
    assertThat(c.closeCode()).isEqualTo(1008);
  }

  /** Waits for the gateway to report a close with {@code code}: a real event, bounded. */
  private void awaitClose(int code) throws InterruptedException {
    Integer seen;
    do {
      seen = h.events.closeQueue.poll(10, TimeUnit.SECONDS);
    } while (seen != null && seen != code);
    assertThat(seen).isEqualTo(code);
  }

}
