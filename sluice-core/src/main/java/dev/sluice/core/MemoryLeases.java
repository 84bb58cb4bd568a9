package dev.sluice.core;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Concurrency leases of the in-memory store: per key, the ids and expiries of the unexpired
 * leases. Few keys (one per open connection's address or session), so a map of small arrays.
 */
final class MemoryLeases {

  private static final AtomicLong LEASE_IDS = new AtomicLong();

  private final ConcurrentHashMap<String, Leases> leases = new ConcurrentHashMap<>();

  /** Unexpired leases of one key. Mutated only inside {@link ConcurrentHashMap#compute}. */
  private static final class Leases {
    long[] ids = new long[4];
    long[] expiries = new long[4];
    int size;

    void prune(long now) {
      int kept = 0;
      for (int i = 0; i < size; i++) {
        if (expiries[i] - now > 0) {
          ids[kept] = ids[i];
          expiries[kept] = expiries[i];
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
  }

  long acquire(String key, int max, long ttlNanos, long now) {
    long[] granted = new long[1];
    leases.compute(key, (k, l) -> {
      Leases held = l == null ? new Leases() : l;
      held.prune(now);
      if (held.size < max) {
        if (held.size == held.ids.length) {
          held.ids = Arrays.copyOf(held.ids, held.size * 2);
          held.expiries = Arrays.copyOf(held.expiries, held.size * 2);
        }
        granted[0] = LEASE_IDS.incrementAndGet();
        held.ids[held.size] = granted[0];
        held.expiries[held.size] = now + ttlNanos;
        held.size++;
      }
      return held.size == 0 ? null : held;
    });
    return granted[0];
  }

  boolean renew(String key, long lease, long ttlNanos, long now) {
    boolean[] renewed = new boolean[1];
    leases.computeIfPresent(key, (k, held) -> {
      held.prune(now);
      int i = held.indexOf(lease);
      if (i >= 0) {
        held.expiries[i] = now + ttlNanos;
        renewed[0] = true;
      }
      return held.size == 0 ? null : held;
    });
    return renewed[0];
  }

  void release(String key, long lease, long now) {
    leases.computeIfPresent(key, (k, held) -> {
      int i = held.indexOf(lease);
      if (i >= 0) {
        held.size--;
        held.ids[i] = held.ids[held.size];
        held.expiries[i] = held.expiries[held.size];
      }
      held.prune(now);
      return held.size == 0 ? null : held;
    });
  }

  int count(String key, long now) {
    int[] count = new int[1];
    leases.computeIfPresent(key, (k, held) -> {
      held.prune(now);
      count[0] = held.size;
      return held.size == 0 ? null : held;
    });
    return count[0];
  }

  /** Keys holding at least one lease (expired ones included until touched). */
  int keys() {
    return leases.size();
  }
}
