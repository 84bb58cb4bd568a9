package dev.sluice.core.address;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Tests that send forwarding headers to a resolver that trusts no proxy make it warn (once per
 * process): that warning is what they expect, so this extension catches it for the test class
 * (the resolver's logger only) instead of printing it, and lets a test read what was logged.
 */
public final class ResolverWarnings implements BeforeAllCallback, AfterAllCallback {

  static final List<String> LOGGED = new CopyOnWriteArrayList<>();

  private static final Logger LOGGER = Logger.getLogger(ClientAddressResolver.class.getName());
  private static final Handler CAPTURE = new Handler() {
    @Override
    public void publish(LogRecord record) {
      LOGGED.add(record.getLevel() + " " + record.getMessage());
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  @Override
  public void beforeAll(ExtensionContext context) {
    if (context.getRequiredTestClass().getEnclosingClass() != null) {
      return;
    }
    LOGGER.addHandler(CAPTURE);
    LOGGER.setUseParentHandlers(false);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (context.getRequiredTestClass().getEnclosingClass() != null) {
      return;
    }
    LOGGER.removeHandler(CAPTURE);
    LOGGER.setUseParentHandlers(true);
  }
}
