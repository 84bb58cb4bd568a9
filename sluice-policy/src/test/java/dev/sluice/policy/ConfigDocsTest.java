package dev.sluice.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every key a policy file may hold is documented in docs/CONFIG.md: each section's table of
 * keys (the {@code *KEYS} lists the loader checks unknown keys against) is read here, and each
 * key must appear there in backticks. A new key without its line in the docs fails the build.
 */
class ConfigDocsTest {

  private static final List<Class<?>> SECTIONS = List.of(PolicyLoader.class, Toplevel.class,
      TrustSection.class, RulesSection.class, RoutesSection.class, ResponseSection.class,
      CorsSection.class, WebSocketSection.class, GatewaySection.class, StoreSection.class,
      ModerationSection.class, DomainsSection.class, RlsSection.class, LoggingSection.class);

  @Test
  void everyPolicyKey_isInConfigMd() throws Exception {
    String docs = Files.readString(Path.of("..", "docs", "CONFIG.md"), StandardCharsets.UTF_8);
    List<String> missing = new ArrayList<>();
    int keys = 0;
    for (Class<?> section : SECTIONS) {
      for (Field f : section.getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers()) && f.getName().endsWith("KEYS")
            && List.class.isAssignableFrom(f.getType())) {
          f.setAccessible(true);
          for (Object key : (List<?>) f.get(null)) {
            keys++;
            // `key`, `key: ...`, `key.sub`, `key[]...`, `section.key`, `list[].key`
            if (!java.util.regex.Pattern.compile("(`|\\.)" + java.util.regex.Pattern.quote(
                String.valueOf(key)) + "(`|:|\\.|\\[)").matcher(docs).find()) {
              missing.add(section.getSimpleName() + "." + f.getName() + ": " + key);
            }
          }
        }
      }
    }
    assertThat(keys).as("keys read from the sections").isGreaterThan(80);
    assertThat(missing).as("policy keys missing from docs/CONFIG.md").isEmpty();
  }
}
