package dev.sluice.server;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * SIGHUP without a compile-time dependency on {@code sun.misc}: on a JVM without it (or where the
 * signal is reserved) reloading by signal is simply unavailable and the file watch still works.
 */
final class Signals {

  private Signals() {}

  /** Runs {@code action} on each SIGHUP; false if this JVM cannot deliver it. */
  static boolean onHangup(Runnable action) {
    try {
      Class<?> signalClass = Class.forName("sun.misc.Signal");
      Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
      Object signal = signalClass.getConstructor(String.class).newInstance("HUP");
      Object handler = Proxy.newProxyInstance(Signals.class.getClassLoader(),
          new Class<?>[] {handlerClass}, (proxy, method, args) -> {
            if (method.getName().equals("handle")) {
              action.run();
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
      handle.invoke(null, signal, handler);
      return true;
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      return false;
    }
  }
}
