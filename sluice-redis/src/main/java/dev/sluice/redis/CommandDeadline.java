package dev.sluice.redis;

import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.RedisCommand;
import java.util.concurrent.TimeUnit;

/**
 * Lettuce's command timeout: the deadline for the data path (the scripts, DBSIZE), the
 * handshake timeout for everything else: FUNCTION and SCRIPT LOAD compile the library, and the
 * commands Lettuce sends while connecting (CLIENT SETINFO, PING, ...) may take longer than a
 * decision on a busy server. Since the store's timer fires a deadline within a tenth of it
 * (Lettuce's ticked every 100 ms), a 50 ms deadline on those failed connects under load.
 */
final class CommandDeadline extends TimeoutOptions.TimeoutSource {
  private final long deadlineNanos;

  CommandDeadline(long deadlineNanos) {
    this.deadlineNanos = deadlineNanos;
  }

  @Override
  public long getTimeout(RedisCommand<?, ?, ?> command) {
    var type = command.getType();
    return type == CommandType.FCALL || type == CommandType.EVALSHA
        || type == CommandType.EVAL || type == CommandType.DBSIZE
        ? deadlineNanos : Connector.HANDSHAKE_TIMEOUT.toNanos();
  }

  @Override
  public TimeUnit getTimeUnit() {
    return TimeUnit.NANOSECONDS;
  }
}
