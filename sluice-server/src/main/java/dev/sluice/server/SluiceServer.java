package dev.sluice.server;

import dev.sluice.core.RateLimiter;
import dev.sluice.core.Store;
import dev.sluice.server.admin.AdminServer;
import dev.sluice.server.admin.Metrics;
import dev.sluice.server.admin.StoreHealth;
import dev.sluice.server.gateway.Gateway;
import dev.sluice.server.gateway.ServerTls;
import dev.sluice.server.rls.CheckApi;
import dev.sluice.server.rls.RlsServer;
import dev.sluice.policy.Durations;
import dev.sluice.policy.ConfigException;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyLoader;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.StoreSettings;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * {@code sluice serve}, started: the gateway, the admin listener, the store and the policy
 * reloader, wired together. {@link #close()} stops them in reverse order.
 */
public final class SluiceServer implements AutoCloseable {

  private final AtomicReference<LoadedPolicy> policy;
  private final Store store;
  private final Metrics metrics;
  private final GatewayStarter.Running gateway;
  private final RlsServer rls;
  private final AdminServer admin;
  private final PolicyReloader reloader;
  private final TlsReloader tlsReloader;
  private final Runnable hangup;
  private final Log log;
  private final AtomicBoolean closed = new AtomicBoolean();

  private SluiceServer(AtomicReference<LoadedPolicy> policy, Store store, Metrics metrics,
      GatewayStarter.Running gateway, RlsServer rls, AdminServer admin, PolicyReloader reloader,
      TlsReloader tlsReloader, Runnable hangup, Log log) {
    this.policy = policy;
    this.store = store;
    this.metrics = metrics;
    this.gateway = gateway;
    this.rls = rls;
    this.admin = admin;
    this.reloader = reloader;
    this.tlsReloader = tlsReloader;
    this.hangup = hangup;
    this.log = log;
  }

  /**
   * Starts everything {@code options} asks for.
   *
   * @throws ConfigException when the policy is invalid
   * @throws IllegalArgumentException when the store cannot be opened
   * @throws StartupException when a listener cannot bind, naming its flag, address and cause
   * @throws Exception when something else fails
   */
  public static SluiceServer start(ServeOptions options, Map<String, String> env, Log log)
      throws Exception {
    return start(options, env, log, GatewayStarter.netty());
  }

  static SluiceServer start(ServeOptions options, Map<String, String> env, Log log,
      GatewayStarter starter) throws Exception {
    log.info("sluice starting", "version", Version.get(), "java", System.getProperty("java.version"));
    LoadedPolicy loaded;
    try {
      loaded = options.config() == null ? PolicyLoader.loadDefault(env)
          : PolicyLoader.load(options.config(), env);
    } catch (ConfigException e) {
      e.warnings().forEach(log::warn);
      throw e;
    }
    loaded.warnings().forEach(log::warn);
    // TLS files and the upstream are checked before anything opens: a bad one is one line.
    TlsOptions tlsOptions = options.tls();
    if (options.listen() != null && options.upstream() != null) {
      Gateway.checkUpstream(options.upstream(), tlsOptions.upstreamCa(), tlsOptions.upstreamSni());
    }
    ServerTls serverTls = tlsOptions.listener() && options.listen() != null
        ? ServerTls.load(tlsOptions.cert(), tlsOptions.key()) : null;
    GatewayStarter.Tls gatewayTls = new GatewayStarter.Tls(serverTls, tlsOptions.upstreamCa(),
        tlsOptions.upstreamSni());
    StoreSettings fileStore = loaded.config().store();
    String storeUri = options.store() != null ? options.store()
        : env.get("SLUICE_STORE") != null && !env.get("SLUICE_STORE").isBlank()
            ? env.get("SLUICE_STORE").trim() : fileStore.uri();
    StoreSettings storeSettings = fileStore.withUri(PolicyLoader.storeUri(storeUri));
    LoadedPolicy installed = withStore(loaded, storeSettings);
    AtomicReference<LoadedPolicy> ref = new AtomicReference<>(installed);

    StoreHealth health = storeSettings.local() ? StoreHealth.memory()
        : StoreHealth.remote(PolicyLoader.redact(storeSettings.uri()));
    Store store = Stores.open(storeSettings, health);
    Metrics metrics = new Metrics((level, message, fields) -> {
      switch (level) {
        case "ERROR" -> log.error(message, fields);
        case "WARN" -> log.warn(message, fields);
        default -> log.info(message, fields);
      }
    });
    metrics.trackedKeys(store::size);
    metrics.store(health);
    metrics.registerRules(installed.config().policy().rules().keySet());
    RateLimiter limiter = RateLimiter.of(store);
    Supplier<PolicyConfig> config = () -> ref.get().config();

    GatewayStarter.Running gateway = null;
    RlsServer rls = null;
    AdminServer admin = null;
    PolicyReloader reloader = null;
    TlsReloader tlsReloader = serverTls == null ? null : new TlsReloader(serverTls, log);
    Runnable hangup = null;
    try {
      reloader = new PolicyReloader(options.config(), env, ref, fileStore, metrics, log);
      PolicyReloader r = reloader;
      log.info("policy loaded", "source", installed.sourceName(), "summary", installed.summary());
      log.info("store", "store", Stores.describe(storeSettings));
      log.info("trust", "client_address", describeTrust(installed.config()));
      // Admin first, so probes see /livez and a 503 /readyz while the store connects.
      if (options.admin() != null) {
        admin = listen("--admin", options.admin(), () -> AdminServer.start(options.admin(),
            metrics, ref::get, r::loadedAt, Version.get(), health));
        log.info("admin listening", "address", "http://" + host(options.admin()) + ":"
            + admin.port(), "endpoints", String.join(",", AdminServer.ENDPOINTS));
      } else {
        log.info("admin listener off");
      }
      awaitStore(health, storeSettings, log);
      InetSocketAddress rlsAddress = options.rls() != null ? options.rls()
          : installed.config().rls().listen() != null
              ? Main.hostPort("rls.listen", installed.config().rls().listen(), "0.0.0.0") : null;
      if (rlsAddress != null) {
        rls = listen("--rls", rlsAddress,
            () -> RlsServer.start(rlsAddress, config, store, metrics.registry()));
        log.info("rate limit service listening", "address", host(rlsAddress) + ":" + rls.port(),
            "service", "envoy.service.ratelimit.v3.RateLimitService (gRPC)", "domains",
            String.join(",", new java.util.TreeSet<>(installed.config().domains().names())));
      }
      if (options.listen() != null) {
        gateway = listen("--listen", options.listen(),
            () -> starter.start(options.listen(), options.upstream(), config, limiter, metrics,
                options.ioThreads(), CheckApi.create(config, limiter, metrics.registry()),
                gatewayTls));
        log.info("gateway listening", "address", (serverTls != null ? "https://" : "http://")
            + host(options.listen()) + ":" + gateway.port(), "upstream",
            options.upstream() == null ? "built-in demo (200 and a small JSON body)"
                : options.upstream(), "protocols", serverTls != null
                ? "h2,http/1.1 (ALPN)" : "http/1.1,h2c (prior knowledge)");
        if (serverTls != null) {
          log.info("certificate", "cert", tlsOptions.cert(), "key", tlsOptions.key(),
              "certificate", serverTls.describe());
          if (serverTls.expired(java.time.Instant.now())) {
            log.warn("the certificate has EXPIRED; clients will refuse it", "cert",
                tlsOptions.cert());
          }
        }
      } else {
        log.info("gateway off (--listen off)");
      }
      // Installed with or without a file: the JVM's own SIGHUP action is to exit, and an
      // operator's habitual kill -HUP must not stop a server that has nothing to reload.
      TlsReloader t = tlsReloader;
      hangup = t == null ? () -> r.reload("SIGHUP") : () -> {
        r.reload("SIGHUP");
        t.reload("SIGHUP");
      };
      boolean hup = Signals.onHangup(hangup);
      if (options.config() != null) {
        reloader.watch(options.watchInterval());
        log.info("reloading on change" + (hup ? " and on SIGHUP" : ""), "policy",
            options.config());
      }
      if (tlsReloader != null) {
        tlsReloader.watch(options.watchInterval());
        log.info("reloading the certificate on change" + (hup ? " and on SIGHUP" : ""), "cert",
            tlsOptions.cert(), "key", tlsOptions.key());
      }
    } catch (Exception | Error e) {
      if (hangup != null) {
        Signals.clear(hangup);
      }
      if (tlsReloader != null) {
        tlsReloader.close();
      }
      if (reloader != null) {
        reloader.close();
      }
      if (admin != null) {
        admin.close();
      }
      if (gateway != null) {
        gateway.close();
      }
      if (rls != null) {
        rls.close();
      }
      store.close();
      throw e;
    }
    return new SluiceServer(ref, store, metrics, gateway, rls, admin, reloader, tlsReloader,
        hangup, log);
  }

  /** Something that binds an address. */
  @FunctionalInterface
  private interface Listener<T> {
    T start() throws Exception;
  }

  /** Starts {@code listener}, telling a failure as {@code flag address: cause}. */
  private static <T> T listen(String flag, InetSocketAddress address, Listener<T> listener)
      throws StartupException {
    if (address.isUnresolved()) {
      throw new StartupException(flag, address, null);
    }
    try {
      return listener.start();
    } catch (Exception e) {
      throw new StartupException(flag, address, e);
    }
  }

  /**
   * Holds the gateway back until the store is ready, so no request is decided degraded because
   * the process is young (a rolling deploy opened a hole on every start); past
   * {@code startupWait} it starts anyway, loudly. Credentials that Redis refuses will not start
   * working by waiting: that stops the start (exit 1).
   */
  private static void awaitStore(StoreHealth health, StoreSettings settings, Log log)
      throws InterruptedException {
    if (settings.local()) {
      return;
    }
    Duration wait = settings.startupWait();
    log.info("waiting for the store before accepting traffic", "store", health.store(),
        "startupWait", Durations.format(wait));
    switch (health.awaitStart(wait)) {
      case READY -> log.info("store ready", "store", health.store());
      case AUTH_FAILED -> throw new IllegalStateException("store " + health.store() + ": "
          + health.problem() + " (check the user and password in the URI)");
      case TIMED_OUT -> log.warn("STORE NOT READY after " + Durations.format(wait)
          + "; the gateway starts anyway and decisions are DEGRADED ("
          + (settings.localFallback() ? "answered by the local fallback" : "each rule's "
              + "onStoreError") + ") until the store answers", "store", health.store(),
          "reason", health.problem());
      default -> throw new AssertionError();
    }
  }

  /** {@code loaded} running on {@code store} (the --store flag and SLUICE_STORE win over files). */
  static LoadedPolicy withStore(LoadedPolicy loaded, StoreSettings store) {
    return loaded.withStore(store);
  }

  private static String describeTrust(PolicyConfig config) {
    var t = config.trust();
    if (t.hops() > 0) {
      return t.hops() + " trusted hop(s), read from the right of " + t.headers();
    }
    if (!t.proxies().isEmpty()) {
      return "trusted proxies " + t.proxies() + ", headers " + t.headers();
    }
    return "TCP peer (no proxy trusted; forwarding headers ignored)";
  }

  private static String host(InetSocketAddress a) {
    String h = a.getHostString();
    return h.contains(":") ? "[" + h + "]" : h;
  }

  /** The gateway's port (the bound one, when asked for port 0), or -1 when it is off. */
  public int port() {
    return gateway == null ? -1 : gateway.port();
  }

  /** The rate limit service's port, or -1 when it is off. */
  public int rlsPort() {
    return rls == null ? -1 : rls.port();
  }

  /** The admin listener's port, or -1 when it is off. */
  public int adminPort() {
    return admin == null ? -1 : admin.port();
  }

  public LoadedPolicy policy() {
    return policy.get();
  }

  public Metrics metrics() {
    return metrics;
  }

  /** Re-reads the certificate files now, as SIGHUP does; true if a new pair is in place. */
  public boolean reloadCertificate() {
    return tlsReloader != null && tlsReloader.reload("request");
  }

  /** Reloads the policy file now, as SIGHUP does; true if a new policy is in place. */
  public boolean reload() {
    return reloader.reload("request");
  }

  /** Stops everything, once; later calls (a signal racing the shutdown hook) do nothing. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    log.info("sluice stopping");
    Signals.clear(hangup);
    reloader.close();
    if (tlsReloader != null) {
      tlsReloader.close();
    }
    if (admin != null) {
      admin.close();
    }
    try {
      if (gateway != null) {
        gateway.close();
      }
      if (rls != null) {
        rls.close();
      }
    } finally {
      store.close();
    }
  }
}
