package dev.sluice.server.admin;

import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyFormat;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The admin listener (loopback by default): {@code /healthz} and {@code /livez} (liveness: the
 * process answers), {@code /readyz} (readiness: 200 once the store is ready, 503 with a JSON
 * reason before), {@code /metrics} (Prometheus text) and {@code /v1/policy} (the effective
 * policy as JSON); with {@link Incidents}, the incident endpoints too ({@code /v1/bans},
 * {@code /v1/refused}, {@code /v1/keys/...}), which can lift bans and reset keys; with a
 * {@link Console}, {@code /} in a browser is the live console page. Every request passes
 * {@link AdminDoor} first (its {@code Host}, its origin, the token).
 *
 * <p>Why it survives a stalled client. One event loop reads every connection without blocking
 * ({@link AdminConnection}), so a client that sends half a head holds no thread; it holds a
 * connection until its head timeout. Probes, {@code /metrics}, the page and its files are
 * answered on that loop (no I/O, no waiting); {@code /v1/} requests, which may wait on the store,
 * run on {@value #WORKERS} worker threads with a queue of {@value #QUEUE} (past it, 503 at
 * once). At most {@link AdminOptions#maxConnections()} connections are open; the next one
 * closes the connection that has waited longest for a head, a body or a next request, so
 * clients that stall can delay a probe by a connection's set-up, never keep it out.
 */
public final class AdminServer implements AutoCloseable {

  /** What the listener serves, for its index page and the start-up log. */
  public static final List<String> ENDPOINTS =
      List.of("/healthz", "/livez", "/readyz", "/metrics", "/v1/policy");
  /** The incident endpoints, served when the listener has {@link Incidents}. */
  public static final List<String> INCIDENT_ENDPOINTS = List.of("GET /v1/bans",
      "GET /v1/refused?rule=R", "GET /v1/keys/{rule}/{key}", "DELETE /v1/bans/{rule}/{key}[?keepState]",
      "POST /v1/bans/{rule}/{key}?duration=D", "POST /v1/keys/{rule}/{key}/reset");

  /**
   * Sent with every answer: the console's page may run only its own files (no inline script or
   * style, no other origin), talk only to this listener, and be framed by nobody.
   */
  static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; "
      + "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
      + "frame-ancestors 'none'";

  /** A request's body at most (the decision API's bodies are smaller). */
  public static final int MAX_BODY = 64 * 1024;
  /** A request line at most, and the header section at most. */
  static final int MAX_LINE = 8 * 1024;
  static final int MAX_HEADERS = 16 * 1024;
  /** Requests read ahead of their answers on one connection (pipelined) before it is closed. */
  static final int MAX_PIPELINED = 8;
  static final int WORKERS = 2;
  static final int QUEUE = 32;
  /** Outbound bytes Netty holds for a connection before it says it has no room. */
  static final int WRITE_HIGH_WATER = 64 * 1024;
  static final int WRITE_LOW_WATER = 32 * 1024;

  final Metrics metrics;
  final Supplier<LoadedPolicy> policy;
  final Supplier<Instant> loadedAt;
  final String version;
  final StoreHealth store;
  final Incidents incidents;
  final Console console;
  final AdminDoor door;
  final AdminOptions options;
  final LongSupplier nanos;
  final ExecutorService workers;
  final AdminConnection.Registry connections;
  final List<Map.Entry<String, AdminEndpoint>> endpoints = new CopyOnWriteArrayList<>();
  private final EventLoopGroup loop;
  private Channel channel;

  private AdminServer(Builder b) {
    this.metrics = b.metrics;
    this.policy = b.policy;
    this.loadedAt = b.loadedAt;
    this.version = b.version;
    this.store = b.store;
    this.incidents = b.incidents;
    this.console = b.console;
    this.options = b.options;
    this.nanos = b.nanos;
    this.door = new AdminDoor(b.options.hosts(), b.token, b.readsNeedToken);
    ThreadPoolExecutor pool = new ThreadPoolExecutor(WORKERS, WORKERS, 0, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(QUEUE), new DefaultThreadFactory("sluice-admin", true));
    this.workers = pool;
    this.loop = new MultiThreadIoEventLoopGroup(1,
        new DefaultThreadFactory("sluice-admin-io", true), NioIoHandler.newFactory());
    this.connections = new AdminConnection.Registry(this);
  }

  /** The parts every admin listener has; the rest are optional. */
  public static Builder builder(Metrics metrics, Supplier<LoadedPolicy> policy,
      Supplier<Instant> loadedAt, String version, StoreHealth store) {
    return new Builder(metrics, policy, loadedAt, version, store);
  }

  /** Builds an admin listener by name: its parts, its door, its limits. */
  public static final class Builder {
    private final Metrics metrics;
    private final Supplier<LoadedPolicy> policy;
    private final Supplier<Instant> loadedAt;
    private final String version;
    private final StoreHealth store;
    private Incidents incidents;
    private Console console;
    private AdminToken token;
    private boolean readsNeedToken;
    private AdminOptions options = AdminOptions.DEFAULTS;
    private LongSupplier nanos = System::nanoTime;

    private Builder(Metrics metrics, Supplier<LoadedPolicy> policy, Supplier<Instant> loadedAt,
        String version, StoreHealth store) {
      this.metrics = metrics;
      this.policy = policy;
      this.loadedAt = loadedAt;
      this.version = version;
      this.store = store;
    }

    /** The incident endpoints ({@code /v1/bans}, {@code /v1/refused}, {@code /v1/keys}). */
    public Builder incidents(Incidents incidents) {
      this.incidents = incidents;
      return this;
    }

    /** The live console at {@code /}, which the listener starts and, when closed, closes. */
    public Builder console(Console console) {
      this.console = console;
      return this;
    }

    /**
     * The token every state change needs ({@code null}: none could be set up, so state changes
     * are refused), and whether {@code /v1/} reads need it too.
     */
    public Builder token(AdminToken token, boolean readsNeedToken) {
      this.token = token;
      this.readsNeedToken = readsNeedToken;
      return this;
    }

    public Builder options(AdminOptions options) {
      this.options = options;
      return this;
    }

    /** The clock of the listener's timeouts (System.nanoTime by default). */
    Builder nanos(LongSupplier nanos) {
      this.nanos = nanos;
      return this;
    }

    /** Binds {@code address} (port 0 for an ephemeral port) and starts serving. */
    public AdminServer start(InetSocketAddress address) throws IOException {
      AdminServer s = new AdminServer(this);
      try {
        s.bind(address);
      } catch (IOException | RuntimeException e) {
        s.close();
        throw e;
      }
      if (console != null) {
        console.start();
      }
      return s;
    }
  }

  private void bind(InetSocketAddress address) throws IOException {
    ServerBootstrap b = new ServerBootstrap()
        .group(loop, loop)
        .channel(NioServerSocketChannel.class)
        .option(ChannelOption.SO_BACKLOG, 128)
        .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK,
            new WriteBufferWaterMark(WRITE_LOW_WATER, WRITE_HIGH_WATER))
        .childHandler(new io.netty.channel.ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            connections.accept(ch);
          }
        });
    io.netty.channel.ChannelFuture bound = b.bind(address).awaitUninterruptibly();
    if (!bound.isSuccess()) {
      Throwable cause = bound.cause();
      throw cause instanceof IOException io ? io
          : new IOException(String.valueOf(cause.getMessage()), cause);
    }
    channel = bound.channel();
    connections.startSweeping();
  }

  /**
   * Serves requests under {@code path} (a {@code /v1/} path, like the decision API) with
   * {@code endpoint}, on the worker threads, behind the door like every {@code /v1/} request.
   */
  public void handle(String path, AdminEndpoint endpoint) {
    endpoints.add(Map.entry(path, endpoint));
  }

  /**
   * The answer to a request that needs no waiting (the probes, metrics, the page and its
   * files), or null when it must go to a worker.
   */
  AdminAnswer answerNow(AdminCall call) {
    String path = call.rawPath();
    if (path.startsWith("/v1/")) {
      // a stream and its acks wait on nothing: a page never queues behind the store's answers
      return console != null && (path.equals(Console.EVENTS) || path.equals(Console.ACK))
          ? console.serve(call) : null;
    }
    if (console != null) {
      AdminAnswer a = console.page(call);
      if (a != null) {
        return a;
      }
    }
    if (!call.isRead()) {
      return AdminAnswer.text(405, "method not allowed\n").with("Allow", "GET, HEAD");
    }
    return switch (path) {
      case "/healthz", "/livez" -> AdminAnswer.json(200, "{\"status\":\"ok\"}");
      case "/readyz" -> AdminAnswer.json(store.readyToServe() ? 200 : 503, store.readiness());
      case "/metrics" -> AdminAnswer.of(200, "text/plain; version=0.0.4; charset=utf-8",
          metrics.render());
      case "/" -> AdminAnswer.text(200, "sluice admin " + version + "\n"
          + String.join("\n", ENDPOINTS) + "\n"
          + (incidents == null ? "" : String.join("\n", INCIDENT_ENDPOINTS) + "\n")
          + (console == null ? "" : String.join("\n", Console.ENDPOINTS) + "\n"));
      default -> AdminAnswer.text(404, "not found\n");
    };
  }

  /** On a worker: the answer to a {@code /v1/} request that passed the door as {@code auth}. */
  AdminAnswer answer(AdminCall call, String auth) throws InterruptedException {
    String path = call.rawPath();
    if (console != null) {
      AdminAnswer a = console.serve(call);
      if (a != null) {
        return a;
      }
    }
    if (incidents != null && Incidents.owns(path)) {
      Incidents.Caller caller = new Incidents.Caller(call.peer().getAddress().getHostAddress(),
          auth, Incidents.Caller.actor(call.header("X-Sluice-Actor")));
      Incidents.Reply reply = incidents.handle(call.method(), path, call.rawQuery(), caller);
      AdminAnswer a = AdminAnswer.json(reply.status(), reply.json());
      return reply.allow() == null ? a : a.with("Allow", reply.allow());
    }
    for (Map.Entry<String, AdminEndpoint> e : endpoints) {
      if (path.equals(e.getKey()) || path.startsWith(e.getKey() + "/")) {
        return e.getValue().answer(call);
      }
    }
    if (!call.isRead()) {
      return AdminAnswer.text(405, "method not allowed\n").with("Allow", "GET, HEAD");
    }
    if (path.equals("/v1/policy")) {
      LoadedPolicy p = policy.get();
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("source", p.sourceName());
      body.put("loadedAt", String.valueOf(loadedAt.get()));
      body.put("version", version);
      body.put("policy", p.effective());
      return AdminAnswer.json(200, PolicyFormat.toJson(body));
    }
    return AdminAnswer.text(404, "not found\n");
  }

  public InetSocketAddress address() {
    return (InetSocketAddress) channel.localAddress();
  }

  public int port() {
    return address().getPort();
  }

  io.netty.channel.EventLoop connectionsLoop() {
    return loop.next();
  }

  /** Connections open now. */
  int connections() {
    return onLoop(connections::size);
  }

  /** Looks at every connection's deadline now (the listener does so four times a timeout). */
  void sweep() {
    loop.submit(connections::sweep).syncUninterruptibly();
  }

  /** {@code task}'s result, computed on the listener's loop (for tests). */
  <T> T onLoop(java.util.concurrent.Callable<T> task) {
    return loop.submit(task).syncUninterruptibly().getNow();
  }

  @Override
  public void close() {
    if (console != null) {
      console.close();
    }
    if (channel != null) {
      channel.close().syncUninterruptibly();
    }
    loop.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    workers.shutdownNow();
  }
}
