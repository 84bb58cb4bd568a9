package dev.sluice.core.address;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

class ClientAddressProperties {

  private static final Pattern KEY = Pattern.compile(
      "unknown|(\\d{1,3}\\.){3}\\d{1,3}|[0-9a-f:]{2,39}/(\\d{1,3})");

  private static final List<ClientAddressResolver> RESOLVERS = List.of(
      ClientAddressResolver.direct(),
      ClientAddressResolver.builder().trustedHops(1).build(),
      ClientAddressResolver.builder().trustedHops(3).build(),
      ClientAddressResolver.builder().trustedProxies(List.of("0.0.0.0/0", "::/0")).build(),
      ClientAddressResolver.builder().trustedProxies(List.of("10.0.0.0/8")).ipv6Prefix(37).build());

  @Property
  void ipv4Text_roundTripsToItself(
      @ForAll @IntRange(max = 255) int a, @ForAll @IntRange(max = 255) int b,
      @ForAll @IntRange(max = 255) int c, @ForAll @IntRange(max = 255) int d) {
    String text = a + "." + b + "." + c + "." + d;
    assertThat(ClientAddressResolver.direct().resolve(text, name -> null).toString()).isEqualTo(text);
    assertThat(RESOLVERS.get(1).resolve("10.0.0.1", name -> name.equals("X-Forwarded-For") ? List.of(text) : null).toString())
        .isEqualTo(text);
    assertThat(ClientAddressResolver.direct().resolve("::ffff:" + text, name -> null).toString()).isEqualTo(text);
  }

  @Property
  void ipv6Bytes_roundTripThroughCanonicalAndJdkText(@ForAll @Size(16) byte[] bytes) throws UnknownHostException {
    byte[] expected = InetLiteral.foldMapped(bytes);
    assertThat(InetLiteral.parseEndpoint(InetLiteral.formatIpv6(bytes))).isEqualTo(expected);
    // getByAddress does no lookup; its text is the uncompressed form, a second spelling to parse
    assertThat(InetLiteral.parseEndpoint(InetAddress.getByAddress(bytes).getHostAddress())).isEqualTo(expected);
    assertThat(InetLiteral.parseEndpoint(InetLiteral.formatIpv6(bytes).toUpperCase())).isEqualTo(expected);
  }

  @Property
  void ipv6_sameSlash64_sameKey_differentSlash64_differentKey(
      @ForAll @Size(16) byte[] a, @ForAll @Size(8) byte[] otherHost, @ForAll @IntRange(max = 63) int flipBit) {
    a[0] = 0x20; // keep clear of ::ffff:0:0/96, which folds to IPv4
    byte[] b = a.clone();
    System.arraycopy(otherHost, 0, b, 8, 8);
    byte[] c = a.clone();
    c[flipBit >>> 3] ^= (byte) (0x80 >>> (flipBit & 7));
    ClientAddressResolver r = ClientAddressResolver.direct();
    String keyA = r.resolve(InetLiteral.formatIpv6(a), name -> null).toString();
    assertThat(r.resolve(InetLiteral.formatIpv6(b), name -> null).toString()).isEqualTo(keyA);
    assertThat(r.resolve(InetLiteral.formatIpv6(c), name -> null).toString()).isNotEqualTo(keyA);
    assertThat(keyA).endsWith("/64");
  }

  @Property
  void randomBytes_neverThrow_andAlwaysGiveAKeyShapedResult(
      @ForAll("junk") String peer, @ForAll("junk") String header, @ForAll("junk") String second) {
    Function<String, List<String>> headers = name -> List.of(header, second);
    for (ClientAddressResolver r : RESOLVERS) {
      assertThat(r.resolve(peer, headers).toString()).matches(KEY);
      assertThat(r.resolve("10.1.2.3", headers).toString()).matches(KEY);
      assertThat(r.resolve(peer, null).toString()).matches(KEY);
    }
    assertThat(Cidr.parse(header)).satisfiesAnyOf(c -> assertThat(c).isNull(), c -> assertThat(c.toString()).matches(
        "(\\d{1,3}\\.){3}\\d{1,3}/\\d{1,2}|[0-9a-f:]{2,39}/\\d{1,3}"));
  }

  @Property
  void addressesWithNoise_neverThrow(@ForAll("addressish") String value) {
    Function<String, List<String>> headers = name -> List.of(value);
    for (ClientAddressResolver r : RESOLVERS) {
      assertThat(r.resolve(value, headers).toString()).matches(KEY);
    }
  }

  @Provide
  Arbitrary<String> junk() {
    Arbitrary<String> fromBytes = Arbitraries.bytes().array(byte[].class).ofMaxSize(300)
        .map(b -> new String(b, StandardCharsets.ISO_8859_1));
    Arbitrary<String> fromUtf8 = Arbitraries.bytes().array(byte[].class).ofMaxSize(300)
        .map(b -> new String(b, StandardCharsets.UTF_8));
    return Arbitraries.oneOf(fromBytes, fromUtf8, Arbitraries.strings().ofMaxLength(300), addressish());
  }

  @Provide
  Arbitrary<String> addressish() {
    return Arbitraries.strings().withChars("0123456789abcdefABCDEF.:[]%,;=\"_ \tfor").ofMaxLength(60);
  }
}
