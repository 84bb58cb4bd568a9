package dev.sluice.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Certificates made by the test with {@code openssl} (scripts/test installs it): a CA and server
 * certificates it signs for {@code localhost} and {@code 127.0.0.1}, so clients verify the chain
 * and the host name without {@code -k}. EC P-256 keys, quick to make.
 */
public final class TestCerts {

  public final Path dir;
  public final Path caCert;
  private final Path caKey;

  private TestCerts(Path dir) {
    this.dir = dir;
    this.caCert = dir.resolve("ca.pem");
    this.caKey = dir.resolve("ca.key");
  }

  /** A new CA in {@code dir}. */
  public static TestCerts create(Path dir) throws IOException, InterruptedException {
    TestCerts c = new TestCerts(dir);
    openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
        "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj",
        "/CN=Sluice Test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign");
    return c;
  }

  /** A server pair signed by the CA: {@code name.pem} and {@code name.key}, with this serial. */
  public Path[] server(String name, long serial, String... sans) throws Exception {
    String san = sans.length == 0 ? "DNS:localhost,IP:127.0.0.1" : String.join(",", sans);
    Files.writeString(dir.resolve(name + ".ext"), "subjectAltName=" + san + "\n"
        + "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n"
        + "extendedKeyUsage=serverAuth\n");
    openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + name);
    openssl(dir, "x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-set_serial", Long.toString(serial), "-days", "2", "-out", name + ".pem", "-extfile",
        name + ".ext");
    return new Path[] {dir.resolve(name + ".pem"), dir.resolve(name + ".key")};
  }

  /** A client context that trusts only this CA. */
  public SSLContext clientContext() throws Exception {
    KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
    ks.load(null, null);
    try (InputStream in = Files.newInputStream(caCert)) {
      ks.setCertificateEntry("ca", CertificateFactory.getInstance("X.509")
          .generateCertificate(in));
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }

  static X509Certificate read(Path pem) throws Exception {
    try (InputStream in = Files.newInputStream(pem)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  static void openssl(Path dir, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add("openssl");
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException("openssl " + String.join(" ", args) + " failed: "
          + new String(out, StandardCharsets.UTF_8));
    }
  }
}
