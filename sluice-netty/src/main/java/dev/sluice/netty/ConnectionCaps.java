package dev.sluice.netty;

import dev.sluice.core.ConcurrencyLimit;
import dev.sluice.core.Identity;
import dev.sluice.core.Lease;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.policy.Source;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The connection caps of {@link WebSocketGuardHandler} at the upgrade: one lease per client
 * address (or from the shared bucket of unresolvable addresses), then one per session token.
 * Asynchronous, so a remote store never holds the event loop; with the in-memory store the stage
 * is complete on return.
 */
final class ConnectionCaps {

  private ConnectionCaps() {}

  /** The leases of every applicable cap, or null (holding nothing) when one is full. */
  static CompletionStage<List<Lease>> acquire(RateLimiter limiter, WebSocketGuardSettings s,
      NettyRequestView view) {
    ClientAddress ip = view.clientAddress(s.policy().clientAddress());
    boolean known = ip.known();
    ConcurrencyLimit first = known ? s.perIp() : s.unknown();
    Identity who = known ? Identity.ip(ip) : Identity.empty();
    Source source = s.sessionSource();
    String token = s.perSession() == null || source == null ? null : read(source, view);
    ConcurrencyLimit second = token == null || token.isBlank() ? null : s.perSession();
    List<Lease> taken = new ArrayList<>(2);
    return take(limiter, taken, first, who).thenCompose(ok -> !ok ? refused(taken)
        : take(limiter, taken, second, Identity.empty().with("session", token))
            .thenCompose(ok2 -> ok2 ? CompletableFuture.completedFuture(taken) : refused(taken)));
  }

  private static CompletionStage<Boolean> take(RateLimiter limiter, List<Lease> taken,
      ConcurrencyLimit cap, Identity who) {
    if (cap == null) {
      return CompletableFuture.completedFuture(true);
    }
    return limiter.acquireAsync(cap, who).thenApply((Optional<Lease> lease) -> {
      lease.ifPresent(taken::add);
      return lease.isPresent();
    });
  }

  private static CompletionStage<List<Lease>> refused(List<Lease> taken) {
    taken.forEach(Lease::close);
    return CompletableFuture.completedFuture(null);
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
