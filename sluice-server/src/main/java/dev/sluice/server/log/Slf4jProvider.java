package dev.sluice.server.log;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * SLF4J 2's provider for the server (registered in META-INF/services): Netty's, Lettuce's and
 * Micrometer's loggers write through {@link dev.sluice.server.Log}. Being the one provider on
 * the class path, SLF4J loads it without a "No SLF4J providers" warning.
 */
public final class Slf4jProvider implements SLF4JServiceProvider {

  private ILoggerFactory loggers;
  private IMarkerFactory markers;
  private MDCAdapter mdc;

  @Override
  public ILoggerFactory getLoggerFactory() {
    return loggers;
  }

  @Override
  public IMarkerFactory getMarkerFactory() {
    return markers;
  }

  @Override
  public MDCAdapter getMDCAdapter() {
    return mdc;
  }

  @Override
  public String getRequestedApiVersion() {
    return "2.0.99";
  }

  @Override
  public void initialize() {
    Map<String, Slf4jLogger> made = new ConcurrentHashMap<>();
    loggers = name -> made.computeIfAbsent(name, Slf4jLogger::new);
    markers = new BasicMarkerFactory();
    mdc = new NOPMDCAdapter();
  }
}
