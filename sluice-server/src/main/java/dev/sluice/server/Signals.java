package dev.sluice.server;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * SIGHUP without a compile-time dependency on {@code sun.misc}: on a JVM without it, where the
 * signal is reserved, or in a process started with SIGHUP ignored ({@code nohup}), reloading by
 * signal is unavailable and the file watch still works.
 *
 * <p>The handler is installed once per JVM and stays: the JVM's default for SIGHUP is to exit
 * (129), so uninstalling it when a server closes would turn the next SIGHUP back into a stop.
 * A closed server's action is replaced by nothing instead.
 */
final class Signals {

  private static volatile Runnable hangup;
  private static Boolean installed;

  private Signals() {}

  /** Runs {@code action} on each SIGHUP until it is replaced or cleared; false if unavailable. */
  static synchronized boolean onHangup(Runnable action) {
    hangup = action;
    if (installed == null) {
      installed = install();
    }
    return installed;
  }

  /** Stops running {@code action} on SIGHUP (if it is still the current one); SIGHUP is ignored. */
  static synchronized void clear(Runnable action) {
    if (hangup == action) {
      hangup = null;
    }
  }

  private static boolean install() {
    try {
      Class<?> signalClass = Class.forName("sun.misc.Signal");
      Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
      Object signal = signalClass.getConstructor(String.class).newInstance("HUP");
      Object handler = Proxy.newProxyInstance(Signals.class.getClassLoader(),
          new Class<?>[] {handlerClass}, (proxy, method, args) -> {
            if (method.getName().equals("handle")) {
              Runnable action = hangup;
              if (action != null) {
                action.run();
              }
              return null;
            }
            if (method.getName().equals("toString")) {
              return "sluice SIGHUP handler";
            }
            if (method.getName().equals("hashCode")) {
              return System.identityHashCode(proxy);
            }
            if (method.getName().equals("equals")) {
              return proxy == args[0];
            }
            return null;
          });
      Method handle = signalClass.getMethod("handle", signalClass, handlerClass);
      // A process started with SIGHUP ignored (nohup) keeps it ignored: the JVM then reports
      // SIG_IGN as the old handler and never calls the new one.
      Object previous = handle.invoke(null, signal, handler);
      return previous != handlerClass.getField("SIG_IGN").get(null);
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      return false;
    }
  }
}
