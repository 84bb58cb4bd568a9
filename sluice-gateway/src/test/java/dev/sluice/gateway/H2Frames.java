package dev.sluice.gateway;

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
  static final int DATA = 0;
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
    return headers(id, true, ":method", method, ":path", path, ":scheme", "http",
        ":authority", "x");
  }

  /**
   * HEADERS (END_HEADERS, and END_STREAM when {@code end}) of these name/value pairs, as given:
   * no validation, so a test can send what a client must not.
   */
  H2Frames headers(int id, boolean end, String... nameValues) {
    Http2Headers h = new DefaultHttp2Headers(false);
    for (int i = 0; i + 1 < nameValues.length; i += 2) {
      h.add(nameValues[i], nameValues[i + 1]);
    }
    ByteBuf block = Unpooled.buffer();
    try {
      hpack.encodeHeaders(id, h, block);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    byte[] bytes = new byte[block.readableBytes()];
    block.readBytes(bytes);
    block.release();
    frame(HEADERS, (end ? 0x1 : 0) | 0x4, id, bytes);
    return this;
  }

  /** DATA on stream {@code id}, with END_STREAM when {@code end}. */
  H2Frames data(int id, boolean end, byte[] payload) {
    frame(DATA, end ? 0x1 : 0, id, payload);
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
   * What the server answered stream {@code stream}: its {@code :status} ("200", "400"...),
   * "RST_STREAM" or "GOAWAY" (for a malformed request, RFC 9113 8.1.1), or "EOF".
   */
  static String answer(InputStream in, int stream) throws IOException {
    io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder hpack =
        new io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder(false);
    while (true) {
      byte[] head = in.readNBytes(9);
      if (head.length < 9) {
        return "EOF";
      }
      int n = ((head[0] & 0xff) << 16) | ((head[1] & 0xff) << 8) | (head[2] & 0xff);
      int t = head[3] & 0xff;
      int flags = head[4] & 0xff;
      int id = ((head[5] & 0x7f) << 24) | ((head[6] & 0xff) << 16) | ((head[7] & 0xff) << 8)
          | (head[8] & 0xff);
      byte[] payload = in.readNBytes(n);
      if (payload.length < n) {
        return "EOF";
      }
      if (t == GOAWAY) {
        return "GOAWAY";
      }
      if (id != stream) {
        continue;
      }
      if (t == RST_STREAM) {
        return "RST_STREAM";
      }
      if (t == HEADERS) {
        int from = 0;
        int to = n;
        if ((flags & 0x8) != 0) {   // PADDED
          to -= payload[0] & 0xff;
          from = 1;
        }
        if ((flags & 0x20) != 0) {  // PRIORITY
          from += 5;
        }
        try {
          Http2Headers h = hpack.decodeHeaders(id, Unpooled.wrappedBuffer(payload, from, to - from));
          return String.valueOf(h.status());
        } catch (Exception e) {
          throw new IOException(e);
        }
      }
    }
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
