package dev.sluice.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The keys of one {@link StateLayout} in the in-memory store: open addressing over primitive
 * arrays, split into segments, with state inline and no object per key.
 *
 * <p><b>Slots.</b> A slot is {@code stride} longs: the key's two hash lanes, then either the
 * state itself when it is one long (a token bucket without a ban, updated by compare-and-set), or
 * a guard word followed by the state (or, for states longer than {@value #MAX_INLINE} longs, a
 * guard word with the state in a side array). A token-bucket key thus costs 24 bytes per slot.
 *
 * <p><b>Concurrency.</b> Lookups take no lock: a slot's key goes from empty to a key to deleted
 * and never back within one array, so a reader that found its key keeps the right slot. A
 * one-long state is updated by compare-and-set, other states under their guard word (a spin
 * lock held for one decision). Inserting, deleting and resizing take the segment's lock. A
 * resize or delete first marks each old slot dead ({@link #DEAD} or {@link #GONE}), so a reader
 * still working on the old array fails its update and looks the key up again.
 *
 * <p><b>Size.</b> Linear probing; a segment grows when live and deleted slots pass 80% of it,
 * to a size where the live keys fill 55%, so a token-bucket key costs 30 to 44 bytes of table.
 * Deleted slots are reclaimed by the rehash that follows a sweep.
 */
final class MemoryTable {

  private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

  /** States of at most this many longs live in the slot; longer ones in a side array. */
  static final int MAX_INLINE = 16;

  static final long EMPTY = 0;
  static final long DELETED = 1;

  /** One-long state being decided by a multi-rule check. */
  static final long LOCKED = Long.MIN_VALUE;
  /** One-long state of a slot that was deleted or moved: look the key up again. */
  static final long DEAD = Long.MIN_VALUE + 1;

  static final long FREE = 0;
  static final long HELD = 1;
  static final long GONE = 2;

  private static final int MIN_CAPACITY = 8;

  final int id;
  final StateLayout layout;
  final int stateSize;
  /** True for a one-long state updated by compare-and-set. */
  final boolean cas;
  final boolean inline;
  final int stride;
  private final Segment[] segments;
  private final int segmentMask;
  /** The bucket shared by every new key once even the overflow reserve is used; never swept. */
  final Segment lastResort;

  MemoryTable(int id, StateLayout layout, int segments, boolean allowInline) {
    this.id = id;
    this.layout = layout;
    this.stateSize = layout.stateSize();
    this.cas = stateSize == 1 && allowInline;
    this.inline = allowInline && stateSize <= MAX_INLINE;
    this.stride = cas ? 3 : inline ? 3 + stateSize : 3;
    this.segments = new Segment[segments];
    for (int i = 0; i < segments; i++) {
      this.segments[i] = new Segment(this, MIN_CAPACITY);
    }
    this.segmentMask = segments - 1;
    this.lastResort = new Segment(this, MIN_CAPACITY);
  }

  Segment segment(long ka) {
    return segments[(int) ka & segmentMask];
  }

  Segment[] segments() {
    return segments;
  }

  /**
   * A segment: its current arrays and its counts, guarded by its lock. The lock is a spin lock
   * (one compare-and-set to take, a release store to give back) rather than the monitor, whose
   * exit is a second compare-and-set: every new key takes it once, and a locked instruction right
   * after the slot's stores waits for them to leave the store buffer. It is held for one insert,
   * or for one segment's sweep or resize; {@link #backOff} yields to a holder descheduled.
   */
  static final class Segment {
    private static final VarHandle HELD;

    static {
      try {
        HELD = MethodHandles.lookup().findVarHandle(Segment.class, "held", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    final MemoryTable table;
    volatile Arrays arrays;
    /** 1 while a thread holds the segment's lock; read and written through {@link #HELD}. */
    @SuppressWarnings("unused")
    private int held;
    int live;
    int deleted;
    /** The most keys live at once since the last compaction: its capacity keeps room for them. */
    int peak;

    Segment(MemoryTable table, int capacity) {
      this.table = table;
      this.arrays = new Arrays(table, capacity);
    }

    void lock() {
      for (int spins = 0; !HELD.compareAndSet(this, 0, 1); spins++) {
        backOff(spins);
      }
    }

    void unlock() {
      HELD.setRelease(this, 0);
    }
  }

  /** One generation of a segment's slots, replaced whole by a resize. */
  static final class Arrays {
    final long[] slots;
    /** Side states, one per slot, when the table's states are not inline; else null. */
    final Object[] states;
    final int capacity;

    Arrays(MemoryTable table, int capacity) {
      this.slots = new long[capacity * table.stride];
      this.states = table.inline ? null : new Object[capacity];
      this.capacity = capacity;
    }
  }

  /** The slot of {@code (ka, kb)} in {@code arrays}, as an index of its first long, or -1. */
  int find(Arrays arrays, long ka, long kb) {
    long[] slots = arrays.slots;
    int cap = arrays.capacity;
    int i = home(kb, cap);
    for (int probes = 0; probes < cap; probes++) {
      int base = i * stride;
      long a = getAcquire(slots, base);
      if (a == EMPTY) {
        return -1;
      }
      if (a == ka && slots[base + 1] == kb) {
        return base;
      }
      if (++i == cap) {
        i = 0;
      }
    }
    return -1;
  }

  /** Where the home slot of key {@code kb} starts in {@code arrays.slots} (for a prefetch). */
  int homeBase(Arrays arrays, long kb) {
    return home(kb, arrays.capacity) * stride;
  }

  private static int home(long kb, int cap) {
    return (int) (((kb >>> 32) * cap) >>> 32);
  }

  /**
   * Inserts {@code (ka, kb)} with a fresh state; the caller holds the segment's lock and has
   * checked that the key is absent. Grows the segment first when needed. Returns the slot.
   */
  int insert(Segment seg, long ka, long kb, long now) {
    if ((seg.live + seg.deleted + 1) * 5L > seg.arrays.capacity * 4L) {
      rehash(seg, capacityFor(seg.live + 1));
    }
    Arrays arrays = seg.arrays;
    long[] slots = arrays.slots;
    int cap = arrays.capacity;
    int i = home(kb, cap);
    while (slots[i * stride] != EMPTY) {
      if (++i == cap) {
        i = 0;
      }
    }
    int base = i * stride;
    if (cas) {
      long[] cell = new long[1];
      layout.init(cell, 0, now);
      slots[base + 2] = cell[0];
    } else if (inline) {
      layout.init(slots, base + 3, now);
    } else {
      long[] state = new long[stateSize];
      layout.init(state, 0, now);
      arrays.states[i] = state;
    }
    slots[base + 1] = kb;
    setRelease(slots, base, ka);
    if (++seg.live > seg.peak) {
      seg.peak = seg.live;
    }
    return base;
  }

  private static int capacityFor(int live) {
    return Math.max(MIN_CAPACITY, (int) Math.min(Integer.MAX_VALUE / 32, live * 20L / 11 + 1));
  }

  /**
   * Moves every live key of {@code seg} into new arrays of {@code capacity} slots, dropping
   * deleted slots; the caller holds the segment's lock. Old slots are marked dead first, so
   * updates still aimed at them fail and retry on the new arrays.
   */
  void rehash(Segment seg, int capacity) {
    Arrays from = seg.arrays;
    long[] old = from.slots;
    Object[] oldStates = from.states;
    Arrays to = new Arrays(this, capacity);
    long[] slots = to.slots;
    Object[] states = to.states;
    int oldCap = from.capacity;
    for (int j = 0; j < oldCap; j++) {
      int at = j * stride;
      long ka = old[at];
      if (ka == EMPTY || ka == DELETED) {
        continue;
      }
      long value = kill(old, at);
      if (value == DEAD) {
        continue;
      }
      int i = home(old[at + 1], capacity);
      while (slots[i * stride] != EMPTY) {
        if (++i == capacity) {
          i = 0;
        }
      }
      int base = i * stride;
      slots[base] = ka;
      slots[base + 1] = old[at + 1];
      if (cas) {
        slots[base + 2] = value;
      } else {
        System.arraycopy(old, at + 3, slots, base + 3, stride - 3);
        if (!inline) {
          states[i] = oldStates[j];
        }
      }
    }
    seg.deleted = 0;
    seg.arrays = to;
  }

  /**
   * Marks the slot at {@code base} dead, waiting out a check that holds it. Returns the state
   * it had (one-long states) or {@link #FREE} (guarded states), or {@link #DEAD} if it was dead
   * already.
   */
  long kill(long[] slots, int base) {
    for (int spins = 0; ; spins++) {
      long v = getVolatile(slots, base + 2);
      if (cas ? v == DEAD : v == GONE) {
        return DEAD;
      }
      boolean held = cas ? v == LOCKED : v == HELD;
      if (!held && cas(slots, base + 2, v, cas ? DEAD : GONE)) {
        return v;
      }
      backOff(spins);
    }
  }

  /** Marks a live slot deleted after {@link #kill}; the caller holds the segment's lock. */
  void delete(Segment seg, Arrays arrays, int base) {
    setRelease(arrays.slots, base, DELETED);
    if (!inline) {
      arrays.states[base / stride] = null;
    }
    seg.live--;
    seg.deleted++;
  }

  /**
   * After a sweep: reclaims deleted slots. The segment keeps room for as many keys as it held at
   * once since the last sweep (and shrinks to that when a flood left it larger): the keys a sweep
   * drops are mostly replaced by as many new ones before the next, and shrinking to the few left
   * made every sweep cycle regrow the segment through several resizes (each key moved about three
   * times). A flood's room is thus given back one sweep later than the flood's keys.
   */
  void compact(Segment seg) {
    if (seg.deleted > 0) {
      int target = capacityFor(Math.max(seg.live, seg.peak));
      int cap = seg.arrays.capacity;
      rehash(seg, cap > 2 * target ? target : Math.max(cap, target));
    }
    seg.peak = seg.live;
  }

  /**
   * Takes the guard of a guarded slot. Returns false when the slot is dead (deleted or moved):
   * the caller looks the key up again.
   */
  static boolean lock(long[] slots, int base) {
    for (int spins = 0; ; spins++) {
      long g = getVolatile(slots, base + 2);
      if (g == GONE) {
        return false;
      }
      if (g == FREE && cas(slots, base + 2, FREE, HELD)) {
        return true;
      }
      backOff(spins);
    }
  }

  static void unlock(long[] slots, int base) {
    setRelease(slots, base + 2, FREE);
  }

  // Every VarHandle access goes through one of these tiny methods: the JIT inlines a method this
  // small even at a cold call site, while a VarHandle call it leaves out of line boxes its longs
  // (32 bytes per compare-and-set, seen when a refusal-heavy start left the CAS site cold).

  static long getVolatile(long[] a, int i) {
    return (long) LONGS.getVolatile(a, i);
  }

  static long getAcquire(long[] a, int i) {
    return (long) LONGS.getAcquire(a, i);
  }

  static boolean cas(long[] a, int i, long expected, long value) {
    return LONGS.compareAndSet(a, i, expected, value);
  }

  static void setRelease(long[] a, int i, long value) {
    LONGS.setRelease(a, i, value);
  }

  /** Spins briefly, then yields: guards are held for one decision, a thread may be descheduled. */
  static void backOff(int spins) {
    if (spins < 64) {
      Thread.onSpinWait();
    } else {
      Thread.yield();
    }
  }
}
