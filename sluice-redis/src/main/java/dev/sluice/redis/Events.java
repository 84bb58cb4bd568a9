package dev.sluice.redis;

/** The store's {@link RedisStore.Listener}, or nothing: no work for events nobody hears. */
final class Events {

  private static final System.Logger LOG = System.getLogger(RedisStore.class.getName());

  private final RedisStore.Listener listener;

  Events(RedisStore.Listener listener) {
    this.listener = listener;
  }

  void emit(RedisStore.Event event, String detail) {
    if (listener == null) {
      return;
    }
    try {
      listener.on(event, detail);
    } catch (RuntimeException e) {
      // A listener's bug must not break the store's connection or calls.
      LOG.log(System.Logger.Level.WARNING, "sluice-redis: listener failed on " + event, e);
    }
  }
}
