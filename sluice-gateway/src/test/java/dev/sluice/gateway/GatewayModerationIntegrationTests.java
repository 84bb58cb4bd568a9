package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.policy.PolicyLoader;
import dev.sluice.policy.PolicyConfig;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The policy's moderation section at work: 422 for JSON bodies, error messages on WebSockets. */
class GatewayModerationIntegrationTests {

  static final String POLICY = String.join("\n",
      "rules:",
      "  write: {limits: [{type: token-bucket, burst: 1000, refill: 1000, period: 1s}]}",
      "routes:",
      "  - {name: write, methods: [POST, PUT], paths: ['/**'], rules: [write]}",
      "websocket:",
      "  actionField: type",
      "moderation:",
      "  http:",
      "    - paths: [/api/players, /api/players/*]",
      "      fields: {username: username, displayName: display_name}",
      "  websocket:",
      "    - action: SEND_REACTION",
      "      fields: {emoji: reaction}",
      "    - fields: {name: display_name}",
      "");

  private final HttpClient client = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();
  private EchoUpstream echo;
  private Fixtures.Harness h;
  private final List<WsClient> sockets = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    PolicyConfig config = PolicyLoader.parse(POLICY, "moderation.yaml", null, Map.of()).config();
    echo = new EchoUpstream();
    h = new Fixtures.Harness(config, echo.uri());
  }

  @AfterEach
  void stop() {
    sockets.forEach(s -> s.ws.abort());
    h.close();
    echo.close();
  }

  private HttpResponse<String> post(String path, String json) throws Exception {
    return client.send(HttpRequest.newBuilder(h.uri(path)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void refusedField_gets422_namingFieldAndReason_andNeverReachesTheUpstream() throws Exception {
    HttpResponse<String> r = post("/api/players", "{\"username\":\"4dm1n\",\"age\":12}");
    assertThat(r.statusCode()).isEqualTo(422);
    assertThat(r.body()).isEqualTo("{\"error\":\"rejected\",\"field\":\"username\","
        + "\"reason\":\"reserved\"}");
    assertThat(r.headers().firstValue("X-Upstream")).isEmpty();
    assertThat(h.events.moderated).containsExactly("username:reserved");
    assertThat(h.events.generated).containsExactly(422);
  }

  @Test
  void allowedFields_passWithTheBodyIntact() throws Exception {
    String body = "{\"username\":\"alice\",\"displayName\":\"Zo\u00EB \uD83D\uDE00\"}";
    HttpResponse<String> r = post("/api/players/7", body);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).contains("uri=/api/players/7")
        .contains("bodyBytes=" + body.getBytes(StandardCharsets.UTF_8).length);
    assertThat(h.events.moderated).containsExactly("username:none", "display_name:none");
  }

  @Test
  void duplicateKey_everyValueIsChecked() throws Exception {
    HttpResponse<String> r = post("/api/players", "{\"username\":\"alice\",\"username\":\"f\\u0075ck\"}");
    assertThat(r.statusCode()).isEqualTo(422);
    assertThat(r.body()).contains("\"reason\":\"blocked_term\"");
  }

  @Test
  void otherRoutes_andOtherMethods_passUnread() throws Exception {
    assertThat(post("/api/rooms", "{\"username\":\"fuck\"}").statusCode()).isEqualTo(200);
    HttpResponse<String> get = client.send(HttpRequest.newBuilder(h.uri("/api/players"))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(get.statusCode()).isEqualTo(200);
    assertThat(h.events.moderated).isEmpty();
  }

  @Test
  void connectionStaysUsable_after422() throws Exception {
    try (RawHttp raw = new RawHttp(h.gateway.port())) {
      String bad = "{\"displayName\":\"sh!t\"}";
      raw.send("POST /api/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          + "Content-Length: " + bad.length() + "\r\n\r\n" + bad);
      assertThat(RawHttp.status(raw.readResponse())).isEqualTo(422);
      String ok = "{\"displayName\":\"Bob\"}";
      raw.send("POST /api/players HTTP/1.1\r\nHost: x\r\nContent-Length: " + ok.length()
          + "\r\n\r\n" + ok);
      assertThat(RawHttp.status(raw.readResponse())).isEqualTo(200);
    }
  }

  @Test
  void expectContinue_isAnsweredHere_thenTheBodyIsChecked() throws Exception {
    try (RawHttp raw = new RawHttp(h.gateway.port())) {
      String body = "{\"username\":\"nazi99\"}";
      raw.send("POST /api/players HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
          + "Content-Length: " + body.length() + "\r\n\r\n");
      assertThat(raw.readResponse()).startsWith("HTTP/1.1 100 Continue");
      raw.send(body);
      String response = raw.readResponse();
      assertThat(RawHttp.status(response)).isEqualTo(422);
      assertThat(response).contains("\"reason\":\"blocked_term\"");
    }
  }

  @Test
  void chunkedBody_splitInsideACharacter_isDecodedWhole() throws Exception {
    byte[] json = "{\"username\":\"f\u00FCck\"}".getBytes(StandardCharsets.UTF_8);
    int split = 15; // inside the two bytes of ü
    ByteArrayOutputStream req = new ByteArrayOutputStream();
    req.writeBytes(("POST /api/players HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        + Integer.toHexString(split) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
    req.write(json, 0, split);
    req.writeBytes(("\r\n" + Integer.toHexString(json.length - split) + "\r\n")
        .getBytes(StandardCharsets.ISO_8859_1));
    req.write(json, split, json.length - split);
    req.writeBytes("\r\n0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
    try (RawHttp raw = new RawHttp(h.gateway.port())) {
      raw.send(req.toByteArray());
      String response = raw.readResponse();
      assertThat(RawHttp.status(response)).isEqualTo(422);
      assertThat(response).contains("\"reason\":\"blocked_term\"");
    }
  }

  /** WebSockets go to the demo upstream, which echoes each message back. */
  private WsClient socket() throws Exception {
    h.close();
    h = new Fixtures.Harness(h.config.get());
    WsClient c = WsClient.connect(h.ws("/socket"));
    sockets.add(c);
    return c;
  }

  @Test
  void webSocket_refusedReaction_isNotForwarded_andTheClientGetsAnError() throws Exception {
    WsClient c = socket();
    assertThat(c.send("{\"type\":\"SEND_REACTION\",\"emoji\":\"lol\"}")).isTrue();
    assertThat(c.next()).isEqualTo("{\"error\":\"rejected\",\"action\":\"SEND_REACTION\","
        + "\"field\":\"emoji\",\"reason\":\"not_in_palette\"}");
    String ok = "{\"type\":\"SEND_REACTION\",\"emoji\":\"\uD83D\uDC4D\uD83C\uDFFD\"}";
    assertThat(c.send(ok)).isTrue();
    assertThat(c.next()).isEqualTo(ok); // the demo upstream sends it back
    assertThat(h.events.moderated).containsExactly("reaction:not_in_palette", "reaction:none");
  }

  @Test
  void webSocket_fieldsForEveryMessage_andOtherActionsUnchecked() throws Exception {
    WsClient c = socket();
    assertThat(c.send("{\"type\":\"JOIN\",\"name\":\"ADMIN\"}")).isTrue();
    assertThat(c.next()).isEqualTo("{\"error\":\"rejected\",\"action\":\"JOIN\","
        + "\"field\":\"name\",\"reason\":\"reserved\"}");
    String chat = "{\"type\":\"CHAT\",\"emoji\":\"not an emoji\"}";
    assertThat(c.send(chat)).isTrue();
    assertThat(c.next()).isEqualTo(chat);
  }

  @Test
  void webSocket_fragmentedMessage_isGatheredThenChecked() throws Exception {
    WsClient c = socket();
    assertThat(c.send("{\"type\":\"JOIN\",\"name\":\"fu", false)).isTrue();
    assertThat(c.send("ck\"}", true)).isTrue();
    assertThat(c.next()).contains("\"reason\":\"blocked_term\"");
    assertThat(c.send("{\"type\":\"JOIN\",", false)).isTrue();
    assertThat(c.send("\"name\":\"Zo\u00EB\"}", true)).isTrue();
    assertThat(c.next()).isEqualTo("{\"type\":\"JOIN\",\"name\":\"Zo\u00EB\"}");
  }
}
