package dev.sluice.gateway;

import dev.sluice.core.Decision;
import dev.sluice.core.http.Accept;
import dev.sluice.core.http.Bodies;
import dev.sluice.core.http.ResponseSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.concurrent.FastThreadLocal;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The answers the HTTP/1.1 relay writes itself, as bytes: the refusals of the admission step (429
 * and 503 by core's {@link ResponseSpec}, the same as every adapter's), and generated errors and
 * small JSON bodies (400, 405, 413, 414, 417, 422, 431, 501, 502, 504, 505, the health check).
 * Every one is {@code Cache-Control: no-store}, carries the policy's CORS headers, and a JSON body
 * or, when {@code Accept} prefers HTML, a page.
 *
 * <p>A refusal's head and body are the same from one refusal of a limit to the next but for a
 * few numbers, and a flood is this product's normal case: refusals are written from a
 * {@link RefusalTemplate} of their shape, kept per event loop. One per connection; event loop
 * only.
 */
final class Answers implements RefusalTemplate.Renderer {

  /** The loop's templates of the last refusal shapes, replaced in turn. */
  private static final FastThreadLocal<RefusalTemplate[]> TEMPLATES = new FastThreadLocal<>() {
    @Override
    protected RefusalTemplate[] initialValue() {
      return new RefusalTemplate[8];
    }
  };

  private final HeadWriter w = new HeadWriter();
  private final FieldWriter fields = new FieldWriter(w);
  /** The last whole answer written ({@link #answer}) and its bytes: a challenged flood's. */
  private dev.sluice.core.http.Answer lastAnswer;
  private boolean lastAnswerKeepAlive;
  private ByteBuf lastAnswerBytes;
  /** The body length of the last answer made, for the access log. */
  private int bodyBytes;

  /**
   * The refusal of {@code d} (429, or 503 for a degraded fail-closed rule); {@code origin} and
   * {@code method} for CORS, {@code accept} picks the body.
   */
  ByteBuf refusal(ResponseSpec spec, Decision d, String accept, String origin, String method,
      boolean keepAlive, ByteBufAllocator alloc) {
    boolean html = Accept.prefersHtml(accept);
    RefusalTemplate t = RefusalTemplate.applies(d)
        ? template(spec, d, html, origin, method, keepAlive) : null;
    if (t != null && t.usable()) {
      bodyBytes = t.write(d, w);
      ByteBuf out = alloc.directBuffer(w.length());
      w.writeTo(out);
      return out;
    }
    byte[][] r = render(spec, d, html, origin, method, keepAlive, null);
    bodyBytes = r[1].length;
    ByteBuf out = alloc.directBuffer(r[0].length + r[1].length);
    out.writeBytes(r[0]).writeBytes(r[1]);
    return out;
  }

  private RefusalTemplate template(ResponseSpec spec, Decision d, boolean html, String origin,
      String method, boolean keepAlive) {
    RefusalTemplate[] loop = TEMPLATES.get();
    int free = -1;
    for (int i = 0; i < loop.length; i++) {
      RefusalTemplate t = loop[i];
      if (t == null) {
        free = free < 0 ? i : free;
      } else if (t.fits(spec, d, html, origin, method, keepAlive)) {
        return t;
      }
    }
    RefusalTemplate t = RefusalTemplate.compile(spec, d, html, origin, method, keepAlive, this);
    if (free < 0) {
      // Full: the shapes of an earlier policy or of rare requests; the oldest goes.
      System.arraycopy(loop, 1, loop, 0, loop.length - 1);
      free = loop.length - 1;
    }
    loop[free] = t;
    return t;
  }

  /** The one way a refusal is written: its head (with this content-length, if given), body. */
  @Override
  public byte[][] render(ResponseSpec spec, Decision d, boolean html, String origin,
      String method, boolean keepAlive, String contentLength) {
    byte[] body = spec.body(d, html).getBytes(StandardCharsets.UTF_8);
    int status = spec.status(d);
    w.reset().put("HTTP/1.1 ").put(Integer.toString(status)).put(" ")
        .put(HttpResponseStatus.valueOf(status).reasonPhrase()).crlf();
    fields.set("content-type", html ? Bodies.HTML : Bodies.JSON);
    fields.set("content-length",
        contentLength != null ? contentLength : Integer.toString(body.length));
    spec.refusalHeaders(d, fields);
    spec.cors().apply(origin, method, fields);
    if (!keepAlive) {
      w.put("connection: close\r\n");
    }
    w.crlf();
    return new byte[][] {w.copy(), body};
  }

  /**
   * A generated answer: {@code {"error":"bad request","detail":...}} (or a page by
   * {@code accept}), with {@code extra} field lines (limit headers: may be null).
   */
  ByteBuf error(ResponseSpec spec, int status, String detail, String accept, String origin,
      String method, boolean keepAlive, Decision limits, ByteBufAllocator alloc) {
    String reason = HttpResponseStatus.valueOf(status).reasonPhrase();
    String error = status == 413 ? "payload too large" : reason.toLowerCase(Locale.ROOT);
    boolean html = Accept.prefersHtml(accept);
    String body = html ? Bodies.errorHtml(status, reason, detail == null ? error : detail)
        : Generated.error(error, detail);
    return answer(spec, status, body, html, origin, method, keepAlive, limits, alloc);
  }

  /** The 403 of a denied request: the deny list, a failed human check ({@code reason}). */
  ByteBuf denied(ResponseSpec spec, String reason, String accept, String origin, String method,
      boolean keepAlive, ByteBufAllocator alloc) {
    boolean html = Accept.prefersHtml(accept);
    return answer(spec, ResponseSpec.DENIED_STATUS, Bodies.denied(reason, html), html, origin,
        method, keepAlive, null, alloc);
  }

  /** A JSON answer of the gateway's own (the health check, the decision API, a 422). */
  ByteBuf json(ResponseSpec spec, int status, String json, String origin, String method,
      boolean keepAlive, ByteBufAllocator alloc) {
    return answer(spec, status, json, false, origin, method, keepAlive, null, alloc);
  }

  private ByteBuf answer(ResponseSpec spec, int status, String text, boolean html, String origin,
      String method, boolean keepAlive, Decision limits, ByteBufAllocator alloc) {
    byte[] body = text.getBytes(StandardCharsets.UTF_8);
    bodyBytes = body.length;
    w.reset().put("HTTP/1.1 ").put(Integer.toString(status)).put(" ")
        .put(HttpResponseStatus.valueOf(status).reasonPhrase()).crlf();
    fields.set("content-type", html ? Bodies.HTML : Bodies.JSON);
    fields.set("content-length", Integer.toString(body.length));
    fields.set("cache-control", "no-store");
    if (limits != null) {
      spec.limitHeaders(limits, fields);
    }
    if (spec != null) {
      spec.cors().apply(origin, method, fields);
    }
    if (!keepAlive) {
      w.put("connection: close\r\n");
    }
    w.crlf();
    ByteBuf out = alloc.buffer(w.length() + body.length);
    w.writeTo(out);
    out.writeBytes(body);
    return out;
  }

  /**
   * An answer the admission step made whole (a challenge's page or verdict), as it is: its
   * fields, then the framing ({@code content-length}, {@code connection: close}).
   */
  ByteBuf answer(dev.sluice.core.http.Answer a, boolean keepAlive, ByteBufAllocator alloc) {
    bodyBytes = a.bodyLength();
    if (a == lastAnswer && keepAlive == lastAnswerKeepAlive) {
      return lastAnswerBytes.retainedDuplicate();   // the same answer object: the same bytes
    }
    w.reset().put("HTTP/1.1 ").put(Integer.toString(a.status())).put(" ")
        .put(HttpResponseStatus.valueOf(a.status()).reasonPhrase()).crlf();
    for (int i = 0; i < a.fieldCount(); i++) {
      fields.set(a.fieldName(i), a.fieldValue(i));
    }
    fields.set("content-length", Integer.toString(a.bodyLength()));
    if (!keepAlive) {
      w.put("connection: close\r\n");
    }
    w.crlf();
    ByteBuf out = alloc.directBuffer(w.length() + a.bodyLength());
    w.writeTo(out);
    out.writeBytes(a.body());
    if (lastAnswerBytes != null) {
      lastAnswerBytes.release();
    }
    lastAnswer = a;
    lastAnswerKeepAlive = keepAlive;
    lastAnswerBytes = out.retainedDuplicate();
    return out;
  }

  /** The body length of the last answer made. */
  int bodyBytes() {
    return bodyBytes;
  }

  /** The interim answer to {@code Expect: 100-continue} when the gateway reads the body itself. */
  static ByteBuf continue100(ByteBufAllocator alloc) {
    ByteBuf out = alloc.buffer(25);
    out.writeBytes(HeadWriter.ascii("HTTP/1.1 100 Continue\r\n\r\n"));
    return out;
  }

  /** Lets go of the kept challenge answer: the connection closed. */
  void release() {
    if (lastAnswerBytes != null) {
      lastAnswerBytes.release();
      lastAnswerBytes = null;
      lastAnswer = null;
    }
  }
}
