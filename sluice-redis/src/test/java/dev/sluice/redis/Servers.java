package dev.sluice.redis;

/** Servers shared by the integration tests of one JVM, started on first use, killed at exit. */
final class Servers {

  private static RedisProcess standalone;
  private static RedisCluster cluster;

  private Servers() {}

  static synchronized RedisProcess standalone() {
    if (standalone == null) {
      standalone = RedisProcess.start();
    }
    return standalone;
  }

  static synchronized RedisCluster cluster() {
    if (cluster == null) {
      cluster = RedisCluster.start();
    }
    return cluster;
  }
}
