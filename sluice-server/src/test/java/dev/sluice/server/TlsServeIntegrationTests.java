package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.gateway.TestCerts;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice serve --tls-cert --tls-key}: start-up errors told in one line naming the file,
 * usage errors, and the certificate reloaded when its files change.
 */
class TlsServeIntegrationTests {

  @TempDir
  static Path dir;
  static TestCerts certs;
  static Path[] first;
  static Path[] second;

  final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
  SluiceServer server;

  @BeforeAll
  static void makeCertificates() throws Exception {
    certs = TestCerts.create(dir);
    first = certs.server("first", 0x1001);
    second = certs.server("second", 0x2002);
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  record Run(int code, String out, String err) {}

  static Run run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = new Main(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), Map.of()).run(args);
    return new Run(code, out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void missingCertificate_exit1_oneLineNamingTheFile() {
    Path missing = dir.resolve("nope.pem");
    Run r = run("serve", "--listen", "127.0.0.1:0", "--admin", "off", "--tls-cert",
        missing.toString(), "--tls-key", first[1].toString());
    assertThat(r.code()).isEqualTo(Main.FAILED);
    assertThat(r.err()).contains("cannot start: --tls-cert " + missing + ": no such file\n")
        .doesNotContain("\tat ").doesNotContain("Exception");
  }

  @Test
  void keyOfAnotherCertificate_exit1_namingTheKeyFile() {
    Run r = run("serve", "--listen", "127.0.0.1:0", "--admin", "off", "--tls-cert",
        first[0].toString(), "--tls-key", second[1].toString());
    assertThat(r.code()).isEqualTo(Main.FAILED);
    assertThat(r.err()).contains("cannot start: --tls-key " + second[1]
        + ": the key does not match the certificate CN=first").doesNotContain("\tat ");
  }

  @Test
  void usage_halfAPair_orUpstreamTlsWithoutHttps_exit64() {
    assertThat(run("serve", "--tls-cert", first[0].toString()).err())
        .startsWith("sluice: --tls-cert needs --tls-key");
    Run ca = run("serve", "--upstream", "http://127.0.0.1:3000", "--upstream-ca",
        certs.caCert.toString());
    assertThat(ca.code()).isEqualTo(Main.USAGE);
    assertThat(ca.err()).startsWith("sluice: --upstream-ca needs an https:// --upstream");
    assertThat(run("serve", "--upstream-sni", "app.internal").err())
        .startsWith("sluice: --upstream-sni needs an https:// --upstream");
  }

  @Test
  void unreadableUpstreamCa_exit1_namingTheFile() throws Exception {
    Path bad = dir.resolve("bad-ca.pem");
    Files.writeString(bad, "hello\n");
    Run r = run("serve", "--listen", "127.0.0.1:0", "--admin", "off", "--upstream",
        "https://127.0.0.1:1", "--upstream-ca", bad.toString());
    assertThat(r.code()).isEqualTo(Main.FAILED);
    assertThat(r.err()).contains("cannot start: --upstream-ca " + bad + ": no certificate");
  }

  /** The serial of the certificate a new TLS connection to the gateway is shown. */
  private BigInteger serialOfNewConnection(SSLContext ctx) throws Exception {
    try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("localhost",
        server.port())) {
      s.setSoTimeout(10_000);
      s.startHandshake();
      return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
    }
  }

  private static void await(BooleanSupplier condition, String what) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waiting for " + what).isLessThan(deadline);
      LockSupport.parkNanos(5_000_000);   // polling an observable condition, bounded above
    }
  }

  private static String healthz(SSLSocket s) throws Exception {
    OutputStream out = s.getOutputStream();
    out.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
        .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    InputStream in = s.getInputStream();
    byte[] buf = new byte[12];
    int n = in.readNBytes(buf, 0, 12);
    return new String(buf, 0, n, StandardCharsets.US_ASCII);
  }

  @Test
  void changedFiles_newConnectionsGetTheNewCertificate_openOnesKeepTheirs() throws Exception {
    Path cert = dir.resolve("live.pem");
    Path key = dir.resolve("live.key");
    Files.copy(first[0], cert, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(first[1], key, StandardCopyOption.REPLACE_EXISTING);
    ServeOptions o = new ServeOptions(null, new InetSocketAddress("127.0.0.1", 0), null, null,
        null, Duration.ofMillis(20), 1, null, false, null, new TlsOptions(cert, key, null, null),
        null);
    server = SluiceServer.start(o, Map.of(),
        new Log(new PrintStream(logBytes, true, StandardCharsets.UTF_8)));
    SSLContext ctx = certs.clientContext();
    assertThat(serialOfNewConnection(ctx)).isEqualTo(BigInteger.valueOf(0x1001));
    assertThat(log()).contains("gateway listening address=https://127.0.0.1:")
        .contains("certificate cert=" + cert + " key=" + key
            + " certificate=\"subject=\\\"CN=first\\\" serial=1001");

    SSLSocket old = (SSLSocket) ctx.getSocketFactory().createSocket("localhost", server.port());
    old.setSoTimeout(10_000);
    old.startHandshake();

    // a broken key first: refused, logged, the old pair keeps serving
    Files.writeString(key, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
    await(() -> log().contains("certificate rejected; the previous one keeps serving: --tls-key "
        + key), "the rejection");
    assertThat(serialOfNewConnection(ctx)).isEqualTo(BigInteger.valueOf(0x1001));

    Files.copy(second[0], cert, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(second[1], key, StandardCopyOption.REPLACE_EXISTING);
    await(() -> log().contains("certificate reloaded cause=\"file changed\""), "the reload");
    assertThat(serialOfNewConnection(ctx)).isEqualTo(BigInteger.valueOf(0x2002));
    // the connection opened before still has the first certificate, and still works
    assertThat(((X509Certificate) old.getSession().getPeerCertificates()[0]).getSerialNumber())
        .isEqualTo(BigInteger.valueOf(0x1001));
    assertThat(healthz(old)).isEqualTo("HTTP/1.1 200");
    old.close();
    // unchanged contents reload nothing
    assertThat(server.reloadCertificate()).isFalse();
  }

  private String log() {
    return logBytes.toString(StandardCharsets.UTF_8);
  }
}
