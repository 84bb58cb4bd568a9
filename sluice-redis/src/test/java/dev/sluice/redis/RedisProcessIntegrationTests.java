package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** The harness itself: CI once failed because another socket took redis-server's port. */
class RedisProcessIntegrationTests {

  @Test
  void portTakenByAnotherSocket_isReportedAsSuch_andFreePortsAvoidTheEphemeralRange()
      throws Exception {
    int port = RedisProcess.freePort();
    assertThat(port + 10000).isLessThan(32768);
    try (ServerSocket other = new ServerSocket()) {
      other.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      assertThatThrownBy(() -> RedisProcess.startOn(port))
          .isInstanceOf(RedisProcess.PortTaken.class)
          .hasMessageContaining("port " + port);
    }
    try (RedisProcess redis = RedisProcess.startOn(port)) {
      assertThat(redis.cmd("PING")).isEqualTo("+PONG");
    }
  }
}
