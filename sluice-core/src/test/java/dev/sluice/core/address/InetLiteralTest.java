package dev.sluice.core.address;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class InetLiteralTest {

  private static byte[] hex(String h) {
    return HexFormat.of().parseHex(h);
  }

  @ParameterizedTest
  @CsvSource({
    "0.0.0.0, 00000000",
    "1.2.3.4, 01020304",
    "255.255.255.255, ffffffff",
    "192.0.2.10, c000020a",
  })
  void ipv4_decimalQuads_parse(String text, String bytes) {
    assertThat(InetLiteral.parseIpv4(text, 0, text.length())).isEqualTo(hex(bytes));
  }

  @ParameterizedTest
  @ValueSource(strings = {
    "", "1.2.3", "1.2.3.4.5", "1.2.3.256", "1.2.3.999", "01.2.3.4", "1.2.3.04", "1..2.3", ".1.2.3.4",
    "1.2.3.4.", "127.1", "0x7f.0.0.1", "2130706433", "1.2.3.-4", "+1.2.3.4", "1.2.3.4 ", " 1.2.3.4",
    "1.2.3.1234", "\u0661.\u0662.\u0663.\u0664", "1.2.3.4\u0000", "a.b.c.d",
  })
  void ipv4_anythingButFourPlainOctets_isRejected(String text) {
    assertThat(InetLiteral.parseIpv4(text, 0, text.length())).isNull();
  }

  @ParameterizedTest
  @CsvSource({
    "::, 00000000000000000000000000000000",
    "::1, 00000000000000000000000000000001",
    "1::, 00010000000000000000000000000000",
    "2001:db8::1, 20010db8000000000000000000000001",
    "2001:DB8::A:b, 20010db80000000000000000000a000b",
    "2001:0db8:0000:0000:0000:0000:0000:0001, 20010db8000000000000000000000001",
    "1:2:3:4:5:6:7:8, 00010002000300040005000600070008",
    "1:2:3:4:5:6:7::, 00010002000300040005000600070000",
    "::2:3:4:5:6:7:8, 00000002000300040005000600070008",
    "::ffff:1.2.3.4, 00000000000000000000ffff01020304",
    "1:2:3:4:5:6:1.2.3.4, 00010002000300040005000601020304",
    "fe80::1:2, fe800000000000000000000000010002",
  })
  void ipv6_rfc4291Forms_parse(String text, String bytes) {
    assertThat(InetLiteral.parseIpv6(text, 0, text.length())).isEqualTo(hex(bytes));
  }

  @ParameterizedTest
  @ValueSource(strings = {
    ":", ":::", "1::2::3", ":1::", "1::2:", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::",
    "::1:2:3:4:5:6:7:8", "12345::", "g::1", "::1.2.3", "1:2:3:4:5:6:7:1.2.3.4", "::1.2.3.4:5", "1.2.3.4",
    "::ffff:1.2.3.256", "fe80::1%eth0", "[::1]", "1:2:3:4:5:6:7:8:", "::-1",
  })
  void ipv6_malformedText_isRejected(String text) {
    assertThat(InetLiteral.parseIpv6(text, 0, text.length())).isNull();
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "1.2.3.4|01020304",
    "  1.2.3.4\t|01020304",
    "1.2.3.4:8080|01020304",
    "1.2.3.4:_obf|01020304",
    "[2001:db8::1]|20010db8000000000000000000000001",
    "[2001:db8::1]:443|20010db8000000000000000000000001",
    "2001:db8::1|20010db8000000000000000000000001",
    "fe80::1%eth0|fe800000000000000000000000000001",
    "[fe80::1%25eth0]:80|fe800000000000000000000000000001",
    "::ffff:1.2.3.4|01020304",
    "[::ffff:1.2.3.4]:80|01020304",
    "::ffff:102:304|01020304",
  })
  void endpoint_bracketsPortsAndZones_areStrippedAndMappedFolded(String text, String bytes) {
    assertThat(InetLiteral.parseEndpoint(text)).isEqualTo(hex(bytes));
  }

  @ParameterizedTest
  @ValueSource(strings = {
    "", " ", "localhost", "evil.com", "1.2.3.4:", "1.2.3.4:99999", "1.2.3.4:123456", "1.2.3.4:-1", "1.2.3.4:_",
    "[1.2.3.4]", "[::1", "::1]", "[::1]x", "[::1]:", "[::1]:abc", "1.2.3.4%eth0", "fe80::1%", "fe80::1%et h0",
    "fe80::1%eth0\n", "1.2.3.4\n5", "1.2.3.4,5.6.7.8", "unknown", "_hidden", "\"1.2.3.4\"",
  })
  void endpoint_notALiteral_isRejected(String text) {
    assertThat(InetLiteral.parseEndpoint(text)).isNull();
  }

  @Test
  void endpoint_longerThanAnyLiteral_isRejectedUnparsed() {
    String longZone = "fe80::1%" + "a".repeat(InetLiteral.MAX_ENDPOINT_LENGTH);
    assertThat(InetLiteral.parseEndpoint(longZone)).isNull();
    assertThat(InetLiteral.parseEndpoint("1".repeat(10_000))).isNull();
  }

  @Test
  void hostName_isNeverResolved_evenLocalhost() {
    // a lookup would answer 127.0.0.1 for localhost; a literal parser has no answer
    assertThat(InetLiteral.parse("localhost")).isNull();
    assertThat(InetLiteral.parseEndpoint("localhost:80")).isNull();
  }

  @ParameterizedTest
  @CsvSource({
    "20010db8000000000000000000000001, 2001:db8::1",
    "20010db8000000010001000100010001, 2001:db8:0:1:1:1:1:1",
    "20010000000000010000000000000001, 2001:0:0:1::1",
    "20010db8000000000001000000000001, 2001:db8::1:0:0:1",
    "00000000000000000000000000000000, ::",
    "00000000000000000000000000000001, ::1",
    "00010000000000000000000000000000, 1::",
    "abcd00000000000000000000000000ef, abcd::ef",
    "000100020003000400050006000700ff, 1:2:3:4:5:6:7:ff",
    "00010000000300040005000600070008, 1:0:3:4:5:6:7:8",
  })
  void ipv6_formatsInRfc5952CanonicalForm(String bytes, String text) {
    assertThat(InetLiteral.formatIpv6(hex(bytes))).isEqualTo(text);
  }

  @Test
  void mask_clearsBitsAfterThePrefix() {
    byte[] a = hex("20010db8000100020003000400050006");
    assertThat(InetLiteral.mask(a, 64)).isEqualTo(hex("20010db8000100020000000000000000"));
    assertThat(InetLiteral.mask(a, 56)).isEqualTo(hex("20010db8000100000000000000000000"));
    assertThat(InetLiteral.mask(a, 61)).isEqualTo(hex("20010db8000100000000000000000000"));
    assertThat(InetLiteral.mask(a, 63)).isEqualTo(hex("20010db8000100020000000000000000"));
    assertThat(InetLiteral.mask(a, 128)).isEqualTo(a);
    assertThat(InetLiteral.mask(a, 1)).isEqualTo(hex("00000000000000000000000000000000"));
    assertThat(InetLiteral.mask(hex("ffffffff"), 9)).isEqualTo(hex("ff800000"));
  }
}
