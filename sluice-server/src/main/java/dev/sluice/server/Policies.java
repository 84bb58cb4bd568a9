package dev.sluice.server;

import dev.sluice.gateway.Moderation;
import dev.sluice.policy.ConfigError;
import dev.sluice.policy.ConfigException;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyLoader;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Loads a policy as the server runs it: the loader's checks, then what only the gateway can
 * check (the moderation section's lists and separators, by building its Moderator).
 * Start-up, {@code sluice check}, replay and every reload go through here, so a bad list file
 * stops a start and a failed reload keeps the previous policy, as a bad key does.
 */
public final class Policies {

  private Policies() {}

  /** {@code file}, or the embedded default when null. */
  public static LoadedPolicy load(Path file, Map<String, String> env) throws ConfigException {
    return load(file, env, new Moderation.Cache());
  }

  /** {@link #load(Path, Map)}, leaving the moderation section built in {@code moderations}. */
  static LoadedPolicy load(Path file, Map<String, String> env, Moderation.Cache moderations)
      throws ConfigException {
    LoadedPolicy loaded = file == null ? PolicyLoader.loadDefault(env)
        : PolicyLoader.load(file, env);
    List<ConfigError> errors = moderations.check(loaded.config().moderation());
    if (!errors.isEmpty()) {
      throw new ConfigException(errors, loaded.warnings());
    }
    return loaded;
  }
}
