package dev.sluice.gateway;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A deadline watched by one task per connection: arming it for the next request is a field write,
 * not a timer insert and cancel. The task reschedules itself while the deadline moves on and runs
 * the action once the deadline passes while armed. Event loop only.
 */
final class Deadline {

  private final EventExecutor loop;
  private final Runnable action;
  private ScheduledFuture<?> task;
  private long taskAt;
  private boolean armed;
  private long at;

  Deadline(EventExecutor loop, Runnable action) {
    this.loop = loop;
    this.action = action;
  }

  /** Runs the action {@code nanos} from now unless disarmed or armed again before. */
  void arm(long nanos) {
    armed = true;
    at = System.nanoTime() + nanos;
    if (task != null && taskAt - at > 0) {
      // The timeout got shorter (a reload): the pending check would come too late.
      task.cancel(false);
      task = null;
    }
    if (task == null) {
      schedule(nanos);
    }
  }

  void disarm() {
    armed = false;
  }

  boolean armed() {
    return armed;
  }

  /** Disarms and cancels the task: the connection is gone. */
  void stop() {
    armed = false;
    if (task != null) {
      task.cancel(false);
      task = null;
    }
  }

  private void schedule(long nanos) {
    taskAt = System.nanoTime() + nanos;
    task = loop.schedule(this::check, nanos, TimeUnit.NANOSECONDS);
  }

  private void check() {
    task = null;
    if (!armed) {
      return;
    }
    long left = at - System.nanoTime();
    if (left > 0) {
      schedule(left);
      return;
    }
    armed = false;
    action.run();
  }
}
