package dev.sluice.core;

/**
 * How a table of the in-memory store reads its keys' state: a rule's limits (and ban) or a
 * cooldown. Every key of one table shares one layout, so a table can tell fresh and refusing
 * state apart without a per-key owner.
 */
abstract class StateLayout {

  /** Longs of state per key. */
  abstract int stateSize();

  /** Writes the state of a key never seen before. */
  abstract void init(long[] s, int off, long now);

  /** True when the state decides every call exactly as a never-seen key would. */
  abstract boolean isFresh(long[] s, int off, long now);

  /** True when the key would refuse a call of cost 1 now (or is banned, or locked). */
  abstract boolean isRefusing(long[] s, int off, long now);

  static StateLayout of(Rule rule) {
    return new Rules(rule);
  }

  static StateLayout of(Cooldown cooldown) {
    return new Cooldowns(cooldown);
  }

  /** A rule's limits, in order, then the ban's expiry when the rule bans. */
  static final class Rules extends StateLayout {
    private final Rule rule;
    private final Algorithm[] algorithms;
    private final boolean bans;

    Rules(Rule rule) {
      this.rule = rule;
      this.algorithms = rule.algorithms();
      this.bans = rule.banNanos() > 0;
    }

    @Override
    int stateSize() {
      return rule.stateSize();
    }

    @Override
    void init(long[] s, int off, long now) {
      int at = off;
      for (Algorithm a : algorithms) {
        a.init(s, at, now);
        at += a.stateSize();
      }
      if (bans) {
        s[at] = now;
      }
    }

    @Override
    boolean isFresh(long[] s, int off, long now) {
      if (bans && s[off + rule.stateSize() - 1] - now > 0) {
        return false;
      }
      int at = off;
      for (Algorithm a : algorithms) {
        if (!a.isFresh(s, at, now)) {
          return false;
        }
        at += a.stateSize();
      }
      return true;
    }

    @Override
    boolean isRefusing(long[] s, int off, long now) {
      if (bans && s[off + rule.stateSize() - 1] - now > 0) {
        return true;
      }
      Algorithm.Probe probe = new Algorithm.Probe();
      int at = off;
      for (Algorithm a : algorithms) {
        probe.clear();
        if (!a.test(s, at, now, 1, probe)) {
          return true;
        }
        at += a.stateSize();
      }
      return false;
    }
  }

  /** A cooldown's four longs. */
  static final class Cooldowns extends StateLayout {
    private final Cooldown cooldown;

    Cooldowns(Cooldown cooldown) {
      this.cooldown = cooldown;
    }

    @Override
    int stateSize() {
      return Cooldown.STATE_SIZE;
    }

    @Override
    void init(long[] s, int off, long now) {
      cooldown.init(s, now);
    }

    @Override
    boolean isFresh(long[] s, int off, long now) {
      return cooldown.isFresh(s, now);
    }

    @Override
    boolean isRefusing(long[] s, int off, long now) {
      return !cooldown.apply(s.clone(), now, Cooldown.Event.CHECK).allowed();
    }
  }
}
