package dev.sluice.gateway;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import dev.sluice.core.policy.Admission;
import dev.sluice.core.policy.Admission.Outcome;
import dev.sluice.core.policy.HumanCheck;
import dev.sluice.core.policy.RequestVerdict;
import dev.sluice.moderation.Surface;
import dev.sluice.netty.ReadGate;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ReferenceCountUtil;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The one owner of an HTTP/1.1 connection, for its whole life, at the level of bytes: Netty's HTTP
 * objects are neither decoded nor encoded, which is most of what a proxied request costs on the
 * JVM (docs/bench/gateway.md). Per request:
 *
 * <ol>
 *   <li>The head is found and read in place ({@link RequestHead}: strict RFC 9112, the framing,
 *       one {@code Host}, the target normalised by core's {@code RequestTarget}); what breaks a
 *       rule is answered (400, 405, 413, 414, 417, 431, 501, 505) and the connection closes.
 *   <li>Core's admission step decides ({@link Admission}: route, rules, store, delay). A refusal
 *       is answered here (429, 503, from {@link Answers}, with no upstream), a delayed request
 *       waits on a timer of this loop, a remote store's decision arrives on this loop; reads
 *       go on meanwhile until {@value #MAX_AHEAD} bytes are held, then pause.
 *   <li>An allowed request goes upstream ({@link RelayUpstream}) as its own bytes with the
 *       forwarding fields rewritten ({@link Forwarding}); its body streams by its framing (a
 *       length, or chunked: checked chunk by chunk, and a broken one is a 400, the upstream
 *       connection closed, never completed); a route the policy moderates has its body gathered
 *       and checked first (422). The response comes back as bytes with the limit headers.
 *   <li>Pipelined requests are read one after the other, each answered in order; a client that
 *       does not read its answers stops being read.
 * </ol>
 *
 * <p>The connection is handed over only when it stops being HTTP/1.1: a WebSocket upgrade goes,
 * with the bytes after it, to the Netty pipeline that decides and relays WebSockets (HTTP/2
 * switches before this handler sees a byte). Access log entries are written here. One instance
 * per connection; event loop only.
 */
final class Exchange implements RelayUpstream.Exchange {

  /** Bytes a client may send ahead while its exchange is in flight before its reads pause. */
  static final int MAX_AHEAD = 64 * 1024;
  /** Paused while the client does not read what it was sent. */
  static final int CLIENT = 32;
  private static final String HEALTH_JSON = "{\"status\":\"ok\"}";

  private enum State {
    /** Waiting for a request head. */
    HEAD,
    /** The admission step has not decided yet (a remote store, a delay). */
    ADMITTING,
    /** The request goes upstream; its body is streamed. */
    BODY,
    /** The request is sent; its response is on its way. */
    RESPONSE,
    /** A refused request's body is read and dropped. */
    DRAIN,
    /** A moderated request's body, or a decision-API request's, is gathered. */
    HOLD,
    /** The connection ends: nothing more is read. */
    CLOSING
  }

  private final Snapshot.Source snapshots;
  private final GatewayEvents events;
  private final Upstream upstream;
  private final UpstreamPool pool;
  private final DecisionApi decisionApi;
  private final String proto;
  /** Takes an admitted WebSocket upgrade's connection over, or null (an HTTP/2 stream). */
  private final Consumer<Upgrade> webSocket;

  /**
   * A WebSocket upgrade the exchange decided, for the WebSocket pipeline: the request as read,
   * what the client sent after it, the snapshot it was decided under, what to call with the
   * status the client got when the connection ends (the request's end), and whether it was
   * refused (then completed and closed with 1013, the settings' way of refusing a connect).
   */
  record Upgrade(io.netty.handler.codec.http.HttpRequest request, ByteBuf rest, Snapshot snap,
      java.util.function.IntConsumer ended, boolean refused) {}

  private final ClientSide client;
  private RequestHead head;
  /** When the current request was decided (epoch microseconds), for the access log; or -1. */
  private long decidedMicros = -1;
  private Forwarding.Peer peer;
  /** The peer as the policy trusts it or not: made once per connection, picked per request. */
  private Forwarding.Peer untrustedPeer;
  private Forwarding.Peer trustedPeer;
  private InetAddress peerAddress;
  private final HeadWriter writer = new HeadWriter();
  private final FieldWriter fieldWriter = new FieldWriter(writer);
  private final Answers answers = new Answers();
  private State state = State.HEAD;
  private boolean stopped;
  /** The client shut its output: answer what it sent, then close. */
  private boolean inputClosed;
  /** What the client sent that is not handled yet. */
  private ByteBuf in;
  private final HeadEnd headEnd = new HeadEnd();
  private RelayUpstream up;
  private Deadline headTimer;

  // The current exchange.
  private Snapshot snap;
  private Outcome outcome;
  /** What this connection's admissions reuse: one exchange at a time, so one scratch. */
  private final Admission.Scratch scratch = new Admission.Scratch();
  private ScheduledFuture<?> delayTimer;
  private boolean keepAlive;
  /** The request body still to come: a length, or chunked. */
  private long bodyLeft;
  private boolean bodyChunked;
  private long bodySeen;
  /** Whether the request's body has been read to its end (or it has none). */
  private boolean bodyConsumed;
  private final ChunkedBody chunks = ChunkedBody.strict();
  /** A held body: the bytes as received, and for chunked the data the check reads. */
  private ByteBuf held;
  private ByteBuf heldData;
  private Map<String, Surface> moderated;
  /** The held body is a human-checked request's, read for its token. */
  private boolean verifying;
  /** A verified request's held body, and its text: forwarded once the check passed. */
  private ByteBuf verifiedRaw;
  private String verifiedText;
  private boolean answered;
  /**
   * The verdict of a request this exchange answered itself (its form, the health path, the
   * decision API, moderation, a failed upstream), or null: then the admission step's.
   */
  private RequestVerdict own;
  private int status;
  private long sentBytes;
  private boolean generated;
  /** Whether the request went upstream (its timing is logged). */
  private boolean forwarded;

  /**
   * The exchanges of {@code client} (from {@code peerAddress}); {@code webSocket} takes the
   * connection over for an admitted WebSocket upgrade, null where there is none to take (an
   * HTTP/2 stream, which carries no upgrade).
   */
  Exchange(Snapshot.Source snapshots, GatewayEvents events, Upstream upstream,
      UpstreamPool pool, DecisionApi decisionApi, String proto, ClientSide client,
      InetAddress peerAddress, Consumer<Upgrade> webSocket) {
    this.snapshots = snapshots;
    this.events = events;
    this.upstream = upstream;
    this.pool = pool;
    this.decisionApi = decisionApi;
    this.proto = proto;
    this.client = client;
    this.webSocket = webSocket;
    this.headTimer = new Deadline(client.eventLoop(), this::clientTimeout);
    this.up = new RelayUpstream(client, upstream, pool, events, writer, this);
    this.peerAddress = peerAddress;
    String ip = client.peerIp();
    head = new RequestHead(peerAddress, ip);
    untrustedPeer = new Forwarding.Peer(ip, false, proto);
    trustedPeer = new Forwarding.Peer(ip, true, proto);
    peer = untrustedPeer;
    armHeadTimer();
  }

  /** What the client sent next; taken over (released by this). */
  void read(ByteBuf buf) {
    if (stopped || state == State.CLOSING) {
      buf.release();
      return;
    }
    if (in == null) {
      in = buf;
    } else {
      if (in.writableBytes() < buf.readableBytes()) {
        ByteBuf bigger = client.alloc().buffer(in.readableBytes() + buf.readableBytes());
        headEnd.moved(in.readerIndex());
        bigger.writeBytes(in);
        in.release();
        in = bigger;
      }
      in.writeBytes(buf);
      buf.release();
    }
    process();
  }

  /** Handles what the client sent, as far as the current state allows. */
  private void process() {
    while (in != null && !stopped) {
      State before = state;
      int readable = in.readableBytes();
      switch (state) {
        case HEAD -> {
          if (!client.isWritable()) {
            client.pause(CLIENT);   // a client that does not read is not read
            return;
          }
          readHead();
        }
        case BODY, DRAIN, HOLD -> body();
        default -> {
          if (in.readableBytes() > MAX_AHEAD) {
            client.pause(ReadGate.PIPELINE);
          }
          return;
        }
      }
      if (in != null && !in.isReadable()) {
        in.release();
        in = null;
        headEnd.reset();
      }
      if (state == before && (in == null || in.readableBytes() == readable)) {
        break;   // waiting for more bytes
      }
    }
    if (in == null && inputClosed && state == State.HEAD) {
      client.endAfterWrites();
    }
  }

  private void readHead() {
    int end = headEnd.find(in);
    Snapshot s = snapshots.get();
    if (end == HeadEnd.BARE_LF) {
      refuseHead(s, 400, "a line ended by a bare LF");
      return;
    }
    if (end == HeadEnd.MISSING) {
      int lineEnd = in.indexOf(in.readerIndex(), in.writerIndex(), (byte) '\n');
      if (lineEnd < 0 && in.readableBytes() > s.gateway.maxInitialLineBytes()) {
        refuseHead(s, 414, "the request line may be at most "
            + s.gateway.maxInitialLineBytes() + " bytes");
      } else if (in.readableBytes() > s.gateway.maxInitialLineBytes()
          + s.gateway.maxHeaderBytes()) {
        refuseHead(s, 431, "the header section may be at most " + s.gateway.maxHeaderBytes()
            + " bytes");
      }
      return;
    }
    snap = s;
    int length = end - in.readerIndex();
    headTimer.disarm();
    if (!head.parse(in, length, s.config.policy().paths())) {
      in.skipBytes(length);
      refuseHead(s, head.status(), head.problem());
      return;
    }
    int line = head.requestLineBytes();
    if (line > s.gateway.maxInitialLineBytes()) {
      in.skipBytes(length);
      refuseHead(s, 414, "the request line may be at most " + s.gateway.maxInitialLineBytes()
          + " bytes");
      return;
    }
    if (length - line > s.gateway.maxHeaderBytes()) {
      in.skipBytes(length);
      refuseHead(s, 431, "the header section may be at most " + s.gateway.maxHeaderBytes()
          + " bytes");
      return;
    }
    in.skipBytes(length);
    beginExchange();
  }

  private void beginExchange() {
    // An upgrade leaves this exchange (handed over), or is answered and the connection closes.
    keepAlive = head.keepAlive() && !inputClosed && !upgrading();
    bodyChunked = head.chunked();
    bodyLeft = bodyChunked ? -1 : Math.max(0, head.contentLength());
    bodySeen = 0;
    bodyConsumed = !head.hasBody();
    chunks.reset(snap.gateway.maxHeaderBytes());
    answered = false;
    generated = false;
    own = null;
    forwarded = false;
    status = 0;
    sentBytes = 0;
    outcome = null;
    moderated = null;
    decidedMicros = -1;
    if (head.contentLength() > snap.gateway.maxBodyBytes()) {
      answer(413, "the request body may be at most " + snap.gateway.maxBodyBytes() + " bytes",
          true);
      return;
    }
    String path = head.target().path();
    String health = snap.gateway.healthPath();
    if (health != null && path.equals(health) && (head.isHead() || head.method().equals("GET"))) {
      generated = true;
      own = RequestVerdict.EXEMPT;
      write(answers.json(snap.http.responses(), 200, HEALTH_JSON, null, null, keepAlive,
          client.alloc()), 200);
      skipBody();
      return;
    }
    if (decisionApi != null && path.equals(DecisionApi.PATH)) {
      outcome = null;
      hold(null);
      return;
    }
    peer = snap.config.policy().clientAddress().trustsPeer(peerAddress) ? trustedPeer
        : untrustedPeer;
    // For the access log: the time the request was decided, which sluice replay decides it at.
    decidedMicros = snap.accessLog ? AccessEntry.nowMicros() : -1;
    admitted(snap.admission.admit(head, upgrading() ? DecisionListener.WS_CONNECT
        : DecisionListener.HTTP, scratch));
  }

  /** Does what the admission step said; waits (bytes held) while it has not decided. */
  private void admitted(Outcome o) {
    outcome = o;
    switch (o.action()) {
      case PENDING -> {
        state = State.ADMITTING;
        o.stage().whenComplete((done, e) -> {
          if (client.eventLoop().inEventLoop()) {
            decided(o, done);   // Redis on this loop: answered here, no task
          } else {
            client.eventLoop().execute(() -> decided(o, done));
          }
        });
      }
      case DELAY -> {
        state = State.ADMITTING;
        Admission a = snap.admission;
        delayTimer = client.eventLoop().schedule(() -> {
          delayTimer = null;
          decided(o, a.redecide(o));
        }, o.delayNanos(), TimeUnit.NANOSECONDS);
      }
      case FORWARD -> {
        if (upgrading()) {
          handOver(o, false);
          return;
        }
        if (verifiedRaw != null) {
          ByteBuf raw = verifiedRaw;
          String text = verifiedText;
          verifiedRaw = null;
          verifiedText = null;
          moderateThenForward(raw, text, moderatedFields());
          return;
        }
        Map<String, Surface> fields = moderatedFields();
        if (fields != null && head.hasBody()) {
          hold(fields);
        } else {
          forward(null);
        }
      }
      case VERIFY -> verify(o);
      case DENY -> deny(o);
      case CHALLENGE -> {
        // A challenge answers a GET; a body that came with one is read and dropped.
        int code = o.answer().status();
        generated = true;
        events.generated(code);
        write(answers.answer(o.answer(), keepAlive, client.alloc()), code);
        skipBody();
      }
      default -> refuse(o);
    }
  }

  /**
   * A human check: the token of a header is verified at once (the body streams on once it
   * passed); a form or JSON token is read from the body, gathered first.
   */
  private void verify(Outcome o) {
    HumanCheck h = o.humanCheck();
    if (h.from() == HumanCheck.TokenFrom.HEADER || !head.hasBody()) {
      admitted(snap.admission.verify(o, h.from() == HumanCheck.TokenFrom.HEADER ? h.token(head)
          : null));
      return;
    }
    if (head.contentLength() > h.maxBodyBytes()) {
      o.cancel();
      answer(413, "a human-checked request's body may be at most " + h.maxBodyBytes()
          + " bytes", true);
      return;
    }
    verifying = true;
    hold(null);
  }

  /** 403 for a denied request (the deny list, a failed human check); its body is dropped. */
  private void deny(Outcome o) {
    releaseVerified();
    if (head.expectContinue() && head.hasBody() && !bodyConsumed) {
      keepAlive = false;
    }
    generated = true;
    events.generated(403);
    write(answers.denied(o.responses(), o.denial(), head.header("accept"), head.header("origin"),
        head.method(), keepAlive, client.alloc()), 403);
    skipBody();
  }

  private void releaseVerified() {
    if (verifiedRaw != null) {
      verifiedRaw.release();
      verifiedRaw = null;
      verifiedText = null;
    }
  }

  /** A decision that was waited for: applied, then what the client sent meanwhile. */
  private void decided(Outcome waited, Outcome done) {
    if (stopped || outcome != waited) {
      done.cancel();
      return;
    }
    admitted(done);
    readAhead();
  }

  private Map<String, Surface> moderatedFields() {
    var m = snap.moderation;
    if (m.http().isEmpty()) {
      return null;
    }
    String route = m.routes().select(head).route();
    return route == null ? null : m.http().get(route);
  }

  /** Answers a refusal: 429, or 503 for a fail-closed rule; the body that follows is dropped. */
  private void refuse(Outcome o) {
    Decision d = o.decision();
    if (upgrading() && !d.degraded() && !snap.ws.refuseBeforeUpgrade()) {
      handOver(o, true);   // the upgrade completes, then closes with 1013 "try again later"
      return;
    }
    // A refused "Expect: 100-continue" request may or may not send its body: only closing keeps
    // the next request from being read as that body.
    if (head.expectContinue() && head.hasBody()) {
      keepAlive = false;
    }
    releaseVerified();
    ByteBuf out = answers.refusal(o.responses(), d, head.header("accept"), head.header("origin"),
        head.method(), keepAlive, client.alloc());
    events.generated(o.responses().status(d));
    write(out, o.responses().status(d));
    skipBody();
  }

  /** After an answer of the gateway's own: the rest of the request's body is read and dropped. */
  private void skipBody() {
    if (!keepAlive || bodyConsumed) {
      exchangeEnded();
      return;
    }
    state = State.DRAIN;
    bodyRead();
  }

  /** Sends the request upstream: the head, then the body ({@code body}: one gathered whole). */
  private void forward(ByteBuf body) {
    ByteBuf out = Forwarding.requestHead(head, head.target().forwardTarget(), writer.reset(),
        upstream.authority, peer, snap.clientHeaders).toBuffer(client.alloc());
    boolean complete = !head.hasBody() || body != null;
    state = complete ? State.RESPONSE : State.BODY;
    forwarded = true;
    bodyRead();
    up.send(out, head.isHead(), !head.hasBody(), snap);
    if (body != null) {
      up.body(body, true);
    }
  }

  /** Reads the request body from {@code in} by its framing, as the state says. */
  private void body() {
    int from = in.readerIndex();
    int n = in.readableBytes();
    int k;
    boolean done;
    if (bodyChunked) {
      k = chunks.read(in, from, n, state == State.HOLD && heldData != null ? heldData : null);
      if (k < 0) {
        badBody();
        return;
      }
      done = chunks.done();
    } else {
      k = (int) Math.min(bodyLeft, n);
      bodyLeft -= k;
      done = bodyLeft == 0;
    }
    bodySeen += k;
    bodyConsumed = done;
    bodyRead();
    if (verifying && state == State.HOLD && bodySeen > outcome.humanCheck().maxBodyBytes()) {
      in.skipBytes(k);
      verifying = false;
      outcome.cancel();
      keepAlive = false;
      answer(413, "a human-checked request's body may be at most "
          + outcome.humanCheck().maxBodyBytes() + " bytes", true);
      return;
    }
    if (bodySeen > snap.gateway.maxBodyBytes() && state != State.DRAIN) {
      in.skipBytes(k);
      tooLarge();
      return;
    }
    switch (state) {
      case BODY -> {
        if (k > 0 || done) {
          up.body(in.readRetainedSlice(k), done);
        }
        if (done) {
          state = up.busy() ? State.RESPONSE : State.HEAD;
          if (state == State.HEAD) {
            exchangeEnded();
          }
        }
      }
      case HOLD -> {
        held.writeBytes(in, k);
        if (done) {
          released();
        }
      }
      default -> {
        in.skipBytes(k);
        if (done) {
          exchangeEnded();
        }
      }
    }
  }

  /** A body whose chunked framing broke: 400 if nothing was answered yet, and close. */
  private void badBody() {
    up.abort();
    if (outcome != null) {
      outcome.withheld();   // an upstream never gets a request it could act on
    }
    keepAlive = false;
    in.skipBytes(in.readableBytes());
    if (!answered && !up.responseStarted()) {
      answer(400, "a malformed chunked body", true);
    } else {
      closeNow();
    }
  }

  /** A body over {@code gateway.maxBodyBytes}: 413 if nothing was answered yet, and close. */
  private void tooLarge() {
    up.abort();
    if (outcome != null) {
      outcome.withheld();
    }
    keepAlive = false;
    if (!answered && !up.responseStarted()) {
      answer(413, "the request body may be at most " + snap.gateway.maxBodyBytes() + " bytes",
          true);
    } else {
      closeNow();
    }
  }

  /** Gathers the body ({@code fields}: to moderate; null: for the decision API). */
  private void hold(Map<String, Surface> fields) {
    moderated = fields;
    state = State.HOLD;
    bodyRead();
    held = client.alloc().buffer(head.hasBody() && !bodyChunked ? (int) bodyLeft : 256);
    heldData = bodyChunked ? client.alloc().buffer(256) : null;
    if (head.expectContinue()) {
      client.write(Answers.continue100(client.alloc()));
      client.flush();
    }
    if (!head.hasBody()) {
      released();
    }
  }

  /** A held body is complete: checked, then forwarded or answered. */
  private void released() {
    ByteBuf raw = held;
    ByteBuf data = heldData != null ? heldData : held;
    held = null;
    String text = moderated != null || verifying ? data.toString(StandardCharsets.UTF_8)
        : strictUtf8(data);
    if (heldData != null) {
      heldData.release();
      heldData = null;
    }
    if (verifying) {
      verifying = false;
      verifiedRaw = raw;
      verifiedText = text;
      state = State.ADMITTING;
      admitted(snap.admission.verify(outcome, outcome.humanCheck().token(text)));
      return;
    }
    if (moderated == null) {
      raw.release();
      if (text == null) {
        answer(400, "the body is not UTF-8", false);
      } else {
        checkApi(text);
      }
      return;
    }
    moderateThenForward(raw, text, moderated);
  }

  /** A whole body: checked by the moderation section when it has {@code fields}, then sent up. */
  private void moderateThenForward(ByteBuf raw, String text, Map<String, Surface> fields) {
    ModerationHandler.Refusal refusal = fields == null ? null
        : ModerationHandler.check(snap.moderation, fields, text, events);
    if (refusal != null) {
      raw.release();
      if (outcome != null) {
        outcome.withheld();
      }
      generated = true;
      own = RequestVerdict.MODERATED;
      events.generated(422);
      write(answers.json(snap.http.responses(), 422, refusal.json(), head.header("origin"),
          head.method(), keepAlive, client.alloc()), 422);
      exchangeEnded();
      return;
    }
    forward(raw);
  }

  /** The bytes as UTF-8 text, or null when they are not valid UTF-8. */
  private static String strictUtf8(ByteBuf data) {
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
          .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
          .decode(data.nioBuffer()).toString();
    } catch (java.nio.charset.CharacterCodingException e) {
      return null;
    }
  }

  /** The decision API served on this listener (opted in): its answer, then the next request. */
  private void checkApi(String body) {
    if (!head.method().equals("POST")) {
      answer(405, DecisionApi.PATH + " answers POST with a JSON body", keepAlive);
      return;
    }
    if (bodySeen > DecisionApi.MAX_BODY_BYTES) {
      answer(413, "a decision request may be at most " + DecisionApi.MAX_BODY_BYTES + " bytes",
          keepAlive);
      return;
    }
    state = State.ADMITTING;
    decisionApi.check(body).whenComplete((a, e) -> client.eventLoop().execute(() -> {
      if (stopped) {
        return;
      }
      generated = true;
      own = RequestVerdict.EXEMPT;   // the decision API's own request is not limited
      int code = e != null ? 500 : a.status();
      String json = e != null ? Generated.error("internal error", null) : a.json();
      write(answers.json(snap.http.responses(), code, json, head.header("origin"),
          head.method(), keepAlive, client.alloc()), code);
      exchangeEnded();
      readAhead();
    }));
  }

  /** A generated error for the current request; with {@code close}, the connection ends. */
  private void answer(int code, String detail, boolean close) {
    keepAlive = keepAlive && !close;
    generated = true;
    own = RequestVerdict.INVALID;
    events.generated(code);
    write(answers.error(snap.http.responses(), code, detail, head.header("accept"),
        head.header("origin"), head.method(), keepAlive, null, client.alloc()), code);
    skipBody();
  }

  /** A head that cannot be served: answered, then the connection closes. */
  private void refuseHead(Snapshot s, int code, String detail) {
    snap = s;
    keepAlive = false;
    generated = true;
    events.generated(code);
    write(answers.error(s.http.responses(), code, detail, null, null, null, false, null,
        client.alloc()), code);
    events.verdict(null, RequestVerdict.INVALID);
    if (s.accessLog) {
      events.exchange(new AccessEntry(System.currentTimeMillis(), peer.ip(), "-", "-", code,
          sentBytes, null, null, RequestVerdict.INVALID.label(), -1, s.config.logging()));
    }
    in.skipBytes(in.readableBytes());
    state = State.CLOSING;
    lingeringClose();
  }

  private void write(ByteBuf out, int code) {
    answered = true;
    status = code;
    sentBytes = answers.bodyBytes();
    client.write(out);
    client.flush();
  }

  @Override
  public void head(HeadWriter w, int code) {
    status = code;
    Outcome o = outcome;
    if (o != null) {
      o.responded(code);   // rules counted on the upstream's answer (countStatus, cooldowns)
    }
    if (o != null && o.limitHeaders()) {
      o.responses().limitHeaders(o.decision(), fieldWriter);
    }
    if (!keepAlive && !up.closesClient()) {
      w.put("connection: close\r\n");
    } else if (head.http10() && !up.closesClient()) {
      w.put("connection: keep-alive\r\n");
    }
  }

  @Override
  public void ended() {
    answered = true;
    if (state == State.BODY) {
      // The upstream answered before the request's body was sent: the rest cannot be relied
      // on to be read as a body, so the connection ends with this exchange.
      keepAlive = false;
    }
    sentBytes = up.bodyBytes();
    exchangeEnded();
    readAhead();
  }

  /**
   * Answers 502 or 504 for the upstream, with the limit headers. A request that reached the
   * upstream and got no answer settles what it reserved as a failure; one that never reached it
   * counts nothing.
   */
  @Override
  public void failed(HttpResponseStatus code, boolean reached) {
    events.generated(code.code());
    generated = true;
    own = RequestVerdict.ERROR;
    boolean bodyPending = state == State.BODY;
    if (bodyPending) {
      keepAlive = false;
    }
    Outcome o = outcome;
    if (o != null && reached) {
      o.unanswered();
    } else if (o != null) {
      o.withheld();
    }
    write(answers.error(snap.http.responses(), code.code(), null, head.header("accept"),
        head.header("origin"), head.method(), keepAlive,
        o != null && o.limitHeaders() ? o.decision() : null, client.alloc()), code.code());
    exchangeEnded();
    readAhead();
  }

  /** The exchange is over: logged; the next request head is awaited, or the connection ends. */
  private void exchangeEnded() {
    events.verdict(outcome == null ? null : outcome.route(), verdict());
    if (snap != null && snap.accessLog) {
      events.exchange(accessEntry());
    }
    if (outcome != null) {
      outcome.ended();   // concurrency leases go back with the response's last byte
    }
    releaseVerified();
    verifying = false;
    outcome = null;
    moderated = null;
    if (!keepAlive || up.closesClient()) {
      state = State.CLOSING;
      if (in != null) {
        in.skipBytes(in.readableBytes());
      }
      up.release();   // an idle upstream connection serves the loop's next client now
      lingeringClose();
      return;
    }
    state = State.HEAD;
    client.resume(ReadGate.PIPELINE);
    armHeadTimer();
  }

  /** The current request's one verdict. */
  private RequestVerdict verdict() {
    return own != null ? own : outcome != null ? outcome.verdict() : RequestVerdict.EXEMPT;
  }

  private AccessEntry accessEntry() {
    Outcome o = outcome;
    Decision d = o == null ? null : o.decision();
    String rule = d == null ? null : d.allowed() && d.shadowRefused() ? d.shadowRule() : d.rule();
    String clientText;
    try {
      clientText = String.valueOf(head.clientAddress(snap.config.policy().clientAddress()));
    } catch (RuntimeException e) {
      clientText = peer.ip();
    }
    String host = head.header("host");
    return new AccessEntry(System.currentTimeMillis(), clientText, head.method(),
        head.target() == null ? "-" : head.target().forwardTarget(), status, sentBytes,
        o == null ? null : o.route(), rule, verdict().label(),
        forwarded ? up.upstreamMicros() : -1,
        snap.config.logging(), decidedMicros, client.protocol() != null ? client.protocol()
        : head.http10() ? "HTTP/1.0" : "HTTP/1.1",
        head.header("referer"), head.header("user-agent"), peer.ip(), host,
        AccessEntry.Forwarding.of(snap.config.trust(), head::headers), upgrading());
  }

  /** Goes on with what the client sent while its exchange was in flight. */
  private void readAhead() {
    boolean reading = state == State.HEAD || state == State.BODY || state == State.DRAIN
        || state == State.HOLD;
    if (reading && in != null && in.isReadable()) {
      // What arrived while the exchange waited: the next head, or this request's own body
      // (sent in the head's packet, before a human check's verifier or a remote store answered).
      process();
    } else if (in == null && inputClosed && state == State.HEAD) {
      client.endAfterWrites();
    }
  }

  /** Whether the current request is a WebSocket upgrade this connection can take. */
  private boolean upgrading() {
    return webSocket != null && head.websocketUpgrade();
  }

  /**
   * Hands an admitted upgrade's connection over to the WebSocket pipeline: the request as read
   * (its target normalised) and what followed it. This exchange stops; the request ends when
   * the connection does ({@link #webSocketEnded}), holding what it was admitted with (a
   * concurrency lease lasts the connection's life).
   */
  private void handOver(Outcome o, boolean refused) {
    outcome = null;   // not cancelled by stop(): it lasts as long as the connection
    Snapshot s = snap;
    ByteBuf rest = in != null ? in.retainedSlice() : io.netty.buffer.Unpooled.EMPTY_BUFFER;
    io.netty.handler.codec.http.HttpRequest request = head.toHttpRequest();
    stop();
    ReferenceCountUtil.release(in);
    in = null;
    webSocket.accept(new Upgrade(request, rest, s, code -> webSocketEnded(o, code), refused));
  }

  /**
   * The upgraded connection ended; the client got {@code code}: 101, or the guard's refusal of a
   * full connection cap (429), or the upstream's failure (502, 504).
   */
  private void webSocketEnded(Outcome o, int code) {
    o.ended();
    status = code;
    own = o.action() != Admission.Action.FORWARD ? null
        : code == 429 ? RequestVerdict.OVER_CONCURRENCY : code >= 500 ? RequestVerdict.ERROR
        : null;
    outcome = o;
    events.verdict(o.route(), verdict());
    if (snap != null && snap.accessLog) {
      events.exchange(accessEntry());
    }
    outcome = null;
  }

  /**
   * Closes after an answer that ends the connection while the client may still be sending: the
   * output is shut first and input drained for a moment, so the client reads the answer instead
   * of a reset (closing a socket with unread input sends RST, which can destroy the answer).
   */
  private void lingeringClose() {
    headTimer.stop();
    client.endAfterWrites();
  }

  private void closeNow() {
    state = State.CLOSING;
    client.endNow();
  }

  /**
   * Stops the timers and lets go of the upstream connection: kept for the loop when idle. A
   * request counted on its answer that is with the upstream when its client goes away is
   * settled by that answer all the same ({@link #settleWithoutClient}).
   */
  private void stop() {
    stopped = true;
    headTimer.stop();
    if (delayTimer != null) {
      delayTimer.cancel(false);
      delayTimer = null;
    }
    Outcome o = outcome;
    if (o != null && o.forward() && o.countsResponse() && up.awaitingAnswer()) {
      settleWithoutClient(o);
    } else {
      if (o != null && forwarded) {
        o.cancel();
      } else if (o != null) {
        o.withheld();   // never sent: nothing for the app to have acted on
      }
      up.release();
    }
    releaseVerified();
    answers.release();
    ReferenceCountUtil.release(held);
    held = null;
    ReferenceCountUtil.release(heldData);
    heldData = null;
  }

  /**
   * The client hung up while its request, counted on its answer, was with the upstream: the app
   * may be checking the guess, so the exchange goes on until the answer's head and is settled
   * by its status (an abort gains an attacker nothing, and a phone that dropped off the WiFi is
   * judged by what the app said); no answer settles as a failure.
   */
  private void settleWithoutClient(Outcome o) {
    up.detach(heard -> {
      // Logged with the upstream's status, or nginx's 499 (the client closed) when none came.
      status = heard > 0 ? heard : 499;
      if (heard > 0) {
        o.responded(heard);
      } else if (heard == 0) {
        o.unanswered();
      } else {
        o.withheld();
      }
      o.ended();
      events.verdict(o.route(), verdict());
      if (snap != null && snap.accessLog) {
        events.exchange(accessEntry());
      }
    });
  }

  private void armHeadTimer() {
    long nanos = snapshots.get().gateway.handshakeTimeout().toNanos();
    if (nanos > 0) {
      headTimer.arm(nanos);
    } else {
      headTimer.disarm();
    }
  }

  /**
   * The client's timer ran out: a head not complete within {@code handshakeTimeout} closes the
   * connection; a body that stalled for {@code bodyTimeout} is answered 408 (or, once an answer
   * began, the connection closes). Part of a request already upstream gets no answer now: what
   * it reserved settles as a failure.
   */
  private void clientTimeout() {
    if (!client.isActive()) {
      return;
    }
    if (state == State.HEAD) {
      client.endNow();
      return;
    }
    if (bodyConsumed || state != State.BODY && state != State.DRAIN && state != State.HOLD) {
      return;
    }
    Outcome o = outcome;
    if (state == State.BODY) {
      if (o != null) {
        o.unanswered();
      }
      if (!up.responseStarted()) {
        up.abort();
      }
    } else if (state == State.HOLD && o != null) {
      o.withheld();
    }
    keepAlive = false;
    if (in != null) {
      in.skipBytes(in.readableBytes());
    }
    if (!answered && !up.responseStarted()) {
      answer(408, "the request body stalled for more than "
          + snap.gateway.bodyTimeout().toMillis() + " ms", true);
    } else {
      closeNow();
    }
  }

  /** While a request's body is read, the client's timer counts from its last bytes. */
  private void bodyRead() {
    if (bodyConsumed) {
      headTimer.disarm();
    } else {
      headTimer.arm(snap.gateway.bodyTimeout().toNanos());
    }
  }

  /**
   * Whether this exchange waits for a next request with nothing in hand (an HTTP/2 stream's,
   * whose stream ended: it serves the connection's next stream); its upstream connection goes
   * back to the loop's pool meanwhile.
   */
  boolean parkIfIdle() {
    if (stopped || state != State.HEAD || in != null && in.isReadable()) {
      return false;
    }
    headTimer.disarm();
    up.park();
    return true;
  }

  /** The client can take more (or no more) of what it is sent. */
  void writabilityChanged() {
    boolean writable = client.isWritable();
    up.clientWritable(writable);
    if (writable && client.paused(CLIENT)) {
      client.resume(CLIENT);
      process();
    }
  }

  /** The client shut its output: what it sent is answered, then the client's side ends. */
  void inputShutdown() {
    inputClosed = true;
    keepAlive = false;
    if (state == State.CLOSING || state == State.HEAD && (in == null || !in.isReadable())) {
      client.endNow();
    }
  }

  /** The client is gone (or the connection was handed over): timers, buffers, the upstream. */
  void clientGone() {
    if (!stopped) {
      stop();
    }
    ReferenceCountUtil.release(in);
    in = null;
  }

  @Override
  public void cutShort(boolean complete) {
    state = State.CLOSING;
    if (complete) {
      client.endAfterWrites();
    } else {
      client.endNow();
    }
  }
}
