package dev.sluice.core.policy;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.http.Accept;
import dev.sluice.core.http.Answer;
import dev.sluice.core.http.Bodies;
import dev.sluice.core.http.ResponseSpec;
import dev.sluice.core.policy.Admission.Action;
import dev.sluice.core.policy.Admission.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;

/**
 * What the admission step does when a rule whose action is {@code challenge} refuses a request
 * (the refusal is final: not delayed, not degraded). In order:
 *
 * <ol>
 *   <li>A path the settings skip ({@code /robots.txt}...): the refusal.
 *   <li>A valid clearance cookie for the rule with budget left: one request of it is spent in
 *       the store and the request is decided again without the rule, whose refusal is not
 *       reported ({@code cleared}); a spent one is treated as none ({@code spent}).
 *   <li>Otherwise the refusal is reported; a request that is not a browser's navigation (a GET
 *       whose {@code Accept} prefers HTML) gets it, its JSON naming the challenge.
 *   <li>A right answer in the answer cookie: its nonce is spent in the store with the client's
 *       challenge score (a spent nonce: {@code replayed}; past the score: {@code refused}), the
 *       score rises by {@code raiseEvery} (the next puzzle is harder), and the answer is a page
 *       that sets the clearance and reloads ({@code solved}).
 *   <li>A wrong answer costs {@code failureCost} points of the score ({@code failed}, or
 *       {@code refused} past it).
 *   <li>Else a puzzle page, once the score allows one more ({@code issued}; else
 *       {@code refused}), its difficulty raised by the score.
 * </ol>
 *
 * <p>Each store call is asynchronous for a remote store (the outcome is then pending) and
 * inline for the in-memory one. A store that fails the nonce's check answers 503: a nonce that
 * cannot be spent is not accepted.
 */
final class ChallengeStep {

  /**
   * The last page and "too many" answer this thread made. A flood from one client asks again and
   * again within a second: it gets the same bytes (the same puzzle, bound to its network, whose
   * nonce is spent once whoever solves it), as a flood of refusals gets the last refusal's, so a
   * challenged flood costs what a refused one does. Keyed by everything the answer says.
   */
  private static final class Last {
    Challenges.Keys keys;
    ClientAddress client;
    int difficulty;
    long retryAfter;
    long second;
    Answer page;
    Challenges limitedBy;
    long limitedRetryAfter = -1;
    boolean limitedSpends;
    Answer limited;
    /**
     * A client the challenge's own limit refused, and until when (the wall clock's millis): its
     * next pages are refused without asking the store, which could not say otherwise before
     * then (a refused check consumes nothing; only time gives a score room), as the Redis
     * store's refusal cache reasons.
     */
    ClientAddress refusedClient;
    long refusedFrom;
    long refusedUntil;
  }

  private static final ThreadLocal<Last> LAST = ThreadLocal.withInitial(Last::new);

  private final Admission admission;
  private final Challenges c;
  private final ResponseSpec namingChallenge;
  private final RateLimiter limiter;
  private final DecisionListener listener;
  private final List<Rule> clientRules;
  private final List<Rule> spendRules;

  ChallengeStep(Admission admission, Challenges challenges, ResponseSpec namingChallenge) {
    this.admission = admission;
    this.c = challenges;
    this.namingChallenge = namingChallenge;
    this.limiter = admission.limiter();
    this.listener = admission.listener();
    this.clientRules = List.of(challenges.clientRule);
    this.spendRules = List.of(challenges.nonceRule, challenges.clientRule);
  }

  Outcome refused(Outcome o, Rule rule, Decision d, long nanos) {
    RequestView request = o.request();
    Challenges.Keys keys = c.keys(rule);
    String path = request.path();
    if (keys == null || (path != null && c.settings().skips(path))) {
      admission.report(o, o.check().rules(), d, nanos);
      o.refused(admission.responses());
      return o;
    }
    ClientAddress client = client(request);
    long now = c.now();
    String cookie = request.cookie(keys.cookie);
    int clearance = c.check(keys, cookie, client, now);
    if (clearance != Challenges.VALID) {
      return challenge(o, keys, d, nanos, client, now, clearance == Challenges.EXPIRED
          ? "expired" : clearance == Challenges.INVALID ? "invalid" : "none");
    }
    // A clearance is a budget: this request spends one of its requests past the rule.
    CompletionStage<Decision> spent = limiter.checkAsync(List.of(keys.budget),
        Challenges.clearanceIdentity(Challenges.clearanceId(cookie)), 1);
    return then(o, spent, (x, b) -> {
      if (b != null && !b.allowed() && !b.degraded()) {
        listener.challenge(rule.name(), "spent");
        return challenge(x, keys, d, nanos, client, now, "spent");
      }
      listener.challenge(rule.name(), "cleared");
      x.cleared();
      return admission.decideWithout(x, rule);
    });
  }

  /**
   * The refusal is reported; a request that is not a browser's navigation gets it (its JSON
   * naming the challenge); a browser's is answered by the challenge ({@code why}: the clearance
   * it had: none, expired, invalid, spent).
   */
  private Outcome challenge(Outcome o, Challenges.Keys keys, Decision d, long nanos,
      ClientAddress client, long now, String why) {
    RequestView request = o.request();
    admission.report(o, o.check().rules(), d, nanos);
    if (!browser(o, request)) {
      o.refused(namingChallenge);
      return o;
    }
    String value = request.cookie(Challenges.ANSWER_COOKIE);
    Challenges.Answer answer = value == null || value.isEmpty() ? null
        : c.answer(keys, value, client, now);
    if (answer != null && answer.verdict == Challenges.Answer.RIGHT) {
      return spend(o, keys, answer, client, now);
    }
    if (answer != null && answer.verdict == Challenges.Answer.WRONG) {
      return wrong(o, keys.rule, answer, client);
    }
    return issue(o, keys, d, client, now, why);
  }

  private ClientAddress client(RequestView request) {
    try {
      return request.clientAddress(c.resolver());
    } catch (RuntimeException e) {
      return null;   // no address: bound to the unknown network, as its key is to the shared bucket
    }
  }

  /** A browser's navigation: a GET of an HTTP request whose {@code Accept} prefers HTML. */
  private static boolean browser(Outcome o, RequestView request) {
    return DecisionListener.HTTP.equals(o.kind()) && "GET".equals(request.method())
        && !request.websocketUpgrade() && Accept.prefersHtml(request.header("accept"));
  }

  private Outcome issue(Outcome o, Challenges.Keys keys, Decision refusal, ClientAddress client,
      long now, String why) {
    Last seen = LAST.get();
    long millis = c.settings().clock().millis();
    if (seen.limitedBy == c && seen.refusedClient != null && seen.refusedClient.equals(client)
        && millis >= seen.refusedFrom && millis < seen.refusedUntil) {
      return limited(o, keys.rule, -Math.floorDiv(-(seen.refusedUntil - millis), 1000), false);
    }
    CompletionStage<Decision> scored =
        limiter.checkAsync(clientRules, Challenges.identity(null, client), 1);
    return then(o, scored, (x, d) -> {
      if (!d.allowed() && !d.degraded()) {
        Last last = LAST.get();
        last.refusedClient = client;
        last.refusedFrom = millis;
        last.refusedUntil = millis + d.retryAfterMillis();
        return limited(x, keys.rule, d.retryAfterSeconds(), false);
      }
      // An allowed decision tells what is left, not the score: one point a page, so the score
      // is what is missing from the maximum.
      double score = d.degraded() || d.remaining() < 0 ? Double.NaN
          : c.settings().maxScore() - d.remaining();
      int difficulty = c.difficulty(keys.rule, score);
      long retryAfter = refusal.retryAfterSeconds();
      Last last = LAST.get();
      if (last.page != null && last.keys == keys && last.second == now
          && last.difficulty == difficulty && last.retryAfter == retryAfter
          && java.util.Objects.equals(last.client, client)) {
        listener.challenge(keys.rule.name(), "issued");
        x.challenged(last.page, "issued", why);
        return x;
      }
      String puzzle = c.puzzle(keys, client, difficulty, now);
      String nonce = Challenges.nonceOf(puzzle);
      List<String> fields = new ArrayList<>(16);
      html(fields);
      fields.add("retry-after");
      fields.add(Long.toString(retryAfter));
      fields.add("content-security-policy");
      fields.add(ChallengePages.policy(nonce));
      if (c.settings().noscript() == Challenge.NoScript.REFRESH) {
        fields.add("set-cookie");
        fields.add(c.answerCookie(puzzle));
      }
      Answer page = new Answer(c.settings().status(), fields,
          c.pages().puzzle(nonce, puzzle, difficulty));
      last.keys = keys;
      last.client = client;
      last.difficulty = difficulty;
      last.retryAfter = retryAfter;
      last.second = now;
      last.page = page;
      listener.challenge(keys.rule.name(), "issued");
      x.challenged(page, "issued", why);
      return x;
    });
  }

  private Outcome spend(Outcome o, Challenges.Keys keys, Challenges.Answer answer,
      ClientAddress client, long now) {
    Rule rule = keys.rule;
    return then(o, limiter.checkAsync(spendRules, Challenges.identity(answer.nonce, client), 1),
        (x, d) -> {
          if (!d.allowed()) {
            if (d.degraded()) {
              x.end(Action.UNAVAILABLE, d);
              return x;
            }
            if (d.refusedBy(0)) {
              listener.challenge(rule.name(), "replayed");
              return verdict(x, 403, c.pages().used(), null, "replayed", "nonce already spent");
            }
            return limited(x, rule, d.retryAfterSeconds(), true);
          }
          // Each solve raises the client's score, so the next puzzle (once this clearance is
          // spent) is harder; at the score's maximum it stays where it is.
          CompletionStage<Decision> raised = limiter.checkAsync(clientRules,
              Challenges.identity(null, client), c.settings().raiseEvery());
          return then(x, raised, (y, r) -> {
            listener.challenge(rule.name(), "solved");
            return verdict(y, 200, c.pages().passed(), c.clearanceCookie(keys,
                c.clearance(keys, client, now, answer.nonce)), "solved", answer.why);
          });
        });
  }

  private Outcome wrong(Outcome o, Rule rule, Challenges.Answer answer, ClientAddress client) {
    listener.challenge(rule.name(), "failed");
    return then(o, limiter.checkAsync(clientRules, Challenges.identity(null, client),
        c.settings().failureCost()), (x, d) -> {
          if (!d.allowed() && !d.degraded()) {
            return limited(x, rule, d.retryAfterSeconds(), true);
          }
          return verdict(x, 403, c.pages().failed(), null, "failed", answer.why);
        });
  }

  /**
   * Refused by the challenge's own limit: 429 and when to come back ({@code spends}: the
   * request brought an answer, whose cookie is removed).
   */
  private Outcome limited(Outcome o, Rule rule, long retryAfter, boolean spends) {
    listener.challenge(rule.name(), "refused");
    Last last = LAST.get();
    Answer limited = last.limited;
    if (limited == null || last.limitedBy != c || last.limitedRetryAfter != retryAfter
        || last.limitedSpends != spends) {
      List<String> fields = new ArrayList<>(10);
      fields.add("content-type");
      fields.add(Bodies.HTML);
      fields.add("cache-control");
      fields.add("no-store");
      fields.add("retry-after");
      fields.add(Long.toString(Math.max(1, retryAfter)));
      fields.add("content-security-policy");
      fields.add(ChallengePages.SMALL_POLICY);
      if (spends) {
        fields.add("set-cookie");
        fields.add(c.spentAnswerCookie());
      }
      limited = new Answer(429, fields, c.pages().limited());
      last.limited = limited;
      last.limitedBy = c;
      last.limitedRetryAfter = retryAfter;
      last.limitedSpends = spends;
    }
    o.challenged(limited, "refused", null);
    return o;
  }

  private Outcome verdict(Outcome o, int status, byte[] page, String clearance, String step,
      String why) {
    List<String> fields = new ArrayList<>(10);
    html(fields);
    fields.add("content-security-policy");
    fields.add(ChallengePages.SMALL_POLICY);
    if (clearance != null) {
      fields.add("set-cookie");
      fields.add(clearance);
    }
    fields.add("set-cookie");
    fields.add(c.spentAnswerCookie());
    o.challenged(new Answer(status, fields, page), step, step.equals("failed") ? why : null);
    return o;
  }

  private static void html(List<String> fields) {
    fields.add("content-type");
    fields.add(Bodies.HTML);
    fields.add("cache-control");
    fields.add("no-store");
    fields.add("x-content-type-options");
    fields.add("nosniff");
    fields.add("referrer-policy");
    fields.add("same-origin");
  }

  /**
   * {@code next} applied to {@code stage}'s value, as the admission step goes on after a store
   * call ({@link Admission#then}); a failed stage gives {@code next} null (only a reset can fail:
   * checks never complete exceptionally).
   */
  private <T> Outcome then(Outcome o, CompletionStage<T> stage,
      BiFunction<Outcome, T, Outcome> next) {
    return admission.then(o, stage.handle((v, e) -> e == null ? v : null), next);
  }

}
