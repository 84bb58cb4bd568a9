package dev.sluice.core;

/** A store could not answer in time or at all. Never escapes the {@link RateLimiter}. */
public class StoreException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public StoreException(String message) {
    super(message);
  }

  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
