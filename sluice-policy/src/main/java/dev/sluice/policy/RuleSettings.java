package dev.sluice.policy;

import dev.sluice.core.Mode;
import dev.sluice.core.OnStoreError;
import java.time.Duration;
import java.util.List;

/**
 * One entry of the {@code rules:} section as the file says it (core's {@code Rule} is built from
 * it and lives in {@code PolicyConfig.policy()}).
 *
 * @param key dimension names joined by {@code :}
 * @param limits the limits, all of which must pass
 * @param ban how long the first refusal bans the key; zero for none
 * @param mode {@code OFF} as well when the off switch turned it off
 * @param offSwitch the environment variable whose {@code 0} turns the rule off, or null
 * @param delay how long a refused request may wait for its token; zero for none
 * @param delayQueue how many requests may wait per key
 */
public record RuleSettings(String key, List<LimitSettings> limits, Duration ban, Mode mode,
    OnStoreError onStoreError, String sharedBucket, String offSwitch, Duration delay,
    int delayQueue) {

  public RuleSettings {
    limits = List.copyOf(limits);
    delay = delay == null ? Duration.ZERO : delay;
  }

  /** A rule without a delay. */
  public RuleSettings(String key, List<LimitSettings> limits, Duration ban, Mode mode,
      OnStoreError onStoreError, String sharedBucket, String offSwitch) {
    this(key, limits, ban, mode, onStoreError, sharedBucket, offSwitch, Duration.ZERO,
        dev.sluice.core.Rule.DEFAULT_DELAY_QUEUE);
  }
}
