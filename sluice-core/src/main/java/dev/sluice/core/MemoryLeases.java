package dev.sluice.core;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the in-memory store holds per key for a while: concurrency leases, and the reservations of
 * rules counted on responses ({@link Reservation}). Per key, the ids, expiries and weights of the
 * unexpired entries (a lease weighs 1, a reservation its cost). Few keys (one per address or
 * session with a request in flight), so a map of small arrays.
 */
final class MemoryLeases {

  private static final AtomicLong IDS = new AtomicLong();

  private final ConcurrentHashMap<String, Held> held = new ConcurrentHashMap<>();

  /** Unexpired entries of one key. Mutated only inside {@link ConcurrentHashMap#compute}. */
  private static final class Held {
    long[] ids = new long[4];
    long[] expiries = new long[4];
    long[] weights = new long[4];
    int size;

    void prune(long now) {
      int kept = 0;
      for (int i = 0; i < size; i++) {
        if (expiries[i] - now > 0) {
          ids[kept] = ids[i];
          expiries[kept] = expiries[i];
          weights[kept] = weights[i];
          kept++;
        }
      }
      size = kept;
    }

    int indexOf(long id) {
      for (int i = 0; i < size; i++) {
        if (ids[i] == id) {
          return i;
        }
      }
      return -1;
    }

    long weight() {
      long sum = 0;
      for (int i = 0; i < size; i++) {
        sum += weights[i];
      }
      return sum;
    }

    long add(long weight, long expiry) {
      if (size == ids.length) {
        ids = Arrays.copyOf(ids, size * 2);
        expiries = Arrays.copyOf(expiries, size * 2);
        weights = Arrays.copyOf(weights, size * 2);
      }
      long id = IDS.incrementAndGet();
      ids[size] = id;
      expiries[size] = expiry;
      weights[size] = weight;
      size++;
      return id;
    }

    void remove(long id) {
      int i = indexOf(id);
      if (i >= 0) {
        size--;
        ids[i] = ids[size];
        expiries[i] = expiries[size];
        weights[i] = weights[size];
      }
    }
  }

  /** Decides whether an entry may be added beside entries of {@code heldWeight} in all. */
  interface Admit {
    boolean admit(long heldWeight);
  }

  /**
   * Adds an entry of {@code weight} to {@code key} when {@code admit} says so, atomically with
   * every other change to the key's entries (it runs inside them: it may take a slot's guard,
   * never this map's); returns the entry's id, or 0.
   */
  long add(String key, long weight, long ttlNanos, long now, Admit admit) {
    long[] granted = new long[1];
    held.compute(key, (k, h) -> {
      Held entries = h == null ? new Held() : h;
      entries.prune(now);
      if (admit.admit(entries.weight())) {
        granted[0] = entries.add(weight, now + ttlNanos);
      }
      return entries.size == 0 ? null : entries;
    });
    return granted[0];
  }

  /** Removes entry {@code id} of {@code key} (if held) and then runs {@code after}, atomically. */
  void remove(String key, long id, long now, Runnable after) {
    held.compute(key, (k, h) -> {
      if (h != null) {
        h.remove(id);
        h.prune(now);
      }
      after.run();
      return h == null || h.size == 0 ? null : h;
    });
  }

  long acquire(String key, int max, long ttlNanos, long now) {
    return add(key, 1, ttlNanos, now, weight -> weight < max);
  }

  boolean renew(String key, long lease, long ttlNanos, long now) {
    boolean[] renewed = new boolean[1];
    held.computeIfPresent(key, (k, entries) -> {
      entries.prune(now);
      int i = entries.indexOf(lease);
      if (i >= 0) {
        entries.expiries[i] = now + ttlNanos;
        renewed[0] = true;
      }
      return entries.size == 0 ? null : entries;
    });
    return renewed[0];
  }

  void release(String key, long lease, long now) {
    held.computeIfPresent(key, (k, entries) -> {
      entries.remove(lease);
      entries.prune(now);
      return entries.size == 0 ? null : entries;
    });
  }

  /** The unexpired entries' count (leases) of {@code key}. */
  int count(String key, long now) {
    int[] count = new int[1];
    held.computeIfPresent(key, (k, entries) -> {
      entries.prune(now);
      count[0] = entries.size;
      return entries.size == 0 ? null : entries;
    });
    return count[0];
  }

  /** The unexpired entries' total weight (reservations) of {@code key}. */
  long weight(String key, long now) {
    long[] weight = new long[1];
    held.computeIfPresent(key, (k, entries) -> {
      entries.prune(now);
      weight[0] = entries.weight();
      return entries.size == 0 ? null : entries;
    });
    return weight[0];
  }

  /** Keys holding at least one entry (expired ones included until touched). */
  int keys() {
    return held.size();
  }
}
