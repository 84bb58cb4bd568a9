package dev.sluice.server.admin;

import dev.sluice.core.InvalidValueException;
import dev.sluice.core.KeyState;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.policy.PolicyFormat;
import dev.sluice.server.admin.AdminRequest.BadRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The incident endpoints of the admin listener, JSON in and out, on the running policy's rules and
 * the gateway's own store (memory or Redis alike):
 *
 * <pre>
 * GET    /v1/bans[?rule=R][&amp;limit=N]        banned keys, most recently refused first
 * GET    /v1/refused?rule=R[&amp;limit=N]       keys of R refusing now, most recently refused first
 * GET    /v1/keys/{rule}/{key}              a key's state
 * DELETE /v1/bans/{rule}/{key}[?keepState] lift the ban and reset the key (404 when not
 *                                           banned); with keepState the limits stay as spent
 * POST   /v1/bans/{rule}/{key}?duration=D  ban the key for D (like 10m) by hand; a rule with a
 *                                           ban: only; its limits stay as they are
 * POST   /v1/keys/{rule}/{key}/reset        forget the key's state: a full limit, no ban
 * DELETE /v1/keys/{rule}/{key}              the same
 * </pre>
 *
 * <p>N is 1 to 1000 (default 100). A key is its text as listed (escaped values joined by ':'),
 * percent-encoded as one path segment. Bad input is 400 with a JSON error naming the field; an
 * unknown rule 404. Every mutating request is logged once, with who asked (peer, token id or
 * anonymous, and the {@code X-Sluice-Actor} header, sanitised) and the outcome.
 */
public final class Incidents {

  static final int DEFAULT_LIMIT = 100;
  private static final long WAIT_SECONDS = 10;
  private static final int MAX_ACTOR = 64;

  private final Store store;
  private final Supplier<Map<String, Rule>> rules;
  private final ActionLog log;

  /** Where mutating actions are written, one line each. */
  @FunctionalInterface
  public interface ActionLog {
    void action(String message, Object... fields);
  }

  public Incidents(Store store, Supplier<Map<String, Rule>> rules, ActionLog log) {
    this.store = store;
    this.rules = rules;
    this.log = log;
  }

  /** Who sent a request: the TCP peer, the token's id or {@code anonymous}, the actor header. */
  record Caller(String peer, String auth, String actor) {

    static String actor(String header) {
      if (header == null || header.isBlank()) {
        return "-";
      }
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < header.length() && sb.length() < MAX_ACTOR; i++) {
        char c = header.charAt(i);
        sb.append(c > ' ' && c < 0x7f && c != '"' && c != '\\' && c != '=' ? c : '_');
      }
      return sb.toString();
    }
  }

  /** An answer: status, JSON body, and for 405 the methods allowed. */
  record Reply(int status, String json, String allow) {
    static Reply json(int status, Map<String, Object> body) {
      return new Reply(status, PolicyFormat.toJson(body) + "\n", null);
    }

    static Reply error(int status, String error, String field, String value, String expected) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("error", error);
      if (field != null) {
        body.put("field", field);
        body.put("value", value);
        body.put("expected", expected);
      }
      return json(status, body);
    }
  }

  /** True for the paths this class answers. */
  static boolean owns(String rawPath) {
    return rawPath.equals("/v1/bans") || rawPath.startsWith("/v1/bans/")
        || rawPath.equals("/v1/refused") || rawPath.startsWith("/v1/keys/");
  }

  Reply handle(String method, String rawPath, String rawQuery, Caller caller) {
    AdminRequest req;
    try {
      req = AdminRequest.parse(rawPath, rawQuery);
    } catch (BadRequest e) {
      return bad(e);
    }
    List<String> s = req.segments;
    String what = s.get(1);
    boolean keyed = s.size() >= 4;
    if (what.equals("bans") && s.size() == 2) {
      return method.equals("GET") || method.equals("HEAD") ? read(() -> bans(req))
          : notAllowed("GET, HEAD");
    }
    if (what.equals("refused") && s.size() == 2) {
      return method.equals("GET") || method.equals("HEAD") ? read(() -> refused(req))
          : notAllowed("GET, HEAD");
    }
    if (what.equals("bans") && s.size() == 4) {
      return switch (method) {
        case "DELETE" -> act("unban", req, caller);
        case "POST" -> act("ban", req, caller);
        default -> notAllowed("DELETE, POST");
      };
    }
    if (what.equals("keys") && s.size() == 4) {
      return switch (method) {
        case "GET", "HEAD" -> read(() -> state(req));
        case "DELETE" -> act("reset", req, caller);
        default -> notAllowed("GET, HEAD, DELETE");
      };
    }
    if (what.equals("keys") && s.size() == 5 && s.get(4).equals("reset")) {
      return method.equals("POST") ? act("reset", req, caller) : notAllowed("POST");
    }
    return keyed && s.size() > 4
        ? Reply.error(404, "not found: a key holding '/' is sent as one segment, with %2F",
            null, null, null)
        : Reply.error(404, "not found", null, null, null);
  }

  /** A read: work that may throw {@link BadRequest} or fail in the store. */
  @FunctionalInterface
  private interface Work {
    Reply run() throws BadRequest, Failure;
  }

  /** The store could not answer: the reply to give instead. */
  private static final class Failure extends Exception {
    private static final long serialVersionUID = 1L;
    final transient Reply reply;

    Failure(Reply reply) {
      super(reply.json(), null, false, false);
      this.reply = reply;
    }
  }

  private static Reply read(Work work) {
    try {
      return work.run();
    } catch (BadRequest e) {
      return bad(e);
    } catch (Failure e) {
      return e.reply;
    }
  }

  private Reply bans(AdminRequest req) throws BadRequest, Failure {
    req.only("rule", "limit");
    int limit = req.intParam("limit", DEFAULT_LIMIT, KeyState.MAX_LIST);
    List<Rule> which = new ArrayList<>();
    if (req.query.containsKey("rule")) {
      which.add(rule(req.query.get("rule")));
    } else {
      for (Rule r : rules.get().values()) {
        if (!r.ban().isZero()) {
          which.add(r);
        }
      }
    }
    List<KeyState> banned = new ArrayList<>();
    for (Rule r : which) {
      for (KeyState k : await(store.refusedAsync(r, KeyState.MAX_LIST))) {
        if (k.banned()) {
          banned.add(k);
        }
      }
    }
    banned.sort(Comparator.comparing(KeyState::refusedAgo,
        Comparator.nullsLast(Comparator.naturalOrder())));
    List<Object> out = new ArrayList<>();
    for (int i = 0; i < banned.size() && i < limit; i++) {
      out.add(json(banned.get(i)));
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("bans", out);
    body.put("count", out.size());
    body.put("limit", limit);
    return Reply.json(200, body);
  }

  private Reply refused(AdminRequest req) throws BadRequest, Failure {
    req.only("rule", "limit");
    String name = req.query.get("rule");
    if (name == null) {
      throw new BadRequest("rule", "(missing)", "?rule=NAME, one of " + rules.get().keySet());
    }
    Rule rule = rule(name);
    int limit = req.intParam("limit", DEFAULT_LIMIT, KeyState.MAX_LIST);
    List<Object> out = new ArrayList<>();
    for (KeyState k : await(store.refusedAsync(rule, limit))) {
      out.add(json(k));
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("rule", rule.name());
    body.put("refused", out);
    body.put("count", out.size());
    body.put("limit", limit);
    return Reply.json(200, body);
  }

  private Reply state(AdminRequest req) throws BadRequest, Failure {
    req.only();
    Rule rule = rule(req.segments.get(2));
    return Reply.json(200, json(await(store.keyStateAsync(rule, key(req)))));
  }

  /** A mutating request: done, then logged once with who asked and what came of it. */
  private Reply act(String action, AdminRequest req, Caller caller) {
    Reply reply;
    String outcome;
    String ruleName = req.segments.get(2);
    String key = req.segments.get(3);
    try {
      boolean unban = action.equals("unban");
      if (unban) {
        req.only("keepState");
      } else if (action.equals("ban")) {
        req.only("duration");
      } else {
        req.only();
      }
      Rule rule = rule(ruleName);
      key = key(req);
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("rule", rule.name());
      body.put("key", key);
      body.put("action", action);
      if (action.equals("ban")) {
        Duration length = duration(req);
        if (rule.ban().isZero()) {
          throw new BadRequest("rule", AdminRequest.quote(rule.name()) + " has no ban",
              "a rule with a ban: (its state keeps a ban's expiry), one of " + banRules());
        }
        await(store.banAsync(rule, key, length));
        KeyState after = await(store.keyStateAsync(rule, key));
        body.put("banned", after.banned());
        body.put("banLeftMs", millis(after.banLeft()));
        outcome = "banned for " + dev.sluice.policy.Durations.format(length);
        reply = Reply.json(200, body);
      } else if (unban) {
        boolean keep = req.flag("keepState");
        boolean lifted = await(store.unbanAsync(rule, key));
        body.put("lifted", lifted);
        if (!lifted) {
          body.put("error", "not banned");
          outcome = "not banned";
        } else if (keep) {
          body.put("stateReset", false);
          outcome = "lifted (state kept)";
        } else {
          // The limits that started the ban are still spent: kept, the next request would ban
          // the key again for the full length (issue 20). Lifted means decided afresh.
          await(store.resetAsync(rule, key));
          body.put("stateReset", true);
          outcome = "lifted";
        }
        reply = Reply.json(lifted ? 200 : 404, body);
      } else {
        boolean had = await(store.resetAsync(rule, key));
        body.put("hadState", had);
        outcome = had ? "reset" : "already fresh";
        reply = Reply.json(200, body);
      }
    } catch (BadRequest e) {
      reply = bad(e);
      outcome = "rejected: " + e.getMessage();
    } catch (Failure e) {
      reply = e.reply;
      outcome = "failed: " + e.reply.status();
    }
    log.action("admin " + action, "rule", ruleName, "key", key, "outcome", outcome, "status",
        reply.status(), "peer", caller.peer(), "auth", caller.auth(), "actor", caller.actor());
    return reply;
  }

  /** {@code ?duration=10m}: 1s to 3653 days. */
  private static Duration duration(AdminRequest req) throws BadRequest {
    String text = req.query.get("duration");
    String expected = "a duration from 1s to 3653d, like 10m or 1h (?duration=10m)";
    if (text == null) {
      throw new BadRequest("duration", "(missing)", expected);
    }
    Duration d;
    try {
      d = dev.sluice.policy.Durations.parsePositive(text);
    } catch (IllegalArgumentException e) {
      throw new BadRequest("duration", AdminRequest.quote(text), expected);
    }
    if (d.compareTo(Duration.ofSeconds(1)) < 0 || d.compareTo(Duration.ofDays(3653)) > 0) {
      throw new BadRequest("duration", AdminRequest.quote(text), expected);
    }
    return d;
  }

  private List<String> banRules() {
    List<String> out = new ArrayList<>();
    rules.get().forEach((name, r) -> {
      if (!r.ban().isZero()) {
        out.add(name);
      }
    });
    return out;
  }

  private Rule rule(String name) throws Failure {
    Map<String, Rule> all = rules.get();
    Rule rule = all.get(name);
    if (rule == null) {
      throw new Failure(Reply.error(404, "unknown rule", "rule", AdminRequest.quote(name),
          "one of " + all.keySet()));
    }
    return rule;
  }

  private static String key(AdminRequest req) throws BadRequest {
    String key = req.segments.get(3);
    if (key.isEmpty()) {
      throw new BadRequest("key", "\"\"", "the key as listed, such as 203.0.113.7");
    }
    return key;
  }

  /** The stage's value, waited for at most {@value #WAIT_SECONDS} s (a Redis call has less). */
  private static <T> T await(CompletionStage<T> stage) throws BadRequest, Failure {
    try {
      return stage.toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof InvalidValueException iv) {
        throw new BadRequest(iv.field(), iv.value(), iv.expected());
      }
      if (cause instanceof UnsupportedOperationException) {
        throw new Failure(Reply.error(501, String.valueOf(cause.getMessage()), null, null,
            null));
      }
      throw new Failure(Reply.error(503, "store unavailable: " + cause.getMessage(), null, null,
          null));
    } catch (TimeoutException e) {
      throw new Failure(Reply.error(503, "store unavailable: no answer within " + WAIT_SECONDS
          + " s", null, null, null));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Failure(Reply.error(503, "interrupted", null, null, null));
    }
  }

  private static Reply bad(BadRequest e) {
    return Reply.error(400, e.getMessage(), e.field, e.value, e.expected);
  }

  private static Reply notAllowed(String allow) {
    return new Reply(405, "{\"error\":\"method not allowed\",\"allow\":\"" + allow + "\"}\n",
        allow);
  }

  /** A key's state as JSON; durations in milliseconds, rounded up so a live one is never 0. */
  static Map<String, Object> json(KeyState k) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("rule", k.rule());
    m.put("key", k.key());
    m.put("present", k.present());
    m.put("refusing", k.refusing());
    m.put("banned", k.banned());
    m.put("banLeftMs", millis(k.banLeft()));
    if (k.refusedAgo() != null) {
      m.put("refusedAgoMs", millis(k.refusedAgo()));
    }
    List<Object> limits = new ArrayList<>();
    for (KeyState.LimitState l : k.limits()) {
      Map<String, Object> lm = new LinkedHashMap<>();
      lm.put("name", l.name());
      lm.put("remaining", l.remaining());
      lm.put("resetMs", millis(l.reset()));
      lm.put("retryAfterMs", millis(l.retryAfter()));
      limits.add(lm);
    }
    m.put("limits", limits);
    return m;
  }

  private static long millis(Duration d) {
    return -Math.floorDiv(-d.toNanos(), 1_000_000L);
  }
}
