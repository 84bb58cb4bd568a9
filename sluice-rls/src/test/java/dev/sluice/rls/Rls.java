package dev.sluice.rls;

import com.google.protobuf.UInt64Value;
import dev.sluice.rls.envoy.RateLimitDescriptor;
import dev.sluice.rls.envoy.RateLimitDescriptor.Entry;
import dev.sluice.rls.envoy.RateLimitRequest;

/** Builders for requests in tests: {@code d("key", "value", "key2", "value2")}. */
final class Rls {

  private Rls() {}

  static RateLimitDescriptor.Builder d(String... kv) {
    RateLimitDescriptor.Builder b = RateLimitDescriptor.newBuilder();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      b.addEntries(Entry.newBuilder().setKey(kv[i]).setValue(kv[i + 1]));
    }
    return b;
  }

  static RateLimitDescriptor.Builder hits(RateLimitDescriptor.Builder d, long hits) {
    return d.setHitsAddend(UInt64Value.of(hits));
  }

  static RateLimitRequest req(String domain, RateLimitDescriptor.Builder... ds) {
    RateLimitRequest.Builder b = RateLimitRequest.newBuilder().setDomain(domain);
    for (RateLimitDescriptor.Builder d : ds) {
      b.addDescriptors(d);
    }
    return b.build();
  }
}
