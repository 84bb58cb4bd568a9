package dev.sluice.server.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Limit;
import dev.sluice.core.Rule;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyLoader;
import dev.sluice.policy.RlsDomains;
import dev.sluice.server.migrate.NginxAgreementIntegrationTests.Cli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImportCommandTest {

  @TempDir
  Path dir;

  static final String NGINX = String.join("\n",
      "http {",
      "  geo $limit {",
      "    default 1;",
      "    10.0.0.0/8 0;",
      "  }",
      "  map $limit $limit_key {",
      "    0 \"\";",
      "    1 $binary_remote_addr;",
      "  }",
      "  limit_req_zone $limit_key zone=req_zone:10m rate=5r/s;",
      "  limit_req_zone $binary_remote_addr zone=login:10m rate=30r/m;",
      "  limit_req_zone $http_x_api_key zone=apikey:1m rate=100r/s;",
      "  limit_conn_zone $binary_remote_addr zone=addr:10m;",
      "  limit_req_status 429;",
      "  set_real_ip_from 10.1.0.0/16;",
      "  real_ip_header X-Forwarded-For;",
      "  real_ip_recursive on;",
      "  server {",
      "    server_name api.example.com;",
      "    limit_req zone=req_zone burst=10 nodelay;",
      "    location / { proxy_pass http://app; }",
      "    location = /login { limit_req zone=login burst=5; }",
      "    location /api/ {",
      "      limit_req zone=apikey burst=200 delay=50;",
      "      limit_conn addr 10;",
      "    }",
      "    location /static/ { limit_rate 100k; }",
      "    location ~ \\.php$ { limit_req zone=login; }",
      "  }",
      "}",
      "");

  private Cli importing(String name, String text, String... flags) throws Exception {
    Path f = dir.resolve(name);
    Files.writeString(f, text);
    String[] args = new String[flags.length + 2];
    args[0] = "import";
    System.arraycopy(flags, 0, args, 1, flags.length);
    args[args.length - 1] = f.toString();
    return NginxAgreementIntegrationTests.cli(args);
  }

  private static LoadedPolicy load(String policy) throws Exception {
    return PolicyLoader.parse(policy, "imported.yaml", null, Map.of());
  }

  /** Every "differs:" comment is followed by the line it is about, never by a blank or end. */
  private static void assertDiffersAnnotateLines(String policy) {
    List<String> lines = policy.lines().toList();
    int seen = 0;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).trim().startsWith("# differs:")) {
        seen++;
        int j = i + 1;
        while (j < lines.size() && lines.get(j).trim().startsWith("#   ")) {
          j++;
        }
        assertThat(j).as("line after differs at %d", i + 1).isLessThan(lines.size());
        assertThat(lines.get(j).trim()).as("what differs at line %d", i + 1).isNotEmpty()
            .doesNotStartWith("#");
      }
    }
    assertThat(seen).isPositive();
  }

  @Test
  void nginx_translatesZonesLocationsAllowListsAndRealIp_andNamesWhatItCannot() throws Exception {
    Cli r = importing("nginx.conf", NGINX);
    assertThat(r.code()).as(r.err()).isEqualTo(2);
    assertThat(r.err()).contains("nginx.conf:27: limit_rate 100k: cannot translate: a bandwidth "
        + "limit").contains("nginx.conf:28: location ~ \\.php$: cannot translate: a regular "
        + "expression location").contains("4 rules, 6 routes; 2 not translated");
    LoadedPolicy p = load(r.out());
    Map<String, Rule> rules = p.config().policy().rules();
    assertThat(rules).containsOnlyKeys("req_zone", "login", "apikey", "addr");
    Limit login = rules.get("login").limits().get(0);
    assertThat(login.kind()).isEqualTo(Limit.Kind.LEAKY_BUCKET);
    assertThat(login.refill()).isEqualTo(30);
    assertThat(login.capacity()).isEqualTo(6);
    assertThat(rules.get("login").status()).isEqualTo(429);
    assertThat(rules.get("apikey").key()).isEqualTo("http_x_api_key");
    assertThat(rules.get("addr").concurrency()).isEqualTo(10);
    assertThat(r.out()).contains("from: [10.0.0.0/8]", "proxies: [10.1.0.0/16]",
        "headers: [x-forwarded-for]", "ipv6Prefix: 128", "paths: [/login]",
        "paths: [/api/**]", "rules: [apikey, addr]")
        .contains("differs: nginx passes the first 50 requests above the rate at once")
        .contains("differs: nginx holds each request above the rate (without nodelay)")
        .contains("differs: nginx counts limit_req before limit_conn");
    // Exact locations first, then longer prefixes; / last.
    assertThat(r.out().indexOf("paths: [/login]")).isLessThan(r.out().indexOf("/static/**"));
    assertThat(r.out().indexOf("/static/**")).isLessThan(r.out().indexOf("name: api.example"
        + ".com:/\n"));
    assertDiffersAnnotateLines(r.out());
  }

  @Test
  void nginx_syntaxError_namesFileAndLine() throws Exception {
    Cli r = importing("bad.conf", "http {\n  limit_req_zone $binary_remote_addr zone=a:1m "
        + "rate=1r/s\n}\n");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).contains("bad.conf:3: unexpected \"}\", expecting \";\"");
  }

  @Test
  void nginx_unknownZoneAndUnknownKey_areNamed() throws Exception {
    Cli r = importing("n.conf", String.join("\n",
        "limit_req_zone $binary_remote_addr$uri zone=odd:1m rate=1r/s;",
        "server {",
        "  location / { limit_req zone=nope; }",
        "  location /x/ { limit_req zone=odd; }",
        "}", ""), "--from", "nginx");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("n.conf:3: limit_req zone=nope: cannot translate: zone nope "
        + "has no limit_req_zone").contains("n.conf:1: limit_req_zone $binary_remote_addr$uri "
        + "zone=odd:1m rate=1r/s: cannot translate: the key $binary_remote_addr$uri");
    load(r.out());
  }

  @Test
  void nginx_includes_areFollowed() throws Exception {
    Files.writeString(dir.resolve("zones.conf"),
        "limit_req_zone $binary_remote_addr zone=one:1m rate=2r/s;\n");
    Cli r = importing("main.conf", "http {\n  include zones.conf;\n  server { limit_req "
        + "zone=one burst=3; }\n}\n");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("zones.conf:1").contains("{type: leaky-bucket, rate: 2, period:"
        + " 1s, burst: 3}");
    load(r.out());
  }

  static final String INGRESS = String.join("\n",
      "apiVersion: networking.k8s.io/v1",
      "kind: Ingress",
      "metadata:",
      "  name: shop",
      "  namespace: web",
      "  annotations:",
      "    nginx.ingress.kubernetes.io/limit-rps: \"5\"",
      "    nginx.ingress.kubernetes.io/limit-rpm: \"100\"",
      "    nginx.ingress.kubernetes.io/limit-burst-multiplier: \"3\"",
      "    nginx.ingress.kubernetes.io/limit-connections: \"4\"",
      "    nginx.ingress.kubernetes.io/limit-allowlist: \"10.0.0.0/8, 192.168.1.7\"",
      "    nginx.ingress.kubernetes.io/limit-rate: \"100\"",
      "spec:",
      "  rules:",
      "    - host: shop.example.com",
      "      http:",
      "        paths:",
      "          - path: /api",
      "            pathType: Prefix",
      "            backend: {service: {name: api, port: {number: 80}}}",
      "          - path: /checkout",
      "            pathType: Exact",
      "            backend: {service: {name: api, port: {number: 80}}}",
      "---",
      "apiVersion: v1",
      "kind: Service",
      "metadata: {name: api}",
      "");

  @Test
  void ingressNginx_annotations_becomeRulesPerIngress_andRoutesPerPath() throws Exception {
    Cli r = importing("ingress.yaml", INGRESS);
    assertThat(r.code()).as(r.err()).isEqualTo(2);
    assertThat(r.err()).contains("Ingress web/shop: nginx.ingress.kubernetes.io/limit-rate: "
        + "100: cannot translate: a bandwidth limit");
    LoadedPolicy p = load(r.out());
    Map<String, Rule> rules = p.config().policy().rules();
    assertThat(rules).containsOnlyKeys("web-shop-rps", "web-shop-rpm", "web-shop-connections");
    assertThat(rules.get("web-shop-rps").limits().get(0).capacity()).as("burst 5 x 3, + 1")
        .isEqualTo(16);
    assertThat(rules.get("web-shop-rpm").limits().get(0).period().toMinutes()).isEqualTo(1);
    assertThat(rules.get("web-shop-connections").concurrency()).isEqualTo(4);
    assertThat(r.out()).contains("hosts: [shop.example.com]", "paths: [/checkout]",
        "paths: [/api/**]", "from: [10.0.0.0/8, 192.168.1.7]")
        .contains("differs: ingress-nginx counts in each controller pod");
    assertThat(r.out().indexOf("paths: [/checkout]")).isLessThan(r.out().indexOf("/api/**"));
    assertDiffersAnnotateLines(r.out());
  }

  static final String ENVOY = String.join("\n",
      "domain: messaging",
      "descriptors:",
      "  # 5 marketing messages a day per number",
      "  - key: message_type",
      "    value: marketing",
      "    descriptors:",
      "      - key: to_number",
      "        rate_limit: {unit: day, requests_per_unit: 5}",
      "  - key: to_number",
      "    rate_limit:",
      "      unit: day",
      "      requests_per_unit: 100",
      "    shadow_mode: true",
      "");

  @Test
  void envoyRatelimit_becomesTheDomainsSection_unchanged() throws Exception {
    Cli r = importing("config.yaml", ENVOY);
    assertThat(r.code()).as(r.err()).isZero();
    LoadedPolicy p = load(r.out());
    assertThat(r.out()).contains("domains:\n  - domain: messaging\n    descriptors:")
        .contains("sluice serve --rls");
    String[] kv = {"message_type", "marketing", "to_number", "1"};
    RlsDomains.Entries entries = new RlsDomains.Entries() {
      public int size() {
        return 2;
      }

      public String key(int i) {
        return kv[2 * i];
      }

      public String value(int i) {
        return kv[2 * i + 1];
      }
    };
    assertThat(p.config().domains().match("messaging", entries).requestsPerUnit()).isEqualTo(5);
  }

  static final String KONG = String.join("\n",
      "_format_version: \"3.0\"",
      "services:",
      "  - name: api",
      "    url: http://api:8080",
      "    plugins:",
      "      - name: rate-limiting",
      "        config: {minute: 60, hour: 1000, limit_by: ip, policy: redis,",
      "                 redis: {host: redis.internal, port: 6380}, error_message: slow down}",
      "    routes:",
      "      - name: api-v1",
      "        paths: [/v1]",
      "        methods: [GET, POST]",
      "      - name: admin",
      "        paths: [/admin/]",
      "        plugins:",
      "          - name: rate-limiting",
      "            config: {second: 2, limit_by: consumer}",
      "      - name: keys",
      "        paths: [/keys]",
      "        plugins:",
      "          - name: rate-limiting",
      "            config: {second: 5, limit_by: header, header_name: X-Api-Key}",
      "");

  @Test
  void kong_rateLimitingPlugins_becomeFixedWindows_mostSpecificPluginWins() throws Exception {
    Cli r = importing("kong.yaml", KONG);
    assertThat(r.code()).as(r.err()).isEqualTo(2);
    assertThat(r.err()).contains("route admin: limit_by: consumer: cannot translate");
    LoadedPolicy p = load(r.out());
    Map<String, Rule> rules = p.config().policy().rules();
    assertThat(rules).hasSize(2);
    Rule service = rules.values().stream().filter(x -> x.limits().size() == 2).findFirst()
        .orElseThrow();
    assertThat(service.limits()).extracting(Limit::kind).containsOnly(Limit.Kind.FIXED_WINDOW);
    assertThat(service.limits()).extracting(Limit::capacity).containsExactly(60L, 1000L);
    assertThat(r.out()).contains("uri: redis://redis.internal:6380", "paths: [/v1*/**]",
        "methods: [GET, POST]", "key: header_x_api_key")
        .contains("differs: Kong's windows start on the clock")
        .contains("differs: Kong answers with the message \"slow down\"");
    assertDiffersAnnotateLines(r.out());
  }

  @Test
  void unknownFormat_andBadFlags_areUsageErrors() throws Exception {
    Cli r = importing("x.yaml", "a: 1\n");
    assertThat(r.code()).isEqualTo(1);
    assertThat(r.err()).contains("cannot tell its format");
    Cli bad = NginxAgreementIntegrationTests.cli("import", "--from", "haproxy", "x");
    assertThat(bad.code()).isEqualTo(64);
    assertThat(bad.err()).contains("--from : haproxy (expected: one of auto, nginx, "
        + "ingress-nginx, envoy, kong)");
    Cli none = NginxAgreementIntegrationTests.cli("import");
    assertThat(none.code()).isEqualTo(64);
  }

  @Test
  void outFile_isWritten_andHelpListsTheCommand() throws Exception {
    Path out = dir.resolve("policy.yaml");
    Cli r = importing("e.yaml", ENVOY, "--out", out.toString());
    assertThat(r.code()).isZero();
    assertThat(r.out()).isEmpty();
    load(Files.readString(out));
    assertThat(NginxAgreementIntegrationTests.cli("--help").out()).contains("import");
    assertThat(NginxAgreementIntegrationTests.cli("help", "import").out())
        .contains("--from FORMAT", "--out FILE");
  }
}
