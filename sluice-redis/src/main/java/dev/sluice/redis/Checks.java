package dev.sluice.redis;

import dev.sluice.core.Identity;
import dev.sluice.core.Rule;
import dev.sluice.core.StoreException;
import dev.sluice.core.Ticker;
import dev.sluice.core.Verdict;
import dev.sluice.core.Verdicts;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The store's checks around Redis: the refusal cache in front ({@link RefusalCache}), the
 * {@link Evaluator} behind, refusals noted for the cache and the admin API ({@link RedisAdmin})
 * after. A lone token-bucket check, the common one, takes its own path ({@link BucketCheck}).
 */
final class Checks {

  private final Keys keys;
  private final Lanes lanes;
  private final Calls calls;
  private final Evaluator evaluator;
  private final RefusalCache refusals;
  private final RedisAdmin admin;
  private final Ticker ticker;

  /** {@code refusals}: null when the store has no refusal cache. */
  Checks(Keys keys, Lanes lanes, Calls calls, Evaluator evaluator, RefusalCache refusals,
      RedisAdmin admin, Ticker ticker) {
    this.keys = keys;
    this.lanes = lanes;
    this.calls = calls;
    this.evaluator = evaluator;
    this.refusals = refusals;
    this.admin = admin;
    this.ticker = ticker;
  }

  /** {@link dev.sluice.core.Store#evaluateAsync}: never waits. */
  CompletionStage<Verdicts> evaluateAsync(List<Rule> rules, Identity identity, long cost,
      Verdicts out) {
    RuleCodec.Bucket b = rules.size() == 1 ? evaluator.batchable(rules.get(0), cost) : null;
    if (b == null) {
      return verdicts(rules, identity, cost, false).thenApply(v -> write(v, out));
    }
    String coreKey = rules.get(0).keyFor(identity);
    long local = ticker.read();
    Verdict[] cached = cached(rules, List.of(coreKey), cost, local);
    if (cached != null) {
      return CompletableFuture.completedFuture(write(cached, out));
    }
    BucketCheck check = new BucketCheck(rules, coreKey, b, cost, local, out);
    check.send();
    return check.result;
  }

  static Verdicts write(Verdict[] verdicts, Verdicts out) {
    out.reset(verdicts.length);
    for (int i = 0; i < verdicts.length; i++) {
      out.set(i, verdicts[i]);
    }
    return out;
  }

  /**
   * The verdicts of a check: from the refusal cache, or from Redis (then cached); {@code
   * blocking}: the caller will wait for them (see {@link Lanes#pick}).
   */
  CompletableFuture<Verdict[]> verdicts(List<Rule> rules, Identity identity,
      long cost, boolean blocking) {
    int n = rules.size();
    List<String> coreKeys = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      coreKeys.add(rules.get(i).keyFor(identity));
    }
    long local = ticker.read();
    Verdict[] cached = cached(rules, coreKeys, cost, local);
    if (cached != null) {
      return CompletableFuture.completedFuture(cached);
    }
    List<String> ruleKeys = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      ruleKeys.add(keys.rule(coreKeys.get(i)));
    }
    CompletableFuture<Verdict[]> remote = evaluator.evaluate(rules, ruleKeys, cost, blocking);
    return remote.thenApply(v -> {
      noted(rules, coreKeys, cost, v, local);
      return v;
    });
  }

  /** The refusal cache's verdicts for a check, or null when Redis must decide. */
  private Verdict[] cached(List<Rule> rules, List<String> coreKeys, long cost, long local) {
    if (refusals == null) {
      return null;
    }
    List<Verdict> cached = refusals.lookup(rules, coreKeys, cost, local);
    return cached == null ? null : cached.toArray(Verdict[]::new);
  }

  /** Redis's verdicts of a check, noted for the admin API and the refusal cache if refused. */
  private void noted(List<Rule> rules, List<String> coreKeys, long cost, Verdict[] v,
      long local) {
    if (anyRefused(v)) {
      admin.noteRefusals(rules, coreKeys, v);
      if (refusals != null) {
        refusals.record(rules, coreKeys, cost, Arrays.asList(v), local);
      }
    }
  }

  /**
   * The common check on its own path: one token bucket, batched with its lane's others, its
   * result completed straight from the batch's reply (no stage per step on the way).
   */
  private final class BucketCheck extends Batcher.Pending {
    final CompletableFuture<Verdicts> result = new CompletableFuture<>();
    private final List<Rule> rules;
    private final String coreKey;
    private final long local;
    private final Verdicts out;
    private long permit;

    BucketCheck(List<Rule> rules, String coreKey, RuleCodec.Bucket b, long cost, long local,
        Verdicts out) {
      super(keys.rule(coreKey), b, cost);
      this.rules = rules;
      this.coreKey = coreKey;
      this.local = local;
      this.out = out;
    }

    void send() {
      Lanes.Lane lane = lanes.pick(false);
      try {
        permit = calls.enter("evaluate", lane);
      } catch (StoreException e) {
        result.completeExceptionally(e);
        return;
      }
      try {
        evaluator.submit(lane, this);
      } catch (RuntimeException e) {
        replied(0, e);
      }
    }

    @Override
    void replied(long reply, Throwable failure) {
      // The call's start for the circuit: the time read for the refusal cache just before.
      StoreException e = calls.exit("evaluate", permit, local, failure);
      if (e != null) {
        result.completeExceptionally(e);
        return;
      }
      try {
        Verdict[] v = {Evaluator.bucketVerdict(bucket, cost, reply)};
        if (!v[0].allowed()) {
          noted(rules, List.of(coreKey), cost, v, local);
        }
        result.complete(write(v, out));
      } catch (RuntimeException x) {
        result.completeExceptionally(x);
      }
    }
  }

  private static boolean anyRefused(Verdict[] verdicts) {
    for (Verdict v : verdicts) {
      if (!v.allowed()) {
        return true;
      }
    }
    return false;
  }
}
