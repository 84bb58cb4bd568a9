package dev.sluice.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;

/**
 * The upstream side of a {@link RelayHandler}: one kept-alive connection ({@link UpstreamLink}),
 * the request head and body written to it as they come, the response head read in
 * place and rewritten ({@link ResponseHead}), the response body relayed as the buffers it arrives
 * in until its framing says it ended, and the response timeout. What the client gets besides the
 * upstream's bytes (the limit headers, a generated 502 or 504) comes from the handler through
 * {@link Exchange}.
 *
 * <p>A connection is reused only when the exchange ended exactly as framed on both sides: any
 * framing error, bytes the upstream sent beyond its response, a response that came before the
 * request's body was sent, or a timeout closes it. One per client connection; event loop only.
 */
final class RelayUpstream implements UpstreamLink.Side {

  private static final int MAX_RESPONSE_HEAD = 64 * 1024;

  /** The client side's part of an exchange. */
  interface Exchange {
    /** Adds the client side's fields (the limit headers) to the response head. */
    void head(HeadWriter w, int status);

    /** The response ended; the connection can read its next request. */
    void ended();

    /**
     * The response ends without its framing's end: a body framed by the close
     * ({@code complete}) or one cut short. The client's side ends too.
     */
    void cutShort(boolean complete);

    /**
     * No response head came: the client side answers {@code status} (502 or 504);
     * {@code reached}: the request was written to a connection (the app may have seen it).
     */
    void failed(HttpResponseStatus status, boolean reached);
  }

  private enum State { IDLE, SENT, BODY }

  private final ClientSide client;
  private final UpstreamLink link;
  private final HeadWriter writer;
  private final Exchange exchange;
  private final ResponseHead response = new ResponseHead();

  private State state = State.IDLE;
  /** What waits for the connection: the head and the body parts so far. */
  private final ArrayDeque<ByteBuf> unsent = new ArrayDeque<>(2);
  /** A response head that has not fully arrived. */
  private ByteBuf upIn;
  private boolean headRequest;
  /** Whether the request's last byte has been written (or queued) upstream. */
  private boolean requestDone;
  private Snapshot snap;
  private long sentNanos;
  private long answeredNanos = -1;
  private int status;
  private long bodyBytes;
  /**
   * Set when the client went away while its request was with the upstream: the response head
   * is read only for its status, which this gets (0: no answer came; -1: the request never
   * reached a connection); nothing goes to the client.
   */
  private java.util.function.IntConsumer detached;

  RelayUpstream(ClientSide client, Upstream upstream, UpstreamPool pool,
      GatewayEvents events, HeadWriter writer, Exchange exchange) {
    this.client = client;
    this.link = new UpstreamLink(client, upstream, pool, events, this);
    this.writer = writer;
    this.exchange = exchange;
  }

  /**
   * Sends a request head; {@code complete} when the request has no body, else {@link #body}
   * parts follow, the last one with {@code last}.
   */
  void send(ByteBuf head, boolean headRequest, boolean complete, Snapshot snap) {
    this.headRequest = headRequest;
    this.snap = snap;
    this.requestDone = complete;
    this.status = 0;
    this.bodyBytes = 0;
    this.answeredNanos = -1;
    this.sentNanos = System.nanoTime();
    state = State.SENT;
    if (link.link(snap)) {
      write(head, complete);
    } else {
      unsent.add(head);
    }
  }

  @Override
  public void connected() {
    ByteBuf b;
    while ((b = unsent.poll()) != null) {
      write(b, unsent.isEmpty() && requestDone);
    }
  }

  @Override
  public void connectFailed(Throwable cause) {
    releaseUnsent();
    fail(HttpResponseStatus.BAD_GATEWAY, "could not connect: " + Generated.reason(cause), false);
  }

  /** A part of the request's body, as received; {@code last} for its final part. */
  void body(ByteBuf part, boolean last) {
    if (last) {
      requestDone = true;
    }
    if (state != State.SENT && state != State.BODY) {
      part.release();   // the exchange failed or ended: nothing more goes up
      return;
    }
    if (link.channel() == null) {
      unsent.add(part);
      return;
    }
    write(part, last);
  }

  private void write(ByteBuf b, boolean last) {
    link.write(b, true);
    if (last && state == State.SENT) {
      link.sent(snap);
    }
  }

  /** The response's status, once its head arrived (0 before). */
  int status() {
    return status;
  }

  /** The response body's bytes relayed so far. */
  long bodyBytes() {
    return bodyBytes;
  }

  /** From sending the request to the response head, in microseconds; -1 without an answer. */
  long upstreamMicros() {
    return answeredNanos < 0 ? -1 : (answeredNanos - sentNanos) / 1000;
  }

  @Override
  public void read(Object msg) {
    if (!(msg instanceof ByteBuf buf) || state == State.IDLE) {
      link.unexpected(msg);
      return;
    }
    if (state == State.SENT) {
      buf = responseHead(buf);
      if (buf == null) {
        return;
      }
    }
    relayBody(buf);
  }

  /** Reads the response head from {@code buf}; returns what follows it, or null for now. */
  private ByteBuf responseHead(ByteBuf buf) {
    if (upIn != null) {
      upIn.writeBytes(buf);
      buf.release();
      buf = upIn;
      upIn = null;
    }
    while (true) {
      int end = headEnd(buf);
      if (end < 0) {
        if (buf.readableBytes() > MAX_RESPONSE_HEAD) {
          buf.release();
          fail(HttpResponseStatus.BAD_GATEWAY, "invalid response: head over "
              + MAX_RESPONSE_HEAD + " bytes", true);
          return null;
        }
        upIn = client.alloc().buffer(Math.max(1024, buf.readableBytes() * 2));
        upIn.writeBytes(buf);
        buf.release();
        return null;
      }
      int length = end - buf.readerIndex();
      if (!response.parse(buf, length, headRequest) || response.status() == 101) {
        buf.release();
        fail(HttpResponseStatus.BAD_GATEWAY, "invalid response head", true);
        return null;
      }
      buf.skipBytes(length);
      if (!response.interim()) {
        break;
      }
      if (detached == null) {
        response.writeInterim(writer.reset());
        client.write(writer.toBuffer(client.alloc()));
      }
    }
    link.answered();
    answeredNanos = System.nanoTime();
    status = response.status();
    if (detached != null) {
      buf.release();
      link.close();
      state = State.IDLE;
      heard(status);
      return null;
    }
    HeadWriter w = writer.reset();
    response.writeHead(w);
    exchange.head(w, status);
    w.crlf();
    client.write(w.toBuffer(client.alloc()));
    state = State.BODY;
    return buf;
  }

  /** The index after a head's empty line in {@code buf}, or -1. */
  private static int headEnd(ByteBuf buf) {
    int from = buf.readerIndex();
    int to = buf.writerIndex();
    while (true) {
      int lf = buf.indexOf(from, to, (byte) '\n');
      if (lf < 0) {
        return -1;
      }
      if (lf - 3 >= buf.readerIndex() && buf.getByte(lf - 1) == '\r'
          && buf.getByte(lf - 2) == '\n' && buf.getByte(lf - 3) == '\r') {
        return lf + 1;
      }
      from = lf + 1;
    }
  }

  private void relayBody(ByteBuf buf) {
    int n = buf.readableBytes();
    int body = response.body(buf, buf.readerIndex(), n);
    if (body < 0) {
      buf.release();
      client.flush();
      fail(HttpResponseStatus.BAD_GATEWAY, "invalid chunked body", true);
      return;
    }
    if (body > 0) {
      bodyBytes += body;
      if (body == n) {
        // The usual case: all of it is body, and the buffer itself goes on (no slice object).
        client.write(buf);
        buf = null;
      } else {
        client.write(buf.retainedSlice(buf.readerIndex(), body));
      }
    }
    if (buf != null) {
      buf.release();
    }
    boolean done = response.bodyDone();
    if (done) {
      // Done, or sent more than its response, or answered before the request was sent: the
      // connection is out of step with its framing and is not reused.
      if (!response.upstreamKeepAlive() || body < n || !requestDone) {
        link.close();
      }
      state = State.IDLE;
    }
    client.flush();
    if (!client.isWritable()) {
      link.clientWritable(false);
    }
    if (done) {
      exchange.ended();
    }
  }

  /** Whether the response head has been sent to the client. */
  boolean responseStarted() {
    return state == State.BODY;
  }

  /** Whether an exchange is in flight (sent, not yet answered to its end). */
  boolean busy() {
    return state != State.IDLE;
  }

  /** Whether the response closes the client connection (a body framed by the close). */
  boolean closesClient() {
    return response.closesClient();
  }

  @Override
  public void closed() {
    if (state == State.SENT) {
      fail(HttpResponseStatus.BAD_GATEWAY, "closed the connection before answering", true);
    } else if (state == State.BODY) {
      // The end of a body framed by the close, or a body cut short: the client's ends too.
      state = State.IDLE;
      exchange.cutShort(response.closesClient());
    }
  }

  @Override
  public void timedOut() {
    if (state == State.SENT) {
      fail(HttpResponseStatus.GATEWAY_TIMEOUT, "no response within "
          + snap.gateway.upstreamResponseTimeout().toMillis() + " ms", true);
    }
  }

  /**
   * The exchange failed: the upstream connection closes, and the client is answered 502 or 504
   * by the client side, or, once the response has begun, its connection closes. The client
   * learns no more than the status; the upstream's address and the cause are for the log.
   */
  void fail(HttpResponseStatus status, String cause, boolean reached) {
    link.failed(status, cause);
    releaseUnsent();
    boolean began = state == State.BODY;
    state = State.IDLE;
    if (detached != null) {
      heard(reached ? 0 : -1);
    } else if (began) {
      exchange.cutShort(false);
    } else {
      exchange.failed(status, reached);
    }
  }

  /**
   * Whether the request is with the upstream: written, or part of it, to a connection, and no
   * response head back yet (an app may be working on it).
   */
  boolean awaitingAnswer() {
    return state == State.SENT && link.channel() != null;
  }

  /**
   * The client went away while its request was with the upstream ({@link #awaitingAnswer}): the
   * exchange goes on without it until the response head, only for its status, which
   * {@code heard} gets (0 when none comes, -1 when the request never reached a connection); then
   * the connection closes. A request whose body the client left unfinished gets the response
   * timeout from now.
   */
  void detach(java.util.function.IntConsumer heard) {
    this.detached = heard;
    releaseUnsent();
    if (!requestDone) {
      link.sent(snap);
    }
  }

  private void heard(int status) {
    java.util.function.IntConsumer h = detached;
    detached = null;
    h.accept(status);
  }

  /** The client broke its request's framing mid-body: nothing more goes up, and this closes. */
  void abort() {
    link.close();
    releaseUnsent();
    state = State.IDLE;
  }

  private void releaseUnsent() {
    ByteBuf b;
    while ((b = unsent.poll()) != null) {
      b.release();
    }
  }

  /** Follows the client's writability: a client that does not read stops the upstream's reads. */
  void clientWritable(boolean writable) {
    link.clientWritable(writable);
  }

  /** The client side is done: an idle connection goes back to the loop's pool, else closes. */
  /** Between exchanges, with nothing in flight: the connection goes back to the loop's pool. */
  void park() {
    if (state == State.IDLE) {
      link.park();
    }
  }

  void release() {
    releaseUnsent();
    link.release(state == State.IDLE);
    ReferenceCountUtil.release(upIn);
    upIn = null;
  }
}
