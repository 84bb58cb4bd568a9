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
 * comes free, and that a page that reads keeps its stream throughout. The stall timeout reads a
 * clock the test moves.
 */
class EventStreamsIntegrationTests {

  final AtomicLong nanos = new AtomicLong(Long.MAX_VALUE - 5_000_000_000L);
  final EventStreams streams = new EventStreams(2, Duration.ofSeconds(10), nanos::get);
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
}
