package dev.sluice.core.address;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ClientAddressTest {

  @Test
  void ipv4_isKeptAsMappedBits_andPrintsAsADottedQuad() {
    ClientAddress a = ClientAddress.ipv4(0xCB00_7107);
    assertThat(a).hasToString("203.0.113.7");
    assertThat(a.known()).isTrue();
    assertThat(a.ipv4()).isTrue();
    assertThat(a.high()).isZero();
    assertThat(a.low()).isEqualTo(0xFFFF_CB00_7107L);
    assertThat(a.prefixLength()).isEqualTo(128);
  }

  @Test
  void ipv6_isGroupedToItsPrefix() {
    ClientAddress net = ClientAddress.ipv6(0x2001_0db8_0001_0002L, 0x1234L, 64);
    assertThat(net).hasToString("2001:db8:1:2::/64");
    assertThat(net.low()).isZero();
    assertThat(ClientAddress.ipv6(0x2001_0db8_0001_0002L, 0xFFFFL, 48))
        .hasToString("2001:db8:1::/48");
    assertThat(ClientAddress.ipv6(0x2001_0db8_0001_0002L, 1, 128)).hasToString("2001:db8:1:2::1");
    assertThat(ClientAddress.ipv6(0, 0xFFFF_0102_0304L, 64)).as("IPv4-mapped folds")
        .isEqualTo(ClientAddress.ipv4(0x0102_0304));
  }

  @Test
  void parse_acceptsExactlyTheCanonicalText() {
    for (String text : new String[] {"203.0.113.7", "0.0.0.0", "255.255.255.255",
        "2001:db8::1", "2001:db8:1:2::/64", "::/64", "8000::/1"}) {
      ClientAddress a = ClientAddress.parse(text);
      assertThat(a).as(text).isNotNull();
      assertThat(a).hasToString(text);
    }
    for (String text : new String[] {"203.0.113.07", "203.0.113", "203.0.113.256", "1.2.3.4.5",
        "2001:DB8::1", "::ffff:203.0.113.7", "2001:db8:1:2::1/64", "2001:db8::/0",
        "2001:db8::/129", "unknown", "", " 1.2.3.4", "1.2.3.4 "}) {
      assertThat(ClientAddress.parse(text)).as(text).isNull();
    }
  }

  @Test
  void unknown_isABucketNotAnAddress() {
    ClientAddress u = ClientAddress.unknown("unknown");
    assertThat(u.known()).isFalse();
    assertThat(u.ipv4()).isFalse();
    assertThat(u).hasToString("unknown").isEqualTo(ClientAddress.unknown("unknown"))
        .isNotEqualTo(ClientAddress.unknown("other"));
  }

  @Test
  void resolver_returnsAddresses_soAdaptersNeedNotGuessFromText() {
    ClientAddressResolver r = ClientAddressResolver.builder().trustedHops(1).build();
    assertThat(r.resolve("10.0.0.1", name -> null).known()).isTrue();
    assertThat(r.resolve("not-an-address", name -> null).known()).isFalse();
    assertThat(r.resolve(null, name -> null)).isEqualTo(ClientAddress.unknown("unknown"));
  }

  /** Regression (issue 7): RFC 7239 requires an IPv6 node bracketed and quoted. */
  @Test
  void forwarded_unbracketedIpv6_isNotANode() {
    assertThat(ForwardedChain.forwardedFor("for=2001:db8:cafe::17", 0, 21)).isNull();
    byte[] bracketed = ForwardedChain.forwardedFor("for=\"[2001:db8:cafe::17]\"", 0, 25);
    assertThat(bracketed).hasSize(16);
    assertThat(ForwardedChain.forwardedFor("for=192.0.2.60:4711", 0, 19)).hasSize(4);
  }

  @Test
  void resolvingASocketAddress_equalsResolvingItsText() throws Exception {
    ClientAddressResolver direct = ClientAddressResolver.direct();
    ClientAddressResolver hop = ClientAddressResolver.builder().trustedHops(1).build();
    ClientAddressResolver cidr = ClientAddressResolver.builder()
        .trustedProxies(java.util.List.of("10.0.0.0/8")).build();
    java.util.function.Function<String, java.util.List<String>> xff =
        name -> name.equals("X-Forwarded-For") ? java.util.List.of("203.0.113.9") : null;
    for (String text : new String[] {"203.0.113.7", "10.1.2.3", "2001:db8:1:2::17", "::1",
        "::ffff:192.0.2.1"}) {
      java.net.InetAddress a = java.net.InetAddress.getByName(text);
      for (ClientAddressResolver r : new ClientAddressResolver[] {direct, hop, cidr}) {
        assertThat(r.resolvePeer(a, xff)).as("%s %s", text, r).isEqualTo(r.resolve(text, xff));
      }
    }
    assertThat(direct.resolvePeer(null, xff)).isEqualTo(ClientAddress.unknown("unknown"));
  }
}
