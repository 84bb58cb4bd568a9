package dev.sluice.core.address;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import dev.sluice.core.address.ClientAddressResolver.Header;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@org.junit.jupiter.api.extension.ExtendWith(ResolverWarnings.class)
class ClientAddressResolverTest {

  private static final String XFF = "X-Forwarded-For";
  private static final String FWD = "Forwarded";
  private static final String XRI = "X-Real-IP";
  private static final Function<String, List<String>> NO_HEADERS = name -> null;

  /** Header lines as (name, value) pairs; a name may repeat, one entry per header line. */
  static Function<String, List<String>> headers(String... nameValue) {
    Map<String, List<String>> map = new HashMap<>();
    for (int i = 0; i < nameValue.length; i += 2) {
      map.computeIfAbsent(nameValue[i].toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(nameValue[i + 1]);
    }
    return name -> map.get(name.toLowerCase(Locale.ROOT));
  }

  /** Most tests read all three headers; only X-Forwarded-For is on by default. */
  private static ClientAddressResolver.Builder allHeaders() {
    return ClientAddressResolver.builder().header(Header.FORWARDED, true).header(Header.X_REAL_IP, true);
  }

  private static ClientAddressResolver hops(int n) {
    return allHeaders().trustedHops(n).build();
  }

  private static ClientAddressResolver proxies(String... cidrs) {
    return allHeaders().trustedProxies(List.of(cidrs)).build();
  }

  @Test
  void byDefault_onlyXForwardedForIsRead_soAClientCannotPickItsKeyWithForwarded() {
    ClientAddressResolver resolver = ClientAddressResolver.builder().trustedHops(1).build();
    assertThat(resolver.resolve("10.0.0.1", headers("Forwarded", "for=6.6.6.6", "X-Forwarded-For", "7.7.7.7")).toString())
        .isEqualTo("7.7.7.7");
    assertThat(resolver.resolve("10.0.0.1", headers("Forwarded", "for=6.6.6.6", "X-Real-IP", "5.5.5.5")).toString())
        .isEqualTo("10.0.0.1");
  }

  @Nested
  class NoProxyTrusted {

    @Test
    void direct_isThePeer() {
      assertThat(ClientAddressResolver.direct().resolve("203.0.113.7", NO_HEADERS).toString()).isEqualTo("203.0.113.7");
      assertThat(ClientAddressResolver.direct().resolve("203.0.113.7", null).toString()).isEqualTo("203.0.113.7");
    }

    @Test
    void readsHeaders_onlyWhenAProxyIsTrusted() {
      assertThat(ClientAddressResolver.direct().readsHeaders()).isFalse();
      assertThat(ClientAddressResolver.builder().ipv6Prefix(48).build().readsHeaders()).isFalse();
      assertThat(ClientAddressResolver.builder().trustedHops(1).build().readsHeaders()).isTrue();
      assertThat(ClientAddressResolver.builder().trustedProxies(List.of("10.0.0.0/8")).build()
          .readsHeaders()).isTrue();
    }

    @Test
    void xff_fromUntrustedPeer_isIgnored() {
      assertThat(ClientAddressResolver.direct().resolve("203.0.113.7", headers(XFF, "1.1.1.1")).toString())
          .isEqualTo("203.0.113.7");
    }

    @Test
    void forwardedAndRealIp_fromUntrustedPeer_areIgnored() {
      assertThat(ClientAddressResolver.direct().resolve("203.0.113.7",
          headers(FWD, "for=1.1.1.1", XRI, "2.2.2.2")).toString()).isEqualTo("203.0.113.7");
    }

    @Test
    void peerForms_bracketsPortsZonesAndInetSocketAddressSlash_normalise() {
      ClientAddressResolver r = ClientAddressResolver.direct();
      assertThat(r.resolve("[::1]", NO_HEADERS).toString()).isEqualTo("::/64");
      assertThat(r.resolve("[::1]:8080", NO_HEADERS).toString()).isEqualTo("::/64");
      assertThat(r.resolve("fe80::1%eth0", NO_HEADERS).toString()).isEqualTo("fe80::/64");
      assertThat(r.resolve("/127.0.0.1:54321", NO_HEADERS).toString()).isEqualTo("127.0.0.1");
      assertThat(r.resolve("/[2001:db8:1:2::5]:443", NO_HEADERS).toString()).isEqualTo("2001:db8:1:2::/64");
      assertThat(r.resolve("1.2.3.4:5678", NO_HEADERS).toString()).isEqualTo("1.2.3.4");
    }

    @Test
    void missingOrGarbagePeer_isTheUnknownBucket() {
      assertThat(ClientAddressResolver.direct().resolve(null, NO_HEADERS).toString()).isEqualTo("unknown");
      assertThat(ClientAddressResolver.direct().resolve("evil.com", NO_HEADERS).toString()).isEqualTo("unknown");
      assertThat(ClientAddressResolver.builder().unknownBucket("no-ip").build().resolve("", NO_HEADERS).toString())
          .isEqualTo("no-ip");
    }
  }

  @Nested
  class IgnoredHeadersWarning {

    @Test
    void forwardedHeaders_withNoProxyTrusted_warnOncePerProcess() {
      ClientAddressResolver.resetIgnoredHeadersWarning();
      ClientAddressResolver.direct().resolve("203.0.113.7", headers(XFF, "1.1.1.1")).toString();
      ClientAddressResolver.direct().resolve("203.0.113.7", headers(FWD, "for=1.1.1.1")).toString();
      ClientAddressResolver.builder().build().resolve("203.0.113.7", headers(XRI, "1.1.1.1")).toString();
      assertThat(ClientAddressResolver.ignoredHeadersWarnings()).isEqualTo(1);
      assertThat(ResolverWarnings.LOGGED).last()
          .isEqualTo("WARNING " + ClientAddressResolver.IGNORED_HEADERS_WARNING);
    }

    @Test
    void noForwardedHeaders_noWarning() {
      ClientAddressResolver.resetIgnoredHeadersWarning();
      ClientAddressResolver.direct().resolve("203.0.113.7", headers("User-Agent", "x")).toString();
      ClientAddressResolver.direct().resolve("203.0.113.7", null).toString();
      assertThat(ClientAddressResolver.ignoredHeadersWarnings()).isZero();
    }

    @Test
    void trustConfigured_noWarning_evenFromAnUntrustedPeer() {
      ClientAddressResolver.resetIgnoredHeadersWarning();
      hops(1).resolve("203.0.113.7", headers(XFF, "1.1.1.1")).toString();
      proxies("10.0.0.0/8").resolve("203.0.113.7", headers(XFF, "1.1.1.1")).toString();
      assertThat(ClientAddressResolver.ignoredHeadersWarnings()).isZero();
    }

    @Test
    void disabledHeader_isNotWarnedAbout() {
      ClientAddressResolver.resetIgnoredHeadersWarning();
      ClientAddressResolver.builder().header(Header.X_FORWARDED_FOR, false).build()
          .resolve("203.0.113.7", headers(XFF, "1.1.1.1")).toString();
      assertThat(ClientAddressResolver.ignoredHeadersWarnings()).isZero();
    }

    @Test
    void warningText_tellsWhatToSetAndWhyNotToOnAnExposedServer() {
      assertThat(ClientAddressResolver.IGNORED_HEADERS_WARNING)
          .contains("TRUST_PROXY=<hops>", "TRUSTED_PROXIES=<cidrs>", "choose its own rate-limit key");
    }
  }

  @Nested
  class TrustedHops {

    @Test
    void seedVectors_spoofedLeftEntries_allShareTheAppendedKey() {
      ClientAddressResolver r = hops(1);
      assertThat(r.resolve("10.0.0.1", headers(XFF, "a.a.a.a, 7.7.7.7")).toString()).isEqualTo("7.7.7.7");
      assertThat(r.resolve("10.0.0.1", headers(XFF, "b.b.b.b, 7.7.7.7")).toString()).isEqualTo("7.7.7.7");
      assertThat(r.resolve("10.0.0.1", headers(XFF, "c.c.c.c, 7.7.7.7")).toString()).isEqualTo("7.7.7.7");
    }

    @Test
    void xff_spoofedPrependedAddresses_areNeverRead() {
      assertThat(hops(1).resolve("10.0.0.1", headers(XFF, "6.6.6.6, 5.5.5.5, 203.0.113.7")).toString())
          .isEqualTo("203.0.113.7");
      assertThat(hops(2).resolve("10.0.0.2", headers(XFF, "6.6.6.6, 203.0.113.7, 10.0.0.1")).toString())
          .isEqualTo("203.0.113.7");
    }

    @Test
    void chainShorterThanHops_isThePeer() {
      assertThat(hops(2).resolve("10.0.0.2", headers(XFF, "203.0.113.7")).toString()).isEqualTo("10.0.0.2");
      assertThat(hops(1).resolve("10.0.0.2", NO_HEADERS).toString()).isEqualTo("10.0.0.2");
      assertThat(hops(1).resolve("10.0.0.2", headers(XFF, " , ,")).toString()).isEqualTo("10.0.0.2");
    }

    @Test
    void severalHeaderLines_formOneChainInArrivalOrder() {
      Function<String, List<String>> h = headers(XFF, "1.1.1.1, 2.2.2.2", XFF, "3.3.3.3");
      assertThat(hops(1).resolve("10.0.0.1", h).toString()).isEqualTo("3.3.3.3");
      assertThat(hops(2).resolve("10.0.0.1", h).toString()).isEqualTo("2.2.2.2");
      assertThat(hops(3).resolve("10.0.0.1", h).toString()).isEqualTo("1.1.1.1");
      assertThat(hops(4).resolve("10.0.0.1", h).toString()).isEqualTo("10.0.0.1");
    }

    @Test
    void emptyEntries_areDropped_notCounted() {
      assertThat(hops(2).resolve("10.0.0.1", headers(XFF, "1.1.1.1,, ,2.2.2.2,", XFF, "")).toString())
          .isEqualTo("1.1.1.1");
    }

    @Test
    void chosenEntryNotAnAddress_isTheUnknownBucket() {
      assertThat(hops(1).resolve("10.0.0.1", headers(XFF, "1.1.1.1, evil.com")).toString()).isEqualTo("unknown");
      assertThat(hops(1).resolve("10.0.0.1", headers(XFF, "1.1.1.1, unknown")).toString()).isEqualTo("unknown");
    }

    @Test
    void entriesWithPortsAndBrackets_areNormalised() {
      assertThat(hops(1).resolve("10.0.0.1", headers(XFF, "203.0.113.7:51234")).toString()).isEqualTo("203.0.113.7");
      assertThat(hops(1).resolve("10.0.0.1", headers(XFF, "[2001:db8:1:2::9]:443")).toString()).isEqualTo("2001:db8:1:2::/64");
      assertThat(hops(1).resolve("10.0.0.1", headers(XFF, "::ffff:203.0.113.7")).toString()).isEqualTo("203.0.113.7");
    }

    @Test
    void xRealIp_isAOneEntryChain() {
      assertThat(hops(1).resolve("10.0.0.1", headers(XRI, " 203.0.113.7 ")).toString()).isEqualTo("203.0.113.7");
      assertThat(hops(2).resolve("10.0.0.1", headers(XRI, "203.0.113.7")).toString()).isEqualTo("10.0.0.1");
      assertThat(hops(1).resolve("10.0.0.1", headers(XRI, "1.1.1.1, 203.0.113.7")).toString()).isEqualTo("unknown");
      assertThat(hops(1).resolve("10.0.0.1", headers(XRI, "6.6.6.6", XRI, "203.0.113.7")).toString()).isEqualTo("203.0.113.7");
    }

    @Test
    void trustedHops_outOfRange_failsAtOnce() {
      assertThatThrownBy(() -> ClientAddressResolver.builder().trustedHops(-1))
          .isInstanceOf(IllegalArgumentException.class).hasMessage("trustedHops : -1 (expected: 0..64)");
      assertThatThrownBy(() -> ClientAddressResolver.builder().trustedHops(65))
          .isInstanceOf(IllegalArgumentException.class).hasMessage("trustedHops : 65 (expected: 0..64)");
    }

    @Test
    void hops64_readsThe64thEntryFromTheRight() {
      StringBuilder sb = new StringBuilder("6.6.6.6");
      for (int i = 64; i >= 1; i--) {
        sb.append(", 10.0.").append(i).append(".1");
      }
      assertThat(hops(64).resolve("10.9.9.9", headers(XFF, sb.toString())).toString()).isEqualTo("10.0.64.1");
    }
  }

  @Nested
  class TrustedProxies {

    @Test
    void xff_fromUntrustedPeer_isIgnored() {
      assertThat(proxies("10.0.0.0/8").resolve("203.0.113.7", headers(XFF, "1.1.1.1")).toString()).isEqualTo("203.0.113.7");
      assertThat(proxies("10.0.0.0/8").resolve("203.0.113.7", headers(FWD, "for=1.1.1.1")).toString()).isEqualTo("203.0.113.7");
      assertThat(proxies("10.0.0.0/8").resolve("203.0.113.7", headers(XRI, "1.1.1.1")).toString()).isEqualTo("203.0.113.7");
    }

    @Test
    void walk_stopsAtTheFirstUntrustedEntryFromTheRight() {
      assertThat(proxies("10.0.0.0/8").resolve("10.0.0.1", headers(XFF, "203.0.113.7, 10.0.0.5")).toString())
          .isEqualTo("203.0.113.7");
    }

    @Test
    void walk_spoofedPrependedAddresses_areNeverRead() {
      assertThat(proxies("10.0.0.0/8").resolve("10.0.0.1", headers(XFF, "10.0.0.99, 6.6.6.6, 203.0.113.7, 10.0.0.5")).toString())
          .isEqualTo("203.0.113.7");
    }

    @Test
    void walk_allTrusted_isTheLeftmostEntry() {
      assertThat(proxies("10.0.0.0/8").resolve("10.0.0.1", headers(XFF, "10.0.0.9, 10.0.0.5")).toString())
          .isEqualTo("10.0.0.9");
    }

    @Test
    void walk_trustedPeerWithoutHeaders_isThePeer() {
      assertThat(proxies("10.0.0.0/8").resolve("10.0.0.1", NO_HEADERS).toString()).isEqualTo("10.0.0.1");
      assertThat(proxies("10.0.0.0/8").resolve("10.0.0.1", headers(XFF, " ")).toString()).isEqualTo("10.0.0.1");
    }

    @Test
    void walk_unparseableEntry_stopsTheWalk_asTheUnknownBucket() {
      assertThat(proxies("10.0.0.0/8").resolve("10.0.0.1", headers(XFF, "203.0.113.7, evil.com, 10.0.0.5")).toString())
          .isEqualTo("unknown");
      assertThat(proxies("10.0.0.0/8").resolve("10.0.0.1", headers(FWD, "for=203.0.113.7, for=unknown")).toString())
          .isEqualTo("unknown");
      assertThat(proxies("10.0.0.0/8").resolve("10.0.0.1", headers(FWD, "for=203.0.113.7, for=_hidden")).toString())
          .isEqualTo("unknown");
    }

    @Test
    void singleAddressAndIpv6Loopback_areTrusted() {
      ClientAddressResolver r = proxies("192.168.1.7", "::1/128");
      assertThat(r.resolve("192.168.1.7", headers(XFF, "203.0.113.7")).toString()).isEqualTo("203.0.113.7");
      assertThat(r.resolve("192.168.1.8", headers(XFF, "203.0.113.7")).toString()).isEqualTo("192.168.1.8");
      assertThat(r.resolve("[::1]:443", headers(XFF, "203.0.113.7")).toString()).isEqualTo("203.0.113.7");
      assertThat(r.resolve("[::2]:443", headers(XFF, "203.0.113.7")).toString()).isEqualTo("::/64");
    }

    @Test
    void mappedPeer_isTrustedByItsIpv4Network() {
      assertThat(proxies("10.0.0.0/8").resolve("[::ffff:10.0.0.1]:443", headers(XFF, "203.0.113.7")).toString())
          .isEqualTo("203.0.113.7");
    }

    @Test
    void ipv4Network_doesNotTrustAnIpv6Peer() {
      assertThat(proxies("0.0.0.0/0").resolve("2001:db8::1", headers(XFF, "203.0.113.7")).toString())
          .isEqualTo("2001:db8::/64");
    }

    @Test
    void badCidr_failsAtOnce_namingTheEntry() {
      assertThatThrownBy(() -> ClientAddressResolver.builder().trustedProxies(List.of("10.0.0.0/8", "10.0.0.0/33")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("trustedProxies : 10.0.0.0/33 (expected: an IPv4 or IPv6 address with an optional /prefix)");
      assertThatThrownBy(() -> ClientAddressResolver.builder().trustedProxies(List.of("proxy.internal")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("trustedProxies : proxy.internal (expected: an IPv4 or IPv6 address with an optional /prefix)");
    }

    @Test
    void hopsAndProxiesTogether_areRefused() {
      assertThatThrownBy(() -> ClientAddressResolver.builder().trustedHops(1).trustedProxies(List.of("10.0.0.0/8")).build())
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("trustedHops : 1 and trustedProxies : [10.0.0.0/8] (expected: one of them, not both)");
    }
  }

  @Nested
  class Rfc7239Forwarded {

    @Test
    void section4_obfuscatedIdentifier_isTheUnknownBucket() {
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=\"_gazonk\"")).toString()).isEqualTo("unknown");
    }

    @Test
    void section4_caseInsensitiveFor_quotedBracketedIpv6WithPort() {
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "For=\"[2001:db8:cafe::17]:4711\"")).toString())
          .isEqualTo("2001:db8:cafe::/64");
    }

    @Test
    void section4_parametersSeparatedBySemicolons() {
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=192.0.2.60;proto=http;by=203.0.113.43")).toString())
          .isEqualTo("192.0.2.60");
    }

    @Test
    void section4_elementsSeparatedByCommas_areHops() {
      Function<String, List<String>> h = headers(FWD, "for=192.0.2.43, for=198.51.100.17");
      assertThat(hops(1).resolve("10.0.0.1", h).toString()).isEqualTo("198.51.100.17");
      assertThat(hops(2).resolve("10.0.0.1", h).toString()).isEqualTo("192.0.2.43");
      assertThat(hops(3).resolve("10.0.0.1", h).toString()).isEqualTo("10.0.0.1");
    }

    @Test
    void section7_1_oneHeaderOrSeveralLines_areTheSameChain() {
      Function<String, List<String>> oneLine =
          headers(FWD, "for=192.0.2.43,for=198.51.100.17;by=203.0.113.60;proto=http;host=example.com");
      Function<String, List<String>> twoLines = headers(FWD, "for=192.0.2.43",
          FWD, "for=198.51.100.17;by=203.0.113.60;proto=http;host=example.com");
      for (Function<String, List<String>> h : List.of(oneLine, twoLines)) {
        assertThat(hops(1).resolve("10.0.0.1", h).toString()).isEqualTo("198.51.100.17");
        assertThat(hops(2).resolve("10.0.0.1", h).toString()).isEqualTo("192.0.2.43");
      }
    }

    @Test
    void mixedChain_withUnknown() {
      Function<String, List<String>> h = headers(FWD, "for=192.0.2.43,for=\"[2001:db8:cafe::17]\",for=unknown");
      assertThat(hops(1).resolve("10.0.0.1", h).toString()).isEqualTo("unknown");
      assertThat(hops(2).resolve("10.0.0.1", h).toString()).isEqualTo("2001:db8:cafe::/64");
      assertThat(hops(3).resolve("10.0.0.1", h).toString()).isEqualTo("192.0.2.43");
    }

    @Test
    void section6_unknownAndObfuscatedNodes_areTheUnknownBucket() {
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=unknown;by=203.0.113.43")).toString()).isEqualTo("unknown");
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=_hidden, for=_SEVKISEK")).toString()).isEqualTo("unknown");
      assertThat(hops(2).resolve("10.0.0.1", headers(FWD, "for=_hidden, for=_SEVKISEK")).toString()).isEqualTo("unknown");
    }

    @Test
    void section6_ipv4WithPort_andObfuscatedPort() {
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=\"192.0.2.43:47011\"")).toString()).isEqualTo("192.0.2.43");
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=\"[2001:db8:cafe::17]:_p1\"")).toString())
          .isEqualTo("2001:db8:cafe::/64");
    }

    /** Issue 20, item 13: for=[2001:db8::17] without quotes was accepted. */
    @Test
    void issue20_unquotedIpv6OrPort_isNotANode() {
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=[2001:db8::17]")).toString())
          .isEqualTo("unknown");
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=[2001:db8::17]:80")).toString())
          .isEqualTo("unknown");
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=\"[2001:db8::17]\"")).toString())
          .isEqualTo("2001:db8::/64");
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=192.0.2.43")).toString())
          .isEqualTo("192.0.2.43");
    }

    @Test
    void elementWithoutFor_isAHopWithUnknownAddress() {
      Function<String, List<String>> h = headers(FWD, "for=192.0.2.43, proto=https;by=10.0.0.1");
      assertThat(hops(1).resolve("10.0.0.1", h).toString()).isEqualTo("unknown");
      assertThat(hops(2).resolve("10.0.0.1", h).toString()).isEqualTo("192.0.2.43");
    }

    @Test
    void malformedFor_isTheUnknownBucket() {
      ClientAddressResolver r = hops(1);
      assertThat(r.resolve("10.0.0.1", headers(FWD, "for=1.1.1.1;for=2.2.2.2")).toString()).isEqualTo("unknown");
      assertThat(r.resolve("10.0.0.1", headers(FWD, "for=\"1.1.1.1")).toString()).isEqualTo("unknown");
      assertThat(r.resolve("10.0.0.1", headers(FWD, "for=\"1.1\\.1.1\"")).toString()).isEqualTo("unknown");
      assertThat(r.resolve("10.0.0.1", headers(FWD, "for=evil.com")).toString()).isEqualTo("unknown");
      assertThat(r.resolve("10.0.0.1", headers(FWD, "for=")).toString()).isEqualTo("unknown");
    }

    @Test
    void unterminatedQuoteFromTheClient_cannotSwallowTheProxysEntry() {
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=\"6.6.6.6, for=203.0.113.7")).toString())
          .isEqualTo("203.0.113.7");
    }

    @Test
    void walk_overForwardedEntries() {
      assertThat(proxies("10.0.0.0/8").resolve("10.0.0.1",
          headers(FWD, "for=6.6.6.6, for=203.0.113.7;proto=https, for=\"10.0.0.5:1234\"")).toString())
          .isEqualTo("203.0.113.7");
    }
  }

  @Nested
  class HeaderChoice {

    private final Function<String, List<String>> all =
        headers(FWD, "for=1.1.1.1", XFF, "2.2.2.2", XRI, "3.3.3.3");

    @Test
    void forwarded_winsOverXffAndRealIp() {
      assertThat(hops(1).resolve("10.0.0.1", all).toString()).isEqualTo("1.1.1.1");
    }

    @Test
    void xff_isNext_whenForwardedIsOffOrAbsent() {
      assertThat(ClientAddressResolver.builder().trustedHops(1).header(Header.FORWARDED, false).build()
          .resolve("10.0.0.1", all).toString()).isEqualTo("2.2.2.2");
      assertThat(hops(1).resolve("10.0.0.1", headers(XFF, "2.2.2.2", XRI, "3.3.3.3")).toString()).isEqualTo("2.2.2.2");
    }

    @Test
    void realIp_isLast() {
      assertThat(ClientAddressResolver.builder().trustedHops(1)
          .header(Header.X_FORWARDED_FOR, false).header(Header.X_REAL_IP, true).build()
          .resolve("10.0.0.1", all).toString()).isEqualTo("3.3.3.3");
    }

    @Test
    void allHeadersOff_isThePeer() {
      assertThat(ClientAddressResolver.builder().trustedHops(1).header(Header.FORWARDED, false)
          .header(Header.X_FORWARDED_FOR, false).header(Header.X_REAL_IP, false).build()
          .resolve("10.0.0.1", all).toString()).isEqualTo("10.0.0.1");
    }

    @Test
    void headerNames_areTheWireNames() {
      assertThat(Header.FORWARDED.headerName()).isEqualTo("Forwarded");
      assertThat(Header.X_FORWARDED_FOR.headerName()).isEqualTo("X-Forwarded-For");
      assertThat(Header.X_REAL_IP.headerName()).isEqualTo("X-Real-IP");
    }
  }

  /**
   * Issue 13: a plain map keyed as HTTP/2 sends names ({@code x-forwarded-for}) was never read,
   * because the resolver asked only for {@code X-Forwarded-For} and the map matched exactly.
   */
  @Nested
  class HeaderNameCase {

    @ParameterizedTest
    @ValueSource(strings = {"x-forwarded-for", "X-FORWARDED-FOR", "X-Forwarded-For"})
    void exactMatchMap_underAnyOfTheThreeSpellings_isRead(String name) {
      Function<String, List<String>> exact = Map.of(name, List.of("7.7.7.7, 10.0.0.2"))::get;
      assertThat(hops(1).resolve("10.0.0.1", exact).toString()).isEqualTo("10.0.0.2");
      assertThat(proxies("10.0.0.0/8").resolve("10.0.0.1", exact).toString()).isEqualTo("7.7.7.7");
    }

    @Test
    void lowerCaseForwardedAndRealIp_areRead() {
      assertThat(hops(1).resolve("10.0.0.1", Map.of("forwarded", List.of("for=6.6.6.6"))::get).toString())
          .isEqualTo("6.6.6.6");
      assertThat(hops(1).resolve("10.0.0.1", Map.of("x-real-ip", List.of("5.5.5.5"))::get).toString())
          .isEqualTo("5.5.5.5");
    }

    @Test
    void wireNameWins_overTheOtherSpellings() {
      Function<String, List<String>> both =
          Map.of("X-Forwarded-For", List.of("1.1.1.1"), "x-forwarded-for", List.of("2.2.2.2"))::get;
      assertThat(hops(1).resolve("10.0.0.1", both).toString()).isEqualTo("1.1.1.1");
    }

    @Test
    void absentHeader_isAskedThreeTimes_withTheSameConstantNames() {
      List<String> asked = new ArrayList<>();
      Function<String, List<String>> none = name -> {
        asked.add(name);
        return null;
      };
      ClientAddressResolver resolver = ClientAddressResolver.builder().trustedHops(1).build();
      resolver.resolve("10.0.0.1", none);
      resolver.resolve("10.0.0.1", none);
      assertThat(asked).containsExactly("X-Forwarded-For", "x-forwarded-for", "X-FORWARDED-FOR",
          "X-Forwarded-For", "x-forwarded-for", "X-FORWARDED-FOR");
      for (int i = 0; i < 3; i++) {
        assertThat(asked.get(i)).isSameAs(asked.get(i + 3)); // no name is built per request
      }
    }

    @Test
    void lowerCaseHeader_withNoProxyTrusted_isWarnedAbout() {
      ClientAddressResolver.resetIgnoredHeadersWarning();
      ClientAddressResolver.direct().resolve("203.0.113.7", Map.of("x-forwarded-for", List.of("1.1.1.1"))::get);
      assertThat(ClientAddressResolver.ignoredHeadersWarnings()).isEqualTo(1);
    }
  }

  @Nested
  class Normalisation {

    @Test
    void ipv6_inOneSlash64_sharesAKey() {
      ClientAddressResolver r = ClientAddressResolver.direct();
      assertThat(r.resolve("2001:db8:1:2:aaaa::1", NO_HEADERS).toString()).isEqualTo("2001:db8:1:2::/64");
      assertThat(r.resolve("2001:db8:1:2:bbbb::9", NO_HEADERS).toString()).isEqualTo("2001:db8:1:2::/64");
    }

    @Test
    void ipv6_inAnotherSlash64_getsAnotherKey() {
      assertThat(ClientAddressResolver.direct().resolve("2001:db8:1:3:aaaa::1", NO_HEADERS).toString())
          .isEqualTo("2001:db8:1:3::/64");
    }

    @Test
    void ipv6Prefix_isConfigurable() {
      assertThat(ClientAddressResolver.builder().ipv6Prefix(48).build().resolve("2001:db8:1:2::1", NO_HEADERS).toString())
          .isEqualTo("2001:db8:1::/48");
      assertThat(ClientAddressResolver.builder().ipv6Prefix(128).build().resolve("2001:db8:1:2::1", NO_HEADERS).toString())
          .isEqualTo("2001:db8:1:2::1");
      assertThat(ClientAddressResolver.builder().ipv6Prefix(1).build().resolve("ffff::1", NO_HEADERS).toString())
          .isEqualTo("8000::/1");
    }

    @Test
    void ipv6Prefix_outOfRange_failsAtOnce() {
      assertThatThrownBy(() -> ClientAddressResolver.builder().ipv6Prefix(0))
          .isInstanceOf(IllegalArgumentException.class).hasMessage("ipv6Prefix : 0 (expected: 1..128)");
      assertThatThrownBy(() -> ClientAddressResolver.builder().ipv6Prefix(129))
          .isInstanceOf(IllegalArgumentException.class).hasMessage("ipv6Prefix : 129 (expected: 1..128)");
    }

    @Test
    void ipv4Mapped_isTheIpv4Key() {
      ClientAddressResolver r = ClientAddressResolver.direct();
      assertThat(r.resolve("::ffff:1.2.3.4", NO_HEADERS).toString()).isEqualTo("1.2.3.4").isEqualTo(r.resolve("1.2.3.4", NO_HEADERS).toString());
      assertThat(r.resolve("[::FFFF:102:304]:80", NO_HEADERS).toString()).isEqualTo("1.2.3.4");
    }

    @Test
    void hexCase_doesNotMatter() {
      assertThat(ClientAddressResolver.direct().resolve("2001:DB8:A:B::1", NO_HEADERS).toString()).isEqualTo("2001:db8:a:b::/64");
    }

    @Test
    void zoneId_isStripped() {
      assertThat(ClientAddressResolver.direct().resolve("fe80::1%eth0", NO_HEADERS).toString())
          .isEqualTo(ClientAddressResolver.direct().resolve("fe80::1", NO_HEADERS).toString()).isEqualTo("fe80::/64");
    }

    @ParameterizedTest
    @ValueSource(strings = {
      "evil.com", "localhost", "1.2.3.999", "1.2.3", "01.2.3.4", "1.2.3.4\n", "1.2.3.4\u0000", "\u0001",
      "\u0661.\u0662.\u0663.\u0664", "1.2.3.4 5.6.7.8", "[1.2.3.4]", "2001:db8::1::2", "unknown", "127.1",
      "0x7f000001", "::1/128", "1.2.3.4/32", "http://1.2.3.4/",
    })
    void garbage_isTheUnknownBucket(String value) {
      assertThat(ClientAddressResolver.direct().resolve(value, NO_HEADERS).toString()).isEqualTo("unknown");
      assertThat(hops(1).resolve("10.0.0.1", headers(XRI, value)).toString()).isEqualTo("unknown");
      assertThat(hops(1).resolve("10.0.0.1", headers(XFF, "203.0.113.7, " + value)).toString()).isEqualTo("unknown");
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=\"" + value + "\"")).toString()).isEqualTo("unknown");
    }

    @Test
    void blankValues_areAbsentEntries() {
      assertThat(ClientAddressResolver.direct().resolve("", NO_HEADERS).toString()).isEqualTo("unknown");
      assertThat(ClientAddressResolver.direct().resolve("   ", NO_HEADERS).toString()).isEqualTo("unknown");
      assertThat(hops(1).resolve("10.0.0.1", headers(XRI, "  ")).toString()).isEqualTo("10.0.0.1");
      assertThat(hops(1).resolve("10.0.0.1", headers(XFF, "203.0.113.7, ")).toString()).isEqualTo("203.0.113.7");
    }

    @Test
    void tenThousandCharacterValue_isTheUnknownBucket() {
      String huge = "9".repeat(10_000);
      assertThat(ClientAddressResolver.direct().resolve(huge, NO_HEADERS).toString()).isEqualTo("unknown");
      assertThat(hops(1).resolve("10.0.0.1", headers(XFF, huge)).toString()).isEqualTo("unknown");
      assertThat(hops(1).resolve("10.0.0.1", headers(XRI, huge)).toString()).isEqualTo("unknown");
    }

    @Test
    void unknownBucket_mustBeKeySafe() {
      assertThatThrownBy(() -> ClientAddressResolver.builder().unknownBucket("has space"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("unknownBucket : has space (expected: 1..64 printable ASCII characters, no spaces)");
      assertThatThrownBy(() -> ClientAddressResolver.builder().unknownBucket(""))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> ClientAddressResolver.builder().unknownBucket(null))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Nested
  class Bounds {

    @Test
    void hugeSpoofedPrefix_beyond8KiB_stillYieldsTheAppendedEntry() {
      String spoof = "6.6.6.6, ".repeat(3_000); // about 27 KiB
      assertThat(hops(1).resolve("10.0.0.1", headers(XFF, spoof + "203.0.113.7")).toString()).isEqualTo("203.0.113.7");
      assertThat(hops(1).resolve("10.0.0.1", headers(FWD, "for=6.6.6.6, ".repeat(3_000) + "for=203.0.113.7")).toString())
          .isEqualTo("203.0.113.7");
    }

    @Test
    void wantedEntryBeyond8KiB_isTheUnknownBucket() {
      String huge = "x".repeat(ClientAddressResolver.MAX_HEADER_CHARS);
      assertThat(hops(2).resolve("10.0.0.1", headers(XFF, "203.0.113.7, " + huge + ", 10.0.0.5")).toString())
          .isEqualTo("unknown");
    }

    @Test
    void wantedEntryBeyond8KiB_acrossLines_isTheUnknownBucket() {
      String filler = "x".repeat(1_000);
      List<String> nameValues = new ArrayList<>(List.of(XFF, "203.0.113.7"));
      for (int i = 0; i < 9; i++) {
        nameValues.add(XFF);
        nameValues.add(filler);
      }
      nameValues.add(XFF);
      nameValues.add("10.0.0.5");
      Function<String, List<String>> h = headers(nameValues.toArray(new String[0]));
      assertThat(hops(11).resolve("10.0.0.1", h).toString()).isEqualTo("unknown");
      assertThat(hops(1).resolve("10.0.0.1", h).toString()).isEqualTo("10.0.0.5");
    }

    @Test
    void walk_moreThan64TrustedEntries_isTheUnknownBucket() {
      String trusted64 = "10.0.0.5, ".repeat(63) + "10.0.0.5";
      ClientAddressResolver r = proxies("10.0.0.0/8");
      assertThat(r.resolve("10.0.0.1", headers(XFF, "10.0.0.9, " + trusted64)).toString()).isEqualTo("unknown");
      assertThat(r.resolve("10.0.0.1", headers(XFF, "203.0.113.7, " + trusted64)).toString()).isEqualTo("unknown");
      assertThat(r.resolve("10.0.0.1", headers(XFF, trusted64)).toString()).isEqualTo("10.0.0.5");
      assertThat(r.resolve("10.0.0.1", headers(XFF, "203.0.113.7, " + "10.0.0.5, ".repeat(62) + "10.0.0.5")).toString())
          .isEqualTo("203.0.113.7");
    }

    @Test
    void manyEmptyLines_areBounded() {
      List<String> lines = new ArrayList<>();
      lines.add("203.0.113.7");
      for (int i = 0; i < 100_000; i++) {
        lines.add("");
      }
      assertThat(hops(1).resolve("10.0.0.1", name -> name.equals(XFF) ? lines : null).toString()).isEqualTo("unknown");
    }
  }

  @Nested
  class NeverThrows {

    @Test
    void throwingHeaderFunction_isTheUnknownBucket_orThePeerWhenHeadersAreIgnored() {
      Function<String, List<String>> boom = name -> {
        throw new IllegalStateException("boom");
      };
      assertThat(hops(1).resolve("10.0.0.1", boom).toString()).isEqualTo("unknown");
      assertThat(ClientAddressResolver.direct().resolve("10.0.0.1", boom).toString()).isEqualTo("10.0.0.1");
    }

    @Test
    void nullLinesInTheList_areSkipped() {
      List<String> lines = new ArrayList<>();
      lines.add("203.0.113.7");
      lines.add(null);
      assertThat(hops(1).resolve("10.0.0.1", name -> name.equals(XFF) ? lines : null).toString()).isEqualTo("203.0.113.7");
    }
  }

  /**
   * A million spoofed values from an attacker: none of them may move the key. Direct and
   * untrusted-peer resolvers must answer the peer; behind one trusted proxy, the entry the proxy
   * appended must win whatever the client prepended, quotes and commas included.
   */
  @Test
  @Timeout(30)
  void millionSpoofedValues_neverChooseTheKey() {
    Random random = new Random(20_240_611L);
    ClientAddressResolver direct = ClientAddressResolver.direct();
    ClientAddressResolver cidr = proxies("10.0.0.0/8", "fd00::/8");
    ClientAddressResolver hop = hops(1);
    String[] box = new String[1];
    List<String> xff = new ArrayList<>(List.of(""));
    Function<String, List<String>> spoofed = name -> name.equals(XFF) || name.equals(FWD) || name.equals(XRI)
        ? List.of(box[0]) : null;
    Function<String, List<String>> appendedXff = name -> name.equals(XFF) ? xff : null;
    Function<String, List<String>> appendedFwd = name -> name.equals(FWD) ? xff : null;
    for (int i = 0; i < 1_000_000; i++) {
      String v = random.nextBoolean() ? randomAddress(random) : randomText(random);
      box[0] = v;
      check(direct.resolve("198.51.100.9", spoofed).toString(), "198.51.100.9", v);
      check(cidr.resolve("198.51.100.9", spoofed).toString(), "198.51.100.9", v);
      xff.set(0, v + ", 203.0.113.7");
      check(hop.resolve("10.0.0.1", appendedXff).toString(), "203.0.113.7", v);
      xff.set(0, v + ", for=203.0.113.7");
      check(hop.resolve("10.0.0.1", appendedFwd).toString(), "203.0.113.7", v);
    }
  }

  private static void check(String actual, String expected, String spoof) {
    if (!expected.equals(actual)) {
      fail("spoofed value %s gave key %s, expected %s", spoof, actual, expected);
    }
  }

  private static String randomAddress(Random r) {
    switch (r.nextInt(3)) {
      case 0:
        return r.nextInt(256) + "." + r.nextInt(256) + "." + r.nextInt(256) + "." + r.nextInt(256);
      case 1:
        byte[] a = new byte[16];
        r.nextBytes(a);
        return InetLiteral.formatIpv6(a);
      default:
        return "for=\"[" + Integer.toHexString(r.nextInt(0x10000)) + "::" + Integer.toHexString(r.nextInt(0x10000)) + "]\"";
    }
  }

  private static final String ALPHABET = "0123456789abcdefABCDEF.:,;=\"[]%_- \t\\/xyzfor\u0000\u00ff\u2028\uffff\ud800";

  private static String randomText(Random r) {
    int len = r.nextInt(40);
    char[] c = new char[len];
    for (int i = 0; i < len; i++) {
      c[i] = r.nextInt(8) == 0 ? (char) r.nextInt(0x10000) : ALPHABET.charAt(r.nextInt(ALPHABET.length()));
    }
    return new String(c);
  }
}
