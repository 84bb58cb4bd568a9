package dev.sluice.netty;

import dev.sluice.core.ConcurrencyLimit;
import dev.sluice.core.Identity;
import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.Lease;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.policy.Source;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The connection caps of {@link WebSocketGuardHandler} at the upgrade: one lease per client
 * address (or from the shared bucket of unresolvable addresses) and one per session token.
 */
final class ConnectionCaps {

  private ConnectionCaps() {}

  /** The leases of every applicable cap, or null (holding nothing) when one is full. */
  static List<Lease> acquire(RateLimiter limiter, WebSocketGuardSettings s,
      NettyRequestView view) {
    List<Lease> taken = new ArrayList<>(2);
    ClientAddress ip = view.clientAddress(s.policy().clientAddress());
    boolean known = ip.known();
    if (!take(limiter, taken, known ? s.perIp() : s.unknown(),
        known ? Identity.ip(ip) : Identity.empty())) {
      return null;
    }
    Source source = s.sessionSource();
    if (s.perSession() != null && source != null) {
      String token = read(source, view);
      if (token != null && !token.isBlank()
          && !take(limiter, taken, s.perSession(), Identity.empty().with("session", token))) {
        return null;
      }
    }
    return taken;
  }

  private static boolean take(RateLimiter limiter, List<Lease> taken, ConcurrencyLimit cap,
      Identity who) {
    if (cap == null) {
      return true;
    }
    Optional<Lease> lease = limiter.acquire(cap, who);
    if (lease.isPresent()) {
      taken.add(lease.get());
      return true;
    }
    taken.forEach(Lease::close);
    taken.clear();
    return false;
  }

  private static String read(Source source, NettyRequestView view) {
    switch (source.kind()) {
      case HEADER: {
        List<String> v = view.headers(source.name());
        return v.isEmpty() ? null : v.get(0);
      }
      case COOKIE:
        return view.cookie(source.name());
      case QUERY:
        return view.query(source.name());
      default:
        return null;
    }
  }
}
