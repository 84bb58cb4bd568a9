package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.policy.RequestTarget;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** The relay's head parsers and body framing against simple models. */
class RelayHeadsTest {

  private static ByteBuf bytes(String s) {
    return Unpooled.copiedBuffer(s, StandardCharsets.ISO_8859_1);
  }

  /** The status the relay answers {@code head} with, or 0 when it forwards it. */
  private static int answer(String head) {
    ByteBuf b = bytes(head);
    try {
      RequestHead h = new RequestHead(null, "127.0.0.1");
      return h.parse(b, b.readableBytes(), RequestTarget.Rules.defaults()) ? 0 : h.status();
    } finally {
      b.release();
    }
  }

  @Test
  void requestHeads_forwarded_andThoseAnsweredAtOnce() {
    for (String ok : List.of(
        "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /a?b=c HTTP/1.1\r\nHost: x\r\nConnection: Keep-Alive\r\n"
            + "Content-Length: 0\r\nX-A:\tv \r\n\r\n",
        "GET / HTTP/1.0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x:8080\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
        "GET http://x/a HTTP/1.1\r\nHost: x\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) {
      assertThat(answer(ok)).as(ok).isZero();
    }
    for (String[] refused : new String[][] {
        {"GET / HTTP/1.1\r\n\r\n", "400"},                                  // no Host
        {"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "400"},         // two
        {"GET / HTTP/1.1\r\nHost: x, y\r\n\r\n", "400"},                   // a list
        {"GET / HTTP/1.1\r\nHost: u@x\r\n\r\n", "400"},
        {"GET  / HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
        {"GET http://y/ HTTP/1.1\r\nHost: x\r\n\r\n", "400"},              // not the Host
        {"G(T / HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
        {"GET / HTTP/1.1\r\nHost : x\r\n\r\n", "400"},
        {"GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", "400"},
        {"GET / HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n", "400"},
        {"GET / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n", "400"},
        {"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
            "400"},
        {"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\n", "400"},
        {"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked"
            + "\r\n\r\n", "400"},
        {"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n", "501"},
        {"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n", "501"},
        {"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
            + "chunked\r\n\r\n", "501"},
        {"GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "400"},
        {"GET / HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n", "417"},
        {"CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n", "405"},
        {"GET * HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
        {"GET /a%2Fb HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
        {"GET /a\\b HTTP/1.1\r\nHost: x\r\n\r\n", "400"},
        {"GET / HTTP/1.2\r\nHost: x\r\n\r\n", "505"},
        {"GET / HTTP/2.0\r\nHost: x\r\n\r\n", "505"}}) {
      assertThat(answer(refused[0])).as(refused[0]).isEqualTo(Integer.parseInt(refused[1]));
    }
  }

  @Test
  void requestHead_readsFieldsCaseInsensitively_inArrivalOrder() {
    ByteBuf b = bytes("GET /p/./q;v=1?x=1 HTTP/1.1\r\nHost: h\r\nX-K: 1\r\nx-k: 2\r\n"
        + "Cookie: a=b; c=d\r\n\r\n");
    RequestHead h = new RequestHead(null, "10.0.0.1");
    assertThat(h.parse(b, b.readableBytes(), RequestTarget.Rules.defaults())).isTrue();
    assertThat(h.method()).isEqualTo("GET");
    assertThat(h.path()).isEqualTo("/p/q");
    assertThat(h.target().forwardTarget()).isEqualTo("/p/q?x=1");
    assertThat(h.headers("x-K")).containsExactly("1", "2");
    assertThat(h.header("HOST")).isEqualTo("h");
    assertThat(h.cookie("c")).isEqualTo("d");
    assertThat(h.query("x")).isEqualTo("1");
    assertThat(h.peer()).isEqualTo("10.0.0.1");
    b.release();
  }

  @Test
  void responseHead_dropsHopByHopFields_andFindsItsFraming() {
    ResponseHead r = new ResponseHead();
    ByteBuf b = bytes("HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n"
        + "Keep-Alive: timeout=5\r\nContent-Length: 3\r\nX-End: 2\r\n\r\n");
    assertThat(r.parse(b, b.readableBytes(), false)).isTrue();
    assertThat(r.framing()).isEqualTo(ResponseHead.Framing.LENGTH);
    assertThat(r.upstreamKeepAlive()).isTrue();
    HeadWriter w = new HeadWriter();
    r.writeHead(w);
    ByteBuf out = w.toBuffer(UnpooledByteBufAllocator.DEFAULT);
    assertThat(out.toString(StandardCharsets.ISO_8859_1))
        .isEqualTo("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-End: 2\r\n");
    b.release();

    b = bytes("HTTP/1.0 200 OK\r\nContent-Type: a\r\n\r\n");
    assertThat(r.parse(b, b.readableBytes(), false)).isTrue();
    assertThat(r.framing()).isEqualTo(ResponseHead.Framing.UNTIL_CLOSE);
    assertThat(r.upstreamKeepAlive()).isFalse();
    b.release();

    b = bytes("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n");
    assertThat(r.parse(b, b.readableBytes(), false)).isFalse();
    b.release();
    b = bytes("HTTP/1.1 304 Not Modified\r\nContent-Length: 30\r\n\r\n");
    assertThat(r.parse(b, b.readableBytes(), false)).isTrue();
    assertThat(r.framing()).isEqualTo(ResponseHead.Framing.NONE);
    b.release();
  }

  /** A chunked body cut into arbitrary reads ends exactly at its last byte, and not before. */
  @Property(tries = 300)
  void chunkedBody_endIsFound_howeverTheReadsAreCut(
      @ForAll @Size(max = 6) List<@IntRange(min = 1, max = 300) Integer> chunks,
      @ForAll @IntRange(min = 1, max = 40) int cut, @ForAll boolean trailer,
      @ForAll boolean extensions) {
    StringBuilder body = new StringBuilder();
    for (int n : chunks) {
      body.append(Integer.toHexString(n)).append(extensions ? ";e=\"v\"" : "").append("\r\n")
          .append("x".repeat(n)).append("\r\n");
    }
    body.append("0\r\n").append(trailer ? "X-Sum: 1\r\n" : "").append("\r\n");
    String after = "HTTP/1.1 200 OK\r\n";
    ResponseHead r = new ResponseHead();
    ByteBuf head = bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n");
    assertThat(r.parse(head, head.readableBytes(), false)).isTrue();
    assertThat(r.framing()).isEqualTo(ResponseHead.Framing.CHUNKED);
    byte[] all = (body + after).getBytes(StandardCharsets.ISO_8859_1);
    int consumed = 0;
    List<Integer> doneAt = new ArrayList<>();
    for (int from = 0; from < all.length && doneAt.isEmpty(); from += cut) {
      ByteBuf read = Unpooled.wrappedBuffer(all, from, Math.min(cut, all.length - from));
      int k = r.body(read, read.readerIndex(), read.readableBytes());
      assertThat(k).isGreaterThanOrEqualTo(0);
      consumed += k;
      if (r.bodyDone()) {
        doneAt.add(consumed);
      } else {
        assertThat(k).isEqualTo(read.readableBytes());
      }
    }
    assertThat(doneAt).containsExactly(body.length());
  }
}
