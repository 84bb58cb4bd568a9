package dev.sluice.redis;

import io.lettuce.core.event.Event;
import io.lettuce.core.event.connection.ConnectionActivatedEvent;
import io.lettuce.core.event.connection.ReconnectAttemptEvent;
import io.lettuce.core.event.connection.ReconnectFailedEvent;
import io.lettuce.core.resource.ClientResources;
import io.netty.util.Timer;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import reactor.core.Disposable;

/**
 * Watches a ready store's connections through Lettuce's event bus: one WARNING when a node's
 * connection is lost, one INFO when it is back (with how long and how many attempts), and an
 * event for each failed reconnect in between (a metric, not a log line). Lettuce reconnects on
 * its own (10 ms doubling to 500 ms); a reconnect also ends an open circuit's wait.
 *
 * <p>Only reconnect attempts mark a node lost: a connection closed on purpose (a topology
 * refresh's, the store's own on close) is never retried, so it never shows up here.
 *
 * <p>With a connection per event loop ({@link Lanes}), a restarted Redis drops them all at once
 * and they come back one by one: the outage ends when the last one is back, not at the first
 * (whose probes would fail on the others and reopen the circuit). An activation that finds
 * another connection still down checks again every {@value #RECHECK_MILLIS} ms, in case that
 * one's own activation came first.
 */
final class Watch implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());

  private final Endpoint endpoint;
  private final ClientResources resources;
  private final Events events;
  private final Runnable restored;
  private final BooleanSupplier allOpen;
  private final Timer timer;
  static final long RECHECK_MILLIS = 50;
  private final Map<String, Outage> down = new ConcurrentHashMap<>();
  private volatile Disposable subscription;
  private volatile boolean closed;

  private static final class Outage {
    final long since = System.nanoTime();
    final AtomicInteger failures = new AtomicInteger();
  }

  Watch(Endpoint endpoint, ClientResources resources, Events events, Runnable restored,
      BooleanSupplier allOpen, Timer timer) {
    this.endpoint = endpoint;
    this.resources = resources;
    this.events = events;
    this.restored = restored;
    this.allOpen = allOpen;
    this.timer = timer;
  }

  void start() {
    subscription = resources.eventBus().get().subscribe(this::on);
  }

  private void on(Event e) {
    if (closed) {
      return;
    }
    if (e instanceof ReconnectAttemptEvent r) {
      String node = node(r.remoteAddress());
      if (down.putIfAbsent(node, new Outage()) == null) {
        LOG.log(System.Logger.Level.WARNING, "sluice-redis: lost the connection to {0} ({1}); "
            + "reconnecting in the background", node, endpoint);
        if (down.size() == 1) {
          events.emit(RedisStore.Event.CONNECTION_LOST, node);
        }
      }
    } else if (e instanceof ReconnectFailedEvent f) {
      Outage o = down.get(node(f.remoteAddress()));
      if (o != null) {
        o.failures.incrementAndGet();
      }
      events.emit(RedisStore.Event.CONNECT_FAILED, Failures.reason(f.getCause()));
    } else if (e instanceof ConnectionActivatedEvent a) {
      back(node(a.remoteAddress()));
    }
  }

  /** A connection to {@code node} is back; the outage ends once all of them are. */
  private void back(String node) {
    Outage o = down.get(node);
    if (o == null || closed) {
      return;
    }
    if (!allOpen.getAsBoolean()) {
      timer.newTimeout(t -> back(node), RECHECK_MILLIS, TimeUnit.MILLISECONDS);
      return;
    }
    if (down.remove(node, o)) {
      LOG.log(System.Logger.Level.INFO, "sluice-redis: reconnected to {0} ({1}) after {2} ms "
          + "and {3} failed attempts", node, endpoint,
          String.valueOf(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - o.since)),
          String.valueOf(o.failures.get()));
      if (down.isEmpty()) {
        restored.run();
        events.emit(RedisStore.Event.CONNECTION_RESTORED, node);
      }
    }
  }

  /** host:port by address, so the attempt's and the activation's addresses match. */
  private static String node(SocketAddress a) {
    if (a instanceof InetSocketAddress i) {
      String host = i.getAddress() != null ? i.getAddress().getHostAddress() : i.getHostString();
      return host + ":" + i.getPort();
    }
    return String.valueOf(a);
  }

  @Override
  public void close() {
    closed = true;
    Disposable d = subscription;
    if (d != null) {
      d.dispose();
    }
  }
}
