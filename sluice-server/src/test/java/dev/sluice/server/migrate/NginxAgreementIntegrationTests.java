package dev.sluice.server.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.server.Main;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real nginx against its import: Debian's nginx runs a configuration with limit_req (nodelay,
 * delay=N and the default delaying burst), limit_conn, a geo/map allow list and realip; generated
 * traffic (people, bursts, a crowd behind one address, floods, an allow-listed office) goes to
 * it; then {@code sluice import} translates the same file, {@code sluice replay} decides nginx's
 * own access log ({@code $msec}, {@code $request_time}, statuses) with the imported policy, and
 * the verdicts are compared request by request.
 *
 * <p>Requests one replay cannot tell apart (same client, same path, same millisecond) are
 * compared as a group: nginx allowed {@code a} of them and replay {@code b}, {@code |a - b|}
 * differ; every other request is compared alone. nginx runs with its clock made exact
 * (exact-clock.c): stock nginx decides on a 4 ms clock its log does not carry, and the stock run
 * measures what that costs. Each trace's numbers and differing requests go to
 * {@code target/nginx-agreement/}, which docs/MIGRATING.md quotes.
 */
class NginxAgreementIntegrationTests {

  static final String FORMAT = "$msec $request_time $realip_remote_addr \"$http_x_forwarded_for\""
      + " \"$request\" $status";

  static final String CONFIG = String.join("\n",
      "worker_processes 1;",
      "pid DIR/nginx.pid;",
      "events { worker_connections 8192; }",
      "http {",
      "  log_format replay '" + FORMAT + "';",
      "  access_log DIR/access.log replay;",
      "  client_body_temp_path DIR/tmp/body;",
      "  proxy_temp_path DIR/tmp/proxy;",
      "  fastcgi_temp_path DIR/tmp/fastcgi;",
      "  uwsgi_temp_path DIR/tmp/uwsgi;",
      "  scgi_temp_path DIR/tmp/scgi;",
      "  keepalive_requests 1000000;",
      "  keepalive_timeout 120s;",
      "  set_real_ip_from 127.0.0.1;",
      "  real_ip_header X-Forwarded-For;",
      "  geo $limited {",
      "    default 1;",
      "    10.0.0.0/8 0;",
      "  }",
      "  map $limited $limit_key {",
      "    0 \"\";",
      "    1 $binary_remote_addr;",
      "  }",
      "  limit_req_zone $limit_key zone=api:10m rate=10r/s;",
      "  limit_req_zone $binary_remote_addr zone=login:10m rate=30r/m;",
      "  limit_req_zone $binary_remote_addr zone=search:10m rate=5r/s;",
      "  limit_conn_zone $binary_remote_addr zone=addr:10m;",
      "  limit_req_status 429;",
      "  limit_conn_status 503;",
      "  upstream slow {",
      "    server 127.0.0.1:UPSTREAM;",
      "    keepalive 64;",
      "  }",
      "  server {",
      "    listen 127.0.0.1:PORT;",
      "    root DIR/www;",
      "    location /api/ {",
      "      limit_req zone=api burst=20 nodelay;",
      "      try_files /ok.txt =404;",
      "    }",
      "    location = /login {",
      "      limit_req zone=login burst=5;",
      "      try_files /ok.txt =404;",
      "    }",
      "    location /search/ {",
      "      limit_req zone=search burst=10 delay=4;",
      "      try_files /ok.txt =404;",
      "    }",
      "    location /download/ {",
      "      limit_conn addr 3;",
      "      proxy_pass http://slow;",
      "      proxy_http_version 1.1;",
      "      proxy_set_header Connection \"\";",
      "    }",
      "    location / {",
      "      try_files /ok.txt =404;",
      "    }",
      "  }",
      "}",
      "");

  private static HttpServer upstream;
  private static final Path REPORTS = Path.of("target", "nginx-agreement");

  @TempDir
  static Path tmp;

  @BeforeAll
  static void slowUpstream() throws Exception {
    // /download/?ms=N answers after N ms: how long limit_conn's connection is held.
    upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 512);
    upstream.setExecutor(Executors.newCachedThreadPool());
    upstream.createContext("/", ex -> {
      String q = ex.getRequestURI().getQuery();
      long ms = q != null && q.startsWith("ms=") ? Long.parseLong(q.substring(3)) : 0;
      try {
        Thread.sleep(ms);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      byte[] body = "ok\n".getBytes(StandardCharsets.US_ASCII);
      ex.sendResponseHeaders(200, body.length);
      ex.getResponseBody().write(body);
      ex.close();
    });
    upstream.start();
    Files.createDirectories(REPORTS);
  }

  @AfterAll
  static void stopUpstream() {
    upstream.stop(0);
  }

  /** People, bursts, a crowd behind one address, a flood and an allow-listed office on /api/. */
  static void crowd(Traffic t, Random rnd) {
    for (String ip : Traffic.addresses("198.51.", 120)) {
      t.person(rnd, ip, "/api/items", 0, 8000, 300);
    }
    for (int i = 0; i < 40; i++) {
      t.person(rnd, "203.0.113.50", "/api/items", 0, 8000, 1000);   // a school behind NAT
    }
    for (String ip : Traffic.addresses("192.0.", 20)) {
      for (int b = 0; b < 3; b++) {
        t.burst(rnd.nextInt(8000), ip, "/api/items", 10 + rnd.nextInt(30));
      }
    }
    t.flood("203.0.113.66", "/api/items", 500, 7500, 4);
    t.flood("10.1.2.3", "/api/items", 1000, 6000, 2);
  }

  /** limit_req with a delaying burst (/login) and delay=4 (/search/): bursts and people. */
  static void delays(Traffic t, Random rnd) {
    for (String ip : Traffic.addresses("198.51.", 60)) {
      for (int b = 0; b < 3; b++) {
        t.burst(rnd.nextInt(8000), ip, "/login", 2 + rnd.nextInt(9));
      }
    }
    for (String ip : Traffic.addresses("192.0.", 60)) {
      t.person(rnd, ip, "/search/q", 0, 8000, 150);
      t.burst(rnd.nextInt(8000), ip, "/search/q", 5 + rnd.nextInt(15));
    }
    t.flood("203.0.113.66", "/search/q", 2000, 6000, 3);
  }

  /** limit_conn 3 on /download/: clients with 1 to 6 parallel downloads of 20 to 400 ms. */
  static void downloads(Traffic t, Random rnd) {
    for (String ip : Traffic.addresses("198.51.", 80)) {
      for (long at = rnd.nextInt(500); at < 8000; at += 200 + rnd.nextInt(800)) {
        int n = 1 + rnd.nextInt(6);
        for (int i = 0; i < n; i++) {
          t.at(at + rnd.nextInt(30), ip, "/download/f?ms=" + (20 + rnd.nextInt(380)));
        }
      }
    }
  }

  @Test
  void crowdOnApi_agreesWithNginx() throws Exception {
    assertAgreement(run("crowd", true, NginxAgreementIntegrationTests::crowd, 1));
  }

  @Test
  void delayingBursts_agreeWithNginx() throws Exception {
    assertAgreement(run("delays", true, NginxAgreementIntegrationTests::delays, 2));
  }

  /**
   * Held to 99.5%, not 99.9%: a download that ends in the millisecond another of its client's
   * arrives is an order the log cannot give (nginx went either way), and a tie decided the other
   * way changes the leases of what follows. Measured 99.69% to 99.97% (docs/MIGRATING.md).
   */
  @Test
  void limitConn_withDurationsInTheLog_agreesWithNginx() throws Exception {
    assertAgreement(run("limit-conn", true, NginxAgreementIntegrationTests::downloads, 3), 0.995);
  }

  /**
   * Stock nginx (its 4 ms clock): the same crowd. The log cannot say at which tick nginx
   * decided, so requests at the bucket's edge differ; measured, and bounded well below exact.
   */
  @Test
  void crowdOnApi_stockClock_isMeasured() throws Exception {
    Result r = run("crowd-stock-clock", false, NginxAgreementIntegrationTests::crowd, 1);
    assertThat(r.total).isGreaterThan(5000);
    assertThat(r.agreement()).as(r.summary()).isGreaterThan(0.9);
  }

  private static void assertAgreement(Result r) {
    assertAgreement(r, 0.999);
  }

  private static void assertAgreement(Result r, double atLeast) {
    assertThat(r.total).as("requests in the trace").isGreaterThan(3000);
    assertThat(r.nginxRefused).as("nginx refused some").isGreaterThan(r.total / 50);
    assertThat(r.nginxAllowed).as("nginx allowed some").isGreaterThan(r.total / 50);
    assertThat(r.agreement()).as(r.summary()).isGreaterThanOrEqualTo(atLeast);
  }

  interface Plan {
    void plan(Traffic t, Random rnd);
  }

  record Result(String trace, int total, int nginxAllowed, int nginxRefused, int differ,
      int differStrict, int sent, int failed) {
    double agreement() {
      return 1 - (double) differ / total;
    }

    String summary() {
      return String.format(java.util.Locale.ROOT, "%s: %d requests (nginx: %d allowed, %d "
          + "refused), %d differ (%.4f%% agree; %d differ compared line by line), %d sent, %d "
          + "failed", trace, total, nginxAllowed, nginxRefused, differ, 100 * agreement(),
          differStrict, sent, failed);
    }
  }

  private Result run(String trace, boolean exactClock, Plan plan, long seed) throws Exception {
    Path dir = Files.createDirectories(tmp.resolve(trace));
    Files.createDirectories(dir.resolve("www"));
    Files.writeString(dir.resolve("www/ok.txt"), "ok\n");
    Path clock = exactClock ? NginxServer.exactClock(tmp) : null;
    String config = CONFIG.replace("UPSTREAM", Integer.toString(upstream.getAddress().getPort()));
    int sent;
    int failed;
    Path log;
    Path conf;
    try (NginxServer nginx = NginxServer.start(dir, config, clock);
        Traffic t = new Traffic(nginx.port)) {
      plan.plan(t, new Random(seed));
      t.await(60_000);
      sent = t.sent.get();
      failed = t.failed.get();
      log = nginx.accessLog();
      conf = nginx.config;
    }
    // The import of the very file nginx ran.
    Path policy = dir.resolve("policy.yaml");
    Cli imp = cli("import", "--out", policy.toString(), conf.toString());
    assertThat(imp.code).as(imp.err).isZero();
    Path verdicts = dir.resolve("verdicts.tsv");
    Cli replay = cli("replay", "--config", policy.toString(), "--format", "nginx:" + FORMAT,
        "--verdicts", verdicts.toString(), "--quiet", log.toString());
    assertThat(replay.code).as(replay.err).isZero();
    return compare(trace, Files.readAllLines(log), Files.readAllLines(verdicts), sent, failed,
        Files.readString(policy));
  }

  record Cli(int code, String out, String err) {}

  static Cli cli(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = new Main(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), Map.of()).run(args);
    return new Cli(code, out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8));
  }

  /** One access log line: when nginx decided it, who, what, and what nginx answered. */
  record Line(long number, long startMs, long endMs, String client, String path, int status,
      String raw) {
    boolean nginxRefused() {
      return status == 429 || status == 503;
    }
  }

  static Line parse(long number, String raw) {
    String[] f = raw.split(" ");
    long end = Math.round(Double.parseDouble(f[0]) * 1000);
    long took = Math.round(Double.parseDouble(f[1]) * 1000);
    String client = f[3].replace("\"", "");
    String target = f[5];
    int q = target.indexOf('?');
    return new Line(number, end - took, end, client, q < 0 ? target : target.substring(0, q),
        Integer.parseInt(f[f.length - 1]), raw);
  }

  private static Result compare(String trace, List<String> log, List<String> verdicts, int sent,
      int failed, String policy) throws Exception {
    assertThat(verdicts).as("one verdict per log line").hasSize(log.size());
    // Verdicts come in the order replay decided the lines: the order requests arrived.
    String[][] byLine = new String[log.size()][];
    for (String v : verdicts) {
      String[] f = v.split("\t");
      byLine[Integer.parseInt(f[0]) - 1] = f;
    }
    Map<String, int[]> groups = new LinkedHashMap<>();
    Map<String, List<String>> members = new LinkedHashMap<>();
    List<Line> lines = new ArrayList<>();
    int nginxAllowed = 0;
    int nginxRefused = 0;
    int strict = 0;
    for (int i = 0; i < log.size(); i++) {
      Line l = parse(i + 1, log.get(i));
      lines.add(l);
      String[] v = byLine[i];
      assertThat(v).as("a verdict for line %d", i + 1).isNotNull();
      assertThat(l.status()).as("an answer of nginx's own: %s", l.raw())
          .isIn(200, 429, 503);
      boolean sluiceRefused = v[1].equals("refused");
      boolean nginxRef = l.nginxRefused();
      nginxAllowed += nginxRef ? 0 : 1;
      nginxRefused += nginxRef ? 1 : 0;
      strict += sluiceRefused != nginxRef ? 1 : 0;
      String key = l.startMs() + " " + l.client() + " " + l.path();
      int[] g = groups.computeIfAbsent(key, k -> new int[2]);
      g[0] += nginxRef ? 0 : 1;
      g[1] += sluiceRefused ? 0 : 1;
      members.computeIfAbsent(key, k -> new ArrayList<>()).add(l.raw() + "  ->  sluice "
          + v[1] + (v[2].equals("-") ? "" : " by " + v[2]));
    }
    int differ = 0;
    StringBuilder diffs = new StringBuilder();
    for (Map.Entry<String, int[]> e : groups.entrySet()) {
      int d = Math.abs(e.getValue()[0] - e.getValue()[1]);
      if (d > 0) {
        differ += d;
        diffs.append("group ").append(e.getKey()).append(": nginx allowed ")
            .append(e.getValue()[0]).append(", sluice ").append(e.getValue()[1]).append('\n');
        for (String m : members.get(e.getKey())) {
          diffs.append("  ").append(m).append('\n');
        }
        // The client's requests in flight then (what limit_conn counted).
        String[] k = e.getKey().split(" ");
        long at = Long.parseLong(k[0]);
        for (Line o : lines) {
          if (o.client().equals(k[1]) && o.startMs() < at && o.endMs() >= at - 2) {
            diffs.append("    earlier, ending ").append(o.endMs() - at).append(" ms after: ")
                .append(o.raw()).append('\n');
          }
        }
      }
    }
    Result r = new Result(trace, log.size(), nginxAllowed, nginxRefused, differ, strict, sent,
        failed);
    Files.writeString(REPORTS.resolve(trace + ".txt"), r.summary() + "\n\n" + diffs
        + "\nimported policy:\n" + policy);
    System.out.println("nginx agreement " + r.summary());
    return r;
  }
}
