package dev.sluice.server.gateway;

import dev.sluice.netty.ReadGate;
import dev.sluice.netty.Exchange;
import dev.sluice.netty.NettyRequestView;
import dev.sluice.netty.WebSockets;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The last handler of a client connection: forwards each request to the upstream and relays the
 * response back, streaming bodies both ways (nothing is aggregated), with one upstream connection
 * per client connection, kept alive between requests. WebSocket upgrades are handed to a
 * {@link WebSocketRelay}.
 *
 * <p>Backpressure: a client that reads slowly stops reads from the upstream, and an upstream that
 * reads slowly stops reads from the client.
 */
final class ProxyHandler extends ChannelInboundHandlerAdapter {

  private final Upstream upstream;
  private final Snapshot.Source snapshots;
  private final GatewayEvents events;

  private ChannelHandlerContext ctx;
  private Channel client;
  private Snapshot snap;

  private Channel up;
  private boolean connecting;
  private final ArrayDeque<Object> queued = new ArrayDeque<>();

  private HttpRequest current;
  private boolean exchangeActive;
  private boolean clientKeepAlive;
  private boolean requestComplete;
  private boolean headReceived;
  private boolean upKeepAlive;
  private boolean relayingInterim;
  private boolean dropRest;
  private ScheduledFuture<?> responseTimer;
  private long responseTimerAt;
  /** The upstream connection whose response is awaited, or null. */
  private Channel awaiting;
  private long responseDeadline;

  private WebSocketRelay relay;

  ProxyHandler(Upstream upstream, Snapshot.Source snapshots, GatewayEvents events) {
    this.upstream = upstream;
    this.snapshots = snapshots;
    this.events = events;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    this.client = ctx.channel();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (relay != null) {
      relay.fromClient(msg);
      return;
    }
    if (msg instanceof HttpRequest request) {
      Exchange exchange = Exchange.of(client, request);
      snap = exchange != null && exchange.attachment() instanceof Snapshot pinned ? pinned
          : snapshots.get();
      if (exchange != null ? exchange.view().websocketUpgrade()
          : NettyRequestView.isWebSocketUpgrade(request)) {
        relay = new WebSocketRelay(ctx, request, upstream, snap, events);
        ReferenceCountUtil.release(request);
        relay.start();
        return;
      }
      beginExchange(request);
      return;
    }
    if (msg instanceof HttpContent content) {
      boolean last = msg instanceof LastHttpContent;
      if (dropRest || !exchangeActive) {
        content.release();
        if (last) {
          dropRest = false;
          requestComplete = true;
        }
        return;
      }
      if (last) {
        requestComplete = true;
      }
      send(content);
      return;
    }
    ReferenceCountUtil.release(msg);
  }

  private void beginExchange(HttpRequest request) {
    current = request;
    exchangeActive = true;
    clientKeepAlive = HttpUtil.isKeepAlive(request);
    requestComplete = request instanceof LastHttpContent;
    headReceived = false;
    relayingInterim = false;
    dropRest = false;
    HttpHeaders h = request.headers();
    Forwarding.stripHopByHop(h);
    Forwarding.forward(h, peerIp(client), upstream.authority);
    HttpRequest out = new DefaultHttpRequest(HttpVersion.HTTP_1_1, request.method(),
        originForm(request.uri()), h);
    send(out);
    if (request instanceof LastHttpContent last) {
      send(new DefaultLastHttpContent(last.content().retain(), last.trailingHeaders()));
      ReferenceCountUtil.release(request);
    }
  }

  static String originForm(String uri) {
    if (uri.startsWith("/")) {
      return uri;
    }
    int scheme = uri.indexOf("://");
    if (scheme > 0) {
      int slash = uri.indexOf('/', scheme + 3);
      return slash < 0 ? "/" : uri.substring(slash);
    }
    return uri.equals("*") ? uri : "/" + uri;
  }

  static String peerIp(Channel ch) {
    if (ch.remoteAddress() instanceof InetSocketAddress inet && inet.getAddress() != null) {
      InetAddress a = inet.getAddress();
      String text = a.getHostAddress();
      int zone = text.indexOf('%');
      return zone < 0 ? text : text.substring(0, zone);
    }
    return null;
  }

  private void send(Object msg) {
    if (up != null && up.isActive() && !connecting) {
      writeUp(msg);
      return;
    }
    queued.add(msg);
    if (!connecting) {
      connect();
    }
  }

  private void writeUp(Object msg) {
    boolean last = msg instanceof LastHttpContent;
    // A head is always followed by content (at least an empty last part): flush once, with it.
    // A void promise: a failed write goes to UpstreamHttp.exceptionCaught, which closes.
    if (msg instanceof HttpContent) {
      up.writeAndFlush(msg, up.voidPromise());
    } else {
      up.write(msg, up.voidPromise());
    }
    if (last) {
      startResponseTimer();
    }
    if (!up.isWritable()) {
      ReadGate.pause(client, ReadGate.UPSTREAM);
    }
  }

  private Bootstrap bootstrap(ChannelInitializer<SocketChannel> init) {
    return bootstrap(client, snap, init);
  }

  static Bootstrap bootstrap(Channel client, Snapshot snap, ChannelInitializer<SocketChannel> init) {
    long connectMillis = Math.max(1, snap.gateway.upstreamConnectTimeout().toMillis());
    return new Bootstrap().group(client.eventLoop()).channel(Transport.socketChannel())
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, connectMillis))
        .option(ChannelOption.TCP_NODELAY, true)
        .handler(init);
  }

  private void connect() {
    connecting = true;
    ReadGate.pause(client, ReadGate.UPSTREAM);
    ChannelFuture f = bootstrap(new ChannelInitializer<>() {
      @Override
      protected void initChannel(SocketChannel ch) {
        ch.pipeline().addLast(new HttpClientCodec(8192, 64 * 1024, 64 * 1024),
            new UpstreamHttp());
      }
    }).connect(upstream.host, upstream.port);
    f.addListener((ChannelFutureListener) done -> {
      connecting = false;
      if (!client.isActive()) {
        done.channel().close();
        releaseQueued();
        return;
      }
      if (!done.isSuccess()) {
        releaseQueued();
        ReadGate.resume(client, ReadGate.UPSTREAM);
        badGateway(HttpResponseStatus.BAD_GATEWAY, "could not connect: " + reason(done.cause()));
        return;
      }
      up = done.channel();
      ReadGate.resume(client, ReadGate.UPSTREAM);
      Object m;
      while ((m = queued.poll()) != null) {
        writeUp(m);
      }
    });
  }

  static String reason(Throwable t) {
    if (t == null) {
      return "unknown error";
    }
    String m = t.getMessage();
    if (m == null) {
      return t.getClass().getSimpleName();
    }
    // Netty's messages repeat the address, and the native transport prefixes the system call:
    // "finishConnect(..) failed with error(-111): Connection refused: /127.0.0.1:3000". Keep
    // the part that says what went wrong.
    int syscall = m.indexOf("failed with error(");
    int end = syscall < 0 ? -1 : m.indexOf("): ", syscall);
    if (end > 0) {
      m = m.substring(end + 3);
    }
    int colon = m.indexOf(": ");
    String head = colon > 0 ? m.substring(0, colon) : m;
    return head.toLowerCase(java.util.Locale.ROOT);
  }

  private void releaseQueued() {
    Object m;
    while ((m = queued.poll()) != null) {
      ReferenceCountUtil.release(m);
    }
  }

  /**
   * Arms the upstream response timeout. One task per connection re-schedules itself while a
   * response is awaited, so a busy keep-alive connection costs two field writes per request
   * rather than a timer insert and cancel.
   */
  private void startResponseTimer() {
    long nanos = snap.gateway.upstreamResponseTimeout().toNanos();
    if (nanos <= 0) {
      awaiting = null;
      return;
    }
    awaiting = up;
    responseDeadline = System.nanoTime() + nanos;
    if (responseTimer != null && responseTimerAt - responseDeadline > 0) {
      // A reload shortened the timeout: the pending check would come too late.
      responseTimer.cancel(false);
      responseTimer = null;
    }
    if (responseTimer == null) {
      scheduleResponseCheck(nanos);
    }
  }

  private void scheduleResponseCheck(long nanos) {
    responseTimerAt = System.nanoTime() + nanos;
    responseTimer = client.eventLoop().schedule(this::responseCheck, nanos, TimeUnit.NANOSECONDS);
  }

  private void responseCheck() {
    responseTimer = null;
    Channel expected = awaiting;
    if (expected == null) {
      return;
    }
    long left = responseDeadline - System.nanoTime();
    if (left > 0) {
      scheduleResponseCheck(left);
      return;
    }
    awaiting = null;
    if (exchangeActive && !headReceived && up == expected) {
      badGateway(HttpResponseStatus.GATEWAY_TIMEOUT, "no response within "
          + snap.gateway.upstreamResponseTimeout().toMillis() + " ms");
    }
  }

  /** No response is awaited any more; the check task, if pending, finds nothing to do. */
  private void cancelResponseTimer() {
    awaiting = null;
  }

  private void stopResponseTimer() {
    awaiting = null;
    if (responseTimer != null) {
      responseTimer.cancel(false);
      responseTimer = null;
    }
  }

  /**
   * Answers the current request with 502 or 504, or closes if a response has begun. The client
   * learns no more than the status: the upstream's address and the cause are for the log.
   */
  private void badGateway(HttpResponseStatus status, String cause) {
    cancelResponseTimer();
    if (up != null) {
      Channel u = up;
      up = null;
      u.close();
    }
    if (!exchangeActive) {
      return;
    }
    exchangeActive = false;
    events.upstreamFailed(status.code(), upstream.authority, cause);
    if (headReceived) {
      client.close();
      return;
    }
    events.generated(status.code());
    dropRest = !requestComplete;
    boolean keepAlive = clientKeepAlive && requestComplete;
    ctx.writeAndFlush(Generated.error(current, status, snap.cors, keepAlive))
        .addListener(keepAlive ? ChannelFutureListener.CLOSE_ON_FAILURE
            : ChannelFutureListener.CLOSE);
  }

  private void responseHead(HttpResponse response) {
    int code = response.status().code();
    if (code >= 100 && code < 200) {
      relayingInterim = true;
      if (code != 101) {
        ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, response.status()));
      }
      return;
    }
    cancelResponseTimer();
    headReceived = true;
    upKeepAlive = HttpUtil.isKeepAlive(response);
    Forwarding.stripHopByHop(response.headers());
    boolean bodiless = HttpMethod.HEAD.equals(current.method()) || code == 204 || code == 304;
    boolean delimited = HttpUtil.isContentLengthSet(response);
    if (current.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
      // An HTTP/1.0 client cannot read chunks: send the body as is and end it by closing.
      if (!bodiless && !delimited) {
        HttpUtil.setTransferEncodingChunked(response, false);
        clientKeepAlive = false;
      }
    } else if (!bodiless && !delimited && !HttpUtil.isTransferEncodingChunked(response)) {
      HttpUtil.setTransferEncodingChunked(response, true);
    }
    HttpUtil.setKeepAlive(response, clientKeepAlive);
    ctx.write(response, ctx.voidPromise());
  }

  private void responseContent(HttpContent content) {
    if (relayingInterim) {
      if (content instanceof LastHttpContent) {
        relayingInterim = false;
      }
      content.release();
      return;
    }
    boolean last = content instanceof LastHttpContent;
    boolean closeAfter = last && !clientKeepAlive;
    // A void promise unless a listener needs it: a failed write reaches exceptionCaught (close).
    ChannelFuture f = closeAfter ? ctx.writeAndFlush(content)
        : ctx.writeAndFlush(content, ctx.voidPromise());
    if (!client.isWritable() && up != null) {
      up.config().setAutoRead(false);
    }
    if (last) {
      exchangeActive = false;
      if (!requestComplete) {
        // The upstream answered before the body was sent: drop the rest and this connection.
        dropRest = true;
        upKeepAlive = false;
      }
      if (!upKeepAlive && up != null) {
        Channel u = up;
        up = null;
        u.close();
      }
      if (closeAfter) {
        f.addListener(ChannelFutureListener.CLOSE);
      }
    }
  }

  /** Reads an upstream HTTP connection. */
  private final class UpstreamHttp extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext uctx, Object msg) {
      if (uctx.channel() != up || !exchangeActive) {
        ReferenceCountUtil.release(msg);
        return;
      }
      if (msg instanceof HttpResponse response) {
        if (response.decoderResult().isFailure()) {
          ReferenceCountUtil.release(msg);
          badGateway(HttpResponseStatus.BAD_GATEWAY, "invalid response: "
              + reason(response.decoderResult().cause()));
          return;
        }
        responseHead(response);
      }
      if (msg instanceof HttpContent content) {
        responseContent(content);
      }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext uctx) {
      if (uctx.channel() == up && up.isWritable()) {
        ReadGate.resume(client, ReadGate.UPSTREAM);
      }
      uctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext uctx) {
      if (uctx.channel() != up) {
        return;
      }
      up = null;
      ReadGate.resume(client, ReadGate.UPSTREAM);
      if (exchangeActive) {
        if (headReceived) {
          client.close();
        } else {
          badGateway(HttpResponseStatus.BAD_GATEWAY, "closed the connection before answering");
        }
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext uctx, Throwable cause) {
      uctx.close();
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    boolean writable = client.isWritable();
    Channel other = relay != null ? relay.upstreamChannel() : up;
    if (other != null) {
      other.config().setAutoRead(writable);
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    stopResponseTimer();
    releaseQueued();
    if (up != null) {
      up.close();
      up = null;
    }
    if (relay != null) {
      relay.clientGone();
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof WebSockets.Closing closing && relay != null) {
      relay.clientClosing(closing);
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
