package dev.sluice.server.migrate;

import dev.sluice.server.migrate.NginxConfig.Directive;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * nginx's request limits as a Sluice policy: {@code limit_req_zone} and {@code limit_req} become
 * leaky-bucket rules (nginx's own arithmetic), {@code limit_conn} concurrency rules, locations
 * routes (exact paths first, then longer prefixes first, as nginx picks them), {@code geo}/{@code
 * map} allow lists routes for those clients without the rules they skip, and {@code realip} the
 * {@code trust} section. What cannot be carried over is a {@link Draft.Problem} naming the
 * directive and its file and line.
 */
final class NginxImport {

  /** A {@code limit_req_zone}: its key, its rate per second or per minute. */
  record Zone(String name, String key, long rate, boolean perMinute, String size, Directive at) {}

  /** What a zone's key becomes: a Sluice key (null for the client address) and its allow list. */
  record Key(String key, List<String> allowed, String differs) {}

  /** The limits in force at one level (http, server, location), after nginx's inheritance. */
  record Level(List<Directive> req, List<Directive> conn, int reqStatus, int connStatus,
      boolean reqDryRun, boolean connDryRun) {

    boolean limited() {
      return !req.isEmpty() || !conn.isEmpty();
    }
  }

  /** One translated rule with the networks that skip it (nginx's empty key). */
  record Applied(String rule, List<String> allowed) {}

  private static final Pattern RATE = Pattern.compile("rate=(\\d+)r/([sm])");
  private static final Pattern ZONE = Pattern.compile("zone=([^:\\s]+)(?::(\\S+))?");
  private static final Set<String> CLIENT = Set.of("$binary_remote_addr", "$remote_addr");
  private static final int NGINX_DEFAULT_STATUS = 503;

  private final Draft d = new Draft();
  private final Map<String, Zone> zones = new LinkedHashMap<>();
  private final Map<String, Directive> connZones = new LinkedHashMap<>();
  private final Map<String, Directive> geos = new LinkedHashMap<>();
  private final Map<String, Directive> maps = new LinkedHashMap<>();
  private final Map<String, Key> keys = new LinkedHashMap<>();
  private final Set<String> usedZones = new LinkedHashSet<>();
  private final Map<String, Set<String>> zoneRules = new LinkedHashMap<>();
  private boolean keyedByAddress;

  private NginxImport() {}

  static Draft translate(List<Directive> config, String source) {
    return new NginxImport().run(config, source);
  }

  private Draft run(List<Directive> config, String source) {
    d.header.add("Imported by `sluice import` from " + source + " (nginx). Where Sluice's "
        + "meaning differs, a `differs:` comment says how, right above the line.");
    List<Directive> http = config;
    for (Directive top : config) {
      if (top.name().equals("http") && top.block() != null) {
        http = top.block();
      }
    }
    collect(http);
    Level base = level(http, new Level(List.of(), List.of(), NGINX_DEFAULT_STATUS,
        NGINX_DEFAULT_STATUS, false, false));
    realIp(http, "http");
    List<Directive> servers = http.stream().filter(x -> x.name().equals("server")
        && x.block() != null).toList();
    if (servers.isEmpty() && base.limited()) {
      routes(List.of(), "http", List.of(), base, null);
    }
    // Servers with names first; the default server (the first, or default_server) last,
    // without hosts, as it answers every other Host.
    Directive fallback = null;
    for (Directive s : servers) {
      if (fallback == null || s.block().stream().anyMatch(x -> x.name().equals("listen")
          && x.args().contains("default_server"))) {
        fallback = s;
      }
    }
    for (Directive s : servers) {
      if (s != fallback) {
        server(s, base, false);
      }
    }
    if (fallback != null) {
      server(fallback, base, true);
    }
    if (keyedByAddress) {
      d.trustNotes.add("nginx keys a client by its whole address; Sluice's default groups an "
          + "IPv6 client by its /64, so the import asks for 128 bits.");
      d.trust.add(new Draft.Line("ipv6Prefix: 128", null));
    }
    for (Map.Entry<String, Set<String>> e : zoneRules.entrySet()) {
      if (e.getValue().size() > 1) {
        for (String r : e.getValue()) {
          d.rules.get(r).notes.add("differs: nginx's zone " + e.getKey() + " is one count for "
              + "every limit_req naming it; Sluice counts each of " + e.getValue() + " apart "
              + "(their burst, delay, status or dry run differ)");
        }
      }
    }
    for (String z : zones.keySet()) {
      if (!usedZones.contains(z)) {
        Zone zone = zones.get(z);
        d.header.add("limit_req_zone " + z + " (" + zone.at().where() + ") is used by no "
            + "limit_req: not imported.");
      }
    }
    return d;
  }

  // --- http-level declarations ------------------------------------------------------------

  private void collect(List<Directive> http) {
    for (Directive x : http) {
      switch (x.name()) {
        case "limit_req_zone" -> zone(x);
        case "limit_conn_zone" -> {
          String name = zoneName(x);
          if (name != null) {
            connZones.put(name, x);
          }
        }
        case "geo" -> {
          if (x.block() != null && !x.args().isEmpty()) {
            geos.put(x.args().get(x.args().size() - 1), x);
          }
        }
        case "map" -> {
          if (x.block() != null && x.args().size() == 2) {
            maps.put(x.args().get(1), x);
          }
        }
        case "limit_rate", "limit_rate_after" -> d.problem(x.where(), x.text(),
            "a bandwidth limit (bytes per second of a response); Sluice limits requests");
        default -> { }
      }
    }
  }

  private void zone(Directive x) {
    String name = zoneName(x);
    String rate = null;
    for (String a : x.args()) {
      if (a.startsWith("rate=")) {
        rate = a;
      } else if (a.equals("sync")) {
        d.problem(x.where(), x.text(), "'sync' shares a zone across an NGINX Plus cluster; "
            + "share Sluice's counts with a Redis store instead (store.uri)");
        return;
      }
    }
    Matcher m = rate == null ? null : RATE.matcher(rate);
    if (name == null || m == null || !m.matches() || x.args().size() < 3) {
      d.problem(x.where(), x.text(), "expected limit_req_zone KEY zone=NAME:SIZE rate=Nr/s "
          + "(or r/m)");
      return;
    }
    String size = null;
    Matcher z = zone(x.args());
    if (z != null) {
      size = z.group(2);
    }
    zones.put(name, new Zone(name, x.args().get(0), Long.parseLong(m.group(1)),
        m.group(2).equals("m"), size, x));
  }

  private static Matcher zone(List<String> args) {
    for (String a : args) {
      Matcher m = ZONE.matcher(a);
      if (m.matches()) {
        return m;
      }
    }
    return null;
  }

  private static String zoneName(Directive x) {
    Matcher m = zone(x.args());
    return m == null ? null : m.group(1);
  }

  // --- levels and inheritance ---------------------------------------------------------------

  /** nginx's merge: a level's limit_req (limit_conn) list replaces the outer one when present. */
  private Level level(List<Directive> block, Level outer) {
    List<Directive> req = new ArrayList<>();
    List<Directive> conn = new ArrayList<>();
    int reqStatus = outer.reqStatus();
    int connStatus = outer.connStatus();
    boolean reqDry = outer.reqDryRun();
    boolean connDry = outer.connDryRun();
    for (Directive x : block) {
      switch (x.name()) {
        case "limit_req" -> req.add(x);
        case "limit_conn" -> conn.add(x);
        case "limit_req_status" -> reqStatus = status(x, reqStatus);
        case "limit_conn_status" -> connStatus = status(x, connStatus);
        case "limit_req_dry_run" -> reqDry = onOff(x, reqDry);
        case "limit_conn_dry_run" -> connDry = onOff(x, connDry);
        default -> { }
      }
    }
    return new Level(req.isEmpty() ? outer.req() : req, conn.isEmpty() ? outer.conn() : conn,
        reqStatus, connStatus, reqDry, connDry);
  }

  private int status(Directive x, int dflt) {
    if (x.args().size() == 1 && x.args().get(0).matches("[45]\\d\\d")) {
      return Integer.parseInt(x.args().get(0));
    }
    d.problem(x.where(), x.text(), "expected a status 400..599");
    return dflt;
  }

  private boolean onOff(Directive x, boolean dflt) {
    if (x.args().size() == 1 && (x.args().get(0).equals("on") || x.args().get(0).equals("off"))) {
      return x.args().get(0).equals("on");
    }
    d.problem(x.where(), x.text(), "expected on or off");
    return dflt;
  }

  // --- servers and locations ----------------------------------------------------------------

  private void server(Directive server, Level base, boolean fallback) {
    List<String> names = new ArrayList<>();
    for (Directive x : server.block()) {
      if (x.name().equals("server_name")) {
        for (String n : x.args()) {
          if (n.startsWith("~")) {
            d.problem(x.where(), x.text(), "a regular expression server name; Sluice's routes "
                + "match host names and *.domain wildcards");
          } else if (!n.isEmpty() && !n.equals("_") && !n.equals("\"\"")) {
            names.add(n.startsWith(".") ? "*" + n : n);
          }
        }
      }
      if (x.name().equals("limit_rate") || x.name().equals("limit_rate_after")) {
        d.problem(x.where(), x.text(), "a bandwidth limit (bytes per second of a response); "
            + "Sluice limits requests");
      }
    }
    realIp(server.block(), "server " + (names.isEmpty() ? "" : names.get(0) + " ")
        + "(" + server.where() + ")");
    Level level = level(server.block(), base);
    List<Directive> locations = new ArrayList<>();
    flatten(server.block(), level, locations, new ArrayList<>());
    routes(fallback ? List.of() : names, names.isEmpty() ? "default" : names.get(0), locations,
        level, server);
  }

  /** Locations with their effective levels, nested ones included (nginx inherits into them). */
  private final Map<Directive, Level> levels = new LinkedHashMap<>();

  private void flatten(List<Directive> block, Level outer, List<Directive> out,
      List<Directive> seen) {
    for (Directive x : block) {
      if (x.name().equals("location") && x.block() != null) {
        Level l = level(x.block(), outer);
        levels.put(x, l);
        out.add(x);
        for (Directive y : x.block()) {
          if (y.name().equals("limit_rate") || y.name().equals("limit_rate_after")) {
            d.problem(y.where(), y.text(), "a bandwidth limit (bytes per second of a "
                + "response); Sluice limits requests");
          }
          if (y.name().equals("if") && y.block() != null && y.block().stream()
              .anyMatch(z -> z.name().startsWith("limit_"))) {
            d.problem(y.where(), y.text(), "limits inside 'if'; Sluice's routes match methods, "
                + "paths, hosts, headers and client networks");
          }
        }
        flatten(x.block(), l, out, seen);
      }
    }
  }

  private record Loc(String kind, String path, Directive at) {}

  private void routes(List<String> hosts, String label, List<Directive> locations,
      Level serverLevel, Directive server) {
    List<Loc> locs = new ArrayList<>();
    // A regex location takes requests from the prefix ones; it matters only where its limits
    // are not the same as theirs.
    Set<List<Directive>> distinct = new LinkedHashSet<>();
    distinct.add(limits(serverLevel));
    for (Directive x : locations) {
      distinct.add(limits(levels.get(x)));
    }
    boolean anyLimited = distinct.size() > 1;
    for (Directive x : locations) {
      List<String> a = x.args();
      String kind = a.size() == 2 ? a.get(0) : "";
      String path = a.isEmpty() ? "" : a.get(a.size() - 1);
      if (path.startsWith("@")) {
        continue;   // named: reached only by an internal redirect
      }
      if (kind.equals("~") || kind.equals("~*")) {
        if (anyLimited) {
          d.problem(x.where(), "location " + String.join(" ", a), "a regular expression "
              + "location; Sluice's routes match path globs (write the paths it takes as a route "
              + "before the prefixes)");
        }
        continue;
      }
      if (!kind.isEmpty() && !kind.equals("=") && !kind.equals("^~")) {
        d.problem(x.where(), "location " + String.join(" ", a), "unknown location modifier");
        continue;
      }
      locs.add(new Loc(kind.equals("=") ? "=" : "", path, x));
    }
    // nginx: an exact match first, then the longest prefix.
    locs.sort(Comparator.comparing((Loc l) -> !l.kind().equals("="))
        .thenComparing(l -> -l.path().length()));
    boolean catchAll = false;
    for (Loc l : locs) {
      Level level = levels.get(l.at());
      List<String> paths = new ArrayList<>();
      String differs = null;
      if (l.kind().equals("=")) {
        paths.add(l.path());
      } else if (l.path().equals("/")) {
        catchAll = true;
      } else if (l.path().endsWith("/")) {
        paths.add(l.path() + "**");
        differs = "nginx's prefix " + l.path() + " does not take "
            + l.path().substring(0, l.path().length() - 1) + " itself; this glob does";
      } else {
        paths.add(l.path() + "*/**");
      }
      route(label + ":" + (l.kind().equals("=") ? "=" : "") + l.path(), hosts, paths, differs,
          level, "location " + String.join(" ", l.at().args()) + " (" + l.at().where() + ")");
    }
    if (!catchAll && (serverLevel.limited() || !hosts.isEmpty())) {
      route(label, hosts, List.of(), null, serverLevel, server == null ? "http level"
          : "server " + label + " outside its locations (" + server.where() + ")");
    }
  }

  private static List<Directive> limits(Level l) {
    List<Directive> all = new ArrayList<>(l.req());
    all.addAll(l.conn());
    return all;
  }

  private void route(String name, List<String> hosts, List<String> paths, String pathDiffers,
      Level level, String from) {
    List<Applied> applied = new ArrayList<>();
    for (Directive x : level.req()) {
      Applied a = limitReq(x, level);
      if (a != null) {
        applied.add(a);
      }
    }
    for (Directive x : level.conn()) {
      Applied a = limitConn(x, level);
      if (a != null) {
        applied.add(a);
      }
    }
    // Networks that skip some rules get a route of their own first, with the rest.
    Set<List<String>> lists = new LinkedHashSet<>();
    for (Applied a : applied) {
      if (!a.allowed().isEmpty()) {
        lists.add(a.allowed());
      }
    }
    for (List<String> nets : lists) {
      List<String> rest = applied.stream().filter(a -> !a.allowed().equals(nets))
          .map(Applied::rule).toList();
      Draft.Route r = d.route();
      r.notes.add("nginx: " + from + ", clients whose key is empty (geo/map allow list)");
      r.line("name: " + Draft.scalar(name + " allowed"), null);
      lines(r, hosts, paths, pathDiffers);
      r.line("from: " + Draft.list(nets), null);
      r.line("rules: " + Draft.list(rest), null);
      if (lists.size() > 1) {
        d.problem(from, "allow lists", "different geo/map allow lists on one location "
            + "overlap; only the first one's clients are routed apart exactly");
        break;
      }
    }
    Draft.Route r = d.route();
    r.notes.add("nginx: " + from);
    r.line("name: " + Draft.scalar(name), null);
    lines(r, hosts, paths, pathDiffers);
    r.line("rules: " + Draft.list(applied.stream().map(Applied::rule).toList()),
        !level.req().isEmpty() && !level.conn().isEmpty() ? "nginx counts limit_req before "
        + "limit_conn, so a request limit_conn refuses has been counted by limit_req; Sluice "
        + "takes the concurrency lease first, and a refused request counts nothing" : null);
  }

  private static void lines(Draft.Route r, List<String> hosts, List<String> paths,
      String pathDiffers) {
    if (!hosts.isEmpty()) {
      r.line("hosts: " + Draft.list(hosts), null);
    }
    if (!paths.isEmpty()) {
      r.line("paths: " + Draft.list(paths), pathDiffers);
    }
  }

  // --- limit_req and limit_conn ---------------------------------------------------------------

  private Applied limitReq(Directive x, Level level) {
    String zoneName = null;
    long burst = 0;
    Long delay = 0L;
    for (String a : x.args()) {
      if (a.startsWith("zone=")) {
        zoneName = a.substring(5);
      } else if (a.startsWith("burst=") && a.substring(6).matches("\\d{1,9}")) {
        burst = Long.parseLong(a.substring(6));
      } else if (a.equals("nodelay")) {
        delay = null;
      } else if (a.startsWith("delay=") && a.substring(6).matches("\\d{1,9}")) {
        delay = Long.parseLong(a.substring(6));
      } else {
        d.problem(x.where(), x.text(), "unknown parameter " + a + " (expected: zone=NAME, "
            + "burst=N, nodelay or delay=N)");
        return null;
      }
    }
    Zone zone = zoneName == null ? null : zones.get(zoneName);
    if (zone == null) {
      d.problem(x.where(), x.text(), zoneName == null ? "no zone=" : "zone " + zoneName
          + " has no limit_req_zone that could be imported");
      return null;
    }
    Key key = key(zone.key(), zone.at());
    if (key == null) {
      return null;
    }
    usedZones.add(zone.name());
    String name = named(zone.name(), "req " + burst + " " + delay + " " + level.reqStatus()
        + " " + level.reqDryRun());
    boolean fresh = !d.rules.containsKey(name);
    Draft.Rule rule = d.rule(name);
    String use = "limit_req " + String.join(" ", x.args()) + " (" + x.where() + ")";
    if (fresh) {
      rule.note("nginx: limit_req_zone " + String.join(" ", zone.at().args()) + " ("
          + zone.at().where() + ")");
      rule.note("nginx: " + use);
      keyLines(rule, key);
      rule.line("status: " + level.reqStatus(), "nginx answers " + level.reqStatus()
          + " with its error page; Sluice's answer has this status with Retry-After, limit "
          + "headers and a JSON body (or an HTML page for browsers)");
      if (level.reqDryRun()) {
        rule.line("mode: shadow", null);
      }
      String limitDiffers = null;
      double perSecond = zone.rate() / (zone.perMinute() ? 60.0 : 1.0);
      if (burst > 0 && (delay == null || delay < burst)) {
        long passes = delay == null ? burst : delay;
        String wait = String.format(Locale.ROOT, "%.3g", (burst - passes) / perSecond);
        limitDiffers = delay == null ? null : "nginx passes the first " + passes
            + " requests above the rate at once and holds each later one until the bucket has "
            + "drained to " + passes + " (up to " + wait + " s); Sluice admits the same requests "
            + "and passes them at once";
      }
      if (burst > 0 && delay != null && delay == 0) {
        limitDiffers = "nginx holds each request above the rate (without nodelay) until the "
            + "bucket has drained, up to " + String.format(Locale.ROOT, "%.3g", burst
            / perSecond) + " s; Sluice admits the same requests and passes them at once";
      }
      if (zone.size() != null) {
        rule.note("zone " + zone.name() + ":" + zone.size() + " keeps as many keys as fit "
            + "(about 16,000 a megabyte); Sluice's memory store keeps store.maxKeys.");
      }
      rule.limit("{type: leaky-bucket, rate: " + zone.rate() + ", period: "
          + (zone.perMinute() ? "1m" : "1s") + ", burst: " + burst + "}", limitDiffers);
    } else {
      rule.note("nginx: " + use);
    }
    zoneRules.computeIfAbsent(zone.name(), z -> new LinkedHashSet<>()).add(name);
    return new Applied(name, key.allowed());
  }

  private Applied limitConn(Directive x, Level level) {
    if (x.args().size() != 2 || !x.args().get(1).matches("\\d{1,9}")
        || Long.parseLong(x.args().get(1)) < 1) {
      d.problem(x.where(), x.text(), "expected limit_conn ZONE NUMBER");
      return null;
    }
    Directive zoneAt = connZones.get(x.args().get(0));
    if (zoneAt == null || zoneAt.args().isEmpty()) {
      d.problem(x.where(), x.text(), "zone " + x.args().get(0) + " has no limit_conn_zone");
      return null;
    }
    Key key = key(zoneAt.args().get(0), zoneAt);
    if (key == null) {
      return null;
    }
    long max = Long.parseLong(x.args().get(1));
    String name = named(x.args().get(0), "conn " + max + " " + level.connStatus() + " "
        + level.connDryRun());
    boolean fresh = !d.rules.containsKey(name);
    Draft.Rule rule = d.rule(name);
    rule.note("nginx: " + (fresh ? "limit_conn_zone " + String.join(" ", zoneAt.args())
        + " (" + zoneAt.where() + "), " : "") + x.text() + " (" + x.where() + ")");
    if (fresh) {
      keyLines(rule, key);
      rule.line("status: " + level.connStatus(), "nginx answers " + level.connStatus()
          + " with its error page; Sluice's answer has this status with Retry-After and a JSON "
          + "body (or an HTML page for browsers)");
      if (level.connDryRun()) {
        rule.line("mode: shadow", null);
      }
      rule.limit("{type: concurrency, max: " + max + "}", null);
    }
    return new Applied(name, key.allowed());
  }

  private final Map<String, String> names = new LinkedHashMap<>();

  /** The rule of a zone used with these parameters: the zone's name, then NAME-2, NAME-3... */
  private String named(String zone, String parameters) {
    String sig = zone + " " + parameters;
    String name = names.get(sig);
    if (name == null) {
      name = zone;
      for (int i = 2; names.containsValue(name); i++) {
        name = zone + "-" + i;
      }
      names.put(sig, name);
    }
    return name;
  }

  private void keyLines(Draft.Rule rule, Key key) {
    if (key.key() != null) {
      rule.line("key: " + key.key(), key.differs());
    } else if (key.differs() != null) {
      rule.line("key: ip", key.differs());
    }
  }

  // --- keys -------------------------------------------------------------------------------

  /** A zone's key expression as a Sluice key; null after reporting what cannot be. */
  private Key key(String expr, Directive at) {
    if (keys.containsKey(expr)) {
      return keys.get(expr);
    }
    Key k = resolve(expr, at);
    keys.put(expr, k);
    return k;
  }

  private Key resolve(String expr, Directive at) {
    if (CLIENT.contains(expr)) {
      keyedByAddress = true;
      return new Key(null, List.of(), null);
    }
    Matcher m = Pattern.compile("\\$(http|cookie|arg)_([A-Za-z0-9_-]+)").matcher(expr);
    if (m.matches()) {
      String dim = m.group(1) + "_" + m.group(2).toLowerCase(Locale.ROOT);
      String source = switch (m.group(1)) {
        case "http" -> "header:" + m.group(2).replace('_', '-');
        case "cookie" -> "cookie:" + m.group(2);
        default -> "query:" + m.group(2);
      };
      d.dimensions.put(dim, new Draft.Line(source, null));
      return new Key(dim, List.of(), "nginx does not count a request whose " + expr + " is "
          + "empty; Sluice counts such requests together in the rule's sharedBucket");
    }
    if (expr.equals("$host") || expr.equals("$http_host") || expr.equals("$server_name")) {
      d.dimensions.put("host", new Draft.Line("header:Host", expr.equals("$server_name")
          ? "nginx's $server_name is the server's first name; the Host header names the same "
          + "server unless it is a wildcard or the default server" : null));
      return new Key("host", List.of(), null);
    }
    Directive map = maps.get(expr);
    if (map != null) {
      return fromMap(expr, map, at);
    }
    d.problem(at.where(), at.text(), "the key " + expr + " (Sluice keys by the client address, "
        + "a header, a cookie, a query parameter, or a geo/map allow list over the address)");
    return null;
  }

  /**
   * {@code map $src $key { ... }} whose values are the client address or empty (not counted):
   * the allow list, with {@code $src} from a {@code geo} block or the address itself.
   */
  private Key fromMap(String expr, Directive map, Directive at) {
    String src = map.args().get(0);
    Map<String, String> values = new LinkedHashMap<>();
    String dflt = "";
    for (Directive e : map.block()) {
      if (e.name().equals("hostnames") || e.name().equals("volatile")) {
        continue;
      }
      String v = e.args().size() == 1 ? e.args().get(0) : null;
      if (v == null) {
        d.problem(e.where(), e.text(), "expected one value per map entry");
        return null;
      }
      if (e.name().equals("default")) {
        dflt = v;
      } else {
        values.put(e.name(), v);
      }
    }
    Set<String> used = new LinkedHashSet<>(values.values());
    used.add(dflt);
    for (String v : used) {
      if (!v.isEmpty() && !CLIENT.contains(v)) {
        d.problem(map.where(), "map " + String.join(" ", map.args()), "value " + v + " (an "
            + "allow-list map gives the client address or an empty key)");
        return null;
      }
    }
    List<String> allowed = new ArrayList<>();
    if (CLIENT.contains(src)) {
      if (dflt.isEmpty()) {
        d.problem(map.where(), "map " + String.join(" ", map.args()), "the default is an empty "
            + "key: only the listed clients would be limited (not imported)");
        return null;
      }
      for (Map.Entry<String, String> e : values.entrySet()) {
        if (e.getValue().isEmpty()) {
          allowed.add(e.getKey());
        }
      }
    } else {
      Directive geo = geos.get(src);
      if (geo == null) {
        d.problem(map.where(), "map " + String.join(" ", map.args()), "the source " + src
            + " (expected the client address or a geo variable)");
        return null;
      }
      if (geo.args().size() > 1 && !CLIENT.contains(geo.args().get(0))) {
        d.problem(geo.where(), "geo " + String.join(" ", geo.args()), "a geo over "
            + geo.args().get(0) + " (Sluice's allow lists match the client address)");
        return null;
      }
      String geoDefault = "";
      for (Directive e : geo.block()) {
        if (e.name().equals("default")) {
          geoDefault = e.args().isEmpty() ? "" : e.args().get(0);
        } else if (e.name().equals("ranges") || e.name().equals("proxy")
            || e.name().equals("proxy_recursive") || e.name().equals("include")
            || e.name().equals("delete")) {
          d.problem(e.where(), e.text(), "geo's " + e.name() + " (an allow list is CIDRs)");
          return null;
        } else {
          String v = e.args().isEmpty() ? "" : e.args().get(0);
          if (Objects.equals(values.getOrDefault(v, dflt), "")) {
            allowed.add(e.name());
          }
        }
      }
      if (values.getOrDefault(geoDefault, dflt).isEmpty()) {
        d.problem(geo.where(), "geo " + String.join(" ", geo.args()), "the default maps to "
            + "an empty key: only the listed networks would be limited (not imported)");
        return null;
      }
    }
    keyedByAddress = true;
    return new Key(null, List.copyOf(allowed), null);
  }

  // --- real client addresses ------------------------------------------------------------------

  private boolean realIpSeen;

  private void realIp(List<Directive> block, String where) {
    List<String> from = new ArrayList<>();
    String header = null;
    Boolean recursive = null;
    Directive first = null;
    for (Directive x : block) {
      switch (x.name()) {
        case "set_real_ip_from" -> {
          first = first == null ? x : first;
          if (x.args().size() == 1 && !x.args().get(0).startsWith("unix:")) {
            from.add(x.args().get(0));
          } else {
            d.problem(x.where(), x.text(), "a unix socket peer (Sluice trusts networks)");
          }
        }
        case "real_ip_header" -> {
          first = first == null ? x : first;
          header = x.args().isEmpty() ? "" : x.args().get(0);
        }
        case "real_ip_recursive" -> recursive = x.args().contains("on");
        default -> { }
      }
    }
    if (first == null) {
      return;
    }
    if (realIpSeen) {
      d.problem(first.where(), first.text(), "real IP settings in " + where + " as well as "
          + "elsewhere; Sluice's trust section is one for the whole policy");
      return;
    }
    realIpSeen = true;
    String h = header == null ? "x-real-ip" : header.toLowerCase(Locale.ROOT);
    if (!h.equals("x-forwarded-for") && !h.equals("x-real-ip")) {
      d.problem(first.where(), "real_ip_header " + header, "Sluice reads the client from "
          + "X-Forwarded-For, X-Real-IP or Forwarded, not " + header);
      return;
    }
    if (from.isEmpty()) {
      d.problem(first.where(), first.text(), "real_ip_header without set_real_ip_from: nginx "
          + "then trusts no peer");
      return;
    }
    d.trustNotes.add("nginx: set_real_ip_from " + String.join(", ", from) + ", real_ip_header "
        + (header == null ? "X-Real-IP" : header) + (recursive == null ? ""
        : ", real_ip_recursive " + (recursive ? "on" : "off")) + " (" + where + ")");
    d.trust.add(new Draft.Line("proxies: " + Draft.list(from), Boolean.TRUE.equals(recursive)
        || h.equals("x-real-ip") ? null : "without real_ip_recursive nginx takes the last "
        + "address of X-Forwarded-For even when that address is a trusted proxy; Sluice walks "
        + "past trusted addresses (real_ip_recursive on)"));
    d.trust.add(new Draft.Line("headers: [" + h + "]", null));
  }
}
