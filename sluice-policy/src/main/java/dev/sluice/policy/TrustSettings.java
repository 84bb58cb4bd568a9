package dev.sluice.policy;

import java.util.List;

/**
 * Which forwarding headers are believed, as written in the policy; the resolver built from them is
 * {@code policy().clientAddress()}.
 *
 * @param hops trusted proxy hops, counted from the right (TRUST_PROXY); 0 trusts none
 * @param proxies trusted proxy networks (TRUSTED_PROXIES); empty trusts none
 * @param headers the forwarding headers read: {@code forwarded}, {@code x-forwarded-for},
 *     {@code x-real-ip}
 * @param ipv6Prefix bits of an IPv6 address that form its key
 * @param unknownBucket the key shared by clients whose address is unknown
 */
public record TrustSettings(int hops, List<String> proxies, List<String> headers, int ipv6Prefix,
    String unknownBucket) {

  public static TrustSettings defaults() {
    return new TrustSettings(0, List.of(), List.of("x-forwarded-for"),
        64, "unknown");
  }
}
