package dev.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisProcess;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 20, item 13: a library user got {@code SLF4J: Failed to load class
 * "org.slf4j.impl.StaticLoggerBinder"} on stderr, from an SLF4J 1.7 API that came with
 * sluice-redis (Lettuce's redis-authx-core) and that the BOM did not align: that API does not
 * see an SLF4J 2 backend, so the application's logging got nothing from Lettuce either. Runs a
 * user's program on exactly the class path the BOM's consumer check resolved, plus the user's
 * own SLF4J 2 backend (slf4j-simple), against a real redis-server, and reads everything it
 * printed. (Lettuce needs SLF4J's API at run time, so it cannot be left out; an application
 * with no SLF4J backend at all gets SLF4J's own "no providers" notice, as it would from any
 * library that logs through SLF4J.)
 */
class LibraryUserIntegrationTests {

  static final Path CLASS_PATH = DistributionIntegrationTests.ROOT.resolve(
      "sluice-bom/consumer-check/target/classpath.txt");

  static Path where(Class<?> c) throws Exception {
    return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
  }

  @Test
  void redisStoreUser_withAnSlf4j2Backend_seesNoSlf4jWarning() throws Exception {
    assertThat(CLASS_PATH).as("written by sluice-bom/consumer-check at package").isRegularFile();
    String cp = Files.readString(CLASS_PATH).strip() + File.pathSeparator + where(LibraryUser.class)
        + File.pathSeparator + where(org.slf4j.simple.SimpleLogger.class);
    try (RedisProcess redis = RedisProcess.start()) {
      DistributionIntegrationTests.Result r = DistributionIntegrationTests.run(
          Path.of(System.getProperty("java.io.tmpdir")), Map.of(),
          Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", cp,
          LibraryUser.class.getName(), redis.uri());
      assertThat(r.exit()).as(r.output()).isZero();
      assertThat(r.output()).contains("allowed=true remaining=9 degraded=false")
          .doesNotContain("SLF4J");
    }
  }
}
