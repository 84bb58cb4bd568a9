package dev.sluice.redis;

import dev.sluice.core.Circuit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.InvalidValueException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The breaker as a timeline. {@code ok}, {@code fail} and {@code slow} are calls that take 1 ms
 * (ok, fail) or the 50 ms deadline (slow); {@code stall} is every call in flight timing out at
 * the same instant; each transition is logged. The fake ticker starts near Long.MAX_VALUE, so
 * time wraps during the tests.
 */
class CircuitBreakerTest {

  private static final long MS = 1_000_000;
  private static final long DEADLINE = 50 * MS;
  /** The default window, in ms: 2 s, in ten buckets of 200 ms. */
  private static final int WINDOW = (int) Circuit.defaults().window().toMillis();

  private final AtomicLong now = new AtomicLong(Long.MAX_VALUE - 300 * MS);
  private final List<String> moves = new ArrayList<>();
  private CircuitBreaker breaker = breaker(Circuit.defaults());

  private CircuitBreaker breaker(Circuit c) {
    return new CircuitBreaker(c, DEADLINE, now::get, (from, to, why) -> moves.add(from + ">" + to));
  }

  /** {@code n} calls one after the other; returns how many went through before a refusal. */
  private int calls(int n, String outcome) {
    for (int i = 0; i < n; i++) {
      long permit = breaker.tryAcquire();
      if (permit == CircuitBreaker.REFUSED) {
        return i;
      }
      long start = now.get();
      now.addAndGet(outcome.equals("slow") ? DEADLINE : MS);
      breaker.record(permit, start, outcome.equals("fail") ? new RuntimeException("down") : null);
    }
    return n;
  }

  /** {@code n} calls admitted together that all time out together: a stall of the client. */
  private void stall(int n) {
    together(n, "timeout");
  }

  /** {@code n} calls admitted at once that answer at once, like {@link #calls}. */
  private void together(int n, String outcome) {
    long[] permits = new long[n];
    for (int i = 0; i < n; i++) {
      permits[i] = breaker.tryAcquire();
    }
    long start = now.get();
    now.addAndGet(outcome.equals("ok") || outcome.equals("fail") ? MS : DEADLINE);
    for (long p : permits) {
      breaker.record(p, start, outcome.equals("fail") || outcome.equals("timeout")
          ? new RuntimeException(outcome) : null);
    }
  }

  private void advance(long millis) {
    now.addAndGet(millis * MS);
  }

  /** One call, then a window's time: the window has seen a full window, and is empty. */
  private void warmedUp() {
    calls(1, "ok");
    advance(WINDOW);
  }

  /** Issue 7: five slow answers in a row opened the old circuit for a full second. */
  @Test
  void issue7_aStallTimingOutEveryCallInFlight_amidHealthyTraffic_doesNotOpen() {
    calls(WINDOW, "ok");
    stall(256);
    calls(5, "fail");
    calls(WINDOW, "ok");
    stall(256);
    assertThat(moves).isEmpty();
  }

  /**
   * Issue 7: a cold 64-thread burst opened it before any answer could come back. A window is
   * not judged before it is a window old, and a stall passes: it is judged among the calls of
   * the whole window.
   */
  @Test
  void issue7_coldStart_theFirstWindowIsNotJudged_aStallThenPasses() {
    stall(256);
    calls(50, "fail");
    calls(600, "ok");
    calls(50, "fail");
    assertThat(moves).isEmpty();
    // still failing a window after the first call: that is no stall
    calls(2 * WINDOW, "fail");
    assertThat(moves).containsExactly("CLOSED>OPEN");
  }

  @Test
  void belowTheMinimumCalls_nothingIsJudged_theHundredthFailureOpens() {
    warmedUp();
    assertThat(calls(99, "fail")).isEqualTo(99);
    assertThat(moves).isEmpty();
    assertThat(calls(2, "fail")).isEqualTo(1);
    assertThat(moves).containsExactly("CLOSED>OPEN");
  }

  @ParameterizedTest
  @ValueSource(longs = {Long.MAX_VALUE - 300 * MS, -5 * MS, 0})
  void deadRedis_opensOnceHalfTheWindowFailed(long start) {
    now.set(start);
    breaker = breaker(Circuit.defaults());
    calls(2000, "ok");
    // One call a ms: at the 1000th failure (t = 3000 ms) the window (buckets from 1200 ms on)
    // holds 801 successes and 1000 failures; one failure earlier, 1001 and 999.
    assertThat(calls(3000, "fail")).isEqualTo(1000);
    assertThat(moves).containsExactly("CLOSED>OPEN");
  }

  @Test
  void oldOutcomesLeaveTheWindow() {
    warmedUp();
    calls(100, "fail");
    assertThat(moves).containsExactly("CLOSED>OPEN");
    breaker.probeNow("test");
    calls(3, "ok");
    calls(99, "fail");
    advance(WINDOW);
    assertThat(breaker.window()).containsExactly(0, 0, 0);
    calls(99, "fail");
    assertThat(moves).containsExactly("CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>CLOSED");
  }

  @Test
  void slowAnswers_openOnlyWhenEveryCallIsSlow_byDefault() {
    warmedUp();
    together(99, "slow");
    together(1, "ok");
    together(50, "slow");
    assertThat(moves).isEmpty();
    assertThat(breaker.window()).containsExactly(150, 0, 149);
    advance(WINDOW);
    together(100, "slow");
    assertThat(moves).containsExactly("CLOSED>OPEN");
  }

  @Test
  void slowCall_belowTheDeadline_withItsOwnRate() {
    breaker = breaker(Circuit.builder().slowCall(Duration.ofMillis(1))
        .slowCallRate(50).minimumCalls(20).build());
    calls(20, "ok");
    assertThat(moves).as("not judged in its first window").isEmpty();
    advance(WINDOW);
    calls(20, "ok");
    assertThat(moves).containsExactly("CLOSED>OPEN");
  }

  @Test
  void open_refusesForItsTime_thenThreeProbes_whoseSuccessCloses() {
    warmedUp();
    calls(100, "fail");
    advance(499);
    assertThat(breaker.tryAcquire()).isEqualTo(CircuitBreaker.REFUSED);
    advance(1);
    long[] probes = {breaker.tryAcquire(), breaker.tryAcquire(), breaker.tryAcquire()};
    assertThat(probes).doesNotContain(CircuitBreaker.REFUSED);
    assertThat(breaker.tryAcquire()).as("a fourth caller while probing")
        .isEqualTo(CircuitBreaker.REFUSED);
    for (long p : probes) {
      breaker.record(p, now.get() - MS, null);
    }
    assertThat(moves).containsExactly("CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>CLOSED");
    assertThat(breaker.window()).as("a fresh window").containsExactly(0, 0, 0);
  }

  @Test
  void halfOpen_oneFailureOfThreeCloses_twoReopenAtOnce() {
    warmedUp();
    calls(100, "fail");
    advance(500);
    assertThat(calls(1, "fail") + calls(2, "ok")).isEqualTo(3);
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    warmedUp();
    calls(100, "fail");
    advance(500);
    assertThat(calls(2, "fail")).isEqualTo(2);
    assertThat(calls(1, "ok")).as("refused: the probes failed").isZero();
    assertThat(moves).containsExactly("CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>CLOSED",
        "CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>OPEN");
  }

  @Test
  void aCallAdmittedBeforeATransition_isNotAProbe() {
    warmedUp();
    long old = breaker.tryAcquire();
    calls(100, "fail");
    advance(500);
    long probe = breaker.tryAcquire();
    breaker.record(old, now.get(), new RuntimeException("late timeout of an old call"));
    breaker.record(old, now.get(), new RuntimeException("and again"));
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
    breaker.record(probe, now.get(), null);
    calls(2, "ok");
    assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  @Test
  void probeNow_endsTheOpenTimeEarly_whenTheConnectionIsBack() {
    warmedUp();
    calls(100, "fail");
    breaker.probeNow("reconnected");
    assertThat(calls(4, "ok")).isEqualTo(4);
    assertThat(moves).containsExactly("CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>CLOSED");
  }

  @Test
  void release_givesAProbeBack() {
    warmedUp();
    calls(100, "fail");
    advance(500);
    breaker.tryAcquire();
    breaker.tryAcquire();
    long third = breaker.tryAcquire();
    assertThat(breaker.tryAcquire()).isEqualTo(CircuitBreaker.REFUSED);
    breaker.release(third);
    assertThat(breaker.tryAcquire()).isNotEqualTo(CircuitBreaker.REFUSED);
  }

  /** Many threads adding to one bucket: no outcome is lost. */
  @Test
  void concurrentOutcomes_areAllCounted() throws Exception {
    breaker = breaker(Circuit.builder().minimumCalls(1_000_000).build());
    AtomicLong failures = new AtomicLong();
    AtomicLong slows = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      threads.add(new Thread(() -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = 0; i < 20_000; i++) {
          boolean fail = r.nextInt(4) == 0;
          boolean slow = r.nextBoolean();
          (fail ? failures : slows).addAndGet(fail || slow ? 1 : 0);
          breaker.record(breaker.tryAcquire(), slow ? now.get() - DEADLINE : now.get(),
              fail ? new RuntimeException() : null);
        }
      }));
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join();
    }
    long[] w = breaker.window();
    assertThat(w[0]).isEqualTo(160_000);
    assertThat(w[1]).isEqualTo(failures.get());
    assertThat(breaker.totals()[0]).isEqualTo(failures.get());
    assertThat(w[2]).isGreaterThanOrEqualTo(slows.get());
  }

  @Test
  void circuitSpec_rejectsBadValues_namingFieldValueAndRule() {
    assertThatThrownBy(() -> Circuit.builder().failureRate(0))
        .isInstanceOf(InvalidValueException.class)
        .hasMessage("failureRate : 0 (expected: 1..100)");
    assertThatThrownBy(() -> Circuit.builder().window(Duration.ofMillis(50)))
        .isInstanceOf(InvalidValueException.class)
        .hasMessage("window : PT0.05S (expected: 100ms..1m)");
    assertThatThrownBy(() -> Circuit.builder().open(Duration.ZERO))
        .hasMessage("open : PT0S (expected: 1ms..1m)");
  }
}
