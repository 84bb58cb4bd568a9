package dev.sluice.rls;

import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.Verdicts;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.RlsDescriptor;
import dev.sluice.policy.RlsDomains;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decides a {@link CheckRequest} against the {@code domains:} of one policy snapshot: the
 * transport-free core of the gRPC service and {@code POST /v1/check}.
 *
 * <p>All descriptors of one request that carry the same hits are one atomic store call (a refusal
 * by any enforcing one consumes nothing in any), as the gateway checks a route's rules. Why the
 * store and not {@code RateLimiter}: the answer needs each descriptor's own verdict, and
 * {@code hits_addend: 0} ("report without consuming") is a store call of cost 0, which every
 * algorithm answers by testing without changing its state. Descriptors with different hits are
 * one call per distinct hits (positive first, then 0); once one call refuses, the later ones
 * only report. A descriptor refused without the store ({@code requests_per_unit: 0}, or hits
 * above a limit's capacity) turns the whole request into reports, so it consumes nothing.
 *
 * <p>Nothing here waits: with a Redis store the stage completes on Lettuce's thread.
 */
final class Decider {

  /** Request overrides ({@code limit} on a descriptor) are kept as rules up to this many. */
  static final int MAX_OVERRIDE_RULES = 1024;

  private final Store store;
  private final Map<String, Rule[]> overrides = new ConcurrentHashMap<>();

  Decider(Store store) {
    this.store = store;
  }

  Store store() {
    return store;
  }

  CompletionStage<List<Status>> decide(PolicyConfig config, CheckRequest request) {
    RlsDomains domains = config.domains();
    List<CheckRequest.Descriptor> ds = request.descriptors();
    int n = ds.size();
    Status[] out = new Status[n];
    RlsDescriptor[] nodes = new RlsDescriptor[n];
    Rule[] rules = new Rule[n];
    long[] cost = new long[n];
    Set<String> replaced = null;
    for (int i = 0; i < n; i++) {
      CheckRequest.Descriptor d = ds.get(i);
      if (d.overrideUnit() != null) {
        rules[i] = override(d.overrideUnit(), d.overrideRequests(), i);
        if (rules[i] == null) {
          out[i] = new Status(true, null, null, "override", 0, 0, false, false);
        }
      } else {
        RlsDescriptor node = domains.match(request.domain(), d);
        nodes[i] = node;
        if (node != null && !node.replaces().isEmpty()) {
          replaced = replaced == null ? new HashSet<>() : replaced;
          replaced.addAll(node.replaces());
        }
      }
      cost[i] = d.hits() >= 0 ? d.hits() : request.hits() == 0 ? 1 : request.hits();
    }
    boolean refusedLocally = false;
    for (int i = 0; i < n; i++) {
      RlsDescriptor node = nodes[i];
      if (node == null) {
        if (rules[i] == null && out[i] == null) {
          out[i] = Status.NO_LIMIT;
        }
      } else if (replaced != null && node.name() != null && replaced.contains(node.name())) {
        out[i] = Status.NO_LIMIT;
      } else if (node.unlimited()) {
        out[i] = Status.unlimited(node);
      } else if (node.blocked()) {
        out[i] = new Status(!node.shadow(), node, null, node.name(), 0, 0, node.shadow(), false);
      } else {
        rules[i] = node.rule(i);
      }
      if (rules[i] != null && cost[i] > minCapacity(rules[i])) {
        boolean shadow = rules[i].mode() == Mode.SHADOW;
        Limit l = smallest(rules[i]);
        out[i] = new Status(!shadow, node, l, name(node, l), 0, l.windowNanos(), shadow, false);
        rules[i] = null;
      }
      refusedLocally |= out[i] != null && out[i].overLimit();
    }
    if (refusedLocally) {
      // A refusal consumes nothing: the rest are reports.
      java.util.Arrays.fill(cost, 0);
    }
    List<Long> order = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      if (rules[i] != null && cost[i] > 0 && !order.contains(cost[i])) {
        order.add(cost[i]);
      }
    }
    for (int i = 0; i < n; i++) {
      if (rules[i] != null && cost[i] == 0 && !order.contains(0L)) {
        order.add(0L);
      }
    }
    CompletionStage<Boolean> chain = CompletableFuture.completedFuture(false);
    for (long c : order) {
      chain = chain.thenCompose(refused -> group(request, nodes, rules, cost, c, refused, out));
    }
    return chain.thenApply(ignored -> List.of(out));
  }

  /** Checks the descriptors of hits {@code c} as one store call; true once any refused. */
  private CompletionStage<Boolean> group(CheckRequest request, RlsDescriptor[] nodes,
      Rule[] rules, long[] cost, long c, boolean refusedBefore, Status[] out) {
    List<Rule> group = new ArrayList<>();
    List<Integer> index = new ArrayList<>();
    Identity id = Identity.empty();
    for (int i = 0; i < rules.length; i++) {
      if (rules[i] != null && cost[i] == c) {
        group.add(rules[i]);
        index.add(i);
        String value = nodes[i] == null
            ? request.domain() + '\u001e' + request.descriptors().get(i).joined()
            : request.descriptors().get(i).joined();
        id = id.with(RlsDescriptor.dimension(i), value);
      }
    }
    long effective = refusedBefore ? 0 : c;
    Verdicts v = new Verdicts();
    CompletionStage<Verdicts> stage;
    try {
      stage = store.evaluateAsync(group, id, effective, v);
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return stage.handle((verdicts, error) -> {
      boolean refused = refusedBefore;
      for (int j = 0; j < group.size(); j++) {
        int i = index.get(j);
        Rule rule = group.get(j);
        boolean shadow = rule.mode() == Mode.SHADOW;
        RlsDescriptor node = nodes[i];
        if (error != null) {
          boolean deny = rule.onStoreError() == OnStoreError.DENY;
          Limit l = smallest(rule);
          out[i] = new Status(deny && !shadow, node, l, name(node, l), 0, 0, deny && shadow,
              true);
          refused |= deny && !shadow;
          continue;
        }
        boolean allowed = verdicts.allowed(j);
        int li = Math.max(0, verdicts.limitIndex(j));
        Limit l = rule.limits().get(Math.min(li, rule.limits().size() - 1));
        long reset = allowed ? verdicts.resetNanos(j)
            : Math.max(verdicts.retryAfterNanos(j), 0);
        out[i] = new Status(!allowed && !shadow, node, l, name(node, l),
            Math.max(0, verdicts.remaining(j)), reset, !allowed && shadow, verdicts.degraded());
        refused |= !allowed && !shadow;
      }
      return refused;
    });
  }

  private static String name(RlsDescriptor node, Limit l) {
    if (node != null && node.name() != null && node.coreLimits().size() == 1) {
      return node.name();
    }
    return l.name();
  }

  private static long minCapacity(Rule rule) {
    long min = Long.MAX_VALUE;
    for (Limit l : rule.limits()) {
      min = Math.min(min, l.capacity());
    }
    return min;
  }

  private static Limit smallest(Rule rule) {
    Limit best = rule.limits().get(0);
    for (Limit l : rule.limits()) {
      if (l.capacity() < best.capacity()) {
        best = l;
      }
    }
    return best;
  }

  /**
   * The fixed window of a request's {@code limit} override at {@code position}, kept per
   * (unit, rate) up to {@link #MAX_OVERRIDE_RULES} shapes and built afresh past that (the
   * counters are the store's either way); null for a rate of 0, which refuses.
   */
  private Rule override(String unit, long requests, int position) {
    if (requests == 0) {
      return null;
    }
    String key = unit + ':' + requests;
    Rule[] byPosition = overrides.get(key);
    if (byPosition == null) {
      byPosition = new Rule[RlsDescriptor.MAX_DESCRIPTORS];
      if (overrides.size() < MAX_OVERRIDE_RULES) {
        Rule[] prior = overrides.putIfAbsent(key, byPosition);
        byPosition = prior != null ? prior : byPosition;
      }
    }
    Rule r = byPosition[position];
    if (r == null) {
      r = Rule.builder("rls-override:" + key).key(RlsDescriptor.dimension(position))
          .limit(Limit.fixedWindow("per-" + unit, requests, unitDuration(unit))).build();
      byPosition[position] = r;
    }
    return r;
  }

  /** The units a request's {@code limit} may name, as envoyproxy/ratelimit reads them. */
  static final List<String> UNITS =
      List.of("second", "minute", "hour", "day", "week", "month", "year");

  static Duration unitDuration(String unit) {
    return switch (unit.toLowerCase(Locale.ROOT)) {
      case "second" -> Duration.ofSeconds(1);
      case "minute" -> Duration.ofMinutes(1);
      case "hour" -> Duration.ofHours(1);
      case "day" -> Duration.ofDays(1);
      case "week" -> Duration.ofDays(7);
      case "month" -> Duration.ofDays(30);
      case "year" -> Duration.ofDays(365);
      default -> throw new IllegalArgumentException("unit : " + unit);
    };
  }
}
