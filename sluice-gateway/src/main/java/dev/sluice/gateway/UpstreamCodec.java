package dev.sluice.gateway;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The HTTP codec of an upstream connection of the Netty pipeline (HTTP/2 streams): Netty's
 * request encoder and response decoder, which also knows each response's request (a HEAD's
 * response has no body, whatever it says) and tells whether bytes are left over after a response
 * ({@link #leftover}): an upstream that sent more than its response framed is out of step, and
 * its connection must not serve another request.
 */
final class UpstreamCodec extends CombinedChannelDuplexHandler<UpstreamCodec.Decoder,
    UpstreamCodec.Encoder> {

  UpstreamCodec() {
    Decoder decoder = new Decoder();
    init(decoder, new Encoder(decoder));
  }

  /** Bytes received and not decoded on {@code up}'s codec: a response's unframed excess. */
  static int leftover(Channel up) {
    UpstreamCodec codec = up.pipeline().get(UpstreamCodec.class);
    return codec == null ? 0 : codec.inboundHandler().leftover();
  }

  /** No byte held undecoded and no request waiting for its response: removable. */
  boolean atRest() {
    return inboundHandler().leftover() == 0 && inboundHandler().methods.isEmpty();
  }

  static final class Decoder extends HttpResponseDecoder {
    private final ArrayDeque<HttpMethod> methods = new ArrayDeque<>(2);

    Decoder() {
      super(8192, 64 * 1024, 64 * 1024);
    }

    int leftover() {
      return actualReadableBytes();
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, io.netty.buffer.ByteBuf in,
        List<Object> out) throws Exception {
      int before = out.size();
      super.decode(ctx, in, out);
      for (int i = before; i < out.size(); i++) {
        if (out.get(i) instanceof HttpResponse r && r.status().code() >= 200) {
          methods.poll();
        }
      }
    }

    @Override
    protected boolean isContentAlwaysEmpty(HttpMessage msg) {
      HttpMethod m = methods.peek();
      if (HttpMethod.HEAD.equals(m)) {
        return true;
      }
      return super.isContentAlwaysEmpty(msg);
    }
  }

  static final class Encoder extends HttpRequestEncoder {
    private final Decoder decoder;

    Encoder(Decoder decoder) {
      this.decoder = decoder;
    }

    @Override
    protected void encodeInitialLine(io.netty.buffer.ByteBuf buf, HttpRequest request)
        throws Exception {
      decoder.methods.add(request.method());
      super.encodeInitialLine(buf, request);
    }
  }
}
