package dev.sluice.policy;

import static dev.sluice.policy.Values.integer;
import static dev.sluice.policy.Values.oneOf;
import static dev.sluice.policy.Values.quote;

import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.policy.Policy;
import java.util.List;

/** The {@code trust:} section: which forwarding headers are believed, and from whom. */
final class TrustSection {

  static final List<String> KEYS =
      List.of("hops", "proxies", "headers", "ipv6Prefix", "unknownBucket", "clientHeaders");
  private static final List<String> HEADER_NAMES =
      List.of("forwarded", "x-forwarded-for", "x-real-ip");

  private TrustSection() {}

  /** The settings (defaults for what is left out); the resolver goes to {@code policy}. */
  static TrustSettings read(Walk walk, Mapping doc, Policy.Builder policy) {
    TrustSettings d = TrustSettings.defaults();
    Mapping t = doc.section("trust", KEYS, "a mapping with hops, proxies, headers, ...");
    if (t == null) {
      return d;
    }
    int hops = t.get("hops", "0..64", integer(0, 64), d.hops());
    List<String> proxies = t.list("proxies", "networks like 10.0.0.0/8 or 192.168.1.7",
        text -> {
          try {
            ClientAddressResolver.builder().trustedProxies(List.of(text));
          } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                "networks like 10.0.0.0/8, 2001:db8::/32 or 192.168.1.7");
          }
          return text;
        }, d.proxies());
    List<String> headers = t.list("headers", "one of " + String.join(", ", HEADER_NAMES),
        oneOf(HEADER_NAMES), d.headers());
    int prefix = t.get("ipv6Prefix", "1..128", integer(1, 128), d.ipv6Prefix());
    String unknown = t.get("unknownBucket", "1..64 printable ASCII characters, no spaces",
        text -> {
          ClientAddressResolver.builder().unknownBucket(text);
          return text;
        }, d.unknownBucket());
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
    List<String> clientHeaders = t.list("clientHeaders", "header names like True-Client-IP",
        text -> {
          if (!text.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}")) {
            throw new IllegalArgumentException("header names like True-Client-IP");
          }
          return text.toLowerCase(java.util.Locale.ROOT);
        }, d.clientHeaders());
    return new TrustSettings(hops, List.copyOf(proxies), List.copyOf(headers), prefix, unknown,
        List.copyOf(clientHeaders));
  }
}
