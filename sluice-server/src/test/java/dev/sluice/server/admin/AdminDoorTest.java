package dev.sluice.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The door's three checks, one request at a time: Host, same origin, token. */
class AdminDoorTest {

  static final InetSocketAddress LOOPBACK = new InetSocketAddress("127.0.0.1", 9090);
  static final InetSocketAddress POD = new InetSocketAddress("10.1.2.3", 9090);
  static final String TOKEN = "t0ken-0123456789abcdef";

  @TempDir
  Path dir;

  AdminToken token() throws Exception {
    Path f = dir.resolve("token");
    Files.writeString(f, TOKEN + "\n");
    return AdminToken.read(f);
  }

  static AdminCall call(String method, String path, String... headers) {
    Map<String, String> h = new LinkedHashMap<>();
    for (int i = 0; i + 1 < headers.length; i += 2) {
      h.put(headers[i].toLowerCase(Locale.ROOT), headers[i + 1]);
    }
    int q = path.indexOf('?');
    return new AdminCall(method, q < 0 ? path : path.substring(0, q),
        q < 0 ? null : path.substring(q + 1), name -> h.get(name.toLowerCase(Locale.ROOT)),
        new byte[0], new InetSocketAddress("127.0.0.1", 50000));
  }

  static int status(AdminDoor.Verdict v) {
    return v.refusal() == null ? 0 : v.refusal().status();
  }

  @Test
  void host_isTheListenersAddress_localhostOnLoopback_orAGivenName() throws Exception {
    AdminDoor door = new AdminDoor(List.of("sluice-admin.internal"), token(), false);
    for (String host : List.of("127.0.0.1:9090", "127.0.0.1", "localhost:9090", "LOCALHOST",
        "localhost:8080", "sluice-admin.internal:9090")) {
      assertThat(status(door.check(call("GET", "/v1/policy", "Host", host), LOOPBACK)))
          .as(host).isZero();
    }
    for (String host : List.of("attacker.example", "attacker.example:9090", "127.0.0.2:9090",
        "localhost.attacker.example", "127.0.0.1.nip.io", "[::1]:9090", "127.0.0.1:x",
        "127.0.0.1:", "", "sluice-admin.internal.evil")) {
      AdminDoor.Verdict v = door.check(call("GET", "/v1/policy", "Host", host), LOOPBACK);
      assertThat(status(v)).as(host).isIn(400, 421);
      assertThat(v.reason()).isEqualTo("host");
    }
    AdminDoor.Verdict rebound = door.check(call("GET", "/v1/bans", "Host", "attacker.example"),
        LOOPBACK);
    assertThat(rebound.refusal().status()).isEqualTo(421);
    assertThat(rebound.refusal().text()).contains("misdirected request: Host \\\"attacker"
        + ".example\\\" is not a name of this admin listener").contains("--admin-hosts");
    assertThat(status(door.check(call("GET", "/v1/bans"), LOOPBACK))).as("no Host")
        .isEqualTo(400);
  }

  @Test
  void host_onAPodAddress_isThatAddress_notLocalhost() throws Exception {
    AdminDoor door = new AdminDoor(List.of(), token(), false);
    assertThat(status(door.check(call("GET", "/metrics", "Host", "10.1.2.3:9090"), POD)))
        .isZero();
    assertThat(status(door.check(call("GET", "/metrics", "Host", "localhost:9090"), POD)))
        .as("a connection to the pod's address is not loopback").isEqualTo(421);
    assertThat(status(door.check(call("GET", "/metrics", "Host", "sluice.default.svc:9090"),
        POD))).isEqualTo(421);
    InetSocketAddress v6 = new InetSocketAddress("::1", 9090);
    assertThat(status(door.check(call("GET", "/metrics", "Host", "[::1]:9090"), v6))).isZero();
    assertThat(status(door.check(call("GET", "/metrics", "Host", "[0:0:0:0:0:0:0:1]"), v6)))
        .isZero();
  }

  @Test
  void probes_passWhateverTheHost_butOnlyAsReads() throws Exception {
    AdminDoor door = new AdminDoor(List.of(), token(), true);
    for (String p : List.of("/healthz", "/livez", "/readyz")) {
      assertThat(status(door.check(call("GET", p, "Host", "10.9.9.9:9090"), POD))).as(p)
          .isZero();
      assertThat(status(door.check(call("GET", p), POD))).as(p + " without a Host").isZero();
    }
    assertThat(status(door.check(call("POST", "/healthz", "Host", "evil"), POD)))
        .isEqualTo(421);
  }

  @Test
  void stateChanges_fromAnotherOrigin_orSite_areRefused_evenWithTheToken() throws Exception {
    AdminDoor door = new AdminDoor(List.of(), token(), false);
    String auth = "Bearer " + TOKEN;
    String[][] crossSite = {
        {"Origin", "http://attacker.example"},
        {"Origin", "null"},
        {"Origin", "http://127.0.0.1:9091"},
        {"Origin", "https://attacker.example"},
        {"Origin", "http://127.0.0.1:9090.attacker.example"},
        {"Sec-Fetch-Site", "cross-site"},
        {"Sec-Fetch-Site", "same-site"},
        {"Sec-Fetch-Site", "none"},
    };
    for (String method : List.of("POST", "DELETE", "PUT", "PATCH")) {
      for (String[] h : crossSite) {
        AdminDoor.Verdict v = door.check(call(method, "/v1/keys/login/1.2.3.4/reset", "Host",
            "127.0.0.1:9090", "Authorization", auth, h[0], h[1]), LOOPBACK);
        assertThat(status(v)).as(method + " " + h[0] + ": " + h[1]).isEqualTo(403);
        assertThat(v.reason()).isEqualTo("cross-site");
      }
    }
    assertThat(status(door.check(call("POST", "/v1/keys/login/1.2.3.4/reset", "Host",
        "127.0.0.1:9090", "Authorization", auth, "Origin", "http://127.0.0.1:9090",
        "Sec-Fetch-Site", "same-origin"), LOOPBACK))).as("the console itself").isZero();
    assertThat(status(door.check(call("POST", "/v1/keys/login/1.2.3.4/reset", "Host",
        "127.0.0.1:9090", "Authorization", auth, "Origin", "https://127.0.0.1:9090"), LOOPBACK)))
        .as("the console behind a proxy that ends TLS").isZero();
    assertThat(status(door.check(call("POST", "/v1/keys/login/1.2.3.4/reset", "Host",
        "127.0.0.1:9090", "Authorization", auth), LOOPBACK))).as("curl, sluice admin").isZero();
    assertThat(status(door.check(call("POST", "/v1/check", "Host", "127.0.0.1:9090",
        "Sec-Fetch-Site", "cross-site"), LOOPBACK))).as("a decision spends quota")
        .isEqualTo(403);
  }

  @Test
  void reads_fromAnotherSite_areRefusedUnderV1_butThePageMayBeLinked() throws Exception {
    AdminDoor door = new AdminDoor(List.of(), token(), false);
    assertThat(status(door.check(call("GET", "/v1/console/events", "Host", "127.0.0.1:9090",
        "Sec-Fetch-Site", "cross-site"), LOOPBACK))).as("would hold a stream slot")
        .isEqualTo(403);
    assertThat(status(door.check(call("GET", "/v1/bans", "Host", "127.0.0.1:9090",
        "Origin", "http://attacker.example"), LOOPBACK))).isEqualTo(403);
    assertThat(status(door.check(call("GET", "/v1/policy", "Host", "127.0.0.1:9090",
        "Sec-Fetch-Site", "none"), LOOPBACK))).as("typed in the address bar").isZero();
    assertThat(status(door.check(call("GET", "/", "Host", "127.0.0.1:9090",
        "Sec-Fetch-Site", "cross-site"), LOOPBACK))).as("a link to the console").isZero();
  }

  @Test
  void token_everyStateChangeNeedsIt_readsOnlyWhenTheOperatorGaveIt() throws Exception {
    AdminToken t = token();
    AdminDoor generated = new AdminDoor(List.of(), t, false);
    AdminDoor given = new AdminDoor(List.of(), t, true);
    String host = "127.0.0.1:9090";
    String auth = "Bearer " + TOKEN;
    AdminDoor.Verdict anonymousLift = generated.check(call("DELETE", "/v1/bans/login/1.2.3.4",
        "Host", host), LOOPBACK);
    assertThat(status(anonymousLift)).isEqualTo(401);
    assertThat(anonymousLift.reason()).isEqualTo("token");
    assertThat(anonymousLift.refusal().text()).contains("every state change needs it");
    assertThat(status(generated.check(call("POST", "/v1/bans/login/1.2.3.4?duration=1h",
        "Host", host, "Authorization", "Bearer " + TOKEN.substring(1)), LOOPBACK)))
        .isEqualTo(401);
    AdminDoor.Verdict lift = generated.check(call("DELETE", "/v1/bans/login/1.2.3.4", "Host",
        host, "Authorization", auth), LOOPBACK);
    assertThat(status(lift)).isZero();
    assertThat(lift.auth()).matches("token:[0-9a-f]{8}");
    assertThat(generated.check(call("GET", "/v1/bans", "Host", host), LOOPBACK).auth())
        .isEqualTo("anonymous");
    assertThat(status(generated.check(call("POST", "/v1/check", "Host", host), LOOPBACK)))
        .as("a decision, not a state change of the admin's").isZero();

    assertThat(status(given.check(call("GET", "/v1/bans", "Host", host), LOOPBACK)))
        .isEqualTo(401);
    assertThat(status(given.check(call("POST", "/v1/check", "Host", host), LOOPBACK)))
        .isEqualTo(401);
    assertThat(status(given.check(call("GET", "/v1/bans", "Host", host, "Authorization", auth),
        LOOPBACK))).isZero();
    assertThat(status(given.check(call("GET", "/metrics", "Host", host), LOOPBACK)))
        .as("scrapers carry no token").isZero();

    AdminDoor none = new AdminDoor(List.of(), null, false);
    AdminDoor.Verdict refused = none.check(call("POST", "/v1/keys/login/x/reset", "Host", host,
        "Authorization", auth), LOOPBACK);
    assertThat(status(refused)).as("no token could be set up: no state changes")
        .isEqualTo(403);
    assertThat(refused.refusal().text()).contains("--admin-token-file");
    assertThat(status(none.check(call("GET", "/v1/bans", "Host", host), LOOPBACK))).isZero();
  }

  @Test
  void literal_neverLooksANameUp() {
    assertThat(AdminDoor.literal("127.0.0.1")).isNotNull();
    assertThat(AdminDoor.literal("[::1]")).isNotNull();
    assertThat(AdminDoor.literal("999.0.0.1")).isNull();
    assertThat(AdminDoor.literal("[::zz]")).isNull();
    assertThat(AdminDoor.literal("localhost")).isNull();
    assertThat(AdminDoor.literal("1.2.3")).isNull();
  }
}
