package dev.sluice.gateway;

import dev.sluice.core.RateLimiter;
import dev.sluice.core.Ticker;
import dev.sluice.netty.WebSocketGuardHandler;
import dev.sluice.policy.GatewaySettings;
import dev.sluice.policy.PolicyConfig;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The {@code sluice serve} gateway: a rate-limiting reverse proxy for HTTP and WebSocket, on
 * Netty. Every connection runs
 *
 * <pre>
 * [SslHandler -&gt; TlsNegotiation (ALPN) | PriorKnowledge (h2c)] -&gt; IdleTimeout
 *   -&gt; RelayHandler (HTTP/1.1, for the connection's whole life, as bytes: heads, caps,
 *      the admission step, 429/503 and every generated answer, bodies, moderation, the
 *      upstream, the access log)
 * </pre>
 *
 * <p>Every request, whatever its protocol, is one {@link Exchange}: one parser, one admission
 * step, one verdict, one access log entry. The relay hands the connection over only when it
 * stops being HTTP/1.1. A WebSocket upgrade, once its exchange admitted it, goes with its parsed
 * head to the pipeline that relays WebSockets: {@code HttpServerCodec -> WebSocketGuardHandler
 * (caps, frames) -> ModerationHandler -> WebSocketFront (WebSocketRelay)}. A connection that
 * negotiates HTTP/2 (ALPN "h2", or h2c with prior knowledge) replaces the relay by
 * {@link Http2Pipeline}: Netty's frame codec, then {@link Http2Front}, which gives each stream
 * an exchange of its own through a {@link StreamSide}.
 *
 * <p>The config is read through the supplier for each request and each new connection, so a
 * reload that swaps the {@link PolicyConfig} takes effect atomically: a request sees the old
 * config or the new one, never a mix. Socket-level settings (header caps, idle timeout) apply to
 * connections opened after the swap.
 *
 * <pre>{@code
 * try (Gateway g = Gateway.start(new InetSocketAddress("0.0.0.0", 8080), null, config::get,
 *     limiter, GatewayEvents.none())) {
 *   ...
 * }
 * }</pre>
 */
public final class Gateway implements AutoCloseable {

  /** The handler of an HTTP/1.1 connection that HTTP/2 replaces by the stream multiplexer. */
  static final List<String> HTTP1_HANDLERS = List.of("relay");

  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  /** Null when the workers are the caller's: close() then closes the connections, not them. */
  private final ChannelGroup children;
  private final Channel server;
  private final DemoUpstream demo;
  private final URI upstream;

  private Gateway(EventLoopGroup boss, EventLoopGroup workers, ChannelGroup children,
      Channel server, DemoUpstream demo, URI upstream) {
    this.boss = boss;
    this.workers = workers;
    this.children = children;
    this.server = server;
    this.demo = demo;
    this.upstream = upstream;
  }

  /**
   * I/O loops of the gateway's transport (epoll or NIO), for {@link Builder#eventLoops}:
   * {@code threads}, or 0 for one per processor. No handler waits on a loop (decisions are
   * asynchronous), so more loops than cores only add context switches, as with nginx's
   * {@code worker_processes auto}; Netty's own default is twice the processors
   * (docs/bench/gateway.md, run F, measured both).
   */
  public static EventLoopGroup eventLoops(int threads) {
    return new MultiThreadIoEventLoopGroup(
        threads > 0 ? threads : Runtime.getRuntime().availableProcessors(), Transport.ioHandler());
  }

  /**
   * Starts a gateway on {@code listen} (port 0 for an ephemeral port) that forwards to
   * {@code upstream}, or to a built-in demo upstream when it is null.
   *
   * @throws IllegalArgumentException if the upstream URL or the first config is unusable
   * @throws IllegalStateException if the address cannot be bound
   */
  public static Gateway start(InetSocketAddress listen, URI upstream, Supplier<PolicyConfig> config,
      RateLimiter limiter, GatewayEvents events) {
    return builder().listen(listen).upstream(upstream).config(config).limiter(limiter)
        .events(events).start();
  }

  /**
   * Checks an upstream URL with its TLS settings (the CA file is read) as {@link Builder#start()}
   * will, so a command can refuse it before opening anything.
   *
   * @throws IllegalArgumentException naming the flag or field, the value and what was expected
   */
  public static void checkUpstream(URI upstream, Path caFile, String sni) {
    Upstream.of(upstream, caFile, sni);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The port the gateway listens on. */
  public int port() {
    return address().getPort();
  }

  public InetSocketAddress address() {
    return (InetSocketAddress) server.localAddress();
  }

  /** Where requests go: the configured upstream, or the demo upstream's loopback address. */
  public URI upstream() {
    return upstream;
  }

  /** True when no upstream was given and the built-in demo upstream answers. */
  public boolean demoUpstream() {
    return demo != null;
  }

  /**
   * Stops accepting, closes every connection and waits (a few seconds at most) for the loops;
   * loops given to {@link Builder#eventLoops} keep running.
   */
  @Override
  public void close() {
    server.close().syncUninterruptibly();
    if (demo != null) {
      demo.close();
    }
    boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    if (children != null) {
      children.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
    } else {
      workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  @Override
  public String toString() {
    return "Gateway{listen=" + address() + ", upstream=" + upstream
        + (demo != null ? " (demo)" : "") + ", transport=" + Transport.name() + "}";
  }

  /** Configures and starts a {@link Gateway}. */
  public static final class Builder {
    private InetSocketAddress listen = new InetSocketAddress("0.0.0.0", 8080);
    private URI upstream;
    private Supplier<PolicyConfig> config;
    private RateLimiter limiter;
    private GatewayEvents events = GatewayEvents.none();
    private Ticker ticker = Ticker.system();
    private int threads;
    private EventLoopGroup eventLoops;
    private DecisionApi decisionApi;
    private ServerTls tls;
    private boolean h2c = true;
    private Path upstreamCa;
    private String upstreamSni;
    private Moderation.Cache moderations = new Moderation.Cache();

    private Builder() {}

    /**
     * Where the server's loads left the moderation sections they checked ({@link
     * Moderation.Cache#check}), so a reload's Moderator is not built again on an event loop; the
     * default is an empty one, and each config's section is built when it is first installed.
     */
    public Builder moderations(Moderation.Cache moderations) {
      this.moderations = Objects.requireNonNull(moderations, "moderations");
      return this;
    }

    /**
     * Serves TLS with this certificate (HTTP/2 and HTTP/1.1 by ALPN); null (the default) for
     * plain HTTP. Reloading {@code tls} changes the certificate of later connections.
     */
    public Builder tls(ServerTls tls) {
      this.tls = tls;
      return this;
    }

    /** Whether a plain listener also speaks HTTP/2 to clients that start with its preface. */
    public Builder h2c(boolean h2c) {
      this.h2c = h2c;
      return this;
    }

    /** PEM certificates trusted for an https upstream; null (the default) for the JDK's. */
    public Builder upstreamCa(Path caFile) {
      this.upstreamCa = caFile;
      return this;
    }

    /** The name sent as SNI to an https upstream and verified; null for the URL's host. */
    public Builder upstreamSni(String name) {
      this.upstreamSni = name;
      return this;
    }

    /** Serves {@code POST /v1/check} on the listener with {@code api}; null for none. */
    public Builder decisionApi(DecisionApi api) {
      this.decisionApi = api;
      return this;
    }

    public Builder listen(InetSocketAddress listen) {
      this.listen = Objects.requireNonNull(listen, "listen");
      return this;
    }

    /** The upstream base URL ({@code http(s)://host:port}); null for the demo upstream. */
    public Builder upstream(URI upstream) {
      if (upstream != null) {
        Upstream.of(upstream);
      }
      this.upstream = upstream;
      return this;
    }

    /** Read for every request and connection; return a new object to reload. */
    public Builder config(Supplier<PolicyConfig> config) {
      this.config = Objects.requireNonNull(config, "config");
      return this;
    }

    public Builder limiter(RateLimiter limiter) {
      this.limiter = Objects.requireNonNull(limiter, "limiter");
      return this;
    }

    public Builder events(GatewayEvents events) {
      this.events = events == null ? GatewayEvents.none() : events;
      return this;
    }

    /** The clock of the per-connection WebSocket guards (flood bucket, strikes). */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /** I/O threads; 0 (the default) for one per processor. */
    public Builder threads(int threads) {
      if (threads < 0) {
        throw new IllegalArgumentException("threads : " + threads + " (expected: >= 0)");
      }
      this.threads = threads;
      return this;
    }

    /**
     * Runs on these I/O loops ({@link Gateway#eventLoops}), which the caller shuts down after
     * {@link Gateway#close} (the Redis store shares them); null (the default): the gateway's
     * own, of {@link #threads} threads.
     */
    public Builder eventLoops(EventLoopGroup loops) {
      this.eventLoops = loops;
      return this;
    }

    public Gateway start() {
      if (config == null) {
        throw new IllegalArgumentException("config : null (expected: a config supplier)");
      }
      if (limiter == null) {
        throw new IllegalArgumentException("limiter : null (expected: a rate limiter)");
      }
      Snapshot.Source snapshots = new Snapshot.Source(config, limiter, events, moderations);
      EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, Transport.ioHandler());
      EventLoopGroup workers = eventLoops != null ? eventLoops : Gateway.eventLoops(threads);
      ChannelGroup children = eventLoops != null
          ? new DefaultChannelGroup(GlobalEventExecutor.INSTANCE) : null;
      DemoUpstream demo = null;
      try {
        URI target = upstream;
        if (target == null) {
          demo = DemoUpstream.start(workers);
          target = demo.uri();
        }
        Upstream up = Upstream.of(target, upstreamCa, upstreamSni);
        UpstreamPool pool = new UpstreamPool(up);
        GatewayEvents ev = events;
        RateLimiter lim = limiter;
        Ticker tick = ticker;
        DecisionApi api = decisionApi;
        ServerTls serverTls = tls;
        String proto = tls != null ? "https" : "http";
        Channel server = new ServerBootstrap().group(boss, workers)
            .channel(Transport.serverChannel())
            .option(ChannelOption.SO_BACKLOG, 1024)
            .childOption(ChannelOption.TCP_NODELAY, true)
            // A client that shuts its output after a request still gets the answer.
            .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
            .childHandler(new ChannelInitializer<SocketChannel>() {
              @Override
              protected void initChannel(SocketChannel ch) {
                if (children != null) {
                  children.add(ch);
                }
                GatewaySettings g = snapshots.get().gateway;
                long idle = Math.max(0, g.idleTimeout().toMillis());
                ChannelPipeline p = ch.pipeline();
                Runnable toHttp2 = () -> Http2Pipeline.install(p, HTTP1_HANDLERS,
                    g.maxHeaderBytes(), (side, peer) -> new Exchange(snapshots, ev, up, pool, api,
                        proto, side, peer, null));
                if (serverTls != null) {
                  p.addLast("tls", serverTls.context().newHandler(ch.alloc()))
                      .addLast("alpn", new Http2Pipeline.TlsNegotiation(toHttp2));
                } else if (h2c) {
                  p.addLast("h2c", new Http2Pipeline.PriorKnowledge(toHttp2));
                }
                p.addLast("idle", new IdleTimeout(idle));
                p.addLast("relay", new RelayHandler(snapshots, ev, up, pool, api, proto,
                    (ws, upgrade) -> {
                      ws.addLast("http", new HttpServerCodec(new HttpDecoderConfig()
                          .setMaxInitialLineLength(g.maxInitialLineBytes())
                          .setMaxHeaderSize(g.maxHeaderBytes())
                          .setMaxChunkSize(64 * 1024)));
                      if (!upgrade.refused()) {
                        ws.addLast("ws-guard", new WebSocketGuardHandler(lim,
                            () -> upgrade.snap().ws, tick, ev))
                            .addLast("moderate", new ModerationHandler(snapshots, ev));
                      }
                      ws.addLast("ws", new WebSocketFront(up, upgrade.snap(), ev, proto,
                          upgrade.ended(), upgrade.refused()));
                    }));
              }
            })
            .bind(listen).sync().channel();
        return new Gateway(boss, workers, children, server, demo, target);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        shutdown(boss, eventLoops == null ? workers : null, demo);
        throw new IllegalStateException("interrupted while binding " + listen, e);
      } catch (Exception e) {
        // bind() reports a BindException through sync() although it is checked
        shutdown(boss, eventLoops == null ? workers : null, demo);
        if (e instanceof IllegalArgumentException iae) {
          throw iae;
        }
        throw new IllegalStateException("cannot listen on " + listen + ": " + e.getMessage(), e);
      }
    }

    private static void shutdown(EventLoopGroup boss, EventLoopGroup workers, DemoUpstream demo) {
      if (demo != null) {
        demo.close();
      }
      boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      if (workers != null) {
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      }
    }
  }
}
