package dev.sluice.server;

import dev.sluice.server.admin.AdminOptions;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/**
 * What {@code sluice serve} was asked to do.
 *
 * @param config the policy file, or null for the embedded default
 * @param listen the gateway's address (port 0: any free port)
 * @param upstream the app behind the gateway, or null for the built-in demo upstream
 * @param admin the admin listener's address, or null for none
 * @param store the store URI from {@code --store} or {@code SLUICE_STORE}, or null for the file's
 * @param watchInterval how often the policy file is checked for changes
 * @param ioThreads the gateway's I/O threads, or 0 for one per core
 * @param rls the Envoy rate limit service's address from {@code --rls}, or null for the policy
 *     file's {@code rls.listen} (none when that is absent too)
 * @param dryRun {@code --dry-run}: every enforcing rule runs in shadow mode, also after reloads
 * @param adminTokenFile the file holding the admin API's bearer token
 *     ({@code --admin-token-file} or {@code SLUICE_ADMIN_TOKEN_FILE}), or null for a generated
 *     one (its file: {@link AdminOptions#generatedTokenFile()})
 * @param tls the listener's certificate and the https upstream's trust ({@link TlsOptions#NONE})
 * @param checkApi where {@code POST /v1/check} is served from {@code --check-api} ({@code off},
 *     {@code admin}, {@code gateway} or {@code HOST:PORT}), or null for the policy's
 *     {@code rls.checkApi} (off when that is absent too)
 * @param adminOptions the admin listener's names, timeouts and connection cap
 *     ({@code --admin-hosts} and the other {@code --admin-...} flags)
 */
public record ServeOptions(Path config, InetSocketAddress listen, URI upstream,
    InetSocketAddress admin, String store, Duration watchInterval, int ioThreads,
    InetSocketAddress rls, boolean dryRun, Path adminTokenFile, TlsOptions tls,
    String checkApi, AdminOptions adminOptions) {

  public ServeOptions {
    tls = tls == null ? TlsOptions.NONE : tls;
    adminOptions = adminOptions == null ? AdminOptions.DEFAULTS : adminOptions;
  }

  /** Options with the admin listener's default names, timeouts and cap. */
  public ServeOptions(Path config, InetSocketAddress listen, URI upstream,
      InetSocketAddress admin, String store, Duration watchInterval, int ioThreads,
      InetSocketAddress rls, boolean dryRun, Path adminTokenFile, TlsOptions tls,
      String checkApi) {
    this(config, listen, upstream, admin, store, watchInterval, ioThreads, rls, dryRun,
        adminTokenFile, tls, checkApi, null);
  }

  /** These options with the admin listener's {@code options}. */
  public ServeOptions withAdminOptions(AdminOptions options) {
    return new ServeOptions(config, listen, upstream, admin, store, watchInterval, ioThreads,
        rls, dryRun, adminTokenFile, tls, checkApi, options);
  }

  /** Options without {@code --dry-run}, an admin token or TLS. */
  public ServeOptions(Path config, InetSocketAddress listen, URI upstream,
      InetSocketAddress admin, String store, Duration watchInterval, int ioThreads,
      InetSocketAddress rls) {
    this(config, listen, upstream, admin, store, watchInterval, ioThreads, rls, false, null,
        TlsOptions.NONE, null);
  }

  /** Options without {@code --rls}. */
  public ServeOptions(Path config, InetSocketAddress listen, URI upstream,
      InetSocketAddress admin, String store, Duration watchInterval, int ioThreads) {
    this(config, listen, upstream, admin, store, watchInterval, ioThreads, null);
  }

  public static final InetSocketAddress DEFAULT_LISTEN = new InetSocketAddress("0.0.0.0", 8080);
  public static final InetSocketAddress DEFAULT_ADMIN = new InetSocketAddress("127.0.0.1", 9090);

  public static ServeOptions defaults() {
    return new ServeOptions(null, DEFAULT_LISTEN, null, DEFAULT_ADMIN, null, Duration.ofSeconds(1),
        0);
  }
}
