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
 * @param clientHeaders more headers that name the client (lower case; {@code true-client-ip},
 *     {@code cf-connecting-ip}...): the gateway removes them, as it does {@code X-Forwarded-*},
 *     {@code Forwarded} and {@code X-Real-IP}, from a peer it does not trust, so an upstream that
 *     reads one is not told what the client chose
 */
public record TrustSettings(int hops, List<String> proxies, List<String> headers, int ipv6Prefix,
    String unknownBucket, List<String> clientHeaders) {

  /** Headers that CDNs and load balancers set to the client's address, forged by a client. */
  public static final List<String> DEFAULT_CLIENT_HEADERS = List.of("true-client-ip",
      "cf-connecting-ip", "x-client-ip", "x-cluster-client-ip", "fastly-client-ip");

  public static TrustSettings defaults() {
    return new TrustSettings(0, List.of(), List.of("x-forwarded-for"),
        64, "unknown", DEFAULT_CLIENT_HEADERS);
  }
}
