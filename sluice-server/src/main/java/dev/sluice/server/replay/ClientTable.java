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
 * <p>Memory: at most {@code cap} clients (the store's key cap by default). When a new client
 * would pass it, clients idle for longer than the longest rule window are flushed (their peaks go
 * into the rules' histograms, final) and dropped; if that frees too little, the least recently
 * seen half goes the same way. A client that returns after being dropped starts afresh, and
 * counts again in the histograms: exact for a log of up to {@code cap} clients, approximate past
 * that, and the report says which.
 */
final class ClientTable {

  private static final int MAX_RULES = 16;

  private final int cap;
  private final int rules;
  private final long[] windowMicros;
  final PeakHistogram[] histograms;
  private int mask;
  private long[] keys;
  int[] requests;
  int[] refused;
  long[] agents;
  private long[] lastSeen;
  boolean[] listed;
  private long[][] win;
  private int[][] prev;
  private int[][] cur;
  private float[][] peak;
  private int size;
  /** Clients dropped to stay within the cap (and so possibly counted twice). */
  long dropped;

  ClientTable(int cap, long[] windowMicros) {
    this.cap = Math.max(16, cap);
    this.rules = Math.min(MAX_RULES, windowMicros.length);
    this.windowMicros = windowMicros;
    this.histograms = new PeakHistogram[windowMicros.length];
    for (int i = 0; i < histograms.length; i++) {
      histograms[i] = new PeakHistogram();
    }
    allocate(Integer.highestOneBit(Math.max(16, this.cap + this.cap / 3)) << 1);
  }

  private void allocate(int length) {
    mask = length - 1;
    keys = new long[length];
    requests = new int[length];
    refused = new int[length];
    agents = new long[length];
    lastSeen = new long[length];
    listed = new boolean[length];
    win = new long[rules][length];
    prev = new int[rules][length];
    cur = new int[rules][length];
    peak = new float[rules][length];
    for (long[] w : win) {
      Arrays.fill(w, Long.MIN_VALUE);
    }
    size = 0;
  }

  int size() {
    return size;
  }

  /** The slot of {@code key} (a client hash, never 0), added when new; seen at {@code now}. */
  int slot(long key, long now) {
    long k = key == 0 ? 1 : key;
    int i = find(k);
    if (keys[i] == k) {
      lastSeen[i] = now;
      return i;
    }
    if (size >= cap) {
      sweep(now);
      i = find(k);
    }
    keys[i] = k;
    lastSeen[i] = now;
    size++;
    return i;
  }

  /** The slot of {@code key}, or -1 when it is not in the table. */
  int lookup(long key) {
    long k = key == 0 ? 1 : key;
    int i = find(k);
    return keys[i] == k ? i : -1;
  }

  private int find(long k) {
    int i = (int) Hashes.mix(k) & mask;
    while (keys[i] != 0 && keys[i] != k) {
      i = (i + 1) & mask;
    }
    return i;
  }

  /** One request of the client in {@code slot} under rule {@code r}, at {@code now}. */
  void hit(int slot, int r, long now) {
    if (r >= rules) {
      return;
    }
    long w = windowMicros[r];
    long n = Math.floorDiv(now, w);
    long last = win[r][slot];
    if (last == n) {
      cur[r][slot]++;
    } else {
      prev[r][slot] = last == n - 1 ? cur[r][slot] : 0;
      cur[r][slot] = 1;
      win[r][slot] = n;
    }
    double into = (double) (now - n * w) / w;
    float est = (float) (prev[r][slot] * (1 - into) + cur[r][slot]);
    if (est > peak[r][slot]) {
      peak[r][slot] = est;
    }
  }

  double peak(int slot, int r) {
    return r < rules ? peak[r][slot] : 0;
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
    for (int i = 0; i <= mask; i++) {
      if (keys[i] != 0) {
        flush(i);
      }
    }
  }

  private void flush(int i) {
    for (int r = 0; r < rules; r++) {
      if (win[r][i] != Long.MIN_VALUE) {
        histograms[r].add(peak[r][i]);
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
    for (int i = 0; i <= mask; i++) {
      if (keys[i] != 0 && lastSeen[i] < idleBefore) {
        idle++;
      }
    }
    if (idle < cap / 10) {
      // Not enough idle: the median of when clients were last seen, from a sample.
      long[] sample = new long[Math.min(size, 4096)];
      int n = 0;
      int step = Math.max(1, (mask + 1) / sample.length);
      for (int i = 0; i <= mask && n < sample.length; i += step) {
        if (keys[i] != 0) {
          sample[n++] = lastSeen[i];
        }
      }
      Arrays.sort(sample, 0, n);
      idleBefore = Math.max(idleBefore, n == 0 ? now : sample[n / 2] + 1);
    }
    long[] oldKeys = keys;
    int[] oldReq = requests;
    int[] oldRef = refused;
    long[] oldAgents = agents;
    long[] oldSeen = lastSeen;
    boolean[] oldListed = listed;
    long[][] oldWin = win;
    int[][] oldPrev = prev;
    int[][] oldCur = cur;
    float[][] oldPeak = peak;
    int length = mask + 1;
    allocate(length);
    for (int i = 0; i < length; i++) {
      if (oldKeys[i] == 0) {
        continue;
      }
      if (oldSeen[i] < idleBefore && !oldListed[i]) {
        for (int r = 0; r < rules; r++) {
          if (oldWin[r][i] != Long.MIN_VALUE) {
            histograms[r].add(oldPeak[r][i]);
          }
        }
        dropped++;
        continue;
      }
      int j = find(oldKeys[i]);
      keys[j] = oldKeys[i];
      requests[j] = oldReq[i];
      refused[j] = oldRef[i];
      agents[j] = oldAgents[i];
      lastSeen[j] = oldSeen[i];
      listed[j] = oldListed[i];
      for (int r = 0; r < rules; r++) {
        win[r][j] = oldWin[r][i];
        prev[r][j] = oldPrev[r][i];
        cur[r][j] = oldCur[r][i];
        peak[r][j] = oldPeak[r][i];
      }
      size++;
    }
    if (size >= cap) {
      // Every client is a listed (refused) one: the cap is too small for the refused table.
      throw new IllegalStateException("client table full of refused clients");
    }
  }
}
