package dev.sluice.redis;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real Redis Cluster: 3 masters and 3 replicas on loopback, created with
 * {@code redis-cli --cluster create}.
 */
final class RedisCluster implements AutoCloseable {

  final List<RedisProcess> nodes;

  private RedisCluster(List<RedisProcess> nodes) {
    this.nodes = nodes;
  }

  static RedisCluster start() {
    List<RedisProcess> nodes = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      nodes.add(RedisProcess.start("--cluster-enabled", "yes", "--cluster-config-file",
          "nodes.conf", "--cluster-node-timeout", "1000", "--cluster-replica-validity-factor",
          "0"));
    }
    List<String> cmd = new ArrayList<>(List.of(RedisProcess.binary("redis-cli"), "--cluster",
        "create"));
    for (RedisProcess p : nodes) {
      cmd.add("127.0.0.1:" + p.port);
    }
    cmd.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
    try {
      Process create = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(create.getInputStream().readAllBytes());
      if (!create.waitFor(60, TimeUnit.SECONDS) || create.exitValue() != 0) {
        throw new AssertionError("redis-cli --cluster create failed: " + out);
      }
    } catch (IOException | InterruptedException e) {
      throw new AssertionError("redis-cli --cluster create failed: " + e, e);
    }
    RedisCluster cluster = new RedisCluster(nodes);
    cluster.awaitHealthy();
    return cluster;
  }

  /** Waits until every node sees the cluster ok and every replica is in sync. */
  void awaitHealthy() {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < until) {
      if (healthy()) {
        return;
      }
      RedisProcess.pause(50);
    }
    throw new AssertionError("cluster not healthy within 30 s");
  }

  private boolean healthy() {
    for (RedisProcess p : nodes) {
      if (!"ok".equals(clusterState(p))) {
        return false;
      }
      String role = p.info("replication", "role");
      if ("slave".equals(role) && !"up".equals(p.info("replication", "master_link_status"))) {
        return false;
      }
    }
    return true;
  }

  private static String clusterState(RedisProcess p) {
    for (String l : p.cmd("CLUSTER", "INFO").split("\r?\n")) {
      if (l.startsWith("cluster_state:")) {
        return l.substring(14).trim();
      }
    }
    return null;
  }

  List<RedisProcess> masters() {
    List<RedisProcess> out = new ArrayList<>();
    for (RedisProcess p : nodes) {
      if ("master".equals(p.info("replication", "role"))) {
        out.add(p);
      }
    }
    return out;
  }

  List<RedisProcess> replicas() {
    List<RedisProcess> out = new ArrayList<>();
    for (RedisProcess p : nodes) {
      if ("slave".equals(p.info("replication", "role"))) {
        out.add(p);
      }
    }
    return out;
  }

  String uri() {
    StringBuilder sb = new StringBuilder("redis-cluster://");
    for (int i = 0; i < 3; i++) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append("127.0.0.1:").append(nodes.get(i).port);
    }
    return sb.toString();
  }

  long calls(String command) {
    long sum = 0;
    for (RedisProcess p : nodes) {
      sum += p.calls(command);
    }
    return sum;
  }

  /** FCALL + EVALSHA + EVAL calls on every node: the store's round trips. */
  long scriptCalls() {
    long sum = 0;
    for (RedisProcess p : nodes) {
      sum += p.scriptCalls();
    }
    return sum;
  }

  @Override
  public void close() {
    for (RedisProcess p : nodes) {
      p.close();
    }
  }
}
