package dev.sluice.gateway;

import io.netty.handler.codec.http2.Http2SecurityUtil;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;
import javax.net.ssl.SSLException;

/**
 * The gateway listener's certificate and key (PEM files), with HTTP/2 and HTTP/1.1 offered by
 * ALPN. {@link #reloadIfChanged()} re-reads both files and, when their contents changed and form
 * a valid pair, swaps the context: connections opened afterwards get the new certificate, open
 * ones keep theirs. A bad pair is refused and the previous one keeps serving.
 */
public final class ServerTls {

  public static final String CERT_FLAG = "--tls-cert";
  public static final String KEY_FLAG = "--tls-key";

  private final Path certFile;
  private final Path keyFile;
  private volatile Loaded current;

  /** A context and what it was built from. */
  private record Loaded(SslContext context, byte[] digest, X509Certificate leaf) {}

  private ServerTls(Path certFile, Path keyFile, Loaded current) {
    this.certFile = certFile;
    this.keyFile = keyFile;
    this.current = current;
  }

  /**
   * Reads the pair.
   *
   * @throws IllegalArgumentException naming the flag, the file and the problem (missing,
   *     unreadable, no certificate, no key, a key of another certificate)
   */
  public static ServerTls load(Path certFile, Path keyFile) {
    Objects.requireNonNull(certFile, "certFile");
    Objects.requireNonNull(keyFile, "keyFile");
    return new ServerTls(certFile, keyFile, read(certFile, keyFile));
  }

  /**
   * Re-reads the files: null when their contents are unchanged, else the new certificate's
   * description once it is in place.
   *
   * @throws IllegalArgumentException when the new files are not a valid pair (nothing changes)
   */
  public synchronized String reloadIfChanged() {
    byte[] cert = Pem.read(CERT_FLAG, certFile);
    byte[] key = Pem.read(KEY_FLAG, keyFile);
    if (Arrays.equals(digest(cert, key), current.digest())) {
      return null;
    }
    current = build(certFile, keyFile, cert, key);
    return describe();
  }

  /** The certificate in use: subject, serial (hex) and expiry. */
  public String describe() {
    X509Certificate c = current.leaf();
    return "subject=\"" + c.getSubjectX500Principal().getName() + "\" serial="
        + c.getSerialNumber().toString(16) + " notAfter=" + c.getNotAfter().toInstant();
  }

  /** True when the certificate in use has expired (clients will refuse it). */
  public boolean expired(Instant now) {
    return current.leaf().getNotAfter().toInstant().isBefore(now);
  }

  public Path certFile() {
    return certFile;
  }

  public Path keyFile() {
    return keyFile;
  }

  /** The context for connections accepted now. */
  SslContext context() {
    return current.context();
  }

  private static Loaded read(Path certFile, Path keyFile) {
    return build(certFile, keyFile, Pem.read(CERT_FLAG, certFile), Pem.read(KEY_FLAG, keyFile));
  }

  private static Loaded build(Path certFile, Path keyFile, byte[] certBytes, byte[] keyBytes) {
    X509Certificate[] chain = Pem.certificates(CERT_FLAG, certFile, certBytes);
    PrivateKey key = Pem.privateKey(KEY_FLAG, keyFile, keyBytes);
    Pem.checkPair(KEY_FLAG, keyFile, key, chain[0]);
    try {
      SslContext ctx = SslContextBuilder.forServer(key, chain)
          .sslProvider(SslProvider.JDK)
          .ciphers(Http2SecurityUtil.CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
          .applicationProtocolConfig(new ApplicationProtocolConfig(
              ApplicationProtocolConfig.Protocol.ALPN,
              ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
              ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
              ApplicationProtocolNames.HTTP_2, ApplicationProtocolNames.HTTP_1_1))
          .build();
      return new Loaded(ctx, digest(certBytes, keyBytes), chain[0]);
    } catch (SSLException | RuntimeException e) {
      throw new Pem.BadFileException(CERT_FLAG, certFile, "cannot use it with " + keyFile
          + " (" + e.getMessage() + ")");
    }
  }

  private static byte[] digest(byte[] cert, byte[] key) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      md.update(cert);
      md.update((byte) 0);
      md.update(key);
      return md.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
