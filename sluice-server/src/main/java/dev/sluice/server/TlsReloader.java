package dev.sluice.server;

import dev.sluice.gateway.ServerTls;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Keeps the listener's certificate current with its files, as {@link PolicyReloader} keeps the
 * policy: the files are polled (contents compared, so a {@code touch} reloads nothing) and
 * re-read on SIGHUP. A valid new pair serves the connections opened after it; an invalid one (a
 * key written before its certificate, a missing file) is logged once and the previous pair keeps
 * serving, until the files make a valid pair again.
 */
final class TlsReloader implements AutoCloseable {

  private final ServerTls tls;
  private final Log log;
  private String lastProblem;
  private ScheduledExecutorService poller;

  TlsReloader(ServerTls tls, Log log) {
    this.tls = tls;
    this.log = log;
  }

  /** Re-reads the files now; true if a new certificate is in place. */
  synchronized boolean reload(String cause) {
    try {
      String installed = tls.reloadIfChanged();
      lastProblem = null;
      if (installed != null) {
        log.info("certificate reloaded", "cause", cause, "certificate", installed);
        return true;
      }
      return false;
    } catch (IllegalArgumentException e) {
      if (!Objects.equals(e.getMessage(), lastProblem)) {
        lastProblem = e.getMessage();
        log.error("certificate rejected; the previous one keeps serving: " + e.getMessage(),
            "cause", cause);
      }
      return false;
    }
  }

  /** Polls the files every {@code interval}. */
  synchronized void watch(Duration interval) {
    if (poller != null) {
      return;
    }
    poller = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sluice-tls-watch");
      t.setDaemon(true);
      return t;
    });
    long ms = Math.max(10, interval.toMillis());
    poller.scheduleWithFixedDelay(() -> reload("file changed"), ms, ms, TimeUnit.MILLISECONDS);
  }

  @Override
  public synchronized void close() {
    if (poller != null) {
      poller.shutdownNow();
      poller = null;
    }
  }
}
