package dev.sluice.servlet;

import dev.sluice.policy.ConfigException;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyConfig;
import dev.sluice.policy.PolicyLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A policy file that reloads itself when it changes. No thread of its own: the first request
 * after each {@code interval} looks at the file's time and size (one {@code stat}) and reloads
 * when either changed. A valid file replaces the policy in one swap; an invalid one is logged
 * with every error and the previous policy keeps serving, as in the gateway.
 */
final class PolicyFile implements Supplier<PolicyConfig> {

  private static final System.Logger LOG = System.getLogger(PolicyFile.class.getName());

  private final Path file;
  private final Map<String, String> env;
  private final long intervalNanos;
  private volatile PolicyConfig current;
  private volatile long nextCheck;
  private FileTime modified;
  private long size;

  /** Loads {@code file} now; an invalid file fails here, before any request is served. */
  PolicyFile(Path file, Map<String, String> env, Duration interval) throws ConfigException {
    this.file = file;
    this.env = env;
    this.intervalNanos = interval.toNanos();
    LoadedPolicy loaded = PolicyLoader.load(file, env);
    loaded.warnings().forEach(w -> LOG.log(System.Logger.Level.WARNING, w));
    this.current = loaded.config();
    stamp();
    this.nextCheck = System.nanoTime() + intervalNanos;
  }

  @Override
  public PolicyConfig get() {
    if (System.nanoTime() - nextCheck >= 0) {
      check();
    }
    return current;
  }

  private synchronized void check() {
    long now = System.nanoTime();
    if (now - nextCheck < 0) {
      return;
    }
    nextCheck = now + intervalNanos;
    FileTime before = modified;
    long sizeBefore = size;
    if (!stamp() || (modified.equals(before) && size == sizeBefore)) {
      return;
    }
    try {
      LoadedPolicy loaded = PolicyLoader.load(file, env);
      loaded.warnings().forEach(w -> LOG.log(System.Logger.Level.WARNING, w));
      current = loaded.config();
      LOG.log(System.Logger.Level.INFO, "policy reloaded: " + file + " (" + loaded.summary() + ")");
    } catch (ConfigException e) {
      LOG.log(System.Logger.Level.ERROR, "policy rejected; the previous policy keeps serving: "
          + file + ": " + e.getMessage());
    }
  }

  /** Reads the file's time and size; false when it cannot be read (the policy keeps serving). */
  private boolean stamp() {
    try {
      modified = Files.getLastModifiedTime(file);
      size = Files.size(file);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
