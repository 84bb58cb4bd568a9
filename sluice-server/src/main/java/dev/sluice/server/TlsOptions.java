package dev.sluice.server;

import java.nio.file.Path;

/**
 * TLS for {@code sluice serve}: the listener's certificate and key ({@code --tls-cert},
 * {@code --tls-key}; both or neither) and how an https upstream is verified
 * ({@code --upstream-ca}, {@code --upstream-sni}). Null fields are not set.
 */
public record TlsOptions(Path cert, Path key, Path upstreamCa, String upstreamSni) {

  public static final TlsOptions NONE = new TlsOptions(null, null, null, null);

  /** Whether the listener serves TLS. */
  public boolean listener() {
    return cert != null;
  }
}
