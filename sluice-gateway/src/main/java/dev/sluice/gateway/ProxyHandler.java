package dev.sluice.gateway;

import dev.sluice.netty.Exchange;
import dev.sluice.netty.NettyRequestView;
import dev.sluice.netty.WebSockets;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
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
import java.util.ArrayDeque;

/**
 * The last handler of a client connection: forwards each request to the upstream and relays the
 * response back, streaming bodies both ways (nothing is aggregated), with one upstream connection
 * per client connection, kept alive between requests. WebSocket upgrades are handed to a
 * {@link WebSocketRelay}.
 *
 * <p>Backpressure: a client that reads slowly stops reads from the upstream, and an upstream that
 * reads slowly stops reads from the client.
 */
final class ProxyHandler extends ChannelInboundHandlerAdapter implements UpstreamLink.Side {

  private final Upstream upstream;
  private final UpstreamPool pool;
  private final Snapshot.Source snapshots;
  private final GatewayEvents events;
  /** The client's scheme for the forwarding headers: http, or https on a TLS listener. */
  private final String proto;

  private ChannelHandlerContext ctx;
  private Channel client;
  private Snapshot snap;
  /** The client's side of the forwarding headers. */
  private Forwarding.Peer peer;

  private UpstreamLink link;
  /** What waits for the upstream connection to open. */
  private final ArrayDeque<Object> queued = new ArrayDeque<>();

  private HttpRequest current;
  private boolean exchangeActive;
  private boolean clientKeepAlive;
  private boolean requestComplete;
  private boolean headReceived;
  private boolean upKeepAlive;
  private boolean relayingInterim;
  private boolean dropRest;

  private WebSocketRelay relay;

  ProxyHandler(Upstream upstream, UpstreamPool pool, Snapshot.Source snapshots,
      GatewayEvents events, String proto) {
    this.proto = proto;
    this.upstream = upstream;
    this.pool = pool;
    this.snapshots = snapshots;
    this.events = events;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    this.client = ctx.channel();
    this.link = new UpstreamLink(new ConnectionSide(ctx), upstream, pool, events, true, this);
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
      peer = Forwarding.peer(client, snap, proto);
      if (exchange != null ? exchange.view().websocketUpgrade()
          : NettyRequestView.isWebSocketUpgrade(request)) {
        relay = new WebSocketRelay(ctx, request, upstream, snap, events, proto);
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
    Forwarding.forward(h, peer, upstream.authority, snap.config.trust().clientHeaders());
    HttpRequest out = new DefaultHttpRequest(HttpVersion.HTTP_1_1, request.method(),
        request.uri(), h);
    AccessRecord access = AccessRecord.of(client);
    if (access != null) {
      access.upstreamSent();
    }
    send(out);
    if (request instanceof LastHttpContent last) {
      send(new DefaultLastHttpContent(last.content().retain(), last.trailingHeaders()));
      ReferenceCountUtil.release(request);
    }
  }

  private void send(Object msg) {
    if (queued.isEmpty() && link.link(snap)) {
      writeUp(msg);
    } else {
      queued.add(msg);
    }
  }

  private void writeUp(Object msg) {
    // A head is always followed by content (at least an empty last part): flush once, with it.
    // A void promise: a failed write reaches the upstream handler's exceptionCaught (close).
    link.write(msg, msg instanceof HttpContent);
    if (msg instanceof LastHttpContent) {
      link.sent(snap);
    }
  }

  @Override
  public void connected() {
    Object m;
    while ((m = queued.poll()) != null) {
      writeUp(m);
    }
  }

  @Override
  public void connectFailed(Throwable cause) {
    releaseQueued();
    badGateway(HttpResponseStatus.BAD_GATEWAY, "could not connect: " + Generated.reason(cause));
  }

  private void releaseQueued() {
    Object m;
    while ((m = queued.poll()) != null) {
      ReferenceCountUtil.release(m);
    }
  }

  @Override
  public void timedOut() {
    if (exchangeActive && !headReceived && link.channel() != null) {
      badGateway(HttpResponseStatus.GATEWAY_TIMEOUT, "no response within "
          + snap.gateway.upstreamResponseTimeout().toMillis() + " ms");
    }
  }

  /**
   * Answers the current request with 502 or 504, or closes if a response has begun. The client
   * learns no more than the status: the upstream's address and the cause are for the log.
   */
  private void badGateway(HttpResponseStatus status, String cause) {
    if (!exchangeActive) {
      link.close();
      return;
    }
    exchangeActive = false;
    link.failed(status, cause);
    if (headReceived) {
      client.close();
      return;
    }
    events.generated(status.code());
    AccessRecord access = AccessRecord.of(client);
    if (access != null) {
      access.generated();
    }
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
    link.answered();
    headReceived = true;
    AccessRecord access = AccessRecord.of(client);
    if (access != null) {
      access.upstreamAnswered();
    }
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
    if (!client.isWritable()) {
      link.clientWritable(false);
    }
    if (last) {
      exchangeActive = false;
      Channel up = link.channel();
      if (up != null && UpstreamCodec.leftover(up) > 0) {
        upKeepAlive = false;   // more bytes than the response framed: out of step
      }
      if (!requestComplete) {
        // The upstream answered before the body was sent: drop the rest and this connection.
        dropRest = true;
        upKeepAlive = false;
      }
      if (!upKeepAlive) {
        link.close();
      }
      if (closeAfter) {
        f.addListener(ChannelFutureListener.CLOSE);
      }
    }
  }

  /**
   * The upstream's messages. Any framing error (a decoder failure, a message nobody asked for,
   * both framings) closes the upstream connection, never pooled: a connection out of step with
   * its framing would answer the next request, possibly another client's, with this one's bytes.
   */
  @Override
  public void read(Object msg) {
    if (!exchangeActive) {
      link.unexpected(msg);
      return;
    }
    if (msg instanceof io.netty.handler.codec.DecoderResultProvider p
        && p.decoderResult().isFailure()) {
      ReferenceCountUtil.release(msg);
      badGateway(HttpResponseStatus.BAD_GATEWAY, "invalid response: "
          + Generated.reason(p.decoderResult().cause()));
      return;
    }
    if (msg instanceof HttpResponse r) {
      if (r.headers().contains(io.netty.handler.codec.http.HttpHeaderNames.TRANSFER_ENCODING)
          && (HttpUtil.isContentLengthSet(r) || !HttpUtil.isTransferEncodingChunked(r))) {
        ReferenceCountUtil.release(msg);
        badGateway(HttpResponseStatus.BAD_GATEWAY, "invalid response: a transfer coding other "
            + "than chunked, or both framings");
        return;
      }
      responseHead(r);
    }
    if (msg instanceof HttpContent content) {
      responseContent(content);
    }
  }

  @Override
  public void closed() {
    if (exchangeActive) {
      if (headReceived) {
        client.close();
      } else {
        badGateway(HttpResponseStatus.BAD_GATEWAY, "closed the connection before answering");
      }
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    boolean writable = client.isWritable();
    if (relay == null) {
      link.clientWritable(writable);
    } else if (relay.upstreamChannel() != null) {
      relay.upstreamChannel().config().setAutoRead(writable);
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    releaseQueued();
    // A connection with no exchange in flight serves the next client on this loop.
    link.release(!exchangeActive && upKeepAlive);
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
