package dev.sluice.gateway;

import dev.sluice.netty.ReadGate;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Serves {@link DecisionApi#PATH} on the gateway's listener, after the front handler (which has
 * already bounded the head and the body by {@code gateway.maxBodyBytes}) and before the rate
 * limiter: a decision request is neither limited by the gateway's routes nor proxied. The body
 * is gathered up to {@link DecisionApi#MAX_BODY_BYTES}; while the decision is pending, reads on
 * this connection pause and resume once the answer is written, on the connection's own thread.
 */
final class CheckHandler extends ChannelInboundHandlerAdapter {

  /** The read-gate bit of a pending decision. */
  static final int CHECK = 16;

  private final DecisionApi api;
  private HttpRequest request;
  private ByteBuf body;
  private boolean tooLarge;

  CheckHandler(DecisionApi api) {
    this.api = api;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof HttpRequest r) {
      String uri = r.uri();
      if (!(uri.equals(DecisionApi.PATH) || uri.startsWith(DecisionApi.PATH + "?"))) {
        request = null;
        ctx.fireChannelRead(msg);
        return;
      }
      request = r;
      tooLarge = false;
      body = ctx.alloc().compositeBuffer();
      if (!HttpMethod.POST.equals(r.method())) {
        tooLarge = true; // discard the body
      }
    }
    if (request == null) {
      ctx.fireChannelRead(msg);
      return;
    }
    if (msg instanceof HttpContent c) {
      if (!tooLarge && body.readableBytes() + c.content().readableBytes()
          <= DecisionApi.MAX_BODY_BYTES) {
        ((io.netty.buffer.CompositeByteBuf) body).addComponent(true, c.content().retain());
      } else {
        tooLarge = true;
      }
    }
    ReferenceCountUtil.release(msg);
    if (msg instanceof LastHttpContent) {
      finish(ctx);
    }
  }

  private void finish(ChannelHandlerContext ctx) {
    HttpRequest r = request;
    request = null;
    ByteBuf b = body;
    body = null;
    boolean keepAlive = HttpUtil.isKeepAlive(r);
    if (!HttpMethod.POST.equals(r.method())) {
      b.release();
      write(ctx, r, HttpResponseStatus.METHOD_NOT_ALLOWED, Generated.error("method not allowed",
          DecisionApi.PATH + " answers POST with a JSON body"), keepAlive);
      return;
    }
    if (tooLarge) {
      b.release();
      write(ctx, r, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, Generated.error(
          "payload too large", "a decision request may be at most " + DecisionApi.MAX_BODY_BYTES
              + " bytes"), keepAlive);
      return;
    }
    String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(b.nioBuffer()).toString();
    } catch (CharacterCodingException e) {
      write(ctx, r, HttpResponseStatus.BAD_REQUEST, Generated.error("bad request",
          "body : not UTF-8 (expected: a JSON object)"), keepAlive);
      return;
    } finally {
      b.release();
    }
    ReadGate.pause(ctx.channel(), CHECK);
    api.check(text).whenComplete((answer, error) -> ctx.executor().execute(() -> {
      ReadGate.resume(ctx.channel(), CHECK);
      if (error != null) {
        write(ctx, r, HttpResponseStatus.INTERNAL_SERVER_ERROR,
            Generated.error("internal error", String.valueOf(error)), false);
      } else {
        write(ctx, r, HttpResponseStatus.valueOf(answer.status()), answer.json(), keepAlive);
      }
    }));
  }

  private static void write(ChannelHandlerContext ctx, HttpRequest r, HttpResponseStatus status,
      String json, boolean keepAlive) {
    var response = Generated.json(r, status, json, null, keepAlive);
    ctx.writeAndFlush(response).addListener(keepAlive ? ChannelFutureListener.CLOSE_ON_FAILURE
        : ChannelFutureListener.CLOSE);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    if (body != null) {
      body.release();
      body = null;
    }
  }
}
