package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import dev.sluice.policy.GatewaySettings;
import dev.sluice.policy.PolicyConfig;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 13: TLS with HTTP/2 by ALPN, h2c with prior knowledge, https upstreams. Real clients
 * (curl, the JDK's HttpClient) against certificates this test makes with openssl.
 */
class GatewayTlsIntegrationTests {

  @TempDir
  static Path dir;
  static TestCerts certs;
  static Path[] server;

  private final List<AutoCloseable> open = new ArrayList<>();
  private final List<LogRecord> nettyWarnings = new CopyOnWriteArrayList<>();
  private final Handler capture = new Handler() {
    @Override
    public void publish(LogRecord r) {
      if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
        nettyWarnings.add(r);
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };
  private EchoUpstream echo;

  @BeforeAll
  static void makeCertificates() throws Exception {
    certs = TestCerts.create(dir);
    server = certs.server("localhost", 0x1001);
  }

  @AfterEach
  void stop() throws Exception {
    Logger.getLogger("io.netty").removeHandler(capture);
    for (AutoCloseable c : open) {
      c.close();
    }
    if (echo != null) {
      echo.close();
    }
  }

  /** A rule of 2 per minute on /tiny/**, nothing else limited. */
  private static PolicyConfig tinyPolicy() {
    return Fixtures.config(Policy.builder()
        .rule(Rule.builder("tiny").limit(Limit.tokenBucket("tiny", 2, 2, Duration.ofMinutes(1)))
            .build())
        .route(Route.builder("tiny").path("/tiny/**").rule("tiny").build())
        .build());
  }

  private Gateway start(ServerTls tls, URI upstream) {
    Gateway g = Gateway.builder().listen(new InetSocketAddress("127.0.0.1", 0))
        .upstream(upstream).config(GatewayTlsIntegrationTests::tinyPolicy)
        .limiter(RateLimiter.of(Store.memory(new Fixtures.FakeTicker(), 1000)))
        .tls(tls).threads(2).start();
    open.add(g);
    return g;
  }

  private Gateway startTlsWithEcho() throws Exception {
    echo = new EchoUpstream();
    return start(ServerTls.load(server[0], server[1]), echo.uri());
  }

  /** curl's output (body, then what -w wrote), failing on a curl error. */
  @Test
  void curl_withCaCert_speaksHttp11_andHttp2ByAlpn() throws Exception {
    Gateway g = startTlsWithEcho();
    String base = "https://localhost:" + g.port();
    String h1 = CurlClient.run("--cacert", certs.caCert.toString(), "--http1.1",
        "-w", "\nversion=%{http_version} status=%{http_code}", base + "/echo?a=1");
    assertThat(h1).contains("uri=/echo?a=1\n").contains("x-forwarded-proto: https\n")
        .contains("forwarded: for=127.0.0.1;proto=https\n")
        .contains("host: " + echo.uri().getAuthority() + "\n")
        .contains("x-forwarded-host: localhost:" + g.port() + "\n")
        .endsWith("version=1.1 status=200");
    String h2 = CurlClient.run("--cacert", certs.caCert.toString(), "--http2",
        "-w", "\nversion=%{http_version} status=%{http_code}", base + "/echo?a=2");
    assertThat(h2).contains("uri=/echo?a=2\n").contains("x-forwarded-proto: https\n")
        .contains("host: " + echo.uri().getAuthority() + "\n")
        .contains("x-forwarded-host: localhost:" + g.port() + "\n")
        .doesNotContain("x-http2-")
        .endsWith("version=2 status=200");
  }

  @Test
  void jdkClient_overHttp2_getsLimitHeaders_then429() throws Exception {
    Gateway g = startTlsWithEcho();
    HttpClient client = HttpClient.newBuilder().sslContext(certs.clientContext())
        .version(HttpClient.Version.HTTP_2).connectTimeout(Duration.ofSeconds(5)).build();
    URI uri = URI.create("https://localhost:" + g.port() + "/tiny/x");
    List<Integer> statuses = new ArrayList<>();
    HttpResponse<String> last = null;
    for (int i = 0; i < 3; i++) {
      last = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(last.version()).isEqualTo(HttpClient.Version.HTTP_2);
      statuses.add(last.statusCode());
      if (i == 0) {
        assertThat(last.headers().firstValue("ratelimit-policy")).hasValue("\"tiny\";q=2;w=60");
        assertThat(last.headers().firstValue("x-upstream")).hasValue("echo");
        // connection-specific headers never travel in HTTP/2
        assertThat(last.headers().map()).doesNotContainKeys("connection", "keep-alive",
            "transfer-encoding");
      }
    }
    assertThat(statuses).containsExactly(200, 200, 429);
    assertThat(last.headers().firstValue("retry-after")).isPresent();
    assertThat(last.body()).contains("\"rule\":\"tiny\"");
  }

  @Test
  void jdkClient_overHttp2_postsBodies_withAndWithoutLength() throws Exception {
    Gateway g = startTlsWithEcho();
    HttpClient client = HttpClient.newBuilder().sslContext(certs.clientContext())
        .version(HttpClient.Version.HTTP_2).build();
    byte[] body = new byte[100_000];
    HttpResponse<String> known = client.send(HttpRequest.newBuilder(
            URI.create("https://localhost:" + g.port() + "/upload"))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(known.version()).isEqualTo(HttpClient.Version.HTTP_2);
    assertThat(known.body()).contains("method=POST\n").contains("bodyBytes=100000\n");
    HttpResponse<String> streamed = client.send(HttpRequest.newBuilder(
            URI.create("https://localhost:" + g.port() + "/chunked"))
        .POST(HttpRequest.BodyPublishers.ofInputStream(
            () -> new java.io.ByteArrayInputStream(body))).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(streamed.statusCode()).isEqualTo(200);
    assertThat(streamed.body()).contains("bodyBytes=100000\n");
  }

  @Test
  void h2c_priorKnowledge_onPlainListener_andHttp11_stillServed() throws Exception {
    echo = new EchoUpstream();
    Gateway g = start(null, echo.uri());
    String base = "http://127.0.0.1:" + g.port();
    String h2 = CurlClient.run("--http2-prior-knowledge", "-w", "\nversion=%{http_version}",
        base + "/echo");
    assertThat(h2).contains("x-forwarded-proto: http\n").endsWith("version=2");
    String h1 = CurlClient.run("--http1.1", "-w", "\nversion=%{http_version}", base + "/echo");
    assertThat(h1).contains("uri=/echo\n").endsWith("version=1.1");
    // the limit applies to h2c streams too
    CurlClient.run("--http2-prior-knowledge", base + "/tiny/a");
    CurlClient.run("--http2-prior-knowledge", base + "/tiny/a");
    assertThat(CurlClient.run("--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_code}",
        base + "/tiny/a")).isEqualTo("429");
  }

  @Test
  void webSocket_overTls_http11_isRelayed() throws Exception {
    Gateway g = start(ServerTls.load(server[0], server[1]), null);
    HttpClient client = HttpClient.newBuilder().sslContext(certs.clientContext()).build();
    CompletableFuture<String> got = new CompletableFuture<>();
    WebSocket ws = client.newWebSocketBuilder().buildAsync(
        URI.create("wss://localhost:" + g.port() + "/ws"), new WebSocket.Listener() {
          @Override
          public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
            got.complete(data.toString());
            return null;
          }
        }).get(10, TimeUnit.SECONDS);
    ws.sendText("hello", true);
    assertThat(got.get(10, TimeUnit.SECONDS)).contains("hello");
    ws.abort();
  }

  @Test
  void plainHttp_toTlsPort_isClosed_withoutATrace() throws Exception {
    Logger.getLogger("io.netty").addHandler(capture);
    Gateway g = startTlsWithEcho();
    try (RawHttp raw = new RawHttp(g.port())) {
      raw.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
      assertThat(raw.closedByServer()).isTrue();
    }
    // still serving
    assertThat(CurlClient.run("--cacert", certs.caCert.toString(), "-o", "/dev/null", "-w",
        "%{http_code}", "https://localhost:" + g.port() + "/echo")).isEqualTo("200");
    assertThat(nettyWarnings).isEmpty();
  }

  @Test
  void garbageAfterPreface_getsGoaway() throws Exception {
    Logger.getLogger("io.netty").addHandler(capture);
    echo = new EchoUpstream();
    Gateway g = start(null, echo.uri());
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", g.port()), 5000);
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      // a "frame" of type 0xee on stream 0 claiming 16 MiB: a frame size error
      out.write(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xee, 0, 0, 0, 0, 0,
          'g', 'a', 'r', 'b', 'a', 'g', 'e'});
      out.flush();
      List<Integer> types = frameTypes(s.getInputStream());
      assertThat(types).contains(0x7);
    }
    assertThat(CurlClient.run("--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_code}",
        "http://127.0.0.1:" + g.port() + "/echo")).isEqualTo("200");
    assertThat(nettyWarnings).isEmpty();
  }

  /** The types of the HTTP/2 frames read until the server closes. */
  private static List<Integer> frameTypes(InputStream in) throws IOException {
    DataInputStream d = new DataInputStream(in);
    List<Integer> types = new ArrayList<>();
    try {
      while (true) {
        int length = (d.readUnsignedByte() << 16) | d.readUnsignedShort();
        int type = d.readUnsignedByte();
        d.readUnsignedByte();
        d.readInt();
        d.skipNBytes(length);
        types.add(type);
      }
    } catch (EOFException | java.net.SocketException e) {
      return types;
    }
  }

  /** An https upstream with the test's certificate: answers with what it received. */
  private URI httpsUpstream(Path[] pair, String host) throws Exception {
    byte[] certBytes = Files.readAllBytes(pair[0]);
    byte[] keyBytes = Files.readAllBytes(pair[1]);
    X509Certificate[] chain = Pem.certificates("cert", pair[0], certBytes);
    PrivateKey key = Pem.privateKey("key", pair[1], keyBytes);
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    ks.setKeyEntry("k", key, new char[0], chain);
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, new char[0]);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), null, null);
    HttpsServer https = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    https.setHttpsConfigurator(new HttpsConfigurator(ctx));
    https.createContext("/", ex -> {
      ex.getRequestBody().readAllBytes();
      byte[] out = ("tls upstream host=" + ex.getRequestHeaders().getFirst("Host") + "\n")
          .getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(200, out.length);
      try (OutputStream os = ex.getResponseBody()) {
        os.write(out);
      }
    });
    var pool = Executors.newFixedThreadPool(2);
    https.setExecutor(pool);
    https.start();
    open.add(() -> {
      https.stop(0);
      pool.shutdownNow();
    });
    return URI.create("https://" + host + ":" + https.getAddress().getPort());
  }

  private final Fixtures.RecordingEvents events = new Fixtures.RecordingEvents();

  private Gateway startWithUpstream(URI upstream, Path ca, String sni) {
    Gateway g = Gateway.builder().listen(new InetSocketAddress("127.0.0.1", 0))
        .upstream(upstream).upstreamCa(ca).upstreamSni(sni).events(events)
        .config(GatewayTlsIntegrationTests::tinyPolicy)
        .limiter(RateLimiter.of(Store.memory(new Fixtures.FakeTicker(), 1000)))
        .threads(2).start();
    open.add(g);
    return g;
  }

  @Test
  void httpsUpstream_verifiedWithTheCaFile_isProxied() throws Exception {
    URI up = httpsUpstream(server, "localhost");
    Gateway g = startWithUpstream(up, certs.caCert, null);
    String base = "http://127.0.0.1:" + g.port();
    assertThat(CurlClient.run(base + "/x")).isEqualTo("tls upstream host=localhost:" + up.getPort() + "\n");
    // h2c in front, https behind
    assertThat(CurlClient.run("--http2-prior-knowledge", base + "/y"))
        .startsWith("tls upstream host=localhost:");
  }

  @Test
  void httpsUpstream_byIpAddress_matchesTheIpSan() throws Exception {
    URI up = httpsUpstream(server, "127.0.0.1");
    Gateway g = startWithUpstream(up, certs.caCert, null);
    assertThat(CurlClient.run("http://127.0.0.1:" + g.port() + "/x")).startsWith("tls upstream");
  }

  @Test
  void httpsUpstream_notTrusted_orWrongName_is502() throws Exception {
    URI up = httpsUpstream(server, "localhost");
    Gateway untrusted = startWithUpstream(up, null, null);   // the JDK's CAs: not the test's
    assertThat(CurlClient.run("-o", "/dev/null", "-w", "%{http_code}",
        "http://127.0.0.1:" + untrusted.port() + "/x")).isEqualTo("502");
    Gateway wrongName = startWithUpstream(up, certs.caCert, "other.example");
    assertThat(CurlClient.run("-o", "/dev/null", "-w", "%{http_code}",
        "http://127.0.0.1:" + wrongName.port() + "/x")).isEqualTo("502");
    // the log, not the client, learns why
    assertThat(events.upstreamFailures).hasSize(2);
    assertThat(events.upstreamFailures.get(0)).startsWith("502 localhost:" + up.getPort()
        + " could not connect: tls handshake with localhost failed (")
        .contains("certification path");
    assertThat(events.upstreamFailures.get(1))
        .contains("tls handshake with other.example failed (")
        .contains("other.example");
  }

  @Test
  void http2_bodyOverTheCap_is413() throws Exception {
    echo = new EchoUpstream();
    GatewaySettings d = GatewaySettings.defaults();
    PolicyConfig small = Fixtures.withGateway(tinyPolicy(), d.toBuilder().maxBodyBytes(1000)
        .build());
    Gateway g = Gateway.builder().listen(new InetSocketAddress("127.0.0.1", 0))
        .upstream(echo.uri()).config(() -> small)
        .limiter(RateLimiter.of(Store.memory(new Fixtures.FakeTicker(), 1000))).threads(2)
        .start();
    open.add(g);
    Path big = dir.resolve("big.bin");
    Files.write(big, new byte[5000]);
    assertThat(CurlClient.run("--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_code}",
        "-H", "Content-Length: 5000", "--data-binary", "@" + big,
        "http://127.0.0.1:" + g.port() + "/upload")).isEqualTo("413");
  }

  @Test
  void upstreamCa_thatIsNoCertificate_isRefusedNamingTheFile() throws Exception {
    Path bogus = dir.resolve("bogus-ca.pem");
    Files.writeString(bogus, "not a certificate\n");
    assertThatThrownBy(() -> Gateway.checkUpstream(URI.create("https://localhost:1"), bogus, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--upstream-ca " + bogus + ": no certificate (expected: PEM with -----BEGIN"
            + " CERTIFICATE-----)");
    assertThatThrownBy(() -> Gateway.checkUpstream(URI.create("http://localhost:1"),
        certs.caCert, null))
        .hasMessageContaining("(expected: an https:// upstream)");
  }

  @Test
  void serverTls_badFiles_areNamed() throws Exception {
    Path missing = dir.resolve("missing.pem");
    assertThatThrownBy(() -> ServerTls.load(missing, server[1]))
        .hasMessage("--tls-cert " + missing + ": no such file");
    Path[] other = certs.server("other", 0x2002);
    assertThatThrownBy(() -> ServerTls.load(server[0], other[1]))
        .hasMessageStartingWith("--tls-key " + other[1] + ": the key does not match the"
            + " certificate CN=localhost");
    assertThatThrownBy(() -> ServerTls.load(server[1], server[1]))
        .hasMessageStartingWith("--tls-cert " + server[1] + ": no certificate");
    assertThatThrownBy(() -> ServerTls.load(server[0], server[0]))
        .hasMessageStartingWith("--tls-key " + server[0] + ": no private key");
  }

  @Test
  void serverTls_readsPkcs1RsaKeys() throws Exception {
    TestCerts.openssl(dir, "genrsa", "-traditional", "-out", "rsa1.key", "2048");
    assertThat(Files.readString(dir.resolve("rsa1.key"))).startsWith("-----BEGIN RSA PRIVATE KEY");
    TestCerts.openssl(dir, "req", "-x509", "-key", "rsa1.key", "-out", "rsa1.pem", "-days", "1",
        "-subj", "/CN=rsa1", "-set_serial", "77");
    ServerTls tls = ServerTls.load(dir.resolve("rsa1.pem"), dir.resolve("rsa1.key"));
    assertThat(tls.describe()).startsWith("subject=\"CN=rsa1\" serial=4d ");
  }
}
