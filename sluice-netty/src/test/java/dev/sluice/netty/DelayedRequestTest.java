package dev.sluice.netty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Decision;
import dev.sluice.core.Limit;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.policy.DelayGate;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.policy.Route;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A rule's {@code delay}: a refused request waits on the channel's timer for its token. The
 * store's ticker and every channel's frozen clock advance together, so nothing sleeps. One token
 * per 100 ms, burst 1.
 */
class DelayedRequestTest {

  private final AtomicLong now = new AtomicLong(Long.MAX_VALUE - Duration.ofMinutes(1).toNanos());
  private final RateLimiter limiter = RateLimiter.of(Store.memory(now::get, 1000));
  private final List<EmbeddedChannel> channels = new ArrayList<>();
  private final List<String> events = new ArrayList<>();
  private final RateLimitListener listener = new RateLimitListener() {
    @Override
    public void delayed(String kind, String rule) {
      events.add("delayed " + rule);
    }

    @Override
    public void decision(String kind, List<Rule> rules, Decision d, long nanos) {
      events.add(d.allowed() ? "allowed" : "refused");
    }
  };
  private HttpRateLimitSettings settings;

  private void policy(Duration delay, int queue) {
    Rule api = Rule.builder("api").limit(Limit.tokenBucket("api", 1, 10, Duration.ofSeconds(1)))
        .delay(delay).delayQueue(queue).build();
    Policy p = Policy.builder().rule(api).route(Route.builder("api").rule("api").build()).build();
    settings = HttpRateLimitSettings.newBuilder(p).delays(DelayGate.create(3)).build();
  }

  private EmbeddedChannel client() {
    EmbeddedChannel ch = new EmbeddedChannel(new HttpRateLimitHandler(limiter, () -> settings,
        listener));
    ch.freezeTime();
    channels.add(ch);
    return ch;
  }

  private static HttpRequest get() {
    return new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/x");
  }

  /** Moves the store's time and every channel's timers by {@code ms}. */
  private void advance(long ms) {
    now.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
    for (EmbeddedChannel ch : channels) {
      ch.advanceTimeBy(ms, TimeUnit.MILLISECONDS);
      ch.runScheduledPendingTasks();
    }
  }

  private static String outcome(EmbeddedChannel ch) {
    Object in = ch.readInbound();
    if (in != null) {
      return "forwarded";
    }
    FullHttpResponse out = ch.readOutbound();
    if (out == null) {
      return "waiting";
    }
    String s = Integer.toString(out.status().code());
    out.release();
    return s;
  }

  @AfterEach
  void close() {
    channels.forEach(EmbeddedChannel::finishAndReleaseAll);
  }

  @Test
  void refusedWithinDelay_waitsForItsToken_thenGoesOn() {
    policy(Duration.ofMillis(500), 16);
    EmbeddedChannel a = client();
    EmbeddedChannel b = client();
    a.writeInbound(get());
    b.writeInbound(get());
    assertThat(outcome(a)).isEqualTo("forwarded");
    assertThat(outcome(b)).isEqualTo("waiting");
    assertThat(b.config().isAutoRead()).isFalse();
    assertThat(settings.delays().waiting()).isEqualTo(1);
    advance(99);
    assertThat(outcome(b)).isEqualTo("waiting");
    advance(1);
    assertThat(outcome(b)).isEqualTo("forwarded");
    assertThat(b.config().isAutoRead()).isTrue();
    assertThat(settings.delays().waiting()).isZero();
    assertThat(settings.delays().keys()).isZero();
    assertThat(events).containsExactly("allowed", "delayed api", "allowed");
  }

  @Test
  void waiters_takeTokensInTurn_allWithinTheBound() {
    policy(Duration.ofMillis(500), 16);
    List<EmbeddedChannel> clients = List.of(client(), client(), client(), client());
    clients.forEach(ch -> ch.writeInbound(get()));
    assertThat(clients.stream().map(DelayedRequestTest::outcome))
        .containsExactly("forwarded", "waiting", "waiting", "waiting");
    List<String> seen = new ArrayList<>();
    for (int t = 1; t <= 3; t++) {
      advance(100);
      for (EmbeddedChannel ch : clients.subList(1, 4)) {
        String o = outcome(ch);
        if (!o.equals("waiting")) {
          seen.add(t * 100 + "ms " + o);
        }
      }
    }
    assertThat(seen).containsExactly("100ms forwarded", "200ms forwarded", "300ms forwarded");
    assertThat(settings.delays().waiting()).isZero();
  }

  @Test
  void dueAfterTheDelay_isRefusedAtOnce() {
    policy(Duration.ofMillis(50), 16);
    EmbeddedChannel a = client();
    a.writeInbound(get());
    a.writeInbound(get());
    assertThat(outcome(a)).isEqualTo("forwarded");
    assertThat(outcome(a)).isEqualTo("429");
    assertThat(settings.delays().waiting()).isZero();
  }

  @Test
  void budgetSpent_isRefused() {
    // 150 ms: one round of 100 ms fits, a second does not.
    policy(Duration.ofMillis(150), 16);
    List<EmbeddedChannel> clients = List.of(client(), client(), client());
    clients.forEach(ch -> ch.writeInbound(get()));
    advance(100);
    List<String> outcomes = clients.subList(1, 3).stream().map(DelayedRequestTest::outcome)
        .sorted().toList();
    assertThat(outcomes).containsExactly("429", "forwarded");
    assertThat(settings.delays().waiting()).isZero();
  }

  @Test
  void perKeyQueueFull_isRefusedAtOnce() {
    policy(Duration.ofMillis(500), 1);
    List<EmbeddedChannel> clients = List.of(client(), client(), client());
    clients.forEach(ch -> ch.writeInbound(get()));
    assertThat(clients.stream().map(DelayedRequestTest::outcome))
        .containsExactly("forwarded", "waiting", "429");
  }

  @Test
  void serverWideCapFull_isRefusedAtOnce() {
    policy(Duration.ofMillis(500), 16);
    List<EmbeddedChannel> clients = List.of(client(), client(), client(), client(), client());
    clients.forEach(ch -> ch.writeInbound(get()));
    assertThat(clients.stream().map(DelayedRequestTest::outcome))
        .containsExactly("forwarded", "waiting", "waiting", "waiting", "429");
    assertThat(settings.delays().waiting()).isEqualTo(3);
  }

  @Test
  void clientClosingWhileWaiting_freesItsSlotAtOnce() {
    policy(Duration.ofMillis(500), 1);
    EmbeddedChannel a = client();
    EmbeddedChannel b = client();
    a.writeInbound(get());
    b.writeInbound(get());
    assertThat(outcome(b)).isEqualTo("waiting");
    assertThat(settings.delays().waiting()).isEqualTo(1);
    b.close();
    assertThat(settings.delays().waiting()).isZero();
    assertThat(settings.delays().keys()).isZero();
    // The slot is free for the next one, and the closed channel's timer does nothing.
    EmbeddedChannel c = client();
    c.writeInbound(get());
    assertThat(outcome(c)).isEqualTo("waiting");
    advance(100);
    assertThat(outcome(c)).isEqualTo("forwarded");
  }

  @Test
  void pipelinedRequest_waitsBehindTheDelayedOne() {
    policy(Duration.ofMillis(500), 16);
    EmbeddedChannel a = client();
    a.writeInbound(get());
    assertThat(outcome(a)).isEqualTo("forwarded");
    a.writeInbound(get());
    a.writeInbound(get());
    assertThat(outcome(a)).isEqualTo("waiting");
    advance(100);
    assertThat(outcome(a)).isEqualTo("forwarded");
    // The second was held, then decided: refused now, it waits in turn.
    assertThat(outcome(a)).isEqualTo("waiting");
    advance(100);
    assertThat(outcome(a)).isEqualTo("forwarded");
  }

  @Test
  void remoteStore_reDecidesAsynchronously_readsStayPaused() {
    RemoteStore remote = new RemoteStore(Store.memory(now::get, 1000));
    RateLimiter async = RateLimiter.of(remote);
    policy(Duration.ofMillis(500), 16);
    EmbeddedChannel a = new EmbeddedChannel(new HttpRateLimitHandler(async, () -> settings,
        listener));
    a.freezeTime();
    channels.add(a);
    a.writeInbound(get());
    assertThat(remote.answer()).isTrue();
    a.runPendingTasks();
    assertThat(outcome(a)).isEqualTo("forwarded");
    a.writeInbound(get());
    assertThat(remote.answer()).isTrue();
    a.runPendingTasks();
    assertThat(outcome(a)).isEqualTo("waiting");
    assertThat(a.config().isAutoRead()).isFalse();
    assertThat(remote.pending()).isZero();
    advance(100);
    // The timer asked the store again; reads stay paused until it answers.
    assertThat(remote.pending()).isEqualTo(1);
    assertThat(a.config().isAutoRead()).isFalse();
    assertThat(remote.answer()).isTrue();
    a.runPendingTasks();
    assertThat(outcome(a)).isEqualTo("forwarded");
    assertThat(a.config().isAutoRead()).isTrue();
    assertThat(settings.delays().waiting()).isZero();
  }
}
