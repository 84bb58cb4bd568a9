package dev.sluice.core.address;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.InvalidValueException;
import java.util.List;
import org.junit.jupiter.api.Test;

class NetworksTest {

  private static ClientAddress addr(String text) {
    return ClientAddress.parse(text);
  }

  @Test
  void ipv4Network_containsItsAddresses_only() {
    Networks n = Networks.parse(List.of("10.0.0.0/8", "192.0.2.7"), "allow");
    assertThat(n.contains(addr("10.1.2.3"))).isTrue();
    assertThat(n.contains(addr("10.255.255.255"))).isTrue();
    assertThat(n.contains(addr("11.0.0.0"))).isFalse();
    assertThat(n.contains(addr("192.0.2.7"))).isTrue();
    assertThat(n.contains(addr("192.0.2.8"))).isFalse();
    assertThat(n.toList()).containsExactly("10.0.0.0/8", "192.0.2.7/32");
  }

  @Test
  void oddPrefix_comparesPartialByte() {
    Networks n = Networks.parse(List.of("172.16.0.0/12"), "allow");
    assertThat(n.contains(addr("172.31.255.1"))).isTrue();
    assertThat(n.contains(addr("172.32.0.1"))).isFalse();
    assertThat(n.contains(addr("172.15.255.255"))).isFalse();
  }

  @Test
  void ipv6Network_containsGroupedClients() {
    Networks n = Networks.parse(List.of("2001:db8::/32"), "allow");
    assertThat(n.contains(addr("2001:db8:1:2::/64"))).isTrue();
    assertThat(n.contains(addr("2001:db9::/64"))).isFalse();
  }

  @Test
  void networkLongerThanClientGroup_matchesTheGroupThatHoldsIt() {
    Networks n = Networks.parse(List.of("2001:db8:0:1::5/128"), "allow");
    assertThat(n.contains(addr("2001:db8:0:1::/64"))).isTrue();
    assertThat(n.contains(addr("2001:db8:0:2::/64"))).isFalse();
    assertThat(n.contains(addr("2001:db8:0:1::5"))).isTrue();
    assertThat(n.contains(addr("2001:db8:0:1::6"))).isFalse();
  }

  @Test
  void families_doNotMix() {
    Networks v6 = Networks.parse(List.of("::/0"), "allow");
    assertThat(v6.contains(addr("10.0.0.1"))).isFalse();
    assertThat(v6.contains(addr("2001:db8::/64"))).isTrue();
    Networks v4 = Networks.parse(List.of("0.0.0.0/0"), "allow");
    assertThat(v4.contains(addr("10.0.0.1"))).isTrue();
    assertThat(v4.contains(addr("2001:db8::/64"))).isFalse();
  }

  @Test
  void mappedNetwork_isItsIpv4Form() {
    Networks n = Networks.parse(List.of("::ffff:10.0.0.0/104"), "allow");
    assertThat(n.toList()).containsExactly("10.0.0.0/8");
    assertThat(n.contains(addr("10.9.9.9"))).isTrue();
  }

  @Test
  void unknownClient_andNull_areInNoNetwork() {
    Networks n = Networks.parse(List.of("0.0.0.0/0", "::/0"), "allow");
    assertThat(n.contains(ClientAddress.unknown("unknown"))).isFalse();
    assertThat(n.contains(null)).isFalse();
    assertThat(Networks.none().contains(addr("10.0.0.1"))).isFalse();
  }

  @Test
  void badNetwork_namesFieldAndValue() {
    assertThatThrownBy(() -> Networks.parse(List.of("10.0.0.0/8", "10.0.0.0/33"), "from"))
        .isInstanceOf(InvalidValueException.class)
        .hasMessageContaining("from : 10.0.0.0/33")
        .hasMessageContaining("expected: an IPv4 or IPv6 network");
  }

  /** The per-request match allocates nothing: 1M matches cost less than one byte each. */
  @Test
  void contains_allocatesNothing() {
    Networks n = Networks.parse(List.of("10.0.0.0/8", "172.16.0.0/12", "2001:db8::/32"), "allow");
    ClientAddress[] clients = {addr("10.1.2.3"), addr("192.0.2.1"), addr("2001:db8:1:2::/64")};
    com.sun.management.ThreadMXBean bean =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long id = Thread.currentThread().getId();
    int hits = 0;
    for (int i = 0; i < 200_000; i++) {
      hits += n.contains(clients[i % 3]) ? 1 : 0;
    }
    long before = bean.getThreadAllocatedBytes(id);
    for (int i = 0; i < 1_000_000; i++) {
      hits += n.contains(clients[i % 3]) ? 1 : 0;
    }
    long allocated = bean.getThreadAllocatedBytes(id) - before;
    assertThat(hits).isEqualTo(800_000);
    assertThat(allocated).isLessThan(1_000_000);
  }
}
