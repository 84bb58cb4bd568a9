package dev.sluice.core.address;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CidrTest {

  private static boolean contains(String cidr, String addr) {
    Cidr c = Cidr.parse(cidr);
    assertThat(c).as(cidr).isNotNull();
    byte[] a = InetLiteral.parse(addr);
    assertThat(a).as(addr).isNotNull();
    return c.contains(a);
  }

  @Test
  void slash0_v4_containsEveryIpv4_andNoIpv6() {
    assertThat(contains("0.0.0.0/0", "0.0.0.0")).isTrue();
    assertThat(contains("0.0.0.0/0", "255.255.255.255")).isTrue();
    assertThat(contains("0.0.0.0/0", "2001:db8::1")).isFalse();
    assertThat(contains("0.0.0.0/0", "::")).isFalse();
  }

  @Test
  void slash0_v6_containsEveryIpv6_andNoIpv4() {
    assertThat(contains("::/0", "::")).isTrue();
    assertThat(contains("::/0", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")).isTrue();
    assertThat(contains("::/0", "1.2.3.4")).isFalse();
  }

  @Test
  void slash32_containsExactlyOneAddress() {
    assertThat(contains("192.168.1.7/32", "192.168.1.7")).isTrue();
    assertThat(contains("192.168.1.7/32", "192.168.1.6")).isFalse();
    assertThat(contains("192.168.1.7/32", "192.168.1.8")).isFalse();
  }

  @Test
  void bareAddress_isASingleHost() {
    assertThat(Cidr.parse("192.168.1.7")).hasToString("192.168.1.7/32");
    assertThat(Cidr.parse("::1")).hasToString("::1/128");
    assertThat(contains("192.168.1.7", "192.168.1.7")).isTrue();
    assertThat(contains("192.168.1.7", "192.168.1.70")).isFalse();
  }

  @Test
  void slash128_containsExactlyOneAddress() {
    assertThat(contains("::1/128", "::1")).isTrue();
    assertThat(contains("::1/128", "::2")).isFalse();
    assertThat(contains("::1/128", "::")).isFalse();
    assertThat(contains("2001:db8::ffff/128", "2001:db8::fffe")).isFalse();
  }

  @ParameterizedTest
  @CsvSource({
    "10.0.0.0/8, 10.0.0.0, true",
    "10.0.0.0/8, 10.255.255.255, true",
    "10.0.0.0/8, 11.0.0.0, false",
    "10.0.0.0/8, 9.255.255.255, false",
    "172.16.0.0/12, 172.31.255.255, true",
    "172.16.0.0/12, 172.32.0.0, false",
    "172.16.0.0/12, 172.15.255.255, false",
    "192.168.4.0/31, 192.168.4.1, true",
    "192.168.4.0/31, 192.168.4.2, false",
    "128.0.0.0/1, 128.0.0.0, true",
    "128.0.0.0/1, 127.255.255.255, false",
    "2001:db8::/32, 2001:db8:ffff:ffff::1, true",
    "2001:db8::/32, 2001:db9::, false",
    "2001:db8::/127, 2001:db8::1, true",
    "2001:db8::/127, 2001:db8::2, false",
    "fe80::/10, febf::1, true",
    "fe80::/10, fec0::1, false",
  })
  void boundaries_ofNonTrivialPrefixes(String cidr, String addr, boolean expected) {
    assertThat(contains(cidr, addr)).isEqualTo(expected);
  }

  @Test
  void ipv4Network_neverContainsAPlainIpv6Address_evenWithTheSameLeadingBytes() {
    // 0a00:0001:: starts with the bytes of 10.0.0.1
    assertThat(contains("10.0.0.0/8", "a00:1::")).isFalse();
    assertThat(contains("10.0.0.0/8", "::10.0.0.1")).isFalse(); // deprecated IPv4-compatible form is not mapped
  }

  @Test
  void ipv4Network_containsTheIpv4MappedForm() {
    assertThat(contains("10.0.0.0/8", "::ffff:10.1.2.3")).isTrue();
    assertThat(contains("10.0.0.0/8", "::ffff:11.1.2.3")).isFalse();
  }

  @Test
  void mappedNetwork_isStoredAsItsIpv4Form() {
    assertThat(Cidr.parse("::ffff:10.0.0.0/104")).isEqualTo(Cidr.parse("10.0.0.0/8")).hasToString("10.0.0.0/8");
    assertThat(Cidr.parse("::ffff:1.2.3.4")).hasToString("1.2.3.4/32");
    assertThat(Cidr.parse("::ffff:0:0/96")).hasToString("0.0.0.0/0");
    assertThat(contains("::ffff:10.0.0.0/104", "10.9.9.9")).isTrue();
  }

  @Test
  void hostBits_areCleared() {
    assertThat(Cidr.parse("10.1.2.3/8")).hasToString("10.0.0.0/8");
    assertThat(Cidr.parse("2001:db8::1/64")).hasToString("2001:db8::/64");
    assertThat(contains("10.1.2.3/8", "10.200.0.1")).isTrue();
  }

  @Test
  void surroundingSpaces_areAllowed_andUpperCaseHexIsCanonicalised() {
    assertThat(Cidr.parse("  10.0.0.0/8 ")).hasToString("10.0.0.0/8");
    assertThat(Cidr.parse("2001:DB8::/32")).hasToString("2001:db8::/32");
  }

  @ParameterizedTest
  @ValueSource(strings = {
    "", " ", "10.0.0.0/33", "::/129", "10.0.0.0/", "/8", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/08",
    "10.0.0.0/8/8", "10.0.0.0 /8", "10.0.0.0/ 8", "evil.com/8", "localhost", "10.0.0/8", "[::1]/128",
    "fe80::1%eth0/64", "10.0.0.0/1000", "10.0.0.0/8x",
  })
  void malformed_isRejected(String text) {
    assertThat(Cidr.parse(text)).isNull();
  }

  @Test
  void null_isRejected_andNullAddressIsNeverContained() {
    assertThat(Cidr.parse(null)).isNull();
    assertThat(Cidr.parse("0.0.0.0/0").contains(null)).isFalse();
  }
}
