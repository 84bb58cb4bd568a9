package dev.sluice.server.serve;

import dev.sluice.server.NodeScripts;
import java.util.List;

/** Runs the Node {@code ws} client of {@code src/test/node} ({@link NodeScripts}). */
final class NodeWsClient {

  private NodeWsClient() {}

  /** Runs one scenario {@code runs} times; returns the script's JSON line. */
  static String scenario(String url, String scenario, int runs) throws Exception {
    String out = NodeScripts.run(List.of("node", "close-codes.mjs", url, scenario,
        Integer.toString(runs)), 120);
    String[] lines = out.strip().split("\n");
    return lines[lines.length - 1];
  }
}
