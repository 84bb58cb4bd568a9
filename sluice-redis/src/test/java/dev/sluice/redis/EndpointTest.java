package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;

class EndpointTest {

  @Test
  void standalone_withUserPasswordAndDatabase() {
    Endpoint e = Endpoint.parse("redis://app:s3cret@cache.internal:6380/2");
    assertThat(e.cluster()).isFalse();
    RedisURI uri = e.uris().get(0);
    assertThat(uri.getHost()).isEqualTo("cache.internal");
    assertThat(uri.getPort()).isEqualTo(6380);
    assertThat(uri.getDatabase()).isEqualTo(2);
    assertThat(uri.getCredentialsProvider().resolveCredentials().block().getUsername())
        .isEqualTo("app");
    assertThat(e.toString()).doesNotContain("s3cret");
  }

  @Test
  void tls() {
    assertThat(Endpoint.parse("rediss://cache:6379").uris().get(0).isSsl()).isTrue();
  }

  @Test
  void cluster_listsEverySeed() {
    Endpoint e = Endpoint.parse("redis-cluster://:pw@10.0.0.1:7000,10.0.0.2:7001");
    assertThat(e.cluster()).isTrue();
    assertThat(e.uris()).extracting(RedisURI::getPort).containsExactly(7000, 7001);
    assertThat(e.uris().get(1).getCredentialsProvider().resolveCredentials().block()
        .getPassword()).containsExactly('p', 'w');
    assertThat(e.toString()).doesNotContain("pw");
  }

  @Test
  void badAddresses_failWithTheExpectedForms() {
    assertThatThrownBy(() -> Endpoint.parse("http://x"))
        .hasMessageContaining("uri : \"http://x\"").hasMessageContaining("redis-cluster://");
    assertThatThrownBy(() -> Endpoint.parse("redis-cluster://a:1,b"))
        .hasMessageContaining("'b' is not host:port");
    assertThatThrownBy(() -> Endpoint.parse(""))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
