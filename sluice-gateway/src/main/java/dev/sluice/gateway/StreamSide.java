package dev.sluice.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.util.AsciiString;
import java.util.Map;

/**
 * One HTTP/2 stream as the client of an {@link Exchange}: the stream framer of the one exchange.
 * Its request comes in as the HTTP/1.1 bytes the exchange reads (the head written from the
 * HEADERS frame, the DATA frames as a body of the declared length or as chunks), so every
 * request, whatever its protocol, meets one parser, one set of rules and one exchange. What the
 * exchange writes back (its own answers and the upstream's responses, HTTP/1.1 bytes) goes out as
 * a HEADERS frame and DATA frames: the head read by {@link ResponseHead} (its hop-by-hop fields
 * dropped), the body by its framing (chunks unwrapped). Reads pause by withholding the stream's
 * window: the client may send what its window holds, then waits. A side and its exchange serve
 * one stream at a time and, once its answer ended with the exchange idle, the connection's next
 * ({@link Http2Front} keeps them), as an HTTP/1.1 connection's exchange serves its next request.
 * Event loop only.
 */
final class StreamSide implements ClientSide {

  private static final byte[] CRLF = {'\r', '\n'};
  private static final byte[] LAST_CHUNK = {'0', '\r', '\n', '\r', '\n'};

  private final ChannelHandlerContext ctx;
  private Http2FrameStream stream;
  private final Http2Front front;
  private final String peerIp;
  private Exchange exchange;

  // The request, in.
  private final HeadWriter head = new HeadWriter();
  private boolean chunkedRequest;
  /** The request's declared content-length, or -1; and the DATA bytes seen. */
  private long declared;
  private long received;
  private int paused;
  /** Bytes consumed while paused, returned to the client's window on resume. */
  private int unacknowledged;

  // The response, out.
  private final ResponseHead response = new ResponseHead();
  private boolean headRequest;
  private ByteBuf out;
  private boolean headersSent;
  private boolean ended;

  StreamSide(ChannelHandlerContext ctx, Http2Front front, String peerIp) {
    this.ctx = ctx;
    this.front = front;
    this.peerIp = peerIp;
  }

  /** Serves {@code stream} from its HEADERS on. */
  void bind(Http2FrameStream stream) {
    this.stream = stream;
    chunkedRequest = false;
    declared = -1;
    received = 0;
    paused = 0;
    unacknowledged = 0;
    headRequest = false;
    headersSent = false;
    ended = false;
    if (out != null) {
      out.release();
      out = null;
    }
  }

  Http2FrameStream stream() {
    return stream;
  }

  void exchange(Exchange exchange) {
    this.exchange = exchange;
  }

  Exchange exchange() {
    return exchange;
  }

  /**
   * The request's HEADERS: its head in HTTP/1.1 bytes for the exchange; {@code end} when the
   * stream carries no body.
   */
  void headers(Http2Headers h, boolean end) {
    HeadWriter w = head.reset();
    CharSequence method = h.method();
    CharSequence path = h.path();
    CharSequence authority = h.authority();
    headRequest = method != null && AsciiString.contentEquals("HEAD", method);
    w.put(method == null ? "" : method).put(" ").put(path == null ? "" : path)
        .put(" HTTP/1.1\r\n");
    if (authority != null) {
      w.put("host: ").put(authority).crlf();
    }
    boolean length = false;
    StringBuilder cookies = null;
    for (Map.Entry<CharSequence, CharSequence> e : h) {
      CharSequence name = e.getKey();
      if (name.length() > 0 && name.charAt(0) == ':') {
        continue;
      }
      if (AsciiString.contentEqualsIgnoreCase("host", name) && authority != null
          && AsciiString.contentEquals(authority, e.getValue())) {
        continue;   // :authority says it already
      }
      if (AsciiString.contentEqualsIgnoreCase("cookie", name)) {
        // RFC 9113, 8.2.3: cookies split into fields are one field again for HTTP/1.1.
        cookies = cookies == null ? new StringBuilder() : cookies.append("; ");
        cookies.append(e.getValue());
        continue;
      }
      if (AsciiString.contentEqualsIgnoreCase("content-length", name)) {
        length = true;
        declared = declaredLength(e.getValue());
      }
      w.put(name).put(": ").put(e.getValue()).crlf();
    }
    if (cookies != null) {
      w.field("cookie", cookies.toString());
    }
    chunkedRequest = !end && !length;
    if (chunkedRequest) {
      w.put("transfer-encoding: chunked\r\n");
    }
    w.crlf();
    exchange.read(w.toBuffer(ctx.alloc()));
  }

  /** A content-length's value as a number, or -1 (the exchange's parser refuses it). */
  private static long declaredLength(CharSequence v) {
    long n = 0;
    if (v.length() == 0 || v.length() > 15) {
      return -1;
    }
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      n = n * 10 + (c - '0');
    }
    return n;
  }

  /** A DATA frame of the request: taken over; {@code flowBytes} count against the window. */
  void data(ByteBuf data, int flowBytes, boolean end) {
    received += data.readableBytes();
    if (declared >= 0 && (received > declared || end && received != declared)) {
      // RFC 9113, 8.1.1: DATA that does not add up to the declared length is malformed.
      data.release();
      malformed();
      return;
    }
    if (flowBytes > 0) {
      if (paused != 0) {
        unacknowledged += flowBytes;
      } else {
        acknowledge(flowBytes);
      }
    }
    if (chunkedRequest) {
      ByteBuf framed = ctx.alloc().buffer(data.readableBytes() + 12);
      if (data.isReadable()) {
        framed.writeCharSequence(Integer.toHexString(data.readableBytes()),
            java.nio.charset.StandardCharsets.US_ASCII);
        framed.writeBytes(CRLF).writeBytes(data).writeBytes(CRLF);
      }
      data.release();
      if (end) {
        framed.writeBytes(LAST_CHUNK);
      }
      exchange.read(framed);
    } else {
      exchange.read(data);
    }
  }

  /** Trailers end a chunked request (their fields are not forwarded). */
  void trailers() {
    if (chunkedRequest) {
      exchange.read(Unpooled.wrappedBuffer(LAST_CHUNK));
    }
  }

  private void acknowledge(int bytes) {
    ctx.write(new DefaultHttp2WindowUpdateFrame(bytes).stream(stream), ctx.voidPromise());
  }

  @Override
  public EventLoop eventLoop() {
    return ctx.channel().eventLoop();
  }

  @Override
  public ByteBufAllocator alloc() {
    return ctx.alloc();
  }

  @Override
  public boolean isActive() {
    return !ended && ctx.channel().isActive();
  }

  @Override
  public boolean isWritable() {
    return ctx.channel().isWritable() && front.writable(stream);
  }

  /** The exchange's HTTP/1.1 bytes: the response head, then its body, as frames. */
  @Override
  public void write(ByteBuf bytes) {
    if (ended) {
      bytes.release();
      return;
    }
    if (out != null) {
      ByteBuf both = ctx.alloc().buffer(out.readableBytes() + bytes.readableBytes());
      both.writeBytes(out).writeBytes(bytes);
      out.release();
      bytes.release();
      bytes = both;
    }
    out = null;
    while (bytes.isReadable() && !ended) {
      if (!headersSent) {
        int end = headEnd(bytes);
        if (end < 0) {
          out = bytes;   // the head's rest is on its way
          return;
        }
        int length = end - bytes.readerIndex();
        if (!response.parse(bytes, length, headRequest)) {
          bytes.release();
          endNow();
          return;
        }
        bytes.skipBytes(length);
        if (!headers()) {
          continue;   // an interim response: the final head follows
        }
        continue;
      }
      body(bytes);
    }
    if (bytes.refCnt() > 0) {
      bytes.release();
    }
  }

  /** The head read as HEADERS; false for an interim (1xx) one. */
  private boolean headers() {
    Http2Headers h = new DefaultHttp2Headers(false, response.fieldCount() + 1);
    h.status(AsciiString.of(Integer.toString(response.status())));
    for (int i = 0; i < response.fieldCount(); i++) {
      if (response.kept(i)) {
        h.add(response.lowerName(i), response.value(i));
      }
    }
    boolean interim = response.interim();
    boolean end = !interim && response.bodyDone();
    ctx.write(new DefaultHttp2HeadersFrame(h, end).stream(stream), ctx.voidPromise());
    if (!interim) {
      headersSent = true;
      if (end) {
        finish();
      }
    }
    return !interim;
  }

  private void body(ByteBuf bytes) {
    int from = bytes.readerIndex();
    int n = bytes.readableBytes();
    ByteBuf data;
    int k;
    if (response.framing() == ResponseHead.Framing.CHUNKED) {
      data = ctx.alloc().buffer(n);
      k = response.chunkedBody(bytes, from, n, data);
      if (k < 0) {
        data.release();
        bytes.skipBytes(n);
        endNow();
        return;
      }
    } else {
      k = response.body(bytes, from, n);
      data = bytes.retainedSlice(from, k);
    }
    bytes.skipBytes(k);
    boolean done = response.bodyDone();
    if (data.isReadable() || done) {
      ctx.write(new DefaultHttp2DataFrame(data, done).stream(stream), ctx.voidPromise());
    } else {
      data.release();
    }
    if (done) {
      finish();
    }
    if (k < n) {
      bytes.skipBytes(bytes.readableBytes());   // past the response: nothing more is ours
    }
  }

  private void finish() {
    ended = true;
    front.ended(this);
  }

  private static int headEnd(ByteBuf buf) {
    int i = buf.indexOf(buf.readerIndex(), buf.writerIndex(), (byte) '\n');
    while (i >= 0) {
      if (i + 2 < buf.writerIndex() && buf.getByte(i + 1) == '\r' && buf.getByte(i + 2) == '\n') {
        return i + 3;
      }
      i = buf.indexOf(i + 1, buf.writerIndex(), (byte) '\n');
    }
    return -1;
  }

  @Override
  public void flush() {
    ctx.flush();
  }

  @Override
  public void pause(int reason) {
    paused |= reason;
  }

  @Override
  public void resume(int reason) {
    int before = paused;
    paused &= ~reason;
    if (before != 0 && paused == 0 && unacknowledged > 0 && !ended) {
      acknowledge(unacknowledged);
      unacknowledged = 0;
      ctx.flush();
    }
  }

  @Override
  public boolean paused(int reason) {
    return (paused & reason) != 0;
  }

  /** The response's end came with the exchange's: a body framed by its end, or none at all. */
  @Override
  public void endAfterWrites() {
    if (ended) {
      return;
    }
    if (headersSent) {
      ctx.write(new DefaultHttp2DataFrame(Unpooled.EMPTY_BUFFER, true).stream(stream),
          ctx.voidPromise());
      ctx.flush();
      finish();
    } else {
      endNow();
    }
  }

  @Override
  public void endNow() {
    if (ended) {
      return;
    }
    ended = true;
    ctx.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.CANCEL).stream(stream),
        ctx.voidPromise());
    front.ended(this);
  }

  /** A malformed request: the stream is reset with PROTOCOL_ERROR, nothing more goes on. */
  private void malformed() {
    failed(Http2Error.PROTOCOL_ERROR);
  }

  /** The stream failed with {@code error} (malformed, or closed under a write): reset it. */
  void failed(Http2Error error) {
    if (ended) {
      return;
    }
    ended = true;
    if (stream.state() != io.netty.handler.codec.http2.Http2Stream.State.CLOSED) {
      ctx.writeAndFlush(new DefaultHttp2ResetFrame(error).stream(stream), ctx.newPromise());
    }
    front.ended(this);
  }

  /** The client reset the stream, or its connection went: the exchange's client is gone. */
  void gone() {
    ended = true;
    if (out != null) {
      out.release();
      out = null;
    }
    exchange.clientGone();
  }

  @Override
  public String peerIp() {
    return peerIp;
  }

  @Override
  public String protocol() {
    return "HTTP/2.0";
  }
}
