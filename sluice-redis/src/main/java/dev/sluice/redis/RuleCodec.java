package dev.sluice.redis;

import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Turns rules into the script arguments of limits.lua: every parameter in microseconds.
 *
 * <p>Durations are rounded up to whole microseconds (a token's interval, a window, a decay, a
 * ban), so a Redis limit is never looser than its Java twin; for parameters that are whole
 * microseconds, which covers every realistic policy, the two run the same transitions.
 */
final class RuleCodec {

  /**
   * One rule's arguments and the number of extra keys (sliding logs) it needs; {@code bucket} is
   * {signature, burst, interval} when the rule has the shape of bucket.lua's fast path (one
   * token bucket, no ban), else null.
   */
  record Encoded(String[] args, int logs, Bucket bucket) {}

  /**
   * bucket.lua's parameters: the state prefix {@code signature,0,}, and burst × interval and the
   * interval in microseconds, both as strings for the script and as numbers to decode its
   * one-integer reply. Only for rules whose products stay below 2^53, where Lua's doubles are
   * exact integers.
   */
  record Bucket(String prefix, String cap, String interval, long capMicros,
      long intervalMicros) {}

  private static final long TWO53 = 1L << 53;

  private static final int MAX_CACHED = 4096;

  private final ConcurrentHashMap<Rule, Encoded> cache = new ConcurrentHashMap<>();

  Encoded encode(Rule rule) {
    Encoded e = cache.get(rule);
    if (e == null) {
      if (cache.size() >= MAX_CACHED) {
        cache.clear();
      }
      e = build(rule);
      cache.put(rule, e);
    }
    return e;
  }

  static long micros(long nanos) {
    return -Math.floorDiv(-nanos, 1000L);
  }

  private static Encoded build(Rule rule) {
    List<Limit> limits = rule.limits();
    List<String> args = new ArrayList<>(4 + 4 * limits.size());
    StringBuilder layout = new StringBuilder();
    int logs = 0;
    String[] perLimit = new String[4 * limits.size()];
    for (int j = 0; j < limits.size(); j++) {
      Limit l = limits.get(j);
      String kind;
      long a;
      long b;
      long c = 0;
      switch (l.kind()) {
        case TOKEN_BUCKET -> {
          kind = "T";
          a = l.capacity();
          b = micros(l.periodNanos());
        }
        case FIXED_WINDOW -> {
          kind = "F";
          a = l.capacity();
          b = micros(l.windowNanos());
        }
        case SLIDING_WINDOW -> {
          kind = "W";
          a = l.capacity();
          b = micros(l.windowNanos());
        }
        case SLIDING_LOG -> {
          kind = "L";
          a = l.capacity();
          b = micros(l.windowNanos());
          logs++;
        }
        case SCORE -> {
          kind = "S";
          a = Math.round(l.maxScore() * 1_000_000L);
          b = Math.round(l.perAction() * 1_000_000L);
          c = micros(l.periodNanos());
        }
        case LEAKY_BUCKET -> {
          // nginx's own units: thousandths of a request per second, and of a request.
          kind = "N";
          a = l.refill() * 1000 / l.period().toSeconds();
          b = (l.capacity() - 1) * 1000;
        }
        default -> throw new IllegalArgumentException("limit : " + l + " (unknown kind)");
      }
      perLimit[4 * j] = kind;
      perLimit[4 * j + 1] = Long.toString(a);
      perLimit[4 * j + 2] = Long.toString(b);
      perLimit[4 * j + 3] = Long.toString(c);
      layout.append(kind).append(a).append('/').append(b).append('/').append(c).append(';');
    }
    long ban = micros(rule.ban().toNanos());
    String sig = signature(layout);
    args.add(rule.mode() == Mode.ENFORCE ? "1" : "0");
    args.add(Long.toString(ban));
    args.add(sig);
    args.add(Integer.toString(limits.size()));
    args.addAll(List.of(perLimit));
    // The mode does not matter on the fast path: one rule alone decides its own check, and
    // without a ban a refusal writes nothing either way.
    Bucket bucket = null;
    if (limits.size() == 1 && "T".equals(perLimit[0]) && ban == 0) {
      long burst = limits.get(0).capacity();
      long interval = micros(limits.get(0).periodNanos());
      if (interval > 0 && burst < TWO53 / interval) {
        bucket = new Bucket(sig + ",0,", Long.toString(burst * interval),
            Long.toString(interval), burst * interval, interval);
      }
    }
    return new Encoded(args.toArray(String[]::new), logs, bucket);
  }

  /** A short digest of the limits' layout (64-bit FNV-1a), like MemoryStore's layout check. */
  private static String signature(CharSequence layout) {
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < layout.length(); i++) {
      h ^= layout.charAt(i);
      h *= 0x100000001b3L;
    }
    return Long.toString(h >>> 1, 36);
  }
}
