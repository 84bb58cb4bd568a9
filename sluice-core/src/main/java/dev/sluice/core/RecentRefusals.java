package dev.sluice.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * The keys of one rule that the in-memory store refused lately, for the admin API: a
 * direct-mapped table of {@value #SLOTS} slots, the slot chosen by the key's hash, each holding
 * the refused identity (the caller's own object: nothing is copied) and when.
 *
 * <p>Why direct-mapped rather than a ring with a cursor: a flood of refusals from one key keeps
 * rewriting one slot instead of pushing every other key out, the refused path touches no shared
 * counter (two opaque stores, no allocation, no lock), and the allowed path never comes here.
 * The price: two keys whose hashes share a slot keep only the later one, so with n refusing keys
 * about n^2 / 2048 collide; a listing is a recent sample, not every refused key. Racing writers
 * may pair one key with the other's time; a listing then orders that key a little off.
 */
final class RecentRefusals {

  static final int SLOTS = 1024;

  private static final VarHandle OBJECTS = MethodHandles.arrayElementVarHandle(Object[].class);
  private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

  private final Object[] identities = new Object[SLOTS];
  private final long[] times = new long[SLOTS];

  /** Notes that {@code identity}, whose key hashes to {@code ka}, was refused at {@code now}. */
  void record(long ka, Identity identity, long now) {
    int i = (int) (ka ^ (ka >>> 29)) & (SLOTS - 1);
    OBJECTS.setOpaque(identities, i, identity);
    LONGS.setOpaque(times, i, now);
  }

  /** One refusal: who and when (store time). */
  record Entry(Identity identity, long at) {}

  /** Every noted refusal, most recent first. */
  List<Entry> recent() {
    List<Entry> out = new ArrayList<>();
    for (int i = 0; i < SLOTS; i++) {
      Object id = OBJECTS.getOpaque(identities, i);
      if (id != null) {
        out.add(new Entry((Identity) id, (long) LONGS.getOpaque(times, i)));
      }
    }
    out.sort((a, b) -> Long.compare(b.at, a.at));
    return out;
  }
}
