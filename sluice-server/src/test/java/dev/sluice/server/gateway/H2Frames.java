package dev.sluice.server.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersEncoder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/2 frames written by a test, for what a well-behaved client will not send: the connection
 * preface, HEADERS with any pseudo-headers, RST_STREAM bursts. Headers are HPACK-encoded by
 * Netty's encoder (its state carries over between calls, as on one connection).
 */
final class H2Frames {

  static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
      .getBytes(StandardCharsets.US_ASCII);
  static final int HEADERS = 1;
  static final int RST_STREAM = 3;
  static final int SETTINGS = 4;
  static final int GOAWAY = 7;

  private final Http2HeadersEncoder hpack =
      new DefaultHttp2HeadersEncoder(Http2HeadersEncoder.NEVER_SENSITIVE, false);
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  /** The preface and an empty SETTINGS frame. */
  H2Frames preface() {
    out.writeBytes(PREFACE);
    frame(SETTINGS, 0, 0, new byte[0]);
    return this;
  }

  /** A complete GET (END_STREAM, END_HEADERS) of {@code path} on stream {@code id}. */
  H2Frames get(int id, String method, String path) {
    Http2Headers h = new DefaultHttp2Headers().method(method).path(path).scheme("http")
        .authority("x");
    ByteBuf block = Unpooled.buffer();
    try {
      hpack.encodeHeaders(id, h, block);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    byte[] bytes = new byte[block.readableBytes()];
    block.readBytes(bytes);
    block.release();
    frame(HEADERS, 0x1 | 0x4, id, bytes);
    return this;
  }

  /** RST_STREAM with CANCEL. */
  H2Frames reset(int id) {
    frame(RST_STREAM, 0, id, new byte[] {0, 0, 0, 8});
    return this;
  }

  private void frame(int type, int flags, int id, byte[] payload) {
    int n = payload.length;
    out.write(n >>> 16);
    out.write(n >>> 8);
    out.write(n);
    out.write(type);
    out.write(flags);
    out.write(id >>> 24);
    out.write(id >>> 16);
    out.write(id >>> 8);
    out.write(id);
    out.writeBytes(payload);
  }

  /** What was written since the last call. */
  byte[] take() {
    byte[] b = out.toByteArray();
    out.reset();
    return b;
  }

  /**
   * Reads frames from {@code in} until one of {@code type} arrives (its stream's HEADERS, a
   * GOAWAY); returns its type, or -1 at EOF.
   */
  static int readUntil(InputStream in, int type, int stream) throws IOException {
    while (true) {
      byte[] head = in.readNBytes(9);
      if (head.length < 9) {
        return -1;
      }
      int n = ((head[0] & 0xff) << 16) | ((head[1] & 0xff) << 8) | (head[2] & 0xff);
      int t = head[3] & 0xff;
      int id = ((head[5] & 0x7f) << 24) | ((head[6] & 0xff) << 16) | ((head[7] & 0xff) << 8)
          | (head[8] & 0xff);
      if (in.readNBytes(n).length < n) {
        return -1;
      }
      if (t == type && (stream < 0 || id == stream)) {
        return t;
      }
      if (t == GOAWAY && type != GOAWAY) {
        return GOAWAY;
      }
    }
  }
}
