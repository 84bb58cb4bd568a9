package dev.sluice.server;

import dev.sluice.gateway.Moderation;
import dev.sluice.server.admin.Metrics;
import dev.sluice.server.admin.ReloadHistory;
import dev.sluice.policy.ConfigError;
import dev.sluice.policy.ConfigException;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyLoader;
import dev.sluice.policy.StoreSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Keeps the running policy current with its file. A valid new policy replaces the old one in one
 * atomic swap (requests see either the old or the new policy, never a mix); an invalid one is
 * rejected with its errors logged and the old one keeps serving.
 *
 * <p>The file is polled, not watched: reading a small file once per interval is cheap, works on
 * every file system (including bind mounts and ConfigMap symlink swaps, where change events are
 * unreliable), and compares contents, so a {@code touch} or an editor's rename dance reloads
 * nothing. The store cannot change while running: a new {@code store:} section is reported and
 * ignored until a restart.
 */
final class PolicyReloader implements AutoCloseable {

  private final Path file;
  private final Map<String, String> env;
  private final Moderation.Cache moderations;
  private final AtomicReference<LoadedPolicy> current;
  private final Metrics metrics;
  private final Log log;
  private final StoreSettings runningStore;
  /** {@code --dry-run}: every policy installed runs its rules in shadow mode. */
  private final boolean dryRun;
  private final StoreSettings fileStoreAtStart;
  private final ReloadHistory history;
  private volatile Instant loadedAt = Instant.now();
  private byte[] lastDigest;
  private boolean missingReported;
  private ScheduledExecutorService poller;

  PolicyReloader(Path file, Map<String, String> env, Moderation.Cache moderations,
      AtomicReference<LoadedPolicy> current, StoreSettings fileStoreAtStart, Metrics metrics,
      Log log, boolean dryRun, ReloadHistory history) {
    this.moderations = moderations;
    this.dryRun = dryRun;
    this.history = history;
    this.file = file;
    this.env = env;
    this.current = current;
    this.metrics = metrics;
    this.log = log;
    this.runningStore = current.get().config().store();
    this.fileStoreAtStart = fileStoreAtStart;
    this.lastDigest = file == null ? null : digest(read(file));
    LoadedPolicy running = current.get();
    history.installed(loadedAt, "start", running.sourceName(), running.summary());
  }

  ReloadHistory history() {
    return history;
  }

  Instant loadedAt() {
    return loadedAt;
  }

  /** Reloads the file now; true if a new policy is in place. */
  synchronized boolean reload(String cause) {
    if (file == null) {
      log.info("reload requested but the policy is the embedded default; nothing to reload",
          "cause", cause);
      history.unchanged(Instant.now(), cause, "the policy is the embedded default: no file to "
          + "reload");
      return false;
    }
    byte[] bytes = read(file);
    if (bytes != null) {
      lastDigest = digest(bytes);
    }
    LoadedPolicy next;
    try {
      next = Policies.load(file, env, moderations);
    } catch (ConfigException e) {
      metrics.reload(false);
      e.warnings().forEach(w -> log.warn(w, "policy", file));
      log.error("policy rejected; the previous policy keeps serving", "policy", file,
          "cause", cause, "errors", e.errors().size());
      for (ConfigError error : e.errors()) {
        log.error(error.toString());
      }
      history.rejected(Instant.now(), cause, file.toString(),
          e.errors().stream().map(ConfigError::toString).toList());
      return false;
    }
    next.warnings().forEach(w -> log.warn(w, "policy", file));
    StoreSettings fileStore = next.config().store();
    if (!fileStore.equals(fileStoreAtStart)) {
      log.warn("store settings changed in the policy file; they apply after a restart",
          "running", PolicyLoader.redact(runningStore.uri()));
    }
    LoadedPolicy installed = SluiceServer.withStore(next, runningStore);
    if (dryRun) {
      installed = installed.withDryRun();
    }
    current.set(installed);
    loadedAt = Instant.now();
    history.installed(loadedAt, cause, installed.sourceName(), installed.summary());
    metrics.reload(true);
    metrics.registerRules(installed.config().policy().rules().keySet());
    log.info("policy reloaded", "policy", file, "cause", cause, "summary", installed.summary());
    return true;
  }

  /** Polls the file every {@code interval} and reloads when its contents change. */
  synchronized void watch(Duration interval) {
    if (file == null || poller != null) {
      return;
    }
    poller = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sluice-policy-watch");
      t.setDaemon(true);
      return t;
    });
    long ms = Math.max(10, interval.toMillis());
    poller.scheduleWithFixedDelay(this::poll, ms, ms, TimeUnit.MILLISECONDS);
  }

  private void poll() {
    try {
      byte[] bytes = read(file);
      synchronized (this) {
        if (bytes == null) {
          if (!missingReported) {
            missingReported = true;
            log.warn("policy file is missing; the current policy keeps serving", "policy", file);
          }
          return;
        }
        missingReported = false;
        if (Arrays.equals(digest(bytes), lastDigest)) {
          return;
        }
        reload("file changed");
      }
    } catch (RuntimeException e) {
      log.error("policy watch failed: " + e, "policy", file);
    }
  }

  private static byte[] read(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      return null;
    }
  }

  private static byte[] digest(byte[] bytes) {
    if (bytes == null) {
      return null;
    }
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public synchronized void close() {
    if (poller != null) {
      poller.shutdownNow();
      poller = null;
    }
  }
}
