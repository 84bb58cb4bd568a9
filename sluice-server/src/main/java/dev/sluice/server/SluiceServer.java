package dev.sluice.server;

import dev.sluice.core.RateLimiter;
import dev.sluice.core.Store;
import dev.sluice.gateway.DecisionApi;
import dev.sluice.gateway.Gateway;
import dev.sluice.gateway.Moderation;
import dev.sluice.gateway.ServerTls;
import dev.sluice.policy.ConfigException;
import dev.sluice.policy.Durations;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.PolicyLoader;
import dev.sluice.policy.RlsSettings;
import dev.sluice.policy.StoreSettings;
import dev.sluice.rls.CheckApi;
import dev.sluice.rls.CheckServer;
import dev.sluice.rls.RlsServer;
import dev.sluice.server.admin.AdminServer;
import dev.sluice.server.admin.AdminToken;
import dev.sluice.server.admin.AuditLog;
import dev.sluice.server.admin.Console;
import dev.sluice.server.admin.Incidents;
import dev.sluice.server.admin.Metrics;
import dev.sluice.server.admin.ReloadHistory;
import dev.sluice.server.admin.StoreHealth;
import dev.sluice.server.log.AccessLog;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
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
  /** The gateway's I/O loops, shared with the Redis store; null without a gateway. */
  private final EventLoopGroup loops;
  private final Metrics metrics;
  private final GatewayStarter.Running gateway;
  private final RlsServer rls;
  private final CheckServer check;
  private final AdminServer admin;
  private final PolicyReloader reloader;
  private final TlsReloader tlsReloader;
  private final Runnable hangup;
  private final Log log;
  private final AccessLog accessLog;
  private final Path adminTokenFile;
  private final AtomicBoolean closed = new AtomicBoolean();

  private SluiceServer(AtomicReference<LoadedPolicy> policy, Store store, EventLoopGroup loops,
      Metrics metrics, GatewayStarter.Running gateway, RlsServer rls, CheckServer check,
      AdminServer admin, PolicyReloader reloader, TlsReloader tlsReloader, Runnable hangup,
      Log log, AccessLog accessLog, Path adminTokenFile) {
    this.policy = policy;
    this.store = store;
    this.loops = loops;
    this.metrics = metrics;
    this.gateway = gateway;
    this.rls = rls;
    this.check = check;
    this.admin = admin;
    this.reloader = reloader;
    this.tlsReloader = tlsReloader;
    this.hangup = hangup;
    this.log = log;
    this.accessLog = accessLog;
    this.adminTokenFile = adminTokenFile;
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
    // The moderation sections this server's loads build, found again by its gateway.
    Moderation.Cache moderations = new Moderation.Cache();
    try {
      loaded = Policies.load(options.config(), env, moderations);
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
    if (options.dryRun()) {
      installed = installed.withDryRun();
    }
    AtomicReference<LoadedPolicy> ref = new AtomicReference<>(installed);

    // The operator's token guards every /v1/ request; a generated one, state changes.
    AdminToken token = null;
    Path tokenFile = options.adminTokenFile();
    boolean tokenGenerated = false;
    if (tokenFile != null) {
      token = AdminToken.read(tokenFile);
    } else if (options.admin() != null) {
      tokenFile = options.adminOptions().generatedTokenFile() != null
          ? options.adminOptions().generatedTokenFile() : AdminToken.defaultFile(env);
      try {
        AdminToken.Generated g = AdminToken.generated(tokenFile);
        token = g.token();
        tokenGenerated = true;
        log.info(g.created() ? "admin token generated" : "admin token", "file", tokenFile,
            "for", "state changes on the admin API (sluice admin and the console read it)");
        if (g.warning() != null) {
          log.warn(g.warning());
        }
      } catch (IOException | RuntimeException e) {
        log.warn("no admin token: state changes on the admin API are refused; give "
            + "--admin-token-file", "file", tokenFile, "cause", String.valueOf(e.getMessage()));
        tokenFile = null;
      }
    }
    StoreHealth health = storeSettings.local() ? StoreHealth.memory()
        : StoreHealth.remote(PolicyLoader.redact(storeSettings.uri()));
    // The gateway's loops exist before the store, which may put a Redis connection on each.
    EventLoopGroup loops = options.listen() != null ? Gateway.eventLoops(options.ioThreads())
        : null;
    Store store;
    try {
      store = Stores.open(storeSettings, health, Stores.onLoops() ? loops : null);
    } catch (RuntimeException e) {
      shutdown(loops);
      throw e;
    }
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
    // Always there: a reload may switch logging.access on.
    AccessLog accessLog = new AccessLog(System.out, AccessLog.DEFAULT_QUEUE);
    metrics.accessLog(accessLog, accessLog::dropped);
    RateLimiter limiter = RateLimiter.of(store);
    Supplier<PolicyConfig> config = () -> ref.get().config();

    GatewayStarter.Running gateway = null;
    RlsServer rls = null;
    CheckServer check = null;
    AdminServer admin = null;
    PolicyReloader reloader = null;
    TlsReloader tlsReloader = serverTls == null ? null : new TlsReloader(serverTls, log);
    Runnable hangup = null;
    try {
      reloader = new PolicyReloader(options.config(), env, moderations, ref, fileStore,
          metrics, log, options.dryRun(), new ReloadHistory());
      PolicyReloader r = reloader;
      log.info("policy loaded", "source", installed.sourceName(), "summary", installed.summary());
      log.info("store", "store", Stores.describe(storeSettings));
      var logging = installed.config().logging();
      if (logging.access() != dev.sluice.policy.LoggingSettings.Access.OFF) {
        log.info("access log", "format", logging.access().name().toLowerCase(java.util.Locale.ROOT),
            "file", logging.accessFile() == null ? "stdout" : logging.accessFile());
      }
      log.info("trust", "client_address", describeTrust(installed.config()));
      // Admin first, so probes see /livez and a 503 /readyz while the store connects.
      if (options.admin() != null) {
        AuditLog audit = new AuditLog(log::info, Instant::now);
        Incidents incidents = new Incidents(store, () -> ref.get().config().policy().rules(),
            audit);
        boolean readsNeedToken = !tokenGenerated && token != null;
        Console console = new Console(metrics, store, ref::get, r::loadedAt, Version.get(),
            health, audit, r.history(), new Console.Auth(readsNeedToken, token != null,
                tokenGenerated ? tokenFile.toString() : null), System::currentTimeMillis);
        AdminServer.Builder adminBuilder = AdminServer.builder(metrics, ref::get, r::loadedAt,
            Version.get(), health).incidents(incidents).console(console)
            .token(token, readsNeedToken).options(options.adminOptions());
        admin = listen("--admin", options.admin(), () -> adminBuilder.start(options.admin()));
        log.info("admin listening", "address", "http://" + host(options.admin()) + ":"
            + admin.port(), "endpoints", String.join(",", AdminServer.ENDPOINTS),
            "incidents", "/v1/bans,/v1/refused,/v1/keys", "console", "http://"
            + host(options.admin()) + ":" + admin.port() + "/", "auth",
            token == null ? "none: state changes refused"
                : (readsNeedToken ? "bearer token from " + tokenFile + " on every /v1/ request"
                    : "bearer token from " + tokenFile + " on state changes"),
            "hosts", options.adminOptions().hosts().isEmpty() ? "its address, localhost"
                : "its address, localhost, " + String.join(",", options.adminOptions().hosts()));
        if (!readsNeedToken && !options.admin().getAddress().isLoopbackAddress()) {
          log.warn("the admin listener is not on loopback and has no --admin-token-file: "
              + "anyone who reaches it can read bans, keys and the policy (state changes need "
              + "the token)", "address", host(options.admin()) + ":" + admin.port());
        }
      } else {
        log.info("admin listener off");
      }
      awaitStore(health, storeSettings, log);
      String checkFlag = options.checkApi() != null ? "--check-api" : "rls.checkApi";
      String checkPlace = options.checkApi() != null ? options.checkApi()
          : installed.config().rls().checkApi();
      CheckApi checkApi = checkPlace.equals(RlsSettings.CHECK_API_OFF) ? null
          : CheckApi.create(config, limiter, metrics.registry());
      DecisionApi onGateway = null;
      String checkServed = "off";
      if (checkApi != null) {
        String served;
        InetSocketAddress checkAt = null;
        switch (checkPlace) {
          case "admin" -> {
            if (admin == null) {
              throw new IllegalStateException(checkFlag + " admin: the admin listener is off "
                  + "(--admin off); give the decision API a listener of its own (--check-api "
                  + "127.0.0.1:9091) or turn the admin listener on");
            }
            admin.handle(CheckApi.PATH, new AdminCheck(checkApi));
            served = "http://" + host(options.admin()) + ":" + admin.port() + CheckApi.PATH
                + " (the admin listener, auth " + (readsNeedToken(options) ? "bearer token"
                : "none") + ")";
          }
          case "gateway" -> {
            if (options.listen() == null) {
              throw new IllegalStateException(checkFlag + " gateway: the gateway is off "
                  + "(--listen off); give the decision API a listener of its own (--check-api "
                  + "127.0.0.1:9091)");
            }
            CheckApi api = checkApi;
            onGateway = body -> api.check(body).thenApply(a -> new DecisionApi.Answer(a.status(),
                a.json()));
            served = "the gateway's listener " + CheckApi.PATH;
          }
          default -> {
            InetSocketAddress at = Main.hostPort(checkFlag, checkPlace, "127.0.0.1");
            checkAt = at;
            CheckApi api = checkApi;
            check = listen(checkFlag, at, () -> CheckServer.start(at, api));
            served = "http://" + host(at) + ":" + check.port() + CheckApi.PATH;
          }
        }
        checkServed = checkAt != null ? "http://" + host(checkAt) + ":" + check.port()
            : checkPlace;
        RlsSettings.Bucket b = installed.config().rls().checkApiLimit();
        log.info("decision API listening", "address", served, "limit", b.burst() + " at once, "
            + b.refill() + " per " + Durations.format(b.period()) + " (rls.checkApiLimit)");
        if (checkPlace.equals("gateway")) {
          log.warn("the decision API is on the gateway's public listener (" + checkFlag
              + " gateway): any client that reaches it can spend any key's quota and get any "
              + "address banned");
        } else if (checkAt != null && !checkAt.getAddress().isLoopbackAddress()) {
          log.warn("the decision API's listener is not on loopback: anyone who reaches it can "
              + "spend any key's quota and get any address banned", "address", served);
        }
      }
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
        DecisionApi gatewayApi = onGateway;
        gateway = listen("--listen", options.listen(),
            () -> starter.start(options.listen(), options.upstream(), config, limiter, metrics,
                loops, gatewayApi, gatewayTls, moderations));
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
      // Only now is the process ready: /readyz said 503 while any listener was not yet bound.
      health.listening();
      log.info("ready", "gateway", gateway == null ? "off"
          : (serverTls != null ? "https://" : "http://") + host(options.listen()) + ":"
              + gateway.port(), "admin", admin == null ? "off"
          : "http://" + host(options.admin()) + ":" + admin.port(), "rls", rls == null ? "off"
          : host(rlsAddress) + ":" + rls.port(), "checkApi", checkServed,
          "store", health.ready() ? "ready" : "not ready");
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
      if (check != null) {
        check.close();
      }
      store.close();
      accessLog.close();
      shutdown(loops);
      throw e;
    }
    return new SluiceServer(ref, store, loops, metrics, gateway, rls, check, admin, reloader,
        tlsReloader, hangup, log, accessLog, admin == null ? null : tokenFile);
  }

  /** Whether {@code /v1/} reads on the admin listener need the token: the operator gave one. */
  private static boolean readsNeedToken(ServeOptions options) {
    return options.adminTokenFile() != null;
  }

  /** Last, after the store has closed its connections on them. */
  private static void shutdown(EventLoopGroup loops) {
    if (loops != null) {
      loops.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS)
          .syncUninterruptibly();
    }
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

  /** The decision API's own listener's port ({@code --check-api HOST:PORT}), or -1. */
  public int checkPort() {
    return check == null ? -1 : check.port();
  }

  /**
   * The file holding the admin token (the operator's or the generated one), or null when the
   * admin listener is off or has no token.
   */
  public Path adminTokenFile() {
    return adminTokenFile;
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

  /** The gateway's store, for tests that fill it directly. */
  Store store() {
    return store;
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
      if (check != null) {
        check.close();
      }
    } finally {
      accessLog.close();
      try {
        store.close();
      } finally {
        shutdown(loops);
      }
    }
  }
}
