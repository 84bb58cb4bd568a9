package dev.sluice.server;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One {@code sluice serve} for a test: a policy file written to a directory, the command line
 * parsed as {@code Main} does (the gateway and the admin listener on free loopback ports), its
 * log kept, and plain requests to either listener. Closing it stops the server, then whatever the
 * test added to {@link #open}.
 */
final class ServedPolicy implements AutoCloseable {

  final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  final Closer open = new Closer();
  private final ByteArrayOutputStream log = new ByteArrayOutputStream();
  private SluiceServer server;

  /** Serves {@code policy} (written to {@code dir/policy.yaml}) with {@code extra} arguments. */
  SluiceServer start(Path dir, String policy, String... extra) throws Exception {
    Path p = dir.resolve("policy.yaml");
    Files.writeString(p, policy);
    List<String> args = new ArrayList<>(List.of("--listen", "127.0.0.1:0", "--admin",
        "127.0.0.1:0", "--config", p.toString()));
    args.addAll(List.of(extra));
    server = SluiceServer.start(Main.parseServe(args, Map.of()), Map.of(),
        new Log(new PrintStream(log, true, StandardCharsets.UTF_8)));
    return server;
  }

  /** A GET through the gateway with {@code headers} (name, value, ...); its status. */
  int gateway(String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + server.port() + path)).timeout(Duration.ofSeconds(10));
    for (int i = 0; i + 1 < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  /**
   * A request without a body to the admin listener, with {@code headers} (name, value, ...); a
   * state change without an {@code Authorization} header carries the server's token, as
   * {@code sluice admin} sends it.
   */
  HttpResponse<String> admin(String method, String path, String... headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + server.adminPort() + path)).timeout(Duration.ofSeconds(10))
        .method(method, HttpRequest.BodyPublishers.noBody());
    boolean auth = false;
    for (int i = 0; i + 1 < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
      auth |= headers[i].equalsIgnoreCase("Authorization");
    }
    if (!auth && !method.equals("GET") && !method.equals("HEAD")) {
      b.header("Authorization", "Bearer " + token());
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The server's admin token (the generated one unless the test gave its own). */
  String token() throws java.io.IOException {
    return Files.readString(server.adminTokenFile()).strip();
  }

  /** What the server has logged so far. */
  String log() {
    return log.toString(StandardCharsets.UTF_8);
  }

  @Override
  public void close() throws Exception {
    if (server != null) {
      server.close();
    }
    open.close();
  }
}
