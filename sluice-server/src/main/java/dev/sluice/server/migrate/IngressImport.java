package dev.sluice.server.migrate;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * ingress-nginx's rate-limit annotations on Ingress objects as a Sluice policy. ingress-nginx
 * turns them into nginx's limit_req and limit_conn (per controller pod): {@code limit-rps: N} is
 * {@code rate=Nr/s} with {@code burst = N * limit-burst-multiplier} (default 5) and
 * {@code nodelay}, {@code limit-rpm} the same per minute, {@code limit-connections} a
 * {@code limit_conn}, keyed by the client address, with {@code limit-allowlist} (formerly
 * {@code limit-whitelist}) networks left out; refusals are 503 unless its ConfigMap says otherwise.
 */
final class IngressImport {

  static final String PREFIX = "nginx.ingress.kubernetes.io/";
  private static final String PER_POD = "ingress-nginx counts in each controller pod: with R "
      + "replicas behind a load balancer a client got up to R times this; Sluice's instances "
      + "share one count with a Redis store (store.uri), or count apart in memory as the pods did";

  private final Draft d = new Draft();
  private final String file;

  private IngressImport(String file) {
    this.file = file;
  }

  static Draft translate(List<Map<String, Object>> docs, String file) {
    return new IngressImport(file).run(docs);
  }

  private record Path(List<String> hosts, String kind, String path, List<String> rules,
      List<String> allow, String from) {}

  private Draft run(List<Map<String, Object>> docs) {
    d.header.add("Imported by `sluice import` from " + file + " (ingress-nginx annotations). "
        + "Where Sluice's meaning differs, a `differs:` comment says how, right above the line.");
    d.header.add("ingress-nginx keys limits by the client address it sees: set trust: below to "
        + "your load balancer as its ConfigMap did (use-forwarded-headers, proxy-real-ip-cidr).");
    d.header.add("Refusals are 503 as ingress-nginx's defaults (limit-req-status-code, "
        + "limit-conn-status-code); change status: where your ConfigMap set others.");
    List<Path> paths = new ArrayList<>();
    int n = 0;
    for (Map<String, Object> doc : docs) {
      n++;
      if (!"Ingress".equals(YamlDocs.string(doc, "kind"))) {
        continue;
      }
      Map<String, Object> meta = YamlDocs.map(doc, "metadata");
      String name = YamlDocs.string(meta, "name");
      String ns = YamlDocs.string(meta, "namespace");
      String id = (ns == null ? "default" : ns) + "/" + (name == null ? "ingress-" + n : name);
      ingress(id, doc, paths);
    }
    // As ingress-nginx writes its locations: exact paths first, then longer prefixes first.
    paths.sort(Comparator.comparing((Path p) -> p.hosts().isEmpty())
        .thenComparing(p -> !p.kind().equals("Exact"))
        .thenComparing(p -> -p.path().length()));
    for (Path p : paths) {
      List<String> globs = new ArrayList<>();
      String differs = null;
      if (p.kind().equals("Exact")) {
        globs.add(p.path());
      } else if (!p.path().equals("/")) {
        String base = p.path().endsWith("/") ? p.path().substring(0, p.path().length() - 1)
            : p.path();
        if (p.kind().equals("Prefix")) {
          globs.add(base + "/**");
        } else {
          globs.add(p.path().endsWith("/") ? p.path() + "**" : p.path() + "*/**");
          if (p.path().endsWith("/")) {
            differs = "nginx's prefix " + p.path() + " does not take " + base + " itself; this "
                + "glob does";
          }
        }
      }
      String label = (p.hosts().isEmpty() ? "" : p.hosts().get(0)) + p.path() + " " + p.from();
      if (!p.allow().isEmpty()) {
        Draft.Route r = d.route();
        r.notes.add("ingress-nginx: " + p.from() + ", limit-allowlist clients");
        r.line("name: " + Draft.scalar(label + " allowed"), null);
        lines(r, p.hosts(), globs, differs);
        r.line("from: " + Draft.list(p.allow()), null);
        r.line("rules: []", null);
      }
      Draft.Route r = d.route();
      r.notes.add("ingress-nginx: " + p.from() + " " + p.kind() + " " + p.path());
      r.line("name: " + Draft.scalar(label), null);
      lines(r, p.hosts(), globs, differs);
      r.line("rules: " + Draft.list(p.rules()), null);
    }
    if (!d.rules.isEmpty()) {
      d.trustNotes.add("nginx keys a client by its whole address; Sluice's default groups an "
          + "IPv6 client by its /64, so the import asks for 128 bits.");
      d.trust.add(new Draft.Line("ipv6Prefix: 128", null));
    }
    return d;
  }

  private static void lines(Draft.Route r, List<String> hosts, List<String> globs,
      String differs) {
    if (!hosts.isEmpty()) {
      r.line("hosts: " + Draft.list(hosts), null);
    }
    if (!globs.isEmpty()) {
      r.line("paths: " + Draft.list(globs), differs);
    }
  }

  private void ingress(String id, Map<String, Object> doc, List<Path> paths) {
    Map<String, Object> ann = YamlDocs.map(YamlDocs.map(doc, "metadata"), "annotations");
    String where = file + ": Ingress " + id;
    Long rps = null;
    Long rpm = null;
    Long conns = null;
    long multiplier = 5;
    List<String> allow = new ArrayList<>();
    if (ann != null) {
      for (Map.Entry<String, Object> e : ann.entrySet()) {
        if (!e.getKey().startsWith(PREFIX)) {
          continue;
        }
        String a = e.getKey().substring(PREFIX.length());
        String v = String.valueOf(e.getValue()).trim();
        switch (a) {
          case "limit-rps" -> rps = number(where, e.getKey(), v);
          case "limit-rpm" -> rpm = number(where, e.getKey(), v);
          case "limit-connections" -> conns = number(where, e.getKey(), v);
          case "limit-burst-multiplier" -> {
            Long m = number(where, e.getKey(), v);
            multiplier = m == null ? multiplier : m;
          }
          case "limit-whitelist", "limit-allowlist" -> {
            for (String c : v.split(",")) {
              if (!c.isBlank()) {
                allow.add(c.trim());
              }
            }
          }
          case "limit-rate", "limit-rate-after" -> d.problem(where, e.getKey() + ": " + v,
              "a bandwidth limit (bytes per second of a response); Sluice limits requests");
          case "use-regex" -> {
            if (v.equals("true")) {
              d.problem(where, e.getKey() + ": " + v, "regular expression paths; Sluice's "
                  + "routes match path globs");
            }
          }
          case "global-rate-limit", "global-rate-limit-window", "global-rate-limit-key",
              "global-rate-limit-ignored-cidrs" -> d.problem(where, e.getKey() + ": " + v,
              "ingress-nginx's global rate limit (Lua and memcached, a sliding window over "
              + "whole windows): write it as a sliding-window rule by hand");
          default -> {
            if (a.startsWith("limit-")) {
              d.problem(where, e.getKey() + ": " + v, "not a rate-limit annotation this import "
                  + "knows");
            }
          }
        }
      }
    }
    List<String> rules = new ArrayList<>();
    String base = id.replace('/', '-');
    if (rps != null) {
      rules.add(reqRule(base + "-rps", where, "limit-rps: " + rps, rps, "1s", rps * multiplier,
          multiplier));
    }
    if (rpm != null) {
      rules.add(reqRule(base + "-rpm", where, "limit-rpm: " + rpm, rpm, "1m", rpm * multiplier,
          multiplier));
    }
    if (conns != null) {
      Draft.Rule r = d.rule(base + "-connections");
      r.notes.add("ingress-nginx: " + where + " limit-connections: " + conns);
      r.line("status: 503", "ingress-nginx answers 503 with its error page; Sluice's answer has "
          + "this status with Retry-After and a JSON body (or an HTML page for browsers)");
      r.limit("{type: concurrency, max: " + conns + "}", PER_POD);
      rules.add(r.name);
    }
    if (rules.isEmpty() && allow.isEmpty()) {
      return;
    }
    Map<String, Object> spec = YamlDocs.map(doc, "spec");
    boolean any = false;
    for (Object ro : YamlDocs.list(spec == null ? null : spec.get("rules"))) {
      Map<String, Object> rule = YamlDocs.map(ro);
      String host = YamlDocs.string(rule, "host");
      List<String> hosts = host == null ? List.of() : List.of(host.toLowerCase(Locale.ROOT));
      Map<String, Object> http = YamlDocs.map(rule, "http");
      for (Object po : YamlDocs.list(http == null ? null : http.get("paths"))) {
        Map<String, Object> p = YamlDocs.map(po);
        String path = YamlDocs.string(p, "path");
        String kind = YamlDocs.string(p, "pathType");
        paths.add(new Path(hosts, kind == null ? "ImplementationSpecific" : kind,
            path == null ? "/" : path, rules, allow, "Ingress " + id));
        any = true;
      }
      if (http == null) {
        paths.add(new Path(hosts, "Prefix", "/", rules, allow, "Ingress " + id));
        any = true;
      }
    }
    if (!any || (spec != null && spec.get("defaultBackend") != null)) {
      paths.add(new Path(List.of(), "Prefix", "/", rules, allow, "Ingress " + id
          + " default backend"));
    }
  }

  private String reqRule(String name, String where, String annotation, long rate,
      String period, long burst, long multiplier) {
    Draft.Rule r = d.rule(name);
    r.notes.add("ingress-nginx: " + where + " " + annotation + ", burst " + rate + " x "
        + multiplier + " (limit-burst-multiplier), nodelay");
    r.line("status: 503", "ingress-nginx answers 503 with its error page; Sluice's answer has "
        + "this status with Retry-After, limit headers and a JSON body (or an HTML page for "
        + "browsers)");
    r.limit("{type: leaky-bucket, rate: " + rate + ", period: " + period + ", burst: " + burst
        + "}", PER_POD);
    return name;
  }

  private Long number(String where, String key, String v) {
    if (v.matches("\\d{1,9}") && Long.parseLong(v) > 0) {
      return Long.parseLong(v);
    }
    d.problem(where, key + ": " + v, "expected a whole number > 0");
    return null;
  }
}
