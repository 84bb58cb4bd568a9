package dev.sluice.rls;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Store;
import dev.sluice.core.Ticker;
import dev.sluice.core.testing.NodeScripts;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.PolicyLoader;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An independent client stack: Node's {@code @grpc/grpc-js} and {@code @grpc/proto-loader}
 * (pinned in {@code src/test/node}, installed with {@code npm ci} on first use) load Envoy's own
 * {@code rls.proto} and its imports, untrimmed, extracted here from the Envoy API jar (a test
 * dependency), and ask the real server, whose classes come from the vendored, trimmed files:
 * the two agree on the wire. Fails loudly without Node, as the WebSocket client tests do.
 */
class NodeRlsClientIntegrationTests {

  static final Pattern IMPORT = Pattern.compile("^import\\s+(?:public\\s+)?\"([^\"]+)\";",
      Pattern.MULTILINE);

  @TempDir
  Path protos;

  @Test
  void nodeClient_seesTheSameDecisions() throws Exception {
    extract("envoy/service/ratelimit/v3/rls.proto", protos);
    PolicyConfig config = PolicyLoader.parse(String.join("\n",
        "domains:",
        "  - domain: node",
        "    descriptors:",
        "      - {key: user, rate_limit: {unit: hour, requests_per_unit: 3}}",
        ""), "p.yaml", null, Map.of()).config();
    Ticker ticker = () -> 0;
    try (RlsServer server = RlsServer.start(new InetSocketAddress("127.0.0.1", 0), () -> config,
        Store.memory(ticker, 1000), null)) {
      NodeScripts.install();
      String out = NodeScripts.run(List.of("node", "rls-client.mjs", protos.toString(),
          "127.0.0.1:" + server.port(), "node", "user", "u1", "4"), 120);
      String json = out.strip().substring(out.strip().lastIndexOf('\n') + 1);
      assertThat(json).isEqualTo("["
          + "{\"code\":\"OK\",\"remaining\":2,\"limit\":3,\"unit\":\"HOUR\",\"headers\":"
          + "[\"RateLimit-Policy: \\\"per-hour\\\";q=3;w=3600\","
          + "\"RateLimit: \\\"per-hour\\\";r=2;t=3600\"]},"
          + "{\"code\":\"OK\",\"remaining\":1,\"limit\":3,\"unit\":\"HOUR\",\"headers\":"
          + "[\"RateLimit-Policy: \\\"per-hour\\\";q=3;w=3600\","
          + "\"RateLimit: \\\"per-hour\\\";r=1;t=3600\"]},"
          + "{\"code\":\"OK\",\"remaining\":0,\"limit\":3,\"unit\":\"HOUR\",\"headers\":"
          + "[\"RateLimit-Policy: \\\"per-hour\\\";q=3;w=3600\","
          + "\"RateLimit: \\\"per-hour\\\";r=0;t=3600\"]},"
          + "{\"code\":\"OVER_LIMIT\",\"remaining\":0,\"limit\":3,\"unit\":\"HOUR\",\"headers\":"
          + "[\"RateLimit-Policy: \\\"per-hour\\\";q=3;w=3600\","
          + "\"RateLimit: \\\"per-hour\\\";r=0;t=3600\"]},"
          + "{\"invalid\":\"INVALID_ARGUMENT\",\"details\":\"domain : missing (expected: the "
          + "domain of the descriptors)\"}]");
    }
  }

  /** Copies {@code root} and every file it imports, transitively, from the Envoy API jar. */
  static void extract(String root, Path into) throws Exception {
    Path jar = Path.of(io.envoyproxy.envoy.service.ratelimit.v3.RlsProto.class
        .getProtectionDomain().getCodeSource().getLocation().toURI());
    Deque<String> todo = new ArrayDeque<>(List.of(root));
    Set<String> seen = new HashSet<>();
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      while (!todo.isEmpty()) {
        String name = todo.pop();
        if (!seen.add(name)) {
          continue;
        }
        ZipEntry entry = zip.getEntry(name);
        if (entry == null) {
          // google/protobuf's well-known types ship with protobufjs itself.
          if (name.startsWith("google/protobuf/")) {
            continue;
          }
          throw new IOException(name + " is not in " + jar);
        }
        String text;
        try (InputStream in = zip.getInputStream(entry)) {
          text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Path file = into.resolve(name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
        Matcher m = IMPORT.matcher(text);
        while (m.find()) {
          todo.push(m.group(1));
        }
      }
    }
  }
}
