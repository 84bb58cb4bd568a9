package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** {@link Store#prefetch} is a hint: a store given it decides exactly as one that is not. */
class PrefetchProperties {

  private static final Rule READ = Rule.builder("read")
      .limit(Limit.tokenBucket("read", 3, 6, Duration.ofSeconds(1))).build();
  private static final Rule WINDOW = Rule.builder("window")
      .limit(Limit.fixedWindow("w", 4, Duration.ofSeconds(2))).build();
  private static final Rule BANNED = Rule.builder("banned")
      .limit(Limit.slidingWindow("s", 2, Duration.ofSeconds(1))).ban(Duration.ofSeconds(3))
      .build();
  private static final List<List<Rule>> LISTS =
      List.of(List.of(READ), List.of(READ, WINDOW), List.of(BANNED, WINDOW), List.of(WINDOW));

  /**
   * Each step: a client (0..29), a rule list, and milliseconds to move the clock. The hinted
   * store gets a hint of the next {@code batch} checks before each batch, as the replay does;
   * a small key cap makes sweeps and overflow happen in between (down to one key: a cap under
   * ten once made a two-rule check loop for ever, see MemoryStoreTest).
   */
  @Property(tries = 200)
  void hintedStore_decidesAsAnUnhintedOne(
      @ForAll @Size(min = 1, max = 300) List<@IntRange(min = 0, max = 29) Integer> clients,
      @ForAll @Size(min = 1, max = 300) List<@IntRange(min = 0, max = 3) Integer> lists,
      @ForAll @Size(min = 1, max = 300) List<@IntRange(min = 0, max = 700) Integer> steps,
      @ForAll @IntRange(min = 1, max = 16) int batch,
      @ForAll @IntRange(min = 1, max = 200) int maxKeys) {
    FakeTicker ticker = new FakeTicker();
    Store hinted = Store.memory(ticker, maxKeys);
    Store plain = Store.memory(ticker, maxKeys);
    RateLimiter a = RateLimiter.of(hinted);
    RateLimiter b = RateLimiter.of(plain);
    MutableDecision da = new MutableDecision();
    MutableDecision db = new MutableDecision();
    int n = Math.min(clients.size(), Math.min(lists.size(), steps.size()));
    @SuppressWarnings("unchecked")
    List<Rule>[] rules = new List[batch];
    Identity[] ids = new Identity[batch];
    for (int i = 0; i < n; i++) {
      if (i % batch == 0) {
        int m = Math.min(batch, n - i);
        for (int j = 0; j < m; j++) {
          rules[j] = LISTS.get(lists.get(i + j));
          ids[j] = identity(clients.get(i + j));
        }
        hinted.prefetch(rules, ids, m);
      }
      ticker.advance(Duration.ofMillis(steps.get(i)));
      List<Rule> list = LISTS.get(lists.get(i));
      Identity id = identity(clients.get(i));
      boolean allowedA = a.check(list, id, 1, da);
      boolean allowedB = b.check(list, id, 1, db);
      assertThat(allowedA).as("step %d", i).isEqualTo(allowedB);
      assertThat(da.rule()).as("step %d", i).isEqualTo(db.rule());
      assertThat(da.remaining()).as("step %d", i).isEqualTo(db.remaining());
      assertThat(da.retryAfterNanos()).as("step %d", i).isEqualTo(db.retryAfterNanos());
      assertThat(da.banned()).as("step %d", i).isEqualTo(db.banned());
      assertThat(hinted.size()).as("step %d", i).isEqualTo(plain.size());
    }
  }

  @Test
  void aHint_insertsNothing_andMakesNoTable() {
    FakeTicker ticker = new FakeTicker();
    Store store = Store.memory(ticker, 100);
    @SuppressWarnings("unchecked")
    List<Rule>[] rules = new List[] {List.of(READ, WINDOW), List.of(BANNED)};
    Identity[] ids = {identity(1), identity(2)};
    store.prefetch(rules, ids, 2);
    assertThat(store.size()).isZero();
    RateLimiter limiter = RateLimiter.of(store);
    assertThat(limiter.check(READ, identity(1)).allowed()).isTrue();
    store.prefetch(rules, ids, 2);
    assertThat(store.size()).as("the one key checked").isEqualTo(1);
    assertThat(limiter.check(READ, identity(1)).remaining()).isEqualTo(1);
  }

  private static Identity identity(int client) {
    return Identity.ip("192.0.2." + client);
  }
}
