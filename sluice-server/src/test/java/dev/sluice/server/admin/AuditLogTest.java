package dev.sluice.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The audit table and the reload history keep the latest entries only, newest first. */
class AuditLogTest {

  @Test
  void actions_areLoggedAndKept_theLast1000_newestFirst() {
    List<String> logged = new ArrayList<>();
    Instant at = Instant.parse("2026-12-01T10:00:00Z");
    AuditLog audit = new AuditLog((message, fields) -> logged.add(message + " " + fields[1]),
        () -> at);
    for (int i = 1; i <= AuditLog.MAX + 5; i++) {
      audit.action("admin unban", "rule", "login", "key", "10.0.0." + i, "outcome", "lifted",
          "status", 200, "peer", "127.0.0.1", "auth", "token:0a1b2c3d", "actor", "alice");
    }
    assertThat(logged).hasSize(AuditLog.MAX + 5).first().isEqualTo("admin unban login");
    List<Map<String, Object>> recent = audit.recent(5000);
    assertThat(recent).hasSize(AuditLog.MAX);
    assertThat(recent.get(0)).containsEntry("action", "unban").containsEntry("rule", "login")
        .containsEntry("key", "10.0.0." + (AuditLog.MAX + 5)).containsEntry("status", 200)
        .containsEntry("actor", "alice").containsEntry("auth", "token:0a1b2c3d")
        .containsEntry("at", "2026-12-01T10:00:00Z");
    assertThat(recent.get(AuditLog.MAX - 1)).containsEntry("key", "10.0.0.6");
    assertThat(audit.seq()).isEqualTo(AuditLog.MAX + 5);

    audit.action("admin reset", "rule", "api", "key", "k".repeat(10_000));
    assertThat((String) audit.recent(1).get(0).get("key")).as("a huge key is cut").hasSize(515);
  }

  @Test
  void reloads_keepTheirResult_theLast100() {
    ReloadHistory h = new ReloadHistory();
    Instant at = Instant.parse("2026-12-01T10:00:00Z");
    h.installed(at, "start", "policy.yaml", "2 rules");
    List<String> errors = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      errors.add("policy.yaml:" + (i + 3) + ": rules.login.limits: bad");
    }
    h.rejected(at, "file changed", "policy.yaml", errors);
    Map<String, Object> rejected = h.recent(1).get(0);
    assertThat(rejected).containsEntry("result", "rejected").containsEntry("errorCount", 30)
        .containsEntry("cause", "file changed");
    assertThat((List<?>) rejected.get("errors")).hasSize(ReloadHistory.MAX_ERRORS)
        .first().isEqualTo("policy.yaml:3: rules.login.limits: bad");
    for (int i = 0; i < ReloadHistory.MAX; i++) {
      h.unchanged(at, "SIGHUP", "no file");
    }
    assertThat(h.recent(1000)).hasSize(ReloadHistory.MAX)
        .allMatch(e -> e.get("result").equals("unchanged"));
    assertThat(h.seq()).isEqualTo(ReloadHistory.MAX + 2);
  }
}
