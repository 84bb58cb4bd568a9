package dev.sluice.policy;

import static dev.sluice.policy.Values.integer;
import static dev.sluice.policy.Values.oneOf;
import static dev.sluice.policy.Values.quote;

import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.policy.Policy;
import java.util.List;
import java.util.Map;

/** The {@code trust:} section: which forwarding headers are believed, and from whom. */
final class TrustSection {

  private static final List<String> HEADER_NAMES =
      List.of("forwarded", "x-forwarded-for", "x-real-ip");

  private static final Field<TrustSettings, Integer> HOPS = Field.of("hops", "0..64",
      integer(0, 64), TrustSettings::hops);
  private static final Field<TrustSettings, List<String>> PROXIES = Field.list("proxies",
      "networks like 10.0.0.0/8 or 192.168.1.7", text -> {
        try {
          ClientAddressResolver.builder().trustedProxies(List.of(text));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              "networks like 10.0.0.0/8, 2001:db8::/32 or 192.168.1.7");
        }
        return text;
      }, TrustSettings::proxies);
  private static final Field<TrustSettings, List<String>> HEADERS = Field.list("headers",
      "one of " + String.join(", ", HEADER_NAMES), oneOf(HEADER_NAMES), TrustSettings::headers);
  private static final Field<TrustSettings, Integer> IPV6_PREFIX = Field.of("ipv6Prefix",
      "1..128", integer(1, 128), TrustSettings::ipv6Prefix);
  private static final Field<TrustSettings, String> UNKNOWN = Field.of("unknownBucket",
      "1..64 printable ASCII characters, no spaces", text -> {
        ClientAddressResolver.builder().unknownBucket(text);
        return text;
      }, TrustSettings::unknownBucket);
  private static final Field<TrustSettings, List<String>> CLIENT_HEADERS = Field.list(
      "clientHeaders", "header names like True-Client-IP", text -> {
        if (!text.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}")) {
          throw new IllegalArgumentException("header names like True-Client-IP");
        }
        return text.toLowerCase(java.util.Locale.ROOT);
      }, TrustSettings::clientHeaders,
      v -> v.equals(TrustSettings.DEFAULT_CLIENT_HEADERS) ? null : v);
  private static final Fields<TrustSettings> FIELDS = new Fields<>(HOPS, PROXIES, HEADERS,
      IPV6_PREFIX, UNKNOWN, CLIENT_HEADERS);

  static final List<String> KEYS = FIELDS.keys();

  private TrustSection() {}

  /** The settings (defaults for what is left out); the resolver goes to {@code policy}. */
  static TrustSettings read(Walk walk, Mapping doc, Policy.Builder policy) {
    TrustSettings d = TrustSettings.defaults();
    Mapping t = doc.section("trust", KEYS, "a mapping with hops, proxies, headers, ...");
    if (t == null) {
      return d;
    }
    Fields<TrustSettings>.Row r = FIELDS.read(t, d);
    int hops = r.get(HOPS);
    List<String> proxies = r.get(PROXIES);
    List<String> headers = r.get(HEADERS);
    int prefix = r.get(IPV6_PREFIX);
    String unknown = r.get(UNKNOWN);
    ClientAddressResolver.Builder resolver = ClientAddressResolver.builder()
        .ipv6Prefix(prefix).unknownBucket(unknown)
        .header(ClientAddressResolver.Header.FORWARDED, headers.contains("forwarded"))
        .header(ClientAddressResolver.Header.X_FORWARDED_FOR, headers.contains("x-forwarded-for"))
        .header(ClientAddressResolver.Header.X_REAL_IP, headers.contains("x-real-ip"));
    if (hops > 0 && !proxies.isEmpty()) {
      walk.error(t.node("proxies"), t.path("proxies"), quote(String.join(",", proxies)),
          "either trust.hops (TRUST_PROXY) or trust.proxies (TRUSTED_PROXIES), not both; "
              + "hops is " + hops);
    } else {
      resolver.trustedHops(hops).trustedProxies(proxies);
    }
    policy.clientAddress(resolver.build());
    List<String> clientHeaders = r.get(CLIENT_HEADERS);
    return new TrustSettings(hops, List.copyOf(proxies), List.copyOf(headers), prefix, unknown,
        List.copyOf(clientHeaders));
  }

  /** The section as the effective policy shows it ({@code clientHeaders} when not the default). */
  static Map<String, Object> render(TrustSettings t) {
    return FIELDS.render(t);
  }
}
