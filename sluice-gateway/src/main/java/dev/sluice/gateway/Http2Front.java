package dev.sluice.gateway;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2FrameStreamEvent;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.collection.IntObjectHashMap;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;

/**
 * An HTTP/2 connection's streams, after Netty's frame codec: each stream's frames go to its
 * {@link StreamSide} and {@link Exchange} (made by {@code exchanges} when its first HEADERS
 * arrives), and a client's reset, the connection's end and writability reach them. No child
 * channel, no pipeline per stream, no HTTP objects. Event loop only.
 */
final class Http2Front extends ChannelDuplexHandler {

  /** Makes the exchange of a new stream's side. */
  interface Exchanges {
    Exchange of(StreamSide side, InetAddress peerAddress);
  }

  private final Exchanges exchanges;
  private final IntObjectHashMap<StreamSide> streams = new IntObjectHashMap<>();
  /** Sides whose stream ended with their exchange idle: the next streams' (at most 100). */
  private final java.util.ArrayDeque<StreamSide> idle = new java.util.ArrayDeque<>();
  private Http2FrameCodec codec;
  private InetAddress peerAddress;
  private String peerIp;

  Http2Front(Exchanges exchanges) {
    this.exchanges = exchanges;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    codec = ctx.pipeline().get(Http2FrameCodec.class);
    peerAddress = ctx.channel().remoteAddress() instanceof InetSocketAddress inet
        ? inet.getAddress() : null;
    peerIp = Forwarding.peerIp(ctx.channel());
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof Http2HeadersFrame f) {
      int id = f.stream().id();
      StreamSide s = streams.get(id);
      if (s == null) {
        s = idle.poll();
        if (s == null) {
          s = new StreamSide(ctx, this, peerIp);
          s.exchange(exchanges.of(s, peerAddress));
        }
        s.bind(f.stream());
        streams.put(id, s);
        s.headers(f.headers(), f.isEndStream());
      } else {
        s.trailers();
      }
      return;
    }
    if (msg instanceof Http2DataFrame f) {
      StreamSide s = streams.get(f.stream().id());
      if (s == null) {
        // A body whose stream was answered already: dropped, its bytes given back to the
        // connection's window so that other streams do not starve.
        int bytes = f.initialFlowControlledBytes();
        f.release();
        if (bytes > 0 && f.stream().state() != Http2Stream.State.CLOSED) {
          ctx.write(new io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame(bytes)
              .stream(f.stream()), ctx.voidPromise());
        }
        return;
      }
      s.data(f.content(), f.initialFlowControlledBytes(), f.isEndStream());
      return;
    }
    if (msg instanceof Http2ResetFrame f) {
      StreamSide s = streams.remove(f.stream().id());
      if (s != null) {
        s.gone();
      }
      return;
    }
    ReferenceCountUtil.release(msg);
  }

  /** Whether {@code stream}'s window takes more now. */
  boolean writable(Http2FrameStream stream) {
    Http2Stream s = codec.connection().stream(stream.id());
    return s != null && codec.connection().remote().flowController().isWritable(s);
  }

  /**
   * {@code side}'s stream answered to its end (or was reset by us). Once the call that ended it
   * has returned, its exchange serves the next stream if it is idle, else it lets go of what it
   * holds.
   */
  void ended(StreamSide side) {
    if (streams.get(side.stream().id()) == side) {
      streams.remove(side.stream().id());
      side.eventLoop().execute(() -> {
        if (side.exchange().parkIfIdle()) {
          idle.add(side);
        } else {
          side.exchange().clientGone();
        }
      });
    }
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof Http2FrameStreamEvent e
        && e.type() == Http2FrameStreamEvent.Type.Writability) {
      StreamSide s = streams.get(e.stream().id());
      if (s != null) {
        s.exchange().writabilityChanged();
      }
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    each(s -> s.exchange().writabilityChanged());
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    ArrayList<StreamSide> all = new ArrayList<>(streams.values());
    streams.clear();
    for (StreamSide s : all) {
      s.gone();
    }
    StreamSide s;
    while ((s = idle.poll()) != null) {
      s.exchange().clientGone();
    }
    ctx.fireChannelInactive();
  }

  private void each(java.util.function.Consumer<StreamSide> action) {
    for (StreamSide s : new ArrayList<>(streams.values())) {
      action.accept(s);
    }
  }

  /**
   * An error of one stream, not of the connection: a malformed request the codec found (DATA
   * that does not add up to its content-length), or a write to a stream the codec had closed (the
   * client reset it, or the connection goes away after a GOAWAY). That stream is reset and its
   * exchange lets go; the connection goes on, or ends as the codec decides, GOAWAY first.
   */
  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof io.netty.handler.codec.http2.Http2FrameStreamException e) {
      StreamSide s = streams.get(e.stream().id());
      if (s != null) {
        s.failed(e.error());
      }
      return;
    }
    ctx.fireExceptionCaught(cause);
  }
}
