package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 20, item 7: an HTTP/2 rapid reset (streams opened and reset at once, CVE-2023-44487) was
 * bounded but stalled every other client of its event loop. Frames written by the test on a raw
 * socket: the connection is cut off with GOAWAY past the reset budget, no more upstream
 * connections are opened than streams were decided, and another client of the same (only) I/O thread is served throughout.
 * The stall itself is measured in sluice-bench ({@code H2RapidReset}), not asserted here.
 */
class Http2FloodIntegrationTests {

  private RecordingUpstream upstream;
  private Fixtures.Harness h;

  @BeforeEach
  void start() throws IOException {
    upstream = new RecordingUpstream();
    h = new Fixtures.Harness(Fixtures.config(Fixtures.seed000()), upstream.uri(), null, 1);
  }

  @AfterEach
  void stop() throws IOException {
    h.close();
    upstream.close();
  }

  /** Streams opened and reset in bursts until the server sends GOAWAY; how many were sent. */
  private int rapidReset(int maxStreams) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", h.gateway.port()), 5000);
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      H2Frames f = new H2Frames().preface();
      int id = 1;
      CompletableFuture<Integer> goaway = CompletableFuture.supplyAsync(() -> {
        try {
          return H2Frames.readUntil(in, H2Frames.GOAWAY, -1);
        } catch (IOException e) {
          return -1;
        }
      });
      try {
        while (id < maxStreams * 2 && !goaway.isDone()) {
          for (int k = 0; k < 100; k++, id += 2) {
            f.get(id, "GET", "/api/" + id).reset(id);
          }
          out.write(f.take());
          out.flush();
        }
      } catch (IOException e) {
        // the server closed while we were writing: what a flood should meet
      }
      assertThat(goaway.join()).as("GOAWAY before EOF").isEqualTo(H2Frames.GOAWAY);
      return id / 2;
    }
  }

  @Test
  void issue20_rapidReset_isCutOffWithGoaway_withinItsResetBudget()
      throws Exception {
    rapidReset(100_000);
    // Past its budget of resets the connection is cut off: the streams behind it in the
    // buffers it had sent are never decided, never forwarded.
    assertThat(h.events.decisions.size()).as("streams decided")
        .isLessThanOrEqualTo(2 * Http2Pipeline.MAX_RESETS);
    // A stream reset before its request reached the upstream opens nothing; one reset a read
    // later may have begun its connection: never more than the streams decided.
    assertThat(upstream.accepted.get()).as("upstream connections opened")
        .isLessThanOrEqualTo(h.events.decisions.size() + 1);
    long allowed = h.events.decisions.stream().filter(d -> d.equals("http:allowed")).count();
    assertThat((long) upstream.requests.size()).isLessThanOrEqualTo(allowed);
  }

  @Test
  void otherClientOfTheSameLoop_isServedThroughoutTheAttack() throws Exception {
    AtomicInteger served = new AtomicInteger();
    CompletableFuture<Void> attack = CompletableFuture.runAsync(() -> {
      try {
        for (int round = 0; round < 3; round++) {
          rapidReset(100_000);
        }
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    try (RawHttp c = new RawHttp(h.gateway.port())) {
      while (!attack.isDone()) {
        c.send("GET /static/ok HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(RawHttp.status(c.readResponse())).isEqualTo(200);
        served.incrementAndGet();
      }
    }
    attack.get(60, TimeUnit.SECONDS);
    assertThat(served.get()).isPositive();
  }
}
