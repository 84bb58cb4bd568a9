package dev.sluice.server.replay;

import java.util.Arrays;

/**
 * Per client (the address the policy resolves), bounded: requests, refusals, a 64-bit sketch of
 * its user agents, and per rule its peak count within the rule's window. Keys are 64-bit hashes
 * of the address, so no string is kept for a client that is never refused.
 *
 * <p>The peak is the sliding-window count Sluice's {@code sliding-window} algorithm would see at
 * each of the client's requests (this window's count plus the last window's, weighted by how much
 * of it still overlaps), every request counted, refused or not: the load the client offered.
 * A limit of L per window refuses, roughly, the clients whose peak is above L.
 *
 * <p>Layout: an open-addressing table of keys at half load, each key beside the client's number
 * (a probe reads the next pair, in the same cache line), pointing into one dense {@code long[]}
 * holding each client's fields side by side ({@value #HEAD} words, then {@value #PER_RULE} per
 * rule), so a request touches a few cache lines, not one per field and probe (a field per array
 * and probes over the data cost 38% of a replay's samples in a profile, issue 23), and
 * {@link #prefetch} can start loading both a few lines ahead.
 *
 * <p>Memory: at most {@code cap} clients (the store's key cap by default). When a new client
 * would pass it, clients idle for longer than the longest rule window are flushed (their peaks go
 * into the rules' histograms, final) and dropped; if that frees too little, the least recently
 * seen half goes the same way. A client that returns after being dropped starts afresh, and
 * counts again in the histograms: exact for a log of up to {@code cap} clients, approximate past
 * that, and the report says which.
 */
final class ClientTable {

  private static final int MAX_RULES = 16;
  /** key, requests and refusals (two ints), user agent sketch, last seen, listed. */
  private static final int HEAD = 5;
  private static final int NONE = -1;
  /** window index, previous and current counts (two ints), peak (a double's bits). */
  private static final int PER_RULE = 3;
  private static final long NO_WINDOW = Long.MIN_VALUE;

  private final int cap;
  private final int rules;
  private final int stride;
  private final long[] windowMicros;
  final PeakHistogram[] histograms;
  private int mask;
  /**
   * Probed, two words a slot: the client hash (0 for none), then its number (its fields start at
   * number * stride in t); side by side, so a probe that finds its key has its number in the
   * same cache line.
   */
  private long[] keys;
  /** The clients' fields, densely, in arrival order. */
  private long[] t;
  private int size;
  /** Clients dropped to stay within the cap (and so possibly counted twice). */
  long dropped;

  ClientTable(int cap, long[] windowMicros) {
    this.cap = Math.max(16, cap);
    this.rules = Math.min(MAX_RULES, windowMicros.length);
    this.stride = HEAD + PER_RULE * rules;
    this.windowMicros = windowMicros;
    this.histograms = new PeakHistogram[windowMicros.length];
    for (int i = 0; i < histograms.length; i++) {
      histograms[i] = new PeakHistogram();
    }
    // Grown as clients arrive, up to the power of two that holds cap at half load.
    allocate(1024, 512);
  }

  private int maxSlots() {
    return Integer.highestOneBit(Math.max(16, cap)) << 2;
  }

  private void allocate(int slots, int clients) {
    mask = slots - 1;
    keys = new long[slots * 2];
    t = new long[Math.max(16, clients) * stride];
    size = 0;
  }

  int size() {
    return size;
  }

  /**
   * The client {@code key} (a hash), added when new, seen at {@code now}: its number, which
   * stays valid until the next client is added.
   */
  int slot(long key, long now) {
    long k = key == 0 ? 1 : key;
    int i = find(k);
    if (keys[i] == k) {
      int c = (int) keys[i + 1];
      t[c * stride + 3] = now;
      return c;
    }
    if (size >= cap) {
      sweep(now);
      i = find(k);
    } else if (size + 1 > (mask + 1) / 2 && mask + 1 < maxSlots()) {
      rebuild(Math.min(maxSlots(), (mask + 1) * 2), Long.MIN_VALUE);
      i = find(k);
    }
    if ((size + 1) * stride > t.length) {
      t = Arrays.copyOf(t, Math.min(cap, Math.max(size + 1, size * 2)) * stride);
    }
    int c = size++;
    keys[i] = k;
    keys[i + 1] = c;
    int b = c * stride;
    Arrays.fill(t, b, b + stride, 0);
    t[b] = k;
    t[b + 3] = now;
    for (int r = 0; r < rules; r++) {
      t[b + HEAD + r * PER_RULE] = NO_WINDOW;
    }
    return c;
  }

  /** The client {@code key}'s number, or -1 when it is not in the table. */
  int lookup(long key) {
    long k = key == 0 ? 1 : key;
    int i = find(k);
    return keys[i] == k ? (int) keys[i + 1] : NONE;
  }

  /**
   * Starts loading the home slots of clients {@code keys[0, n)} and the fields of those there,
   * for requests decided right after (the replay decides in batches so these loads overlap):
   * each pass is a tight loop of independent reads. {@code found} is scratch of length >= n.
   * Returns a value of no meaning, which the caller keeps so the reads are not optimised away.
   */
  long prefetch(long[] keys, long[] found, int n) {
    long[] k = this.keys;
    for (int j = 0; j < n; j++) {
      long key = keys[j] == 0 ? 1 : keys[j];
      int i = ((int) Hashes.mix(key) & mask) << 1;
      found[j] = k[i] == key ? k[i + 1] : -1;
    }
    // A client's fields span several cache lines (20 words, four lines at most, with seed 000's
    // five rules) and a request touches its head and its rules' words: load a word of each line.
    long[] t = this.t;
    int last = stride - 1;
    long sink = 0;
    for (int j = 0; j < n; j++) {
      if (found[j] >= 0) {
        int b = (int) found[j] * stride;
        for (int w = 0; w < last; w += 8) {
          sink += t[b + w];
        }
        sink += t[b + last];
      }
    }
    return sink;
  }

  /** The index in keys of {@code k}'s slot, or of the empty slot where it would go. */
  private int find(long k) {
    int i = (int) Hashes.mix(k) & mask;
    while (true) {
      long at = keys[i << 1];
      if (at == 0 || at == k) {
        return i << 1;
      }
      i = (i + 1) & mask;
    }
  }

  int requests(int slot) {
    return (int) (t[slot * stride + 1] >>> 32);
  }

  void request(int slot) {
    t[slot * stride + 1] += 1L << 32;
  }

  void refused(int slot) {
    t[slot * stride + 1]++;
  }

  long agents(int slot) {
    return t[slot * stride + 2];
  }

  void agent(int slot, long hash) {
    t[slot * stride + 2] |= 1L << (hash & 63);
  }

  boolean listed(int slot) {
    return t[slot * stride + 4] != 0;
  }

  void listed(int slot, boolean on) {
    t[slot * stride + 4] = on ? 1 : 0;
  }

  /** One request of the client in {@code slot} under rule {@code r}, at {@code now}. */
  void hit(int slot, int r, long now) {
    if (r >= rules) {
      return;
    }
    int b = slot * stride + HEAD + r * PER_RULE;
    long w = windowMicros[r];
    long n = Math.floorDiv(now, w);
    long last = t[b];
    long counts = t[b + 1];
    int prev;
    int cur;
    if (last == n) {
      prev = (int) (counts >>> 32);
      cur = (int) counts + 1;
    } else {
      prev = last == n - 1 ? (int) counts : 0;
      cur = 1;
      t[b] = n;
    }
    t[b + 1] = (long) prev << 32 | (cur & 0xffffffffL);
    double into = (double) (now - n * w) / w;
    double est = prev * (1 - into) + cur;
    if (est > Double.longBitsToDouble(t[b + 2])) {
      t[b + 2] = Double.doubleToRawLongBits(est);
    }
  }

  double peak(int slot, int r) {
    return r < rules ? Double.longBitsToDouble(t[slot * stride + HEAD + r * PER_RULE + 2]) : 0;
  }

  /** The client's user agents seen, estimated from its 64-bit sketch (linear counting). */
  static int agentsOf(long bits) {
    int set = Long.bitCount(bits);
    if (set == 0) {
      return 0;
    }
    if (set == 64) {
      return 300;
    }
    return (int) Math.round(-64 * Math.log((64.0 - set) / 64));
  }

  /** Flushes every client: the histograms are then complete. */
  void finish() {
    for (int c = 0; c < size; c++) {
      flush(t, c * stride);
    }
  }

  private void flush(long[] from, int b) {
    for (int r = 0; r < rules; r++) {
      int rb = b + HEAD + r * PER_RULE;
      if (from[rb] != NO_WINDOW) {
        histograms[r].add(Double.longBitsToDouble(from[rb + 2]));
      }
    }
  }

  /** Drops idle clients (their peaks final), else the least recently seen half. */
  private void sweep(long now) {
    long longest = 0;
    for (long w : windowMicros) {
      longest = Math.max(longest, w);
    }
    long idleBefore = now - longest;
    int idle = 0;
    for (int c = 0; c < size; c++) {
      if (t[c * stride + 3] < idleBefore) {
        idle++;
      }
    }
    if (idle < cap / 10) {
      // Not enough idle: the median of when clients were last seen, from a sample.
      long[] sample = new long[Math.min(size, 4096)];
      int n = 0;
      int step = Math.max(1, size / sample.length);
      for (int c = 0; c < size && n < sample.length; c += step) {
        sample[n++] = t[c * stride + 3];
      }
      Arrays.sort(sample, 0, n);
      idleBefore = Math.max(idleBefore, n == 0 ? now : sample[n / 2] + 1);
    }
    rebuild(mask + 1, idleBefore);
    if (size >= cap) {
      // Every client is listed (refused): cannot happen while the refused list is smaller.
      throw new IllegalStateException("client table full of refused clients");
    }
  }

  /** Rehashes into {@code slots} slots, flushing and dropping clients idle before the time. */
  private void rebuild(int slots, long idleBefore) {
    long[] old = t;
    int clients = size;
    mask = slots - 1;
    keys = new long[slots * 2];
    size = 0;
    for (int c = 0; c < clients; c++) {
      int b = c * stride;
      if (old[b + 3] < idleBefore && old[b + 4] == 0) {
        flush(old, b);
        dropped++;
        continue;
      }
      int n = size++;
      if (n != c) {
        System.arraycopy(old, b, old, n * stride, stride);
      }
      int i = find(old[n * stride]);
      keys[i] = old[n * stride];
      keys[i + 1] = n;
    }
  }
}
