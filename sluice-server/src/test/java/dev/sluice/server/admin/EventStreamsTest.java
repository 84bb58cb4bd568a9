package dev.sluice.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.server.Closer;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Event streams on the JDK's HttpServer, as the admin listener runs them: bounded, and a client
 * that stops reading is cut off by the write timeout instead of holding its thread for ever.
 */
class EventStreamsTest {

  final EventStreams streams = new EventStreams(2, Duration.ofMillis(300));
  HttpServer server;

  @AfterEach
  void stop() {
    streams.close();
    if (server != null) {
      server.stop(0);
    }
  }

  int start() throws Exception {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.setExecutor(Executors.newFixedThreadPool(2));
    server.createContext("/", exchange -> {
      if (!streams.open(exchange, null)) {
        exchange.sendResponseHeaders(503, -1);
        exchange.close();
      }
    });
    server.start();
    return server.getAddress().getPort();
  }

  static Socket get(int port) throws Exception {
    Socket s = new Socket("127.0.0.1", port);
    s.getOutputStream().write("GET /events HTTP/1.1\r\nHost: x\r\n\r\n"
        .getBytes(StandardCharsets.US_ASCII));
    return s;
  }

  static String statusLine(Socket s) throws Exception {
    InputStream in = s.getInputStream();
    StringBuilder sb = new StringBuilder();
    for (int c = in.read(); c >= 0 && c != '\r'; c = in.read()) {
      sb.append((char) c);
    }
    return sb.toString();
  }

  static void await(String what, java.util.function.BooleanSupplier condition) {
    long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as(what).isLessThan(end);
      Thread.onSpinWait();
    }
  }

  @Test
  void pastTheBound_a503_andAStalledClientIsCutByTheWriteTimeout() throws Exception {
    int port = start();
    // One at a time: the server's two threads take requests in any order, and the bound is
    // about how many are open, not which came first.
    try (Closer open = new Closer()) {
      Socket stalled = open.add(get(port));
      stalled.setReceiveBufferSize(4096);
      assertThat(statusLine(stalled)).isEqualTo("HTTP/1.1 200 OK");
      Socket reader = open.add(get(port));
      assertThat(statusLine(reader)).isEqualTo("HTTP/1.1 200 OK");
      Socket third = open.add(get(port));
      assertThat(statusLine(third)).as("two streams at most").isEqualTo("HTTP/1.1 503 "
          + "Service Unavailable");
      assertThat(streams.count()).isEqualTo(2);
      // Big events fill the stalled client's socket buffers at once; the reader drains its own.
      byte[] event = ("data: " + "x".repeat(1 << 20) + "\n\n").getBytes(StandardCharsets.UTF_8);
      Thread drain = new Thread(() -> {
        try {
          reader.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
        } catch (java.io.IOException e) {
          // closed at the end of the test
        }
      });
      drain.start();
      await("the stalled stream is cut, the reading one stays", () -> {
        streams.publish(event);
        streams.expireStalled(System.nanoTime());
        return streams.count() == 1;
      });
      try (Socket again = get(port)) {
        assertThat(statusLine(again)).as("the freed slot takes a new page")
            .isEqualTo("HTTP/1.1 200 OK");
      }
    }
    await("every stream ends when its page goes", () -> {
      streams.publish("data: {}\n\n".getBytes(StandardCharsets.UTF_8));
      return streams.count() == 0;
    });
  }
}
