package dev.sluice.redis;

import dev.sluice.core.KeyState;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.Verdict;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The Redis store's admin view (admin.lua). A key's state is read and its ban lifted by the same
 * rule code as a decision; a reset deletes the rule key and its logs (one hash slot).
 *
 * <p>Refused keys: each rule has a sorted set {@code <prefix><rule>:~refused} of key texts scored
 * by the Redis time they were last refused, kept to {@value #KEEP} members and one day. A check
 * that Redis refuses sends one more call (note) after its answer, not waited for; allowed checks
 * and refusals answered by the refusal cache send none, so a flood from one key costs about one
 * note per retry-after. Notes go outside the circuit and the in-flight bound, so they never take
 * a decision's place; at most {@value #MAX_NOTES_IN_FLIGHT} at a time, past that they are dropped. Why a sorted set rather than SCAN over the rule's keys: a SCAN walks the
 * whole keyspace (every master of a cluster) to find a few refusing keys, and cannot tell which
 * was refused last; the set costs O(log n) per Redis refusal and answers a listing with one
 * ZREVRANGE.
 */
final class RedisAdmin {

  static final int KEEP = KeyState.MAX_LIST;
  private static final String KEEP_ARG = Integer.toString(KEEP);
  private static final String TTL_MS = Long.toString(Duration.ofDays(1).toMillis());

  private final Keys keys;
  private final Calls calls;
  private final Supplier<String> clock;
  private final RuleCodec codec = new RuleCodec();
  static final int MAX_NOTES_IN_FLIGHT = 64;
  private final java.util.concurrent.Semaphore notesInFlight =
      new java.util.concurrent.Semaphore(MAX_NOTES_IN_FLIGHT);
  private final java.util.concurrent.atomic.AtomicLong notes =
      new java.util.concurrent.atomic.AtomicLong();

  RedisAdmin(Keys keys, Calls calls, Supplier<String> clock) {
    this.keys = keys;
    this.calls = calls;
    this.clock = clock;
  }

  /** The sorted set of a rule's refused keys, from any of its core keys. */
  private String refusedSet(String coreKey) {
    return keys.prefix() + coreKey.substring(0, coreKey.indexOf(':')) + ":~refused";
  }

  /** After Redis answered a check: notes each refused enforcing or shadow rule's key. */
  void noteRefusals(List<Rule> rules, List<String> coreKeys, Verdict[] verdicts) {
    for (int i = 0; i < verdicts.length; i++) {
      if (verdicts[i].allowed() || rules.get(i).mode() == Mode.OFF) {
        continue;
      }
      String core = coreKeys.get(i);
      String[] k = {refusedSet(core)};
      String[] a = {clock.get(), core.substring(core.indexOf(':') + 1), KEEP_ARG, TTL_MS};
      if (!notesInFlight.tryAcquire()) {
        continue;
      }
      notes.incrementAndGet();
      calls.send(c -> calls.run(c, Scripts.NOTE, ScriptOutputType.INTEGER, k, a))
          .whenComplete((r, e) -> notesInFlight.release());
    }
  }

  /** Notes sent so far: Redis script calls that are not decisions (tests count them apart). */
  long notes() {
    return notes.get();
  }

  /** True when no note is on its way. */
  boolean notesSettled() {
    return notesInFlight.availablePermits() == MAX_NOTES_IN_FLIGHT;
  }

  CompletableFuture<List<KeyState>> refused(Rule rule, int limit) {
    if (limit < 1) {
      return CompletableFuture.failedFuture(new dev.sluice.core.InvalidValueException("limit",
          Integer.toString(limit), "1 to " + KeyState.MAX_LIST));
    }
    int max = Math.min(limit, KeyState.MAX_LIST);
    String set = refusedSet(rule.keyFor(dev.sluice.core.Identity.empty()));
    return calls.<List<ScoredValue<String>>>call("refused", false,
        (c, lane) -> c.cmd().zrevrangeWithScores(set, 0, KEEP - 1).toCompletableFuture())
        .thenCompose(members -> {
          List<CompletableFuture<Peeked>> states = new ArrayList<>(members.size());
          List<Long> at = new ArrayList<>(members.size());
          for (ScoredValue<String> m : members) {
            CompletableFuture<Peeked> s;
            try {
              s = peek(rule, m.getValue());
            } catch (IllegalArgumentException e) {
              continue; // a key text of an older rule with other dimensions
            }
            states.add(s);
            at.add((long) m.getScore());
          }
          return CompletableFuture.allOf(states.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<KeyState> out = new ArrayList<>();
            for (int i = 0; i < states.size() && out.size() < max; i++) {
              Peeked p = states.get(i).join();
              KeyState s = p.state();
              if (s.refusing()) {
                out.add(new KeyState(s.rule(), s.key(), s.present(), s.banLeft(), s.limits(),
                    micros(p.now() - at.get(i))));
              }
            }
            return out;
          });
        });
  }

  /** A key's state and the Redis time it was read at (microseconds). */
  private record Peeked(KeyState state, long now) {}

  CompletableFuture<KeyState> state(Rule rule, String key) {
    return peek(rule, key).thenApply(Peeked::state);
  }

  /** The state of {@code identity}'s key: no round trip through its text (a long value's digest). */
  CompletableFuture<KeyState> state(Rule rule, dev.sluice.core.Identity identity) {
    return peek(rule, rule.keyText(identity), new Call(rule, rule.keyFor(identity), true))
        .thenApply(Peeked::state);
  }

  /** peek on the key: its state, without changing it. Throws on a bad key text. */
  private CompletableFuture<Peeked> peek(Rule rule, String key) {
    return peek(rule, key, new Call(rule, key));
  }

  private CompletableFuture<Peeked> peek(Rule rule, String key, Call call) {
    return calls.<List<Object>>call("peek", false, (c, lane) -> calls.run(c, Scripts.PEEK,
        ScriptOutputType.MULTI, call.keys, call.args(clock.get()))).thenApply(r -> {
          long now = (Long) r.get(0);
          boolean present = (Long) r.get(1) == 1;
          Duration ban = micros((Long) r.get(2));
          List<KeyState.LimitState> limits = new ArrayList<>();
          for (int j = 0; j < rule.limits().size(); j++) {
            int at = 3 + 3 * j;
            limits.add(new KeyState.LimitState(rule.limits().get(j).name(), (Long) r.get(at),
                micros((Long) r.get(at + 1)), micros((Long) r.get(at + 2))));
          }
          return new Peeked(new KeyState(rule.name(), key, present, ban, limits, null), now);
        });
  }

  CompletableFuture<Boolean> unban(Rule rule, String key) {
    Call call = new Call(rule, key);
    return calls.<Long>call("unban", false, (c, lane) -> calls.run(c, Scripts.UNBAN, ScriptOutputType.INTEGER,
        call.keys, call.args(clock.get()))).thenApply(n -> n == 1);
  }

  /** Bans the key for {@code length} from Redis's now (admin.lua's ban); its limits stay. */
  CompletableFuture<Boolean> ban(Rule rule, String key, Duration length) {
    if (rule.ban().isZero()) {
      return CompletableFuture.failedFuture(new dev.sluice.core.InvalidValueException("rule",
          "'" + rule.name() + "' has no ban", "a rule with a ban: (its state keeps a ban's expiry)"));
    }
    Call call = new Call(rule, key);
    String[] a = call.args(clock.get());
    String[] withLength = new String[a.length + 1];
    withLength[0] = a[0];
    withLength[1] = Long.toString(RuleCodec.micros(length.toNanos()));
    System.arraycopy(a, 1, withLength, 2, a.length - 1);
    return calls.<Long>call("ban", false, (c, lane) -> calls.run(c, Scripts.BAN,
        ScriptOutputType.INTEGER, call.keys, withLength)).thenApply(n -> {
          String core = rule.keyFor(rule.identityOf(key));
          String[] k = {refusedSet(core)};
          String[] note = {clock.get(), key, KEEP_ARG, TTL_MS};
          calls.send(c -> calls.run(c, Scripts.NOTE, ScriptOutputType.INTEGER, k, note));
          return n == 1;
        });
  }

  CompletableFuture<Boolean> reset(Rule rule, String key) {
    Call call = new Call(rule, key);
    return calls.call("reset", false, (c, lane) -> c.cmd().del(call.keys).toCompletableFuture())
        .thenApply(n -> n > 0);
  }

  private static Duration micros(long us) {
    return Duration.ofNanos(Math.max(0, us) * 1000L);
  }

  /** One key's script call: its keys (the rule key, then its logs) and the rule's arguments. */
  private final class Call {
    final String[] keys;
    final String[] ruleArgs;

    Call(Rule rule, String key) {
      this(rule, rule.keyFor(rule.identityOf(key)), true);
    }

    /** The call of the store key {@code coreKey} (the rule's name and the escaped values). */
    Call(Rule rule, String coreKey, boolean core) {
      String ruleKey = RedisAdmin.this.keys.rule(coreKey);
      RuleCodec.Encoded e = codec.encode(rule);
      keys = new String[1 + e.logs()];
      keys[0] = ruleKey;
      for (int j = 0; j < e.logs(); j++) {
        keys[1 + j] = ruleKey + ":" + j;
      }
      ruleArgs = e.args();
    }

    String[] args(String clock) {
      String[] a = new String[1 + ruleArgs.length];
      a[0] = clock;
      System.arraycopy(ruleArgs, 0, a, 1, ruleArgs.length);
      return a;
    }
  }
}
