package dev.sluice.rls;

import com.google.protobuf.Duration;
import dev.sluice.core.Limit;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.RlsSettings;
import dev.sluice.rls.envoy.HeaderValue;
import dev.sluice.rls.envoy.RateLimitDescriptor;
import dev.sluice.rls.envoy.RateLimitRequest;
import dev.sluice.rls.envoy.RateLimitResponse;
import dev.sluice.rls.envoy.RateLimitResponse.Code;
import dev.sluice.rls.envoy.RateLimitResponse.DescriptorStatus;
import dev.sluice.rls.envoy.RateLimitResponse.RateLimit.Unit;
import dev.sluice.rls.envoy.RateLimitServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * {@code envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit}: maps the request to a
 * {@link CheckRequest}, the {@link Decider}'s statuses to the response. Never blocks: the
 * response is sent from whichever thread completes the store's stage.
 */
final class RlsService extends RateLimitServiceGrpc.RateLimitServiceImplBase {

  private final Supplier<PolicyConfig> config;
  private final Decider decider;
  private final RlsMetrics metrics;

  RlsService(Supplier<PolicyConfig> config, Decider decider, RlsMetrics metrics) {
    this.config = config;
    this.decider = decider;
    this.metrics = metrics;
  }

  @Override
  public void shouldRateLimit(RateLimitRequest request,
      StreamObserver<RateLimitResponse> observer) {
    PolicyConfig snapshot = config.get();
    CheckRequest check;
    try {
      check = toCheck(request, snapshot.rls());
      check.validate(snapshot.rls());
    } catch (CheckRequest.Invalid e) {
      metrics.invalid();
      observer.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage())
          .asRuntimeException());
      return;
    }
    long start = System.nanoTime();
    decider.decide(snapshot, check).whenComplete((statuses, error) -> {
      if (error != null) {
        observer.onError(Status.INTERNAL.withDescription("decision failed: " + error)
            .asRuntimeException());
        return;
      }
      metrics.record(check, statuses, System.nanoTime() - start);
      observer.onNext(toResponse(statuses, snapshot.rls()));
      observer.onCompleted();
    });
  }

  /** The request as the decider reads it; bounds are checked before anything is copied. */
  static CheckRequest toCheck(RateLimitRequest r, RlsSettings limits) throws CheckRequest.Invalid {
    if (r.getDescriptorsCount() > limits.maxDescriptors()) {
      throw new CheckRequest.Invalid("descriptors : " + r.getDescriptorsCount()
          + " descriptors (expected: at most " + limits.maxDescriptors() + ")");
    }
    List<CheckRequest.Descriptor> ds = new ArrayList<>(r.getDescriptorsCount());
    for (int d = 0; d < r.getDescriptorsCount(); d++) {
      RateLimitDescriptor desc = r.getDescriptors(d);
      int n = desc.getEntriesCount();
      if (n > limits.maxEntries()) {
        throw new CheckRequest.Invalid("descriptors[" + d + "].entries : " + n
            + " entries (expected: at most " + limits.maxEntries() + ")");
      }
      String[] keys = new String[n];
      String[] values = new String[n];
      for (int i = 0; i < n; i++) {
        keys[i] = desc.getEntries(i).getKey();
        values[i] = desc.getEntries(i).getValue();
      }
      String unit = null;
      long requests = 0;
      if (desc.hasLimit()) {
        var unitEnum = desc.getLimit().getUnit();
        if (unitEnum == dev.sluice.rls.envoy.RateLimitUnit.UNKNOWN
            || unitEnum == dev.sluice.rls.envoy.RateLimitUnit.UNRECOGNIZED) {
          throw new CheckRequest.Invalid("descriptors[" + d + "].limit.unit : "
              + unitEnum + " (expected: SECOND, MINUTE, HOUR, DAY, WEEK, MONTH or YEAR)");
        }
        unit = unitEnum.name().toLowerCase(Locale.ROOT);
        requests = Integer.toUnsignedLong(desc.getLimit().getRequestsPerUnit());
      }
      long hits = desc.hasHitsAddend() ? desc.getHitsAddend().getValue() : -1;
      if (hits > Integer.MAX_VALUE) {
        throw new CheckRequest.Invalid("descriptors[" + d + "].hits_addend : " + hits
            + " (expected: at most " + Integer.MAX_VALUE + ")");
      }
      ds.add(new CheckRequest.Descriptor(keys, values, unit, requests, hits));
    }
    return new CheckRequest(r.getDomain(), ds, Integer.toUnsignedLong(r.getHitsAddend()));
  }

  static RateLimitResponse toResponse(List<dev.sluice.rls.Status> statuses,
      RlsSettings settings) {
    RateLimitResponse.Builder b = RateLimitResponse.newBuilder();
    boolean over = false;
    dev.sluice.rls.Status tightest = null;
    for (dev.sluice.rls.Status s : statuses) {
      DescriptorStatus.Builder ds = DescriptorStatus.newBuilder()
          .setCode(s.overLimit() ? Code.OVER_LIMIT : Code.OK);
      if (s.limit() != null) {
        ds.setCurrentLimit(currentLimit(s.limit(), s.name()))
            .setLimitRemaining((int) Math.min(s.remaining(), 0xffffffffL))
            .setDurationUntilReset(duration(s.resetNanos()));
        if (tightest == null || s.overLimit() && !tightest.overLimit()
            || s.overLimit() == tightest.overLimit() && s.remaining() < tightest.remaining()) {
          tightest = s;
        }
      }
      over |= s.overLimit();
      b.addStatuses(ds);
    }
    b.setOverallCode(over ? Code.OVER_LIMIT : Code.OK);
    if (tightest != null) {
      Headers.write(tightest, settings, (name, value) -> b.addResponseHeadersToAdd(
          HeaderValue.newBuilder().setKey(name).setValue(value)));
    }
    return b.build();
  }

  static RateLimitResponse.RateLimit currentLimit(Limit l, String name) {
    return RateLimitResponse.RateLimit.newBuilder().setName(name)
        .setRequestsPerUnit((int) Math.min(l.capacity(), 0xffffffffL))
        .setUnit(unit(l.windowNanos())).build();
  }

  /** The envoy unit a window is exactly, or UNKNOWN for Sluice's other periods (30 s, 5 min). */
  static Unit unit(long windowNanos) {
    long s = 1_000_000_000L;
    if (windowNanos == s) {
      return Unit.SECOND;
    } else if (windowNanos == 60 * s) {
      return Unit.MINUTE;
    } else if (windowNanos == 3600 * s) {
      return Unit.HOUR;
    } else if (windowNanos == 86400 * s) {
      return Unit.DAY;
    } else if (windowNanos == 7 * 86400 * s) {
      return Unit.WEEK;
    } else if (windowNanos == 30 * 86400 * s) {
      return Unit.MONTH;
    } else if (windowNanos == 365 * 86400 * s) {
      return Unit.YEAR;
    }
    return Unit.UNKNOWN;
  }

  static Duration duration(long nanos) {
    long n = Math.max(0, nanos);
    return Duration.newBuilder().setSeconds(n / 1_000_000_000L)
        .setNanos((int) (n % 1_000_000_000L)).build();
  }
}
