package dev.sluice.server.migrate;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Kong's rate-limiting plugin (its declarative configuration: global plugins, services, routes)
 * as a Sluice policy. Kong counts fixed windows per second, minute, hour, day, month and year,
 * aligned to the clock, keyed by consumer, credential, IP, header, path or service; the most
 * specific plugin (route, then service, then global) applies to a route.
 */
final class KongImport {

  private static final Map<String, String> WINDOWS = new LinkedHashMap<>();

  static {
    WINDOWS.put("second", "1s");
    WINDOWS.put("minute", "1m");
    WINDOWS.put("hour", "1h");
    WINDOWS.put("day", "1d");
    WINDOWS.put("month", "30d");
    WINDOWS.put("year", "365d");
  }

  private final Draft d = new Draft();
  private final String file;
  private int count;

  private KongImport(String file) {
    this.file = file;
  }

  static Draft translate(List<Map<String, Object>> docs, String file) {
    return new KongImport(file).run(docs);
  }

  private record KRoute(String name, List<String> hosts, List<String> methods,
      List<String> paths, String rule) {}

  private Draft run(List<Map<String, Object>> docs) {
    d.header.add("Imported by `sluice import` from " + file + " (Kong rate-limiting). Where "
        + "Sluice's meaning differs, a `differs:` comment says how, right above the line.");
    List<KRoute> routes = new ArrayList<>();
    for (Map<String, Object> doc : docs) {
      if ("rate-limiting".equals(YamlDocs.string(doc, "name"))
          || "rate-limiting-advanced".equals(YamlDocs.string(doc, "name"))) {
        String rule = plugin(doc, "plugin");
        routes.add(new KRoute("all", List.of(), List.of(), List.of(), rule));
        continue;
      }
      String global = null;
      Map<String, String> byService = new LinkedHashMap<>();
      Map<String, String> byRoute = new LinkedHashMap<>();
      for (Object po : YamlDocs.list(doc.get("plugins"))) {
        Map<String, Object> p = YamlDocs.map(po);
        if (!isRateLimiting(p)) {
          continue;
        }
        String service = ref(p.get("service"));
        String route = ref(p.get("route"));
        String rule = plugin(p, route != null ? "route " + route : service != null
            ? "service " + service : "global plugin");
        if (route != null) {
          byRoute.put(route, rule);
        } else if (service != null) {
          byService.put(service, rule);
        } else {
          global = rule;
        }
      }
      List<Map<String, Object>> all = new ArrayList<>();
      for (Object so : YamlDocs.list(doc.get("services"))) {
        Map<String, Object> s = YamlDocs.map(so);
        String sname = YamlDocs.string(s, "name");
        String srule = byService.get(sname);
        for (Object po : YamlDocs.list(s.get("plugins"))) {
          if (isRateLimiting(YamlDocs.map(po))) {
            srule = plugin(YamlDocs.map(po), "service " + sname);
          }
        }
        for (Object ro : YamlDocs.list(s.get("routes"))) {
          Map<String, Object> r = YamlDocs.map(ro);
          if (r != null) {
            Map<String, Object> copy = new LinkedHashMap<>(r);
            copy.put("__serviceRule", srule);
            all.add(copy);
          }
        }
      }
      for (Object ro : YamlDocs.list(doc.get("routes"))) {
        Map<String, Object> r = YamlDocs.map(ro);
        if (r != null) {
          Map<String, Object> copy = new LinkedHashMap<>(r);
          copy.put("__serviceRule", byService.get(ref(r.get("service"))));
          all.add(copy);
        }
      }
      for (Map<String, Object> r : all) {
        String rname = YamlDocs.string(r, "name");
        String rule = byRoute.get(rname);
        for (Object po : YamlDocs.list(r.get("plugins"))) {
          if (isRateLimiting(YamlDocs.map(po))) {
            rule = plugin(YamlDocs.map(po), "route " + rname);
          }
        }
        if (rule == null) {
          rule = (String) r.get("__serviceRule");
        }
        if (rule == null) {
          rule = global;
        }
        List<String> paths = new ArrayList<>();
        for (Object p : YamlDocs.list(r.get("paths"))) {
          String path = String.valueOf(p);
          if (path.startsWith("~")) {
            d.problem(file + ": route " + rname, "paths: " + path, "a regular expression "
                + "path; Sluice's routes match path globs");
            continue;
          }
          paths.add(path);
        }
        List<String> hosts = new ArrayList<>();
        for (Object h : YamlDocs.list(r.get("hosts"))) {
          hosts.add(String.valueOf(h).toLowerCase(Locale.ROOT));
        }
        List<String> methods = new ArrayList<>();
        for (Object m : YamlDocs.list(r.get("methods"))) {
          methods.add(String.valueOf(m).toUpperCase(Locale.ROOT));
        }
        routes.add(new KRoute(rname == null ? "route-" + routes.size() : rname, hosts,
            methods, paths, rule));
      }
      if (all.isEmpty() && global != null) {
        routes.add(new KRoute("all", List.of(), List.of(), List.of(), global));
      }
    }
    // Kong prefers routes with hosts, then longer paths.
    List<String[]> flat = new ArrayList<>();
    for (KRoute r : routes) {
      if (r.paths().isEmpty()) {
        flat.add(new String[] {r.name(), ""});
      }
      for (String p : r.paths()) {
        flat.add(new String[] {r.name(), p});
      }
    }
    flat.sort(Comparator.comparing((String[] f) -> byName(routes, f[0]).hosts().isEmpty())
        .thenComparing(f -> -f[1].length()));
    for (String[] f : flat) {
      KRoute r = byName(routes, f[0]);
      Draft.Route out = d.route();
      out.notes.add("kong: route " + r.name() + (f[1].isEmpty() ? "" : " path " + f[1]));
      out.line("name: " + Draft.scalar(r.name() + (f[1].isEmpty() ? "" : " " + f[1])), null);
      if (!r.hosts().isEmpty()) {
        out.line("hosts: " + Draft.list(r.hosts()), null);
      }
      if (!r.methods().isEmpty()) {
        out.line("methods: " + Draft.list(r.methods()), null);
      }
      if (!f[1].isEmpty() && !f[1].equals("/")) {
        String glob = f[1].endsWith("/") ? f[1] + "**" : f[1] + "*/**";
        out.line("paths: [" + Draft.scalar(glob) + "]", f[1].endsWith("/") ? "Kong's prefix "
            + f[1] + " does not take " + f[1].substring(0, f[1].length() - 1) + " itself; this "
            + "glob does" : null);
      }
      out.line("rules: " + (r.rule() == null ? "[]" : "[" + Draft.scalar(r.rule()) + "]"), null);
    }
    return d;
  }

  private static KRoute byName(List<KRoute> routes, String name) {
    for (KRoute r : routes) {
      if (r.name().equals(name)) {
        return r;
      }
    }
    throw new IllegalStateException(name);
  }

  private static boolean isRateLimiting(Map<String, Object> p) {
    String n = YamlDocs.string(p, "name");
    return "rate-limiting".equals(n) || "rate-limiting-advanced".equals(n);
  }

  private static String ref(Object o) {
    if (o == null) {
      return null;
    }
    Map<String, Object> m = YamlDocs.map(o);
    if (m != null) {
      String n = YamlDocs.string(m, "name");
      return n != null ? n : YamlDocs.string(m, "id");
    }
    return String.valueOf(o);
  }

  /** One plugin's rule; null when nothing of it could be translated. */
  private String plugin(Map<String, Object> p, String scope) {
    String where = file + ": " + scope;
    if ("rate-limiting-advanced".equals(YamlDocs.string(p, "name"))) {
      d.problem(where, "rate-limiting-advanced", "Kong Enterprise's plugin (sliding windows per "
          + "window_size); write it as sliding-window limits by hand");
      return null;
    }
    Map<String, Object> c = YamlDocs.map(p, "config");
    if (c == null) {
      c = Map.of();
    }
    String name = "kong-" + (++count);
    Draft.Rule rule = new Draft.Rule(name);
    rule.notes.add("kong: rate-limiting plugin, " + scope);
    String limitBy = c.getOrDefault("limit_by", "consumer").toString();
    switch (limitBy) {
      case "ip" -> { }
      case "header" -> {
        String h = YamlDocs.string(c, "header_name");
        if (h == null || h.isBlank()) {
          d.problem(where, "limit_by: header", "no header_name");
          return null;
        }
        String dim = "header_" + h.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "_");
        d.dimensions.put(dim, new Draft.Line("header:" + h, null));
        rule.line("key: " + dim, "Kong counts requests without " + h + " by their address; "
            + "Sluice counts them together in the rule's sharedBucket");
      }
      default -> {
        d.problem(where, "limit_by: " + limitBy, "Sluice does not know Kong's "
            + (limitBy.equals("path") || limitBy.equals("service") ? "routing" : "consumers and "
            + "credentials") + "; limit by ip, or by a header your authentication sets "
            + "(limit_by: header)");
        return null;
      }
    }
    Object status = c.get("error_code");
    String message = YamlDocs.string(c, "error_message");
    rule.line("status: " + (status == null ? "429" : status), message == null ? null
        : "Kong answers with the message \"" + message + "\"; Sluice's answer has its own JSON "
        + "body (response: section)");
    String policy = c.getOrDefault("policy", "local").toString();
    if (Boolean.FALSE.equals(c.get("fault_tolerant")) && !policy.equals("local")) {
      rule.line("onStoreError: deny", null);
    }
    boolean any = false;
    for (Map.Entry<String, String> w : WINDOWS.entrySet()) {
      Object v = c.get(w.getKey());
      if (v == null) {
        continue;
      }
      String n = String.valueOf(v);
      if (!n.matches("\\d+(\\.0+)?") || Double.parseDouble(n) < 1) {
        d.problem(where, w.getKey() + ": " + n, "expected a whole number > 0");
        continue;
      }
      any = true;
      String differs = "Kong's windows start on the clock (each " + w.getKey() + " at its "
          + "first instant, UTC); Sluice's fixed windows start when its store starts";
      if (w.getKey().equals("month") || w.getKey().equals("year")) {
        differs = "Kong's " + w.getKey() + " is the calendar " + w.getKey() + " (UTC); Sluice's "
            + "window is " + w.getValue() + " from the store's start";
      }
      rule.limit("{type: fixed-window, name: " + w.getKey() + ", limit: "
          + n.replaceAll("\\.0+$", "") + ", window: " + w.getValue() + "}", differs);
    }
    if (!any) {
      d.problem(where, "config", "no second, minute, hour, day, month or year limit");
      return null;
    }
    if (policy.equals("redis")) {
      String host = YamlDocs.string(c, "redis_host");
      Object port = c.get("redis_port");
      Map<String, Object> redis = YamlDocs.map(c, "redis");
      if (redis != null) {
        host = YamlDocs.string(redis, "host");
        port = redis.get("port");
      }
      if (d.store.isEmpty() && host != null) {
        d.storeNotes.add("kong: policy redis, shared by every Kong node; Sluice's instances "
            + "share it the same way (a password goes in the URI, or SLUICE_STORE).");
        d.store.add(new Draft.Line("uri: redis://" + host + ":" + (port == null ? 6379 : port),
            null));
      }
    } else if (policy.equals("cluster")) {
      d.storeNotes.add("kong: policy cluster counted in Kong's database; point Sluice's "
          + "instances at one Redis (store.uri) to share their counts.");
    } else if (d.storeNotes.isEmpty()) {
      d.storeNotes.add("kong: policy local, each Kong node counts alone; so does each Sluice "
          + "instance with its memory store.");
    }
    if (Boolean.TRUE.equals(c.get("hide_client_headers"))) {
      rule.notes.add("kong: hide_client_headers; Sluice's limit headers are set in the "
          + "response: section.");
    }
    d.rules.put(name, rule);
    return name;
  }
}
