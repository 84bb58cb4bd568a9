package dev.sluice.core;

/**
 * A source of nanosecond time, the only clock the engine reads.
 *
 * <p>Only differences between readings matter: the value may start anywhere, including near
 * {@link Long#MAX_VALUE} or below zero, as {@link System#nanoTime()} may. Tests inject a fake
 * ticker and never sleep.
 */
@FunctionalInterface
public interface Ticker {

  /** Returns the current time in nanoseconds, relative to an arbitrary origin. */
  long read();

  /** Returns a ticker backed by {@link System#nanoTime()}. */
  static Ticker system() {
    return System::nanoTime;
  }
}
