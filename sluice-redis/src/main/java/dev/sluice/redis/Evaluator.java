package dev.sluice.redis;

import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.Verdict;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;

/**
 * One check in Redis: the token-bucket fast path ({@code bucket.lua}), or one
 * {@code evaluate.lua} call per hash slot in parallel, then consume-then-refund when the slots
 * disagree. Asynchronous throughout: a check is a stage of its verdicts in check order.
 */
final class Evaluator {

  private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());
  private static final int VERDICT_WIDTH = 6;
  private static final long TWO53 = 1L << 53;
  private static final Rule WARM_UP = Rule.builder("sluice-warm-up")
      .limit(Limit.tokenBucket("b", 1, 1, Duration.ofSeconds(1))).build();

  private final Keys keys;
  private final Calls calls;
  private final LongSupplier pinned;
  private final RuleCodec codec = new RuleCodec();
  /**
   * One per lane: a batch goes out on one connection (see {@link Batcher}). The shared lane
   * keeps {@value Batcher#CALLS} calls in flight, a loop's lane one: with two, a decision that
   * came while a batch was out went alone, so most calls carried one decision, each a call's
   * whole cost in Redis and in the client (docs/bench/gateway.md, issue 9, runs C and G).
   */
  private final Batcher[] batchers;
  private final String warmId = Long.toHexString(ThreadLocalRandom.current().nextLong());

  Evaluator(Keys keys, Calls calls, LongSupplier pinned, int lanes) {
    this.keys = keys;
    this.calls = calls;
    this.pinned = pinned;
    if (keys.cluster()) {
      this.batchers = null;
    } else {
      this.batchers = new Batcher[lanes];
      for (int i = 0; i < lanes; i++) {
        batchers[i] = new Batcher(calls, this::clock, i == 0 ? Batcher.CALLS : 1);
      }
    }
  }

  /** The rules of one hash slot, in check order. */
  private static final class Group {
    final List<Integer> index = new ArrayList<>(2);
    final List<String> keys = new ArrayList<>(4);
    final List<String> args = new ArrayList<>(16);
    long now;
  }

  private String clock() {
    return pinned == null ? "" : Long.toString(pinned.getAsLong());
  }

  /**
   * The verdicts of a check on the rules' laid-out keys ({@link Keys#rule}); {@code blocking}:
   * the caller will wait for them (see {@link Lanes#pick}).
   */
  CompletableFuture<Verdict[]> evaluate(List<Rule> rules, List<String> ruleKeys, long cost,
      boolean blocking) {
    if (rules.size() == 1) {
      RuleCodec.Bucket b = bucketOf(rules.get(0), cost);
      if (b != null) {
        String key = ruleKeys.get(0);
        return calls.call("evaluate", blocking, (c, lane) -> bucket(lane, c, key, b, cost))
            .thenApply(r -> new Verdict[] {bucketVerdict(b, cost, r)});
      }
    }
    long start = calls.now();
    String costArg = Long.toString(cost);
    List<Group> groups = new ArrayList<>();
    for (List<Integer> which : keys.bySlot(ruleKeys)) {
      groups.add(group(rules, ruleKeys, which));
    }
    String clock = clock();
    CompletableFuture<List<List<Object>>> replies = calls.call("evaluate", blocking,
        (c, lane) -> evaluateLua(c, groups, clock, costArg));
    return replies.thenCompose(r -> {
      Verdict[] out = new Verdict[rules.size()];
      boolean refused = false;
      for (int gi = 0; gi < groups.size(); gi++) {
        Group g = groups.get(gi);
        List<Object> reply = r.get(gi);
        g.now = (Long) reply.get(0);
        for (int k = 0; k < g.index.size(); k++) {
          int i = g.index.get(k);
          out[i] = verdict(reply, 1 + k * VERDICT_WIDTH);
          refused |= !out[i].allowed() && rules.get(i).mode() == Mode.ENFORCE;
        }
      }
      if (!refused || groups.size() == 1) {
        return CompletableFuture.completedFuture(out);
      }
      return refund(rules, ruleKeys, cost, groups, out, start + calls.deadlineNanos())
          .thenApply(v -> out);
    });
  }

  /** The parameters bucket.lua decides {@code rule} at {@code cost} with; null when it cannot. */
  private RuleCodec.Bucket bucketOf(Rule rule, long cost) {
    RuleCodec.Bucket b = codec.encode(rule).bucket();
    return b != null && cost > 0 && cost < TWO53 / b.intervalMicros() ? b : null;
  }

  /**
   * The bucket when a check of {@code rule} alone at {@code cost} can join a batch ({@link
   * #submit}: a token bucket on a standalone server), else null.
   */
  RuleCodec.Bucket batchable(Rule rule, long cost) {
    return batchers == null ? null : bucketOf(rule, cost);
  }

  /** Queues a decision of {@link #batchable} to go out in a batch on {@code lane}. */
  void submit(Lanes.Lane lane, Batcher.Pending p) {
    batchers[lane.index].submit(lane.conn(), p);
  }

  private Group group(List<Rule> rules, List<String> ruleKeys, List<Integer> which) {
    Group g = new Group();
    for (int i : which) {
      RuleCodec.Encoded e = codec.encode(rules.get(i));
      String key = ruleKeys.get(i);
      g.index.add(i);
      g.keys.add(key);
      for (int j = 0; j < e.logs(); j++) {
        g.keys.add(key + ":" + j);
      }
      g.args.addAll(Arrays.asList(e.args()));
    }
    return g;
  }

  /** evaluate.lua for each slot's group, in parallel on {@code c}: the replies in group order. */
  private CompletableFuture<List<List<Object>>> evaluateLua(Library.Conn c, List<Group> groups,
      String clock, String costArg) {
    List<CompletableFuture<List<Object>>> fs = new ArrayList<>(groups.size());
    for (Group g : groups) {
      String[] args = withHeader(g.args, clock, costArg, Integer.toString(g.index.size()));
      fs.add(calls.run(c, Scripts.EVALUATE, ScriptOutputType.MULTI,
          g.keys.toArray(String[]::new), args));
    }
    if (fs.size() == 1) {
      return fs.get(0).thenApply(List::of);
    }
    return CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new)).thenApply(v -> {
      List<List<Object>> all = new ArrayList<>(fs.size());
      for (CompletableFuture<List<Object>> f : fs) {
        all.add(f.join());
      }
      return all;
    });
  }

  private static String[] withHeader(List<String> body, String... head) {
    String[] a = new String[head.length + body.size()];
    System.arraycopy(head, 0, a, 0, head.length);
    for (int i = 0; i < body.size(); i++) {
      a[head.length + i] = body.get(i);
    }
    return a;
  }

  /**
   * Consume-then-refund: a slot whose enforcing rules all allowed has consumed; another slot
   * refused, so the check is refused and the consuming slots give their allowance back before
   * the check completes, within the check's deadline. A refund that fails or is not confirmed
   * by then leaves the allowance spent (errs on refusing); the check is refused either way.
   */
  private CompletableFuture<Void> refund(List<Rule> rules, List<String> ruleKeys, long cost,
      List<Group> groups, Verdict[] out, long deadline) {
    List<Group> refunds = new ArrayList<>();
    for (Group g : groups) {
      List<Integer> allowed = new ArrayList<>();
      boolean pass = true;
      for (int i : g.index) {
        if (out[i].allowed()) {
          allowed.add(i);
        } else if (rules.get(i).mode() == Mode.ENFORCE) {
          pass = false;
        }
      }
      if (pass && !allowed.isEmpty()) {
        Group r = group(rules, ruleKeys, allowed);
        r.now = g.now;
        refunds.add(r);
      }
    }
    if (refunds.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    String clock = clock();
    String costArg = Long.toString(cost);
    CompletableFuture<Void> sent = calls.call("refund", false, (c, lane) -> {
      List<CompletableFuture<Object>> fs = new ArrayList<>();
      for (Group r : refunds) {
        String[] args = withHeader(r.args, clock, Long.toString(r.now), costArg,
            Integer.toString(r.index.size()));
        fs.add(calls.run(c, Scripts.REFUND, ScriptOutputType.INTEGER,
            r.keys.toArray(String[]::new), args));
      }
      return CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new));
    });
    return calls.within(sent, deadline).handle((v, e) -> {
      if (e != null) {
        LOG.log(System.Logger.Level.WARNING, "sluice-redis: refund after a refused cross-slot "
            + "check failed or was not confirmed within the deadline; the allowance stays "
            + "spent until it refills ({0})", Library.unwrap(e).getMessage());
      }
      return null;
    });
  }

  /**
   * reserve.lua or settle.lua ({@code script}) for {@code rule}, a rule of limits, on its
   * laid-out key and its set of reservations; {@code head} after the clock: cost, id and the
   * script's own argument. The reply as evaluate.lua's for one rule (type 4: in flight).
   */
  CompletableFuture<List<Object>> reservation(Scripts.Script script, Rule rule, String ruleKey,
      String setKey, String... head) {
    Group g = group(List.of(rule), List.of(ruleKey), List.of(0));
    g.keys.add(setKey);
    String[] first = new String[head.length + 1];
    first[0] = clock();
    System.arraycopy(head, 0, first, 1, head.length);
    String[] args = withHeader(g.args, first);
    String[] k = g.keys.toArray(String[]::new);
    return calls.call(script.entry(), false, (c, lane) -> calls.<List<Object>>run(c, script,
        ScriptOutputType.MULTI, k, args));
  }

  /** bucket.lua's one integer, decoded with the rule's parameters (see there). */
  static Verdict bucketVerdict(RuleCodec.Bucket b, long cost, long r) {
    long cap = b.capMicros();
    long interval = b.intervalMicros();
    if (r >= 0) {
      return Verdict.allowed(0, Math.floorDiv(cap - r, interval), r * 1000L, Double.NaN);
    }
    long backlog = -1 - r;
    long retry = backlog + cost * interval - cap;
    return Verdict.refused(0, Math.max(0, Math.floorDiv(cap - backlog, interval)),
        backlog * 1000L, retry * 1000L, Double.NaN, false);
  }

  /** One verdict of evaluate.lua or cooldown.lua: six integers from {@code at}. */
  static Verdict verdict(List<Object> r, int at) {
    long type = (Long) r.get(at);
    int limit = (int) (long) (Long) r.get(at + 1);
    long remaining = (Long) r.get(at + 2);
    long reset = (Long) r.get(at + 3) * 1000L;
    long retry = (Long) r.get(at + 4) * 1000L;
    long rawScore = (Long) r.get(at + 5);
    double score = rawScore < 0 ? Double.NaN : (double) rawScore / 1_000_000L;
    if (type == 0) {
      return Verdict.allowed(limit, remaining, reset, score);
    }
    if (type == 3) {
      return Verdict.banned(retry);
    }
    return Verdict.refused(limit, remaining, reset, retry, score, type == 2);
  }

  /** bucket.lua on one key: batched with concurrent ones of its lane on a standalone server. */
  private CompletableFuture<Long> bucket(int lane, Library.Conn c, String key,
      RuleCodec.Bucket b, long cost) {
    if (batchers != null) {
      return batchers[lane].submit(c, key, b, cost);
    }
    String[] k = {key};
    String[] a = {clock(), Long.toString(cost), b.prefix(), b.cap(), b.interval()};
    return calls.run(c, Scripts.BUCKET, ScriptOutputType.INTEGER, k, a);
  }

  /**
   * One token-bucket decision's client work on {@code c} (codec, key, script call, reply), at
   * cost 0 on a key nobody uses: Redis finds nothing and stores nothing (bucket.lua deletes a
   * fresh state). The {@link Connector} runs it on each lane before the store is ready.
   */
  CompletableFuture<Verdict> warmUp(int lane, Library.Conn c) {
    RuleCodec.Bucket b = codec.encode(WARM_UP).bucket();
    return bucket(lane, c, keys.rule(WARM_UP.name() + ":" + warmId), b, 0)
        .thenApply(r -> bucketVerdict(b, 0, r));
  }
}
