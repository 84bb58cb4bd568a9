package dev.sluice.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyLoader;
import dev.sluice.server.Closer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The console's event streams against clients that open a stream and never read it, on the
 * admin listener itself (its pipeline, its water marks): what such a stream holds, how its slot
 * comes free, that a page that reads keeps its stream throughout, and the nonces a page sends
 * back to prove it reads. The stall and ack timeouts read a clock the test moves.
 */
class EventStreamsIntegrationTests {

  final AtomicLong nanos = new AtomicLong(Long.MAX_VALUE - 5_000_000_000L);
  final EventStreams streams = new EventStreams(2, Duration.ofSeconds(10),
      Duration.ofSeconds(30), nanos::get);
  final Closer open = new Closer();
  AdminServer admin;

  @BeforeEach
  void start() throws Exception {
    LoadedPolicy policy = PolicyLoader.loadDefault(Map.of());
    Metrics metrics = new Metrics((level, message, fields) -> {});
    StoreHealth health = StoreHealth.memory();
    Console console = new Console(metrics, policy.config().store().memory(), () -> policy,
        () -> Instant.EPOCH, "test", health, new AuditLog((m, f) -> {}, Instant::now),
        new ReloadHistory(), new Console.Auth(false, true, null), System::currentTimeMillis,
        streams);
    admin = AdminServer.builder(metrics, () -> policy, () -> Instant.EPOCH, "test", health)
        .console(console).start(new InetSocketAddress("127.0.0.1", 0));
  }

  @AfterEach
  void stop() throws Exception {
    open.close();
    admin.close();
  }

  /** A client that asks for the stream, reads its status line, and reads nothing more. */
  Socket stream(boolean smallWindow) throws IOException {
    Socket s = new Socket();
    if (smallWindow) {
      s.setReceiveBufferSize(4096);   // before connecting: the window it offers stays small
    }
    open.add(s);
    s.connect(new InetSocketAddress("127.0.0.1", admin.port()));
    s.getOutputStream().write(("GET /v1/console/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII));
    StringBuilder line = new StringBuilder();
    InputStream in = s.getInputStream();
    for (int c = in.read(); c >= 0 && c != '\r'; c = in.read()) {
      line.append((char) c);
    }
    assertThat(line.toString()).isEqualTo("HTTP/1.1 200 OK");
    return s;
  }

  /** Reads {@code s} to its end: true when the server closed it (EOF or reset). */
  static boolean closedByServer(Socket s) throws IOException {
    s.setSoTimeout(10_000);   // a failure detector: an open stream would be read for ever
    try {
      s.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (SocketException e) {
      return true;
    }
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as(what).isLessThan(end);
      Thread.sleep(5);   // polling an eventual condition with a deadline, not timing
    }
  }

  @Test
  void anUnreadStream_holdsAtMostTheWaterMarkAndAnEvent_thenLosesItsSlot_aReaderKeepsItsOwn()
      throws Exception {
    Socket unread = stream(true);
    Socket reader = stream(false);
    AtomicLong read = new AtomicLong();
    Thread drain = new Thread(() -> {
      byte[] buf = new byte[65536];
      try {
        for (int n; (n = reader.getInputStream().read(buf)) >= 0; ) {
          read.addAndGet(n);
        }
      } catch (IOException e) {
        // closed at the end of the test
      }
    });
    drain.setDaemon(true);
    drain.start();
    await("two streams", () -> streams.count() == 2);

    byte[] event = ("event: tick\ndata: " + "x".repeat(256 * 1024) + "\n\n")
        .getBytes(StandardCharsets.UTF_8);
    await("the unread stream runs out of room; its events are skipped", () -> {
      streams.publish(event);
      return streams.skipped() > 0;
    });
    assertThat(streams.mostQueued()).as("Netty holds the water mark and one event at most")
        .isLessThanOrEqualTo(EventStreams.QUEUE_BYTES + event.length);
    long readBefore = read.get();

    // A third page, all slots taken: it takes the slot of the stream that has had no room.
    Socket third = stream(true);
    assertThat(streams.cut()).isEqualTo(1);
    assertThat(streams.count()).isEqualTo(2);
    assertThat(closedByServer(unread)).as("the unread stream is closed").isTrue();

    // The third never reads either: no room for 10 s (on the listener's clock), and it goes.
    long skippedBefore = streams.skipped();
    await("the third runs out of room", () -> {
      streams.publish(event);
      return streams.skipped() > skippedBefore;
    });
    await("the reader has caught up: only the third is without room",
        () -> streams.blockedStreams() == 1);
    nanos.addAndGet(Duration.ofSeconds(9).toNanos());
    streams.expireStalled();
    assertThat(streams.count()).as("9 s without room").isEqualTo(2);
    nanos.addAndGet(Duration.ofSeconds(1).toNanos());
    streams.expireStalled();
    assertThat(streams.count()).isEqualTo(1);
    assertThat(streams.cut()).isEqualTo(2);
    assertThat(closedByServer(third)).isTrue();

    streams.publish(event);
    await("the reader still gets every event", () -> read.get() > readBefore + event.length);
    assertThat(streams.count()).isEqualTo(1);
  }

  /** A client that reads its stream to a queue of lines, on a thread of its own. */
  final class Reader implements AutoCloseable {
    final java.util.concurrent.BlockingQueue<String> lines =
        new java.util.concurrent.LinkedBlockingQueue<>();
    final java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
    final Thread thread;
    volatile java.io.InputStream body;

    Reader() throws Exception {
      java.net.http.HttpResponse<java.io.InputStream> r = client.send(
          java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:"
              + admin.port() + "/v1/console/events")).build(),
          java.net.http.HttpResponse.BodyHandlers.ofInputStream());
      assertThat(r.statusCode()).isEqualTo(200);
      body = r.body();
      thread = new Thread(() -> {
        try (java.io.BufferedReader in = new java.io.BufferedReader(
            new java.io.InputStreamReader(body, StandardCharsets.UTF_8))) {
          for (String line; (line = in.readLine()) != null; ) {
            lines.add(line);
          }
        } catch (IOException e) {
          // closed by the server or the test
        }
        lines.add("<end>");
      });
      thread.setDaemon(true);
      thread.start();
    }

    /** The data of the next {@code event: name} block. */
    String next(String name) throws InterruptedException {
      for (;;) {
        String line = lines.poll(20, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(line).as("an event: " + name).isNotNull().isNotEqualTo("<end>");
        if (line.equals("event: " + name)) {
          String data = lines.poll(20, java.util.concurrent.TimeUnit.SECONDS);
          assertThat(data).startsWith("data: ");
          return data.substring(6);
        }
      }
    }

    /** Whether the server ended the stream (the reader saw its end). */
    boolean ended() throws InterruptedException {
      for (;;) {
        String line = lines.poll(20, java.util.concurrent.TimeUnit.SECONDS);
        if (line == null) {
          return false;
        }
        if (line.equals("<end>")) {
          return true;
        }
      }
    }

    int ack(String stream, String nonce) throws Exception {
      return client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(
          "http://127.0.0.1:" + admin.port() + "/v1/console/ack?stream=" + stream + "&nonce="
              + nonce)).build(), java.net.http.HttpResponse.BodyHandlers.discarding())
          .statusCode();
    }

    @Override
    public void close() throws IOException {
      body.close();
    }
  }

  @Test
  void aPageThatReadsSendsItsNoncesBack_aClientThatOnlyHoldsTheStreamIsClosedAfter30s()
      throws Exception {
    try (Reader page = new Reader(); Reader holder = new Reader()) {
      String id = page.next("stream");
      String first = page.next("ack");
      String holderId = holder.next("stream");
      assertThat(holderId).isNotEqualTo(id).matches("[0-9a-f]{24}");
      assertThat(page.ack(id, "0".repeat(24))).as("a guessed nonce").isEqualTo(404);
      assertThat(page.ack(holderId, first)).as("another stream's nonce").isEqualTo(404);

      nanos.addAndGet(Duration.ofSeconds(10).toNanos());
      byte[] tick = "event: tick\ndata: {}\n\n".getBytes(StandardCharsets.UTF_8);
      streams.publish(tick);
      String second = page.next("ack");
      assertThat(second).as("a new nonce every 10 s").isNotEqualTo(first);
      assertThat(page.ack(id, first)).as("the one before is still good").isEqualTo(200);
      nanos.addAndGet(Duration.ofSeconds(10).toNanos());
      streams.publish(tick);
      page.next("ack");
      assertThat(page.ack(id, first)).as("two nonces ago").isEqualTo(404);
      assertThat(page.ack(id, second)).isEqualTo(200);

      nanos.addAndGet(Duration.ofSeconds(9).toNanos());
      streams.expireStalled();
      assertThat(streams.count()).as("29 s without a nonce from the holder").isEqualTo(2);
      nanos.addAndGet(Duration.ofSeconds(1).toNanos());
      streams.expireStalled();
      assertThat(streams.count()).isEqualTo(1);
      assertThat(holder.ended()).as("the holder's stream is closed").isTrue();
      assertThat(streams.acks()).isEqualTo(2);
      streams.publish(tick);
      assertThat(page.next("tick")).as("the page still gets the live view").isNotEmpty();
    }
  }
}
