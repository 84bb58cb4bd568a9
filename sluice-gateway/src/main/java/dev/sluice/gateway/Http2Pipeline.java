package dev.sluice.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrame;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.codec.http2.HttpConversionUtil.ExtensionHeaderNames;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Consumer;

/**
 * HTTP/2 on the gateway's listener. A connection starts with the HTTP/1.1 pipeline; when it turns
 * out to speak HTTP/2 (ALPN "h2" after a TLS handshake, or the connection preface
 * {@code PRI * HTTP/2.0} first on a plain listener: h2c with prior knowledge), the HTTP/1.1
 * handlers make way for Netty's frame codec and {@link Http2Front}, which runs each stream as an
 * {@link Exchange} of its own (no child channels), so rules, the policy snapshot, the verdict and
 * proxying are the HTTP/1.1 relay's; the upstream is spoken to in HTTP/1.1. The detectors leave
 * the pipeline once they have decided: an HTTP/1.1 connection runs exactly the handlers it ran
 * before HTTP/2 existed here.
 *
 * <p>Requests become HTTP/1.1 requests with {@code :authority} as {@code Host}; responses lose
 * their connection-specific headers (Connection, Keep-Alive, Transfer-Encoding, Upgrade...).
 */
final class Http2Pipeline {

  /** Streams one connection may have open at once; each may hold an upstream connection. */
  static final int MAX_CONCURRENT_STREAMS = 100;
  /** Bytes of one HTTP/2 connection read per turn of its event loop. */
  static final int READ_BYTES = 16 * 1024;
  /** Streams a client may reset in {@link #RESET_WINDOW_SECONDS} before GOAWAY (Netty: 200/30 s). */
  static final int MAX_RESETS = 100;
  static final int RESET_WINDOW_SECONDS = 10;
  /** Control frames (RST_STREAM, PING and SETTINGS answers) queued for a client that does not read. */
  static final int MAX_QUEUED_CONTROL_FRAMES = 1000;

  private static final byte[] PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private Http2Pipeline() {}

  /**
   * Replaces the HTTP/1.1 handlers named {@code http1} (all after {@code after}) by HTTP/2;
   * {@code exchanges} makes each new stream's exchange.
   */
  static void install(ChannelPipeline p, List<String> http1, int maxHeaderBytes,
      Http2Front.Exchanges exchanges) {
    for (String name : http1) {
      if (p.get(name) != null) {
        p.remove(name);
      }
    }
    // A flood on one connection (rapid reset, CVE-2023-44487) must not hold its event loop: each
    // turn of the loop reads at most READ_BYTES of it, so its other connections are served in
    // between, and a client past its budget of resets, or that does not read the control frames
    // it provokes, is cut off with GOAWAY (docs/bench/gateway.md, "rapid reset").
    p.channel().config().setRecvByteBufAllocator(
        new AdaptiveRecvByteBufAllocator(512, 4096, READ_BYTES)).setMaxMessagesPerRead(1);
    p.addLast("h2", Http2FrameCodecBuilder.forServer()
            .initialSettings(Http2Settings.defaultSettings()
                .maxConcurrentStreams(MAX_CONCURRENT_STREAMS)
                .maxHeaderListSize(maxHeaderBytes))
            .decoderEnforceMaxRstFramesPerWindow(MAX_RESETS, RESET_WINDOW_SECONDS)
            .encoderEnforceMaxQueuedControlFrames(MAX_QUEUED_CONTROL_FRAMES)
            .build())
        .addLast("h2-streams", new Http2Front(exchanges))
        .addLast("h2-connection", new ConnectionEnd());
  }

  /**
   * The connection's last handler: closes it when idle (the codec sends GOAWAY first) and on
   * errors that the codec left to the connection (a reset socket), without logging a trace.
   */
  static final class ConnectionEnd extends ChannelInboundHandlerAdapter {
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof IdleStateEvent
          || evt instanceof io.netty.channel.socket.ChannelInputShutdownEvent) {
        ctx.close();
        return;
      }
      ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  /**
   * On a plain listener: looks at the first bytes without consuming them; the HTTP/2 preface
   * switches the connection to h2c, anything else leaves it HTTP/1.1. Removed once decided.
   */
  static final class PriorKnowledge extends ByteToMessageDecoder {
    private final Runnable toHttp2;

    PriorKnowledge(Runnable toHttp2) {
      this.toHttp2 = toHttp2;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
      int n = Math.min(in.readableBytes(), PREFACE.length);
      for (int i = 0; i < n; i++) {
        if (in.getByte(in.readerIndex() + i) != PREFACE[i]) {
          ctx.pipeline().remove(this);
          return;
        }
      }
      if (n == PREFACE.length) {
        toHttp2.run();
        ctx.pipeline().remove(this);
      }
    }
  }

  /**
   * On a TLS listener: after the handshake, ALPN's "h2" switches the connection to HTTP/2, and
   * anything else (http/1.1, no ALPN) leaves it HTTP/1.1. A failed handshake (plain HTTP sent to
   * the TLS port, an unknown CA, no shared cipher) closes the connection without a trace.
   */
  static final class TlsNegotiation extends ChannelInboundHandlerAdapter {
    private final Runnable toHttp2;
    /** Bytes decrypted before the handshake event reached here, for whichever protocol wins. */
    private final ArrayDeque<Object> early = new ArrayDeque<>(0);

    TlsNegotiation(Runnable toHttp2) {
      this.toHttp2 = toHttp2;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      early.add(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      // held until the protocol is known
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
      Object msg;
      boolean any = false;
      while ((msg = early.poll()) != null) {
        any = true;
        ctx.fireChannelRead(msg);
      }
      if (any) {
        ctx.fireChannelReadComplete();
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      Object msg;
      while ((msg = early.poll()) != null) {
        ReferenceCountUtil.release(msg);
      }
      ctx.fireChannelInactive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof SslHandshakeCompletionEvent done) {
        if (!done.isSuccess()) {
          ctx.close();
          return;
        }
        SslHandler ssl = ctx.pipeline().get(SslHandler.class);
        if (ApplicationProtocolNames.HTTP_2.equals(ssl.applicationProtocol())) {
          toHttp2.run();
        }
        ctx.pipeline().remove(this);
        return;
      }
      ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
