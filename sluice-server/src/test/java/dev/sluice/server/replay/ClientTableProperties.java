package dev.sluice.server.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

/** The client table against a HashMap of the same counts (no client dropped below the cap). */
class ClientTableProperties {

  /**
   * Requests and refusals of clients drawn from a small set of hashes (0 included: it is
   * stored as 1, so 0 and 1 are one client, as the table documents), with batch prefetches in
   * between, which change nothing; the table grows past its first size on the way.
   */
  @Property(tries = 200)
  void countsAsAMap(
      @ForAll @Size(min = 1, max = 3000) List<@LongRange(min = 0, max = 1500) Long> picks,
      @ForAll @IntRange(min = 1, max = 16) int batch) {
    ClientTable table = new ClientTable(1_000_000, new long[] {1_000_000});
    Map<Long, int[]> model = new HashMap<>();
    long[] keys = new long[batch];
    long[] found = new long[batch];
    long now = 0;
    for (int i = 0; i < picks.size(); i++) {
      if (i % batch == 0) {
        int m = Math.min(batch, picks.size() - i);
        for (int j = 0; j < m; j++) {
          keys[j] = key(picks.get(i + j));
        }
        table.prefetch(keys, found, m);
      }
      long key = key(picks.get(i));
      now += 1000;
      int slot = table.slot(key, now);
      table.request(slot);
      int[] m = model.computeIfAbsent(key == 0 ? 1 : key, k -> new int[1]);
      m[0]++;
      assertThat(table.requests(slot)).isEqualTo(m[0]);
      if (picks.get(i) % 7 == 0) {
        table.refused(slot);
      }
    }
    assertThat(table.size()).isEqualTo(model.size());
    for (Map.Entry<Long, int[]> e : model.entrySet()) {
      int slot = table.lookup(e.getKey());
      assertThat(slot).isGreaterThanOrEqualTo(0);
      assertThat(table.requests(slot)).isEqualTo(e.getValue()[0]);
    }
    assertThat(table.lookup(key(5000))).as("never added").isEqualTo(-1);
  }

  /** Past the cap, clients are dropped and the table stays within it. */
  @Property(tries = 50)
  void staysWithinTheCap(
      @ForAll @Size(min = 1, max = 3000) List<@LongRange(min = 0, max = 100_000) Long> picks,
      @ForAll @IntRange(min = 16, max = 200) int cap) {
    ClientTable table = new ClientTable(cap, new long[] {1000});
    long now = 0;
    for (long p : picks) {
      now += 500;
      table.request(table.slot(key(p), now));
      assertThat(table.size()).isLessThanOrEqualTo(cap);
    }
  }

  /** Clients' hashes: spread, with 0 kept as itself to try the 0 case. */
  private static long key(long pick) {
    return pick == 0 ? 0 : Hashes.mix(pick * 0x9e3779b97f4a7c15L);
  }
}
