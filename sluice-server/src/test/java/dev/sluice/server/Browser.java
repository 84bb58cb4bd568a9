package dev.sluice.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.devtools.DevTools;
import org.openqa.selenium.devtools.v156.log.Log;
import org.openqa.selenium.devtools.v156.log.model.LogEntry;
import org.openqa.selenium.devtools.v156.page.Page;
import org.openqa.selenium.devtools.v156.runtime.Runtime;
import org.openqa.selenium.devtools.v156.runtime.model.ConsoleAPICalled;
import org.openqa.selenium.devtools.v156.runtime.model.RemoteObject;

/**
 * A real headless Chromium for tests: Debian's {@code /usr/bin/chromium} driven through
 * {@code /usr/bin/chromedriver} (Selenium, with the DevTools protocol of Chromium 156 for the
 * console). Missing binaries fail the test loudly, never skip it: {@code scripts/test} installs
 * {@code chromium} and {@code chromium-driver}.
 *
 * <p>Every console error, uncaught exception and browser-reported error (a blocked resource, a
 * Content-Security-Policy violation, a failed load) is collected from the moment the browser
 * starts. {@link #close()} fails the test if any was seen and not taken by
 * {@link #takeConsoleErrors()}, so a page that logs an error cannot pass by accident.
 *
 * <pre>{@code
 * try (Browser b = Browser.start()) {
 *   b.open(reportFile);
 *   assertThat(b.findAll("svg.sluice-chart")).hasSize(4);
 *   b.screenshot(Path.of("target/report.png"));
 * }   // fails here on any console error
 * }</pre>
 */
public final class Browser implements AutoCloseable {

  public static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  public static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

  private final ChromeDriver driver;
  private final DevTools devTools;
  private final Path profile;
  private final List<String> errors = new CopyOnWriteArrayList<>();

  private Browser(ChromeDriver driver, DevTools devTools, Path profile) {
    this.driver = driver;
    this.devTools = devTools;
    this.profile = profile;
  }

  /** A browser with a 1280 x 900 window. */
  public static Browser start() {
    return start(1280, 900);
  }

  /** A browser with a window of {@code width} x {@code height} CSS pixels. */
  public static Browser start(int width, int height) {
    return start(width, height, List.of());
  }

  /**
   * As above, with more command-line switches for Chromium (like {@code --host-resolver-rules},
   * which makes a name resolve to loopback: a DNS rebinding, played in one browser).
   */
  public static Browser start(int width, int height, List<String> switches) {
    for (Path p : List.of(CHROMIUM, CHROMEDRIVER)) {
      if (!Files.isExecutable(p)) {
        throw new IllegalStateException(p + " is missing: the browser tests need Debian's "
            + "chromium and chromium-driver packages (scripts/test installs them as root: "
            + "apt-get install chromium chromium-driver)");
      }
    }
    Path profile;
    try {
      profile = Files.createTempDirectory("sluice-chromium-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu",
        "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-extensions", "--user-data-dir=" + profile,
        "--window-size=" + width + "," + height);
    options.addArguments(switches);
    ChromeDriverService service = new ChromeDriverService.Builder()
        .usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
    ChromeDriver driver = new ChromeDriver(service, options);
    Browser b = null;
    try {
      DevTools devTools = driver.getDevTools();
      devTools.createSession();
      b = new Browser(driver, devTools, profile);
      b.listen();
      driver.manage().window().setSize(new Dimension(width, height));
      return b;
    } catch (RuntimeException e) {
      driver.quit();
      deleteTree(profile);
      throw e;
    }
  }

  private void listen() {
    devTools.send(Runtime.enable());
    devTools.send(Log.enable());
    devTools.addListener(Runtime.consoleAPICalled(), e -> {
      if (e.getType() == ConsoleAPICalled.Type.ERROR || e.getType() == ConsoleAPICalled.Type.ASSERT) {
        errors.add("console." + e.getType() + ": " + describe(e.getArgs()));
      }
    });
    devTools.addListener(Runtime.exceptionThrown(), e -> {
      var d = e.getExceptionDetails();
      String what = d.getException().flatMap(RemoteObject::getDescription).orElse(d.getText());
      errors.add("uncaught: " + what + " at " + d.getUrl().orElse("?") + ":"
          + (d.getLineNumber() + 1));
    });
    devTools.addListener(Log.entryAdded(), e -> {
      if (e.getLevel() == LogEntry.Level.ERROR) {
        errors.add(e.getSource() + ": " + e.getText() + e.getUrl().map(u -> " (" + u + ")")
            .orElse(""));
      }
    });
  }

  private static String describe(List<RemoteObject> args) {
    List<String> parts = new ArrayList<>();
    for (RemoteObject a : args) {
      parts.add(a.getValue().map(String::valueOf).or(a::getDescription).orElse(
          String.valueOf(a.getType())));
    }
    return String.join(" ", parts);
  }

  /** Opens {@code url} and waits for its load event. */
  public Browser open(String url) {
    driver.get(url);
    return this;
  }

  /** Opens a local file, as a person double-clicking it would. */
  public Browser open(Path file) {
    return open(file.toAbsolutePath().toUri().toString());
  }

  /** Runs {@code js} in the page ({@code arguments[i]} are {@code args}); returns its value. */
  public Object script(String js, Object... args) {
    return ((JavascriptExecutor) driver).executeScript(js, args);
  }

  /** The first element matching the CSS {@code selector}; fails when there is none. */
  public WebElement find(String selector) {
    return driver.findElement(By.cssSelector(selector));
  }

  public List<WebElement> findAll(String selector) {
    return driver.findElements(By.cssSelector(selector));
  }

  /** Polls {@code condition} until it is true or {@code timeout} passes (then fails). */
  public void await(Duration timeout, String what, Supplier<Boolean> condition) {
    Instant end = Instant.now().plus(timeout);
    while (true) {
      if (Boolean.TRUE.equals(condition.get())) {
        return;
      }
      if (Instant.now().isAfter(end)) {
        throw new AssertionError("not within " + timeout + ": " + what);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what, e);
      }
    }
  }

  /** A PNG of the whole page (beyond the window too) at {@code png}; parents are created. */
  public Path screenshot(Path png) {
    String data = devTools.send(Page.captureScreenshot(
        Optional.of(Page.CaptureScreenshotFormat.PNG), Optional.empty(), Optional.empty(),
        Optional.empty(), Optional.of(true), Optional.empty()));
    try {
      if (png.toAbsolutePath().getParent() != null) {
        Files.createDirectories(png.toAbsolutePath().getParent());
      }
      Files.write(png, Base64.getDecoder().decode(data));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return png;
  }

  /** The errors seen so far; they still fail {@link #close()}. */
  public List<String> consoleErrors() {
    return List.copyOf(errors);
  }

  /** The errors seen so far, which then no longer fail {@link #close()}. */
  public List<String> takeConsoleErrors() {
    List<String> taken = List.copyOf(errors);
    errors.removeAll(taken);
    return taken;
  }

  /** Fails now if the page has logged any error. */
  public void assertNoConsoleErrors() {
    List<String> seen = takeConsoleErrors();
    if (!seen.isEmpty()) {
      throw new AssertionError("browser console errors:\n  " + String.join("\n  ", seen));
    }
  }

  /**
   * Sends {@code headers} with every request from now on (DevTools' extra HTTP headers), as a
   * proxy in front of the server would add them.
   */
  public Browser extraHeaders(java.util.Map<String, String> headers) {
    devTools.send(org.openqa.selenium.devtools.v156.network.Network.enable(Optional.empty(),
        Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty()));
    devTools.send(org.openqa.selenium.devtools.v156.network.Network.setExtraHTTPHeaders(
        new org.openqa.selenium.devtools.v156.network.model.Headers(
            new java.util.HashMap<>(headers))));
    return this;
  }

  /** Turns the pages' JavaScript off (or on again), as a person with it disabled browses. */
  public Browser javascript(boolean on) {
    devTools.send(org.openqa.selenium.devtools.v156.emulation.Emulation
        .setScriptExecutionDisabled(!on));
    return this;
  }

  /** The Selenium driver, for what this class does not wrap. */
  public ChromeDriver driver() {
    return driver;
  }

  /** Stops the browser; fails when console errors were seen and not taken. */
  @Override
  public void close() {
    // Events already in flight land before the check.
    try {
      script("return 1");
    } catch (RuntimeException e) {
      // the page may be gone; the browser is stopped below all the same
    }
    List<String> left = List.copyOf(errors);
    try {
      devTools.close();
    } catch (RuntimeException e) {
      // closing the session of a browser that is going away
    }
    driver.quit();
    deleteTree(profile);
    if (!left.isEmpty()) {
      throw new AssertionError("browser console errors:\n  " + String.join("\n  ", left));
    }
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // a temporary profile left behind is harmless
    }
  }
}
