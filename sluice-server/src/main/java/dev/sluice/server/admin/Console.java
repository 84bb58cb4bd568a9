package dev.sluice.server.admin;

import dev.sluice.core.KeyState;
import dev.sluice.core.Mode;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.policy.LoadedPolicy;
import dev.sluice.policy.PolicyFormat;
import dev.sluice.server.charts.Charts;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The live console of the admin listener: a page at {@code /} (for a browser; {@code curl} still
 * gets the text index), its script and style sheet under {@code /console/}, and its JSON under
 * {@code /v1/console/}, behind the admin token like the rest of {@code /v1/}:
 *
 * <pre>
 * GET /v1/console/snapshot                 version, store, policy, streams, the live view
 * GET /v1/console/history?resolution=1s|1m decisions per rule and outcome: 15 min or 24 h
 * GET /v1/console/reloads                  the last reloads and their results
 * GET /v1/console/audit                    the last admin actions
 * GET /v1/console/events                   server-sent events: the live view once a second
 * GET /v1/console/ack?stream=ID&amp;nonce=N     the page's proof that it reads its stream
 * </pre>
 *
 * <p>A thread, {@code sluice-console}, samples the decision counters once a second into the
 * {@link Timeline} (always, so the history is there when a page opens) and, while a page is
 * open, reads the store's recent refusals (top {@value #TOP} per rule, the bans every
 * {@value #BANS_EVERY} s) and sends the live view to every stream. Nothing here runs on the
 * request path, and nothing grows with the number of keys: the store lists a bounded sample.
 */
public final class Console implements AutoCloseable {

  /** What the console serves, for the listener's text index and the start-up log. */
  public static final List<String> ENDPOINTS = List.of("GET / (in a browser: the console)",
      "GET /v1/console/snapshot", "GET /v1/console/history?resolution=1s|1m",
      "GET /v1/console/reloads", "GET /v1/console/audit", "GET /v1/console/events");

  /** Refused keys per rule in the live view. */
  static final int TOP = 10;
  /** Rules whose refusals the live view reads (the first in the policy). */
  static final int MAX_RULES = Timeline.MAX_RULES;
  /** Bans in the live view, most recently refused first. */
  static final int MAX_BANS = 50;
  static final int BANS_EVERY = 5;
  /** How long a tick waits for the store's lists before it sends what it had. */
  private static final long STORE_WAIT_MS = 800;
  static final String EVENTS = "/v1/console/events";
  static final String ACK = "/v1/console/ack";

  /**
   * What the page is told about the token: whether reads need it, whether state changes are
   * possible at all (a token exists), and the generated token's file (null when the operator
   * gave the token), so the page can say where to find it.
   */
  public record Auth(boolean readsNeedToken, boolean actionsPossible, String tokenFile) {}

  private final Metrics metrics;
  private final Store store;
  private final Supplier<LoadedPolicy> policy;
  private final Supplier<Instant> loadedAt;
  private final String version;
  private final StoreHealth health;
  private final AuditLog audit;
  private final ReloadHistory reloads;
  private final Auth auth;
  private final LongSupplier clock;
  private final Timeline timeline = new Timeline();
  private final Sampler sampler;
  private final EventStreams streams;
  private final Map<String, byte[]> files = new LinkedHashMap<>();
  private ScheduledExecutorService thread;
  private long ticks;
  /** The last lists read from the store, kept when a tick's reads do not finish in time. */
  private final Map<String, List<KeyState>> refused = new LinkedHashMap<>();
  private List<KeyState> bans = List.of();
  private long bansTick = Long.MIN_VALUE / 2;
  private long bansAuditSeq = -1;
  private volatile byte[] lastEvent;
  /** When {@link #lastEvent} was built (epoch ms): a new stream gets it only while it is fresh. */
  private volatile long lastEventAt;

  /**
   * A console over the server's parts; {@code clock} gives epoch milliseconds (the chart's time
   * axis). Call {@link #start()} to begin sampling.
   */
  public Console(Metrics metrics, Store store, Supplier<LoadedPolicy> policy,
      Supplier<Instant> loadedAt, String version, StoreHealth health, AuditLog audit,
      ReloadHistory reloads, Auth auth, LongSupplier clock) {
    this(metrics, store, policy, loadedAt, version, health, audit, reloads, auth, clock,
        new EventStreams());
  }

  /** As above, with the page's event streams ({@code streams}: a test's bounds and clock). */
  Console(Metrics metrics, Store store, Supplier<LoadedPolicy> policy,
      Supplier<Instant> loadedAt, String version, StoreHealth health, AuditLog audit,
      ReloadHistory reloads, Auth auth, LongSupplier clock, EventStreams streams) {
    this.streams = streams;
    this.metrics = metrics;
    this.store = store;
    this.policy = policy;
    this.loadedAt = loadedAt;
    this.version = version;
    this.health = health;
    this.audit = audit;
    this.reloads = reloads;
    this.auth = auth;
    this.clock = clock;
    this.sampler = new Sampler(metrics, () -> rules().keySet());
    file("index.html", "console/index.html");
    file("console.js", "console/console.js");
    file("console.css", "console/console.css");
    file("icon.svg", "console/icon.svg");
    // The chart module the replay report inlines, served here as files (no inline script).
    files.put("charts.js", Charts.script().getBytes(StandardCharsets.UTF_8));
    files.put("charts.css", Charts.css().getBytes(StandardCharsets.UTF_8));
  }

  private void file(String name, String resource) {
    try (InputStream in = Console.class.getResourceAsStream("/dev/sluice/server/" + resource)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + resource);
      }
      files.put(name, in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Starts the once-a-second sampler. */
  public synchronized void start() {
    if (thread != null) {
      return;
    }
    thread = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sluice-console");
      t.setDaemon(true);
      return t;
    });
    thread.scheduleAtFixedRate(() -> {
      try {
        tick();
      } catch (RuntimeException e) {
        // a tick that failed (a store answer that could not be read) is skipped; the next runs
      }
    }, 0, 1, TimeUnit.SECONDS);
  }

  /** One second: counters into the timeline, and the live view to open pages. */
  void tick() {
    long now = clock.getAsLong();
    Map<String, long[]> deltas = sampler.sample();
    timeline.add(Math.floorDiv(now, 1000), deltas);
    if (++ticks % 60 == 0) {
      timeline.dropEmpty();
    }
    streams.expireStalled();
    if (streams.count() > 0) {
      // Bans every few seconds (a listing of up to 1,000 per rule), and at once after an admin
      // action, so a lifted ban leaves the page within a second.
      readStore(ticks - bansTick >= BANS_EVERY || audit.seq() != bansAuditSeq);
      byte[] event = event(now, deltas);
      lastEvent = event;
      lastEventAt = now;
      streams.publish(event);
    }
  }

  /** The policy's rules that decide (not off), the first {@value #MAX_RULES}. */
  private Map<String, Rule> rules() {
    Map<String, Rule> out = new LinkedHashMap<>();
    for (Rule r : policy.get().config().policy().rules().values()) {
      if (r.mode() != Mode.OFF && out.size() < MAX_RULES) {
        out.put(r.name(), r);
      }
    }
    return out;
  }

  /**
   * Reads each rule's recent refusals (and, when {@code withBans}, every rule's banned keys),
   * waiting at most {@value #STORE_WAIT_MS} ms in all; a list not read in time keeps its
   * previous value.
   */
  private synchronized void readStore(boolean withBans) {
    long auditSeqAtStart = audit.seq();
    Map<String, Rule> rules = rules();
    Map<String, CompletableFuture<List<KeyState>>> top = new LinkedHashMap<>();
    Map<String, CompletableFuture<List<KeyState>>> banned = new LinkedHashMap<>();
    for (Rule r : rules.values()) {
      top.put(r.name(), store.refusedAsync(r, TOP).toCompletableFuture());
      if (withBans && !r.ban().isZero()) {
        banned.put(r.name(), store.refusedAsync(r, KeyState.MAX_LIST).toCompletableFuture());
      }
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STORE_WAIT_MS);
    refused.keySet().retainAll(rules.keySet());
    top.forEach((name, f) -> {
      List<KeyState> got = await(f, deadline);
      if (got != null) {
        refused.put(name, got);
      }
    });
    if (withBans) {
      List<KeyState> all = new ArrayList<>();
      boolean complete = true;
      for (CompletableFuture<List<KeyState>> f : banned.values()) {
        List<KeyState> got = await(f, deadline);
        complete &= got != null;
        if (got != null) {
          got.stream().filter(KeyState::banned).forEach(all::add);
        }
      }
      if (complete) {
        bansTick = ticks;
        bansAuditSeq = auditSeqAtStart;
        all.sort(Comparator.comparing(KeyState::refusedAgo,
            Comparator.nullsLast(Comparator.naturalOrder())));
        bans = List.copyOf(all.subList(0, Math.min(MAX_BANS, all.size())));
      }
    }
  }

  private static <T> T await(CompletableFuture<T> f, long deadline) {
    try {
      return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (Exception e) {
      return null;   // unsupported, unavailable or late: the previous list stays
    }
  }

  /** The live view: what a page shows besides the charts' history. */
  private synchronized Map<String, Object> live(long now, Map<String, long[]> deltas) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("t", now);
    Map<String, Object> rates = new LinkedHashMap<>();
    deltas.forEach((rule, d) -> {
      List<Long> v = new ArrayList<>(d.length);
      for (long x : d) {
        v.add(x);
      }
      rates.put(rule, v);
    });
    m.put("rates", rates);
    long keys;
    try {
      keys = store.size();
    } catch (RuntimeException e) {
      keys = -1;
    }
    m.put("trackedKeys", keys);
    m.put("store", storeJson());
    Map<String, Object> pages = new LinkedHashMap<>();
    pages.put("open", streams.count());
    pages.put("max", streams.max());
    pages.put("refused", streams.refused());
    pages.put("cut", streams.cut());
    pages.put("acks", streams.acks());
    m.put("streams", pages);
    Map<String, Object> byRule = new LinkedHashMap<>();
    refused.forEach((rule, list) -> {
      List<Object> keysJson = new ArrayList<>();
      for (KeyState k : list) {
        keysJson.add(keyJson(k));
      }
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("count", list.size());
      r.put("keys", keysJson);
      byRule.put(rule, r);
    });
    m.put("refused", byRule);
    List<Object> b = new ArrayList<>();
    for (KeyState k : bans) {
      b.add(keyJson(k));
    }
    m.put("bans", b);
    m.put("reloadSeq", reloads.seq());
    m.put("auditSeq", audit.seq());
    m.put("policyLoadedAt", String.valueOf(loadedAt.get()));
    return m;
  }

  /** A key's state as the console lists it: the API's fields, and the limit refusing it. */
  private static Map<String, Object> keyJson(KeyState k) {
    Map<String, Object> m = Incidents.json(k);
    String by = k.banned() ? "ban" : null;
    if (by == null) {
      for (KeyState.LimitState l : k.limits()) {
        if (!l.retryAfter().isZero()) {
          by = l.name();
          break;
        }
      }
    }
    m.put("refusedBy", by);
    return m;
  }

  private byte[] event(long now, Map<String, long[]> deltas) {
    return ("event: tick\ndata: " + PolicyFormat.toJson(live(now, deltas)) + "\n\n")
        .getBytes(StandardCharsets.UTF_8);
  }

  private Map<String, Object> storeJson() {
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("store", health.store());
    s.put("ready", health.ready());
    s.put("connected", health.connected());
    s.put("circuit", health.circuit());
    s.put("problem", health.problem());
    s.put("connectFailures", health.connectFailures());
    s.put("circuitOpenings", health.circuitOpenings());
    s.put("storeErrors", metrics.storeErrors());
    return s;
  }

  /**
   * The page and its files (open: they hold no data; answered on the listener's loop), or null
   * when {@code call} is not for them.
   */
  AdminAnswer page(AdminCall call) {
    String rawPath = call.rawPath();
    boolean get = call.isRead();
    if (rawPath.equals("/") && get && accepts(call, "text/html")) {
      return AdminAnswer.of(200, "text/html; charset=utf-8", files.get("index.html"));
    }
    if (rawPath.equals("/favicon.ico") && get) {
      return AdminAnswer.of(200, "image/svg+xml", files.get("icon.svg"));
    }
    if (!rawPath.startsWith("/console/")) {
      return null;
    }
    String name = rawPath.substring("/console/".length());
    if (name.equals("auth")) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("token", auth.readsNeedToken());
      m.put("actions", auth.actionsPossible());
      m.put("tokenFile", auth.tokenFile());
      m.put("version", version);
      return AdminAnswer.json(200, PolicyFormat.toJson(m));
    }
    byte[] body = files.get(name);
    if (body == null || name.equals("index.html")) {
      return AdminAnswer.text(404, "not found\n");
    }
    if (!get) {
      return notAllowed();
    }
    return AdminAnswer.of(200, type(name), body);
  }

  /**
   * Answers {@code /v1/console/...} (the door has let the call in), or null when {@code call} is
   * not for the console; the events answer opens a stream.
   */
  AdminAnswer serve(AdminCall call) {
    String rawPath = call.rawPath();
    if (!rawPath.startsWith("/v1/console/")) {
      return null;
    }
    if (!call.isRead()) {
      return notAllowed();
    }
    try {
      AdminRequest req = AdminRequest.parse(rawPath, call.rawQuery());
      switch (rawPath) {
        case EVENTS -> {
          req.only();
          byte[] first = clock.getAsLong() - lastEventAt < 2000 ? lastEvent : null;
          return AdminAnswer.eventStream(streams, first, AdminAnswer.json(503,
              "{\"error\":\"too many event streams: " + streams.max() + " console pages are "
              + "open\",\"max\":" + streams.max() + "}").with("Retry-After", "10"));
        }
        case ACK -> {
          req.only("stream", "nonce");
          return streams.ack(req.query.get("stream"), req.query.get("nonce"))
              ? AdminAnswer.json(200, "{\"acked\":true}")
              : AdminAnswer.json(404, "{\"error\":\"no open stream with that id and a recent "
                  + "nonce\"}");
        }
        case "/v1/console/snapshot" -> {
          req.only();
          return json(snapshot());
        }
        case "/v1/console/history" -> {
          req.only("resolution");
          String label = req.query.getOrDefault("resolution", "1s");
          Timeline.Resolution r = Timeline.Resolution.of(label);
          if (r == null) {
            throw new AdminRequest.BadRequest("resolution", AdminRequest.quote(label),
                "1s (15 minutes) or 1m (24 hours)");
          }
          return json(timeline.json(r, Math.floorDiv(clock.getAsLong(), 1000)));
        }
        case "/v1/console/reloads" -> {
          req.only();
          return json(Map.of("reloads", reloads.recent(ReloadHistory.MAX)));
        }
        case "/v1/console/audit" -> {
          req.only();
          return json(Map.of("audit", audit.recent(100)));
        }
        default -> {
          return AdminAnswer.json(404, "{\"error\":\"not found\"}");
        }
      }
    } catch (AdminRequest.BadRequest e) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("error", e.getMessage());
      body.put("field", e.field);
      body.put("value", e.value);
      body.put("expected", e.expected);
      return AdminAnswer.json(400, PolicyFormat.toJson(body));
    }
  }

  private Map<String, Object> snapshot() {
    LoadedPolicy p = policy.get();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("version", version);
    Map<String, Object> pol = new LinkedHashMap<>();
    pol.put("source", p.sourceName());
    pol.put("loadedAt", String.valueOf(loadedAt.get()));
    pol.put("summary", p.summary());
    pol.put("dryRun", p.config().policy().dryRun());
    pol.put("effective", p.effective());
    m.put("policy", pol);
    m.put("charted", List.copyOf(rules().keySet()));
    m.put("outcomes", Timeline.OUTCOMES);
    synchronized (this) {
      if (streams.count() == 0 || lastEvent == null) {
        readStore(true);
      }
    }
    m.put("live", live(clock.getAsLong(), Map.of()));
    return m;
  }

  private static AdminAnswer json(Object body) {
    return AdminAnswer.json(200, PolicyFormat.toJson(body));
  }

  private static AdminAnswer notAllowed() {
    return AdminAnswer.json(405, "{\"error\":\"method not allowed\"}").with("Allow", "GET, HEAD");
  }

  private static boolean accepts(AdminCall call, String type) {
    String a = call.header("Accept");
    return a != null && a.contains(type);
  }

  private static String type(String name) {
    if (name.endsWith(".js")) {
      return "text/javascript; charset=utf-8";
    }
    if (name.endsWith(".css")) {
      return "text/css; charset=utf-8";
    }
    return name.endsWith(".svg") ? "image/svg+xml" : "application/octet-stream";
  }

  /** Streams open now, for tests and the page. */
  int streams() {
    return streams.count();
  }

  Timeline timeline() {
    return timeline;
  }

  @Override
  public synchronized void close() {
    if (thread != null) {
      thread.shutdownNow();
      thread = null;
    }
    streams.close();
  }

}
