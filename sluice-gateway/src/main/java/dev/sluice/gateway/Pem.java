package dev.sluice.gateway;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PEM certificates and private keys, read here rather than by Netty so that a bad file is told as
 * {@code --tls-key /etc/sluice/key.pem: not a private key (expected: ...)}, naming the flag, the
 * file and what was expected. Keys are PKCS#8 ({@code BEGIN PRIVATE KEY}: RSA, EC, Ed25519) or
 * PKCS#1 RSA ({@code BEGIN RSA PRIVATE KEY}, as older openssl writes them), unencrypted.
 */
final class Pem {

  private static final Pattern BLOCK = Pattern.compile(
      "-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
  /** DER of AlgorithmIdentifier { rsaEncryption, NULL }. */
  private static final byte[] RSA_ALGORITHM = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48,
      (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};
  private static final String CONVERT = "convert it with: openssl pkcs8 -topk8 -nocrypt -in KEY"
      + " -out key.pem";

  private Pem() {}

  /** A file that cannot be used, with the flag that named it. */
  static final class BadFileException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    BadFileException(String flag, Path file, String problem) {
      super(flag + " " + file + ": " + problem);
    }
  }

  static byte[] read(String flag, Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new BadFileException(flag, file, "no such file");
    } catch (IOException e) {
      throw new BadFileException(flag, file, "cannot read it (" + e.getMessage() + ")");
    }
  }

  /** The certificates of a PEM file, leaf first as written; at least one. */
  static X509Certificate[] certificates(String flag, Path file, byte[] bytes) {
    List<X509Certificate> certs = new ArrayList<>();
    Matcher m = BLOCK.matcher(new String(bytes, StandardCharsets.US_ASCII));
    try {
      CertificateFactory cf = CertificateFactory.getInstance("X.509");
      while (m.find()) {
        if (m.group(1).equals("CERTIFICATE")) {
          certs.add((X509Certificate) cf.generateCertificate(
              new ByteArrayInputStream(decode(flag, file, m.group(2)))));
        }
      }
    } catch (CertificateException e) {
      throw new BadFileException(flag, file, "invalid certificate (" + e.getMessage() + ")");
    }
    if (certs.isEmpty()) {
      throw new BadFileException(flag, file,
          "no certificate (expected: PEM with -----BEGIN CERTIFICATE-----)");
    }
    return certs.toArray(new X509Certificate[0]);
  }

  /** The one private key of a PEM file. */
  static PrivateKey privateKey(String flag, Path file, byte[] bytes) {
    Matcher m = BLOCK.matcher(new String(bytes, StandardCharsets.US_ASCII));
    while (m.find()) {
      String type = m.group(1);
      switch (type) {
        case "PRIVATE KEY":
          return pkcs8(flag, file, decode(flag, file, m.group(2)));
        case "RSA PRIVATE KEY":
          return pkcs8(flag, file, wrapRsa(decode(flag, file, m.group(2))));
        case "ENCRYPTED PRIVATE KEY":
          throw new BadFileException(flag, file, "the key is encrypted (expected: an unencrypted"
              + " key; " + CONVERT + ")");
        case "EC PRIVATE KEY":
          throw new BadFileException(flag, file, "SEC1 EC key (expected: PKCS#8, -----BEGIN"
              + " PRIVATE KEY-----; " + CONVERT + ")");
        default:
          // a certificate or parameters beside the key: skip
      }
    }
    throw new BadFileException(flag, file,
        "no private key (expected: PEM with -----BEGIN PRIVATE KEY-----)");
  }

  /** Fails unless {@code key} is the private half of the certificate's public key. */
  static void checkPair(String flag, Path keyFile, PrivateKey key, X509Certificate cert) {
    PublicKey pub = cert.getPublicKey();
    String alg = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      case "Ed25519", "EdDSA" -> "Ed25519";
      case "Ed448" -> "Ed448";
      default -> null;
    };
    boolean matches = false;
    boolean sameFamily = pub.getAlgorithm().equals(key.getAlgorithm())
        || key.getAlgorithm().startsWith("Ed") && pub.getAlgorithm().startsWith("Ed");
    if (alg != null && sameFamily) {
      try {
        byte[] probe = new byte[32];
        new SecureRandom().nextBytes(probe);
        Signature s = Signature.getInstance(alg);
        s.initSign(key);
        s.update(probe);
        byte[] sig = s.sign();
        Signature v = Signature.getInstance(alg);
        v.initVerify(pub);
        v.update(probe);
        matches = v.verify(sig);
      } catch (GeneralSecurityException e) {
        matches = false;
      }
    }
    if (!matches) {
      throw new BadFileException(flag, keyFile, "the key does not match the certificate "
          + cert.getSubjectX500Principal().getName() + " (expected: the private key of its "
          + pub.getAlgorithm() + " public key)");
    }
  }

  private static byte[] decode(String flag, Path file, String base64) {
    try {
      return Base64.getMimeDecoder().decode(base64);
    } catch (IllegalArgumentException e) {
      throw new BadFileException(flag, file, "invalid base64 in PEM (" + e.getMessage() + ")");
    }
  }

  private static PrivateKey pkcs8(String flag, Path file, byte[] der) {
    PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
    for (String alg : new String[] {"RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS"}) {
      try {
        return KeyFactory.getInstance(alg).generatePrivate(spec);
      } catch (GeneralSecurityException e) {
        // try the next algorithm
      }
    }
    throw new BadFileException(flag, file,
        "unreadable private key (expected: an RSA, EC or Ed25519 key in PKCS#8)");
  }

  /** PKCS#1 RSAPrivateKey in PKCS#8's PrivateKeyInfo: version 0, rsaEncryption, the key. */
  private static byte[] wrapRsa(byte[] pkcs1) {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.writeBytes(new byte[] {0x02, 0x01, 0x00});
    body.writeBytes(RSA_ALGORITHM);
    body.writeBytes(tlv(0x04, pkcs1));
    return tlv(0x30, body.toByteArray());
  }

  private static byte[] tlv(int tag, byte[] value) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(tag);
    int n = value.length;
    if (n < 0x80) {
      out.write(n);
    } else {
      int bytes = n > 0xffffff ? 4 : n > 0xffff ? 3 : n > 0xff ? 2 : 1;
      out.write(0x80 | bytes);
      for (int i = bytes - 1; i >= 0; i--) {
        out.write(n >>> (8 * i));
      }
    }
    out.writeBytes(value);
    return out.toByteArray();
  }
}
