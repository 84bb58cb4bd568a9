package dev.sluice.server;

import java.io.InputStream;
import java.util.Properties;

/** The version of this build, from the Maven metadata the jar carries ("dev" when run from classes). */
final class Version {

  private static final String VERSION = read();

  private Version() {}

  static String get() {
    return VERSION;
  }

  private static String read() {
    try (InputStream in = Version.class.getResourceAsStream(
        "/META-INF/maven/dev.sluice/sluice-server/pom.properties")) {
      if (in != null) {
        Properties p = new Properties();
        p.load(in);
        String v = p.getProperty("version");
        if (v != null && !v.isBlank()) {
          return v;
        }
      }
    } catch (java.io.IOException e) {
      // falls through
    }
    return "dev";
  }
}
