package dev.sluice.core.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Decision;
import dev.sluice.core.DecisionListener;
import dev.sluice.core.FakeTicker;
import dev.sluice.core.InvalidValueException;
import dev.sluice.core.Limit;
import dev.sluice.core.Mode;
import dev.sluice.core.RateLimiter;
import dev.sluice.core.Rule;
import dev.sluice.core.Store;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.http.Answer;
import dev.sluice.core.policy.Admission.Action;
import dev.sluice.core.policy.Admission.Outcome;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The challenge outcome of the admission step, as timelines on a fake wall clock and ticker:
 * what a browser and a script get past a challenging rule, a solved puzzle's clearance and what
 * breaks it (one edited byte, its expiry, another network, other settings, a retired key), a
 * nonce spent once, wrong answers and floods of pages refused by the challenge's own limit.
 * Answers are solved here with the JDK's SHA-256, not the code under test's.
 */
class ChallengeTest {

  static final String HTML_ACCEPT = "text/html,application/xhtml+xml,*/*;q=0.8";
  static final byte[] KEY_A = "key-a-0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
  static final byte[] KEY_B = "key-b-0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);

  /** A wall clock the test moves. */
  static final class Clock implements InstantSource {
    final AtomicLong millis = new AtomicLong(1_767_225_600_000L);

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis.get());
    }

    void advance(Duration d) {
      millis.addAndGet(d.toMillis());
    }
  }

  /** A request as a browser or a script sends it: headers and cookies. */
  record Req(String method, String path, String peer, Map<String, String> fields,
      Map<String, String> cookies) implements RequestView {

    static Req browser(String path) {
      return new Req("GET", path, "203.0.113.7", Map.of("accept", HTML_ACCEPT), Map.of());
    }

    static Req script(String path) {
      return new Req("GET", path, "203.0.113.7", Map.of("accept", "*/*"), Map.of());
    }

    Req from(String address) {
      return new Req(method, path, address, fields, cookies);
    }

    Req cookie(String name, String value) {
      Map<String, String> c = new HashMap<>(cookies);
      c.put(name, value);
      return new Req(method, path, peer, fields, c);
    }

    Req method(String m) {
      return new Req(m, path, peer, fields, cookies);
    }

    @Override
    public List<String> headers(String name) {
      String v = fields.get(name.toLowerCase(Locale.ROOT));
      return v == null ? List.of() : List.of(v);
    }

    @Override
    public String cookie(String name) {
      return cookies.get(name);
    }

    @Override
    public String query(String name) {
      return null;
    }

    @Override
    public boolean websocketUpgrade() {
      return false;
    }
  }

  final FakeTicker ticker = new FakeTicker();
  final Clock clock = new Clock();
  final Store store = Store.memory(ticker, 10_000);
  final List<String> events = new ArrayList<>();
  final DecisionListener listener = new DecisionListener() {
    @Override
    public void decision(String kind, List<Rule> rules, Decision d, long nanos) {
      events.add((d.allowed() ? "allowed " : "refused ") + d.rule());
    }

    @Override
    public void challenge(String rule, String step) {
      events.add(step + " " + rule);
    }
  };

  static Rule pages(int perMinute) {
    return Rule.builder("pages").key("ip")
        .limit(Limit.fixedWindow("pages", perMinute, Duration.ofMinutes(1)))
        .action(Rule.Action.CHALLENGE).difficulty(8, 8).build();
  }

  Challenge.Builder settings() {
    return Challenge.builder().keys(List.of(KEY_A), "test").clock(clock);
  }

  Admission admission(Rule rule, Challenge settings) {
    return admission(rule, settings, store);
  }

  Admission admission(Rule rule, Challenge settings, Store s) {
    Policy policy = Policy.builder().rule(rule).global(rule.name()).challenge(settings)
        .clientAddress(ClientAddressResolver.builder().ipv6Prefix(64).build()).build();
    return Admission.builder().limiter(RateLimiter.of(s)).policy(policy).listener(listener)
        .build();
  }

  static String setCookie(Answer a, String name) {
    for (int i = 0; i < a.fieldCount(); i++) {
      if (a.fieldName(i).equals("set-cookie") && a.fieldValue(i).startsWith(name + "=")) {
        String v = a.fieldValue(i);
        return v.substring(name.length() + 1, v.indexOf(';'));
      }
    }
    return null;
  }

  static String body(Answer a) {
    return new String(a.bodyBytes(), StandardCharsets.UTF_8);
  }

  static final Pattern PUZZLE = Pattern.compile("var P=\"([^\"]+)\",D=(\\d+)");

  /** The page's puzzle and difficulty, solved: the answer cookie's value. */
  static String solve(Answer page) {
    Matcher m = PUZZLE.matcher(body(page));
    assertThat(m.find()).as("a puzzle in the page").isTrue();
    return solve(m.group(1), Integer.parseInt(m.group(2)));
  }

  static String solve(String puzzle, int difficulty) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      for (long n = 0; ; n++) {
        String answer = puzzle + "." + n;
        byte[] d = md.digest(answer.getBytes(StandardCharsets.US_ASCII));
        if (leadingZeros(d) >= difficulty) {
          return answer;
        }
      }
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  static int leadingZeros(byte[] d) {
    int z = 0;
    for (byte b : d) {
      if (b == 0) {
        z += 8;
        continue;
      }
      return z + Integer.numberOfLeadingZeros(b & 0xff) - 24;
    }
    return z;
  }

  /** A request that spends the one request per minute, then one challenged. */
  Outcome challenged(Admission a, Req r) {
    assertThat(a.admit(r, DecisionListener.HTTP).action()).isEqualTo(Action.FORWARD);
    Outcome o = a.admit(r, DecisionListener.HTTP);
    assertThat(o.action()).isEqualTo(Action.CHALLENGE);
    return o;
  }

  /** The clearance cookie of a solved page, and the answer it got. */
  String clear(Admission a, Req r) {
    Outcome page = challenged(a, r);
    Outcome passed = a.admit(r.cookie("sluice-challenge", solve(page.answer())),
        DecisionListener.HTTP);
    assertThat(passed.challenge()).isEqualTo("solved");
    return setCookie(passed.answer(), "sluice-clearance-pages");
  }

  @Test
  void browserPastTheLimit_getsThePage_aScriptTheRefusalNamingTheChallenge() {
    Admission a = admission(pages(1), settings().build());
    Outcome page = challenged(a, Req.browser("/docs"));
    Answer p = page.answer();
    assertThat(page.challenge()).isEqualTo("issued");
    assertThat(page.verdict()).isEqualTo(RequestVerdict.CHALLENGED);
    assertThat(page.challengeReason()).isEqualTo("none");
    assertThat(page.decision().rule()).as("the decision says why").isEqualTo("pages");
    assertThat(p.status()).isEqualTo(429);
    assertThat(p.field("retry-after")).isEqualTo(Long.toString(
        page.decision().retryAfterSeconds()));
    assertThat(p.field("cache-control")).isEqualTo("no-store");
    String nonce = Challenges.nonceOf(PUZZLE.matcher(body(p)).results().findFirst()
        .orElseThrow().group(1));
    assertThat(p.field("content-security-policy")).startsWith("default-src 'none'; "
        + "script-src 'nonce-" + nonce + "'; style-src 'nonce-" + nonce + "'; worker-src blob:");
    assertThat(body(p)).contains("<script nonce=\"" + nonce + "\">", "role=\"status\"",
        "<html lang=\"en\">", "This check needs JavaScript")
        .doesNotContain("http://", "https://", "src=", "onclick", "http-equiv=\"refresh\"");
    assertThat(setCookie(p, "sluice-challenge")).as("no clearance for waiting, by default")
        .isNull();
    assertThat(p.bodyLength()).isLessThanOrEqualTo(ChallengePages.MAX_PAGE_BYTES);

    Outcome refused = a.admit(Req.script("/docs").from("198.51.100.1"), DecisionListener.HTTP);
    assertThat(refused.action()).isEqualTo(Action.FORWARD);
    refused = a.admit(Req.script("/docs").from("198.51.100.1"), DecisionListener.HTTP);
    assertThat(refused.action()).isEqualTo(Action.REFUSE);
    assertThat(refused.responses().body(refused.decision(), false))
        .startsWith("{\"error\":\"too many requests\"").endsWith(",\"rule\":\"pages\","
            + "\"action\":\"challenge\"}");
    Outcome post = a.admit(Req.browser("/docs").method("POST"), DecisionListener.HTTP);
    assertThat(post.action()).as("a POST cannot be retried by the page").isEqualTo(Action.REFUSE);
    assertThat(events).containsExactly("allowed pages", "refused pages", "issued pages",
        "allowed pages", "refused pages", "refused pages");
  }

  /**
   * Issue 30, item 4: a clearance bought everything (200 of 200 requests past a limit of 5 for an
   * hour). Now it is a budget: the rule's own limit of requests past it, whoever sends them with
   * the cookie (a page's fetches too); spent, the next puzzle is harder.
   */
  @Test
  void solved_setsAClearance_whichIsABudgetOfTheRulesOwnLimit_thenAHarderPuzzle() {
    Rule rule = Rule.builder("pages").key("ip")
        .limit(Limit.fixedWindow("pages", 3, Duration.ofMinutes(1)))
        .action(Rule.Action.CHALLENGE).difficulty(8, 10).build();
    Admission a = admission(rule, settings().build());
    Req browser = Req.browser("/docs");
    for (int i = 0; i < 3; i++) {
      assertThat(a.admit(browser, DecisionListener.HTTP).action()).isEqualTo(Action.FORWARD);
    }
    Outcome page = a.admit(browser, DecisionListener.HTTP);
    assertThat(page.action()).isEqualTo(Action.CHALLENGE);
    Outcome passed = a.admit(browser.cookie("sluice-challenge", solve(page.answer())),
        DecisionListener.HTTP);
    Answer p = passed.answer();
    assertThat(p.status()).isEqualTo(200);
    assertThat(passed.verdict()).isEqualTo(RequestVerdict.CHALLENGE_PASSED);
    assertThat(body(p)).contains("<meta http-equiv=\"refresh\" content=\"0\">");
    String clearance = setCookie(p, "sluice-clearance-pages");
    assertThat(clearance).matches("[A-Za-z0-9_-]{4}\\.\\d+\\.[A-Za-z0-9_-]{16}\\."
        + "[A-Za-z0-9_-]{43}");
    assertThat(p.toString()).contains("; HttpOnly; SameSite=Lax", "sluice-challenge=; Path=/; "
        + "Max-Age=0");

    Outcome over = a.admit(browser, DecisionListener.HTTP);
    assertThat(over.action()).as("solving resets nothing: without the cookie, a page")
        .isEqualTo(Action.CHALLENGE);
    Req cleared = browser.cookie("sluice-clearance-pages", clearance);
    Outcome past = a.admit(cleared, DecisionListener.HTTP);
    assertThat(past.action()).isEqualTo(Action.FORWARD);
    assertThat(past.verdict()).isEqualTo(RequestVerdict.CHALLENGE_PASSED);
    Outcome api = a.admit(Req.script("/api").cookie("sluice-clearance-pages", clearance),
        DecisionListener.HTTP);
    assertThat(api.action()).as("a cleared page's fetch, Accept */*").isEqualTo(Action.FORWARD);
    assertThat(a.admit(cleared, DecisionListener.HTTP).action()).isEqualTo(Action.FORWARD);
    Outcome spent = a.admit(cleared, DecisionListener.HTTP);
    assertThat(spent.challenge()).as("three past the rule, then spent").isEqualTo("issued");
    assertThat(spent.challengeReason()).isEqualTo("spent");
    Matcher m = PUZZLE.matcher(body(spent.answer()));
    assertThat(m.find()).isTrue();
    // The score: three pages and the answer a point each, the solve four: 8 points, 2 bits.
    assertThat(Integer.parseInt(m.group(2))).as("the solve raised the difficulty").isEqualTo(10);
    Outcome scriptSpent = a.admit(Req.script("/api").cookie("sluice-clearance-pages",
        clearance), DecisionListener.HTTP);
    assertThat(scriptSpent.action()).isEqualTo(Action.REFUSE);
    assertThat(events).contains("solved pages", "cleared pages", "spent pages");
  }

  @Test
  void clearance_editedByOneByte_expired_orOnAnotherNetwork_isChallengedAgain() {
    Admission a = admission(pages(1), settings().clearance(Duration.ofMinutes(10))
        .limit(10_000, Duration.ofSeconds(1), 1, 10_000).clearanceRequests(100).build());
    Req v6 = Req.browser("/docs").from("2001:db8:1:1::10");
    String clearance = clear(a, v6);
    a.admit(v6, DecisionListener.HTTP);   // spends the minute's one request again

    for (int i = 0; i < clearance.length(); i++) {
      char c = clearance.charAt(i);
      String edited = clearance.substring(0, i) + (c == 'A' ? 'B' : 'A')
          + clearance.substring(i + 1);
      if (c == '.') {
        continue;
      }
      Outcome o = a.admit(v6.cookie("sluice-clearance-pages", edited), DecisionListener.HTTP);
      assertThat(o.challenge()).as("byte %d edited", i).isEqualTo("issued");
      assertThat(o.challengeReason()).isEqualTo("invalid");
    }
    Outcome sameNet = a.admit(v6.from("2001:db8:1:1:ffff::99")
        .cookie("sluice-clearance-pages", clearance), DecisionListener.HTTP);
    assertThat(sameNet.action()).as("another address of the same /64").isEqualTo(Action.FORWARD);
    a.admit(v6.from("2001:db8:1:2::10"), DecisionListener.HTTP);   // its own key's request
    Outcome otherNet = a.admit(v6.from("2001:db8:1:2::10")
        .cookie("sluice-clearance-pages", clearance), DecisionListener.HTTP);
    assertThat(otherNet.challengeReason()).as("another /64").isEqualTo("invalid");

    clock.advance(Duration.ofMinutes(10).minusSeconds(1));
    assertThat(a.admit(v6.cookie("sluice-clearance-pages", clearance), DecisionListener.HTTP)
        .action()).as("a second before it expires").isEqualTo(Action.FORWARD);
    clock.advance(Duration.ofSeconds(1));
    ticker.advance(Duration.ofMinutes(10));
    a.admit(v6, DecisionListener.HTTP);
    Outcome expired = a.admit(v6.cookie("sluice-clearance-pages", clearance),
        DecisionListener.HTTP);
    assertThat(expired.challenge()).isEqualTo("issued");
    assertThat(expired.challengeReason()).isEqualTo("expired");
  }

  /** A clearance is bound to the client's address: another in its /24 only by configuration. */
  @Test
  void ipv4Clearance_isBoundToTheAddress_aWiderNetworkOnlyByConfiguration() {
    Admission a = admission(pages(1), settings().clearanceRequests(10).build());
    Req r = Req.browser("/docs").from("192.0.2.10");
    String clearance = clear(a, r);
    assertThat(a.admit(r.cookie("sluice-clearance-pages", clearance), DecisionListener.HTTP)
        .action()).isEqualTo(Action.FORWARD);
    a.admit(r.from("192.0.2.200"), DecisionListener.HTTP);
    assertThat(a.admit(r.from("192.0.2.200").cookie("sluice-clearance-pages", clearance),
        DecisionListener.HTTP).challengeReason()).as("another address of the /24")
        .isEqualTo("invalid");

    Admission wide = admission(pages(1), settings().prefixes(24, 64).clearanceRequests(10)
        .build(), Store.memory(ticker, 100));
    String shared = clear(wide, r);
    wide.admit(r.from("192.0.2.201"), DecisionListener.HTTP);
    assertThat(wide.admit(r.from("192.0.2.201").cookie("sluice-clearance-pages", shared),
        DecisionListener.HTTP).action()).isEqualTo(Action.FORWARD);
    wide.admit(r.from("192.0.3.10"), DecisionListener.HTTP);
    assertThat(wide.admit(r.from("192.0.3.10").cookie("sluice-clearance-pages", shared),
        DecisionListener.HTTP).challengeReason()).isEqualTo("invalid");
  }

  @Test
  void rotatedKeys_verifyDuringTheOverlap_andOtherSettingsInvalidate() {
    Rule rule = pages(1);
    Req r = Req.browser("/docs");
    String underA = clear(admission(rule, settings().build()), r);

    Admission rotated = admission(rule, settings().keys(List.of(KEY_B, KEY_A), "new, old")
        .build());
    rotated.admit(r, DecisionListener.HTTP);
    assertThat(rotated.admit(r.cookie("sluice-clearance-pages", underA), DecisionListener.HTTP)
        .action()).as("signed by the old key, still verified").isEqualTo(Action.FORWARD);

    Admission retired = admission(rule, settings().keys(List.of(KEY_B), "new").build());
    assertThat(retired.admit(r.cookie("sluice-clearance-pages", underA), DecisionListener.HTTP)
        .challengeReason()).isEqualTo("invalid");

    Admission changed = admission(rule, settings().prefixes(24, 48).build());
    assertThat(changed.admit(r.cookie("sluice-clearance-pages", underA), DecisionListener.HTTP)
        .challengeReason()).as("the policy's challenge settings changed").isEqualTo("invalid");
    Admission harder = admission(Rule.builder("pages").key("ip")
        .limit(Limit.fixedWindow("pages", 1, Duration.ofMinutes(1)))
        .action(Rule.Action.CHALLENGE).difficulty(9, 9).build(), settings().build());
    assertThat(harder.admit(r.cookie("sluice-clearance-pages", underA), DecisionListener.HTTP)
        .challengeReason()).as("the rule's difficulty changed").isEqualTo("invalid");
  }

  @Test
  void nonceSolvedOnce_isRefusedWhenSentAgain_evenThroughAnotherAdmission() {
    Rule rule = pages(1);
    Admission a = admission(rule, settings().build());
    Req r = Req.browser("/docs");
    String answer = solve(challenged(a, r).answer());
    assertThat(a.admit(r.cookie("sluice-challenge", answer), DecisionListener.HTTP).challenge())
        .isEqualTo("solved");
    // Another instance of the fleet: its own admission (and policy), the same store and key.
    Admission other = admission(rule, settings().build());
    other.admit(r, DecisionListener.HTTP);
    Outcome again = other.admit(r.cookie("sluice-challenge", answer), DecisionListener.HTTP);
    assertThat(again.challenge()).isEqualTo("replayed");
    assertThat(again.answer().status()).isEqualTo(403);
    assertThat(events).contains("replayed pages");
  }

  @Test
  void wrongAnswers_costTheirPoints_andAFloodOfPagesIsRefused() {
    Admission a = admission(pages(1),
        settings().limit(10, Duration.ofSeconds(10), 4, 100).build());
    Req r = Req.browser("/docs");
    String answer = solve(challenged(a, r).answer());   // 1 point
    String unsolved = answer.substring(0, answer.lastIndexOf('.')) + ".x";
    Outcome wrong = a.admit(r.cookie("sluice-challenge", unsolved), DecisionListener.HTTP);
    assertThat(wrong.challenge()).isEqualTo("failed");   // 5 points
    assertThat(wrong.answer().status()).isEqualTo(403);
    String otherNetwork = answer;
    Outcome forged = a.admit(r.from("198.51.100.9").cookie("sluice-challenge", otherNetwork),
        DecisionListener.HTTP);
    assertThat(forged.action()).isEqualTo(Action.FORWARD);   // that client's first request
    forged = a.admit(r.from("198.51.100.9").cookie("sluice-challenge", otherNetwork),
        DecisionListener.HTTP);
    assertThat(forged.challengeReason()).isEqualTo("a forged puzzle, or another network's");

    List<String> steps = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      steps.add(a.admit(r, DecisionListener.HTTP).challenge());
    }
    assertThat(steps).as("5 points spent, 5 more pages, then refused")
        .containsExactly("issued", "issued", "issued", "issued", "issued", "refused", "refused");
    Outcome limited = a.admit(r, DecisionListener.HTTP);
    assertThat(limited.answer().status()).isEqualTo(429);
    assertThat(limited.answer().field("retry-after")).as("a point decays in 10 s")
        .isEqualTo("10");
    ticker.advance(Duration.ofSeconds(10));   // time passes for the store and the wall alike
    clock.advance(Duration.ofSeconds(10));
    assertThat(a.admit(r, DecisionListener.HTTP).challenge()).as("a point decayed")
        .isEqualTo("issued");
  }

  @Test
  void aClientsScore_raisesTheDifficulty_upToTheRulesMaximum() {
    Rule rule = Rule.builder("pages").key("ip")
        .limit(Limit.fixedWindow("pages", 1, Duration.ofMinutes(1)))
        .action(Rule.Action.CHALLENGE).difficulty(4, 6).build();
    Admission a = admission(rule, settings().limit(50, Duration.ofMinutes(1), 4, 2).build());
    Req r = Req.browser("/docs");
    a.admit(r, DecisionListener.HTTP);
    List<Integer> bits = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      Matcher m = PUZZLE.matcher(body(a.admit(r, DecisionListener.HTTP).answer()));
      assertThat(m.find()).isTrue();
      bits.add(Integer.parseInt(m.group(2)));
    }
    assertThat(bits).containsExactly(4, 5, 5, 6, 6, 6, 6);
  }

  @Test
  void withoutJavaScript_thePuzzleAlonePasses_afterTheWait_onlyWhenOptedIn() {
    Admission a = admission(pages(1), settings().noscript(Challenge.NoScript.REFRESH)
        .noscriptWait(Duration.ofSeconds(5)).build());
    Req r = Req.browser("/docs");
    Answer page = challenged(a, r).answer();
    assertThat(body(page)).contains("<noscript><meta http-equiv=\"refresh\" content=\"5\">");
    String puzzle = setCookie(page, "sluice-challenge");
    assertThat(puzzle).as("set by the server for the noscript reload").isNotNull();
    clock.advance(Duration.ofSeconds(4));
    Outcome early = a.admit(r.cookie("sluice-challenge", puzzle), DecisionListener.HTTP);
    assertThat(early.challenge()).as("before the wait: a new page").isEqualTo("issued");
    clock.advance(Duration.ofSeconds(1));
    assertThat(a.admit(r.cookie("sluice-challenge", puzzle), DecisionListener.HTTP).challenge())
        .isEqualTo("solved");

    Admission strict = admission(pages(1), settings().build(), Store.memory(ticker, 100));
    Answer strictPage = challenged(strict, r).answer();
    assertThat(setCookie(strictPage, "sluice-challenge")).isNull();
    assertThat(body(strictPage)).contains("This check needs JavaScript")
        .doesNotContain("http-equiv=\"refresh\"");
    Matcher m = PUZZLE.matcher(body(strictPage));
    assertThat(m.find()).isTrue();
    clock.advance(Duration.ofSeconds(30));
    assertThat(strict.admit(r.cookie("sluice-challenge", m.group(1)), DecisionListener.HTTP)
        .challenge()).isEqualTo("failed");
  }

  @Test
  void puzzlePastSolveWithin_getsANewPage_notAFailure() {
    Admission a = admission(pages(1), settings().solveWithin(Duration.ofMinutes(1)).build());
    Req r = Req.browser("/docs");
    String answer = solve(challenged(a, r).answer());
    clock.advance(Duration.ofSeconds(61));
    Outcome late = a.admit(r.cookie("sluice-challenge", answer), DecisionListener.HTTP);
    assertThat(late.challenge()).isEqualTo("issued");
  }

  @Test
  void skippedPaths_areRefusedNotChallenged() {
    Admission a = admission(pages(1), settings().build());
    Req robots = Req.browser("/robots.txt");
    a.admit(robots, DecisionListener.HTTP);
    Outcome o = a.admit(robots, DecisionListener.HTTP);
    assertThat(o.action()).isEqualTo(Action.REFUSE);
    Outcome wellKnown = a.admit(Req.browser("/.well-known/security.txt"), DecisionListener.HTTP);
    assertThat(wellKnown.action()).isEqualTo(Action.REFUSE);
    assertThat(wellKnown.responses().body(wellKnown.decision(), false))
        .doesNotContain("challenge");
  }

  @Test
  void aRemoteStore_answersTheChallengeStepsAsAStage() {
    TestStore remote = TestStore.remote(store);
    Admission a = admission(pages(1), settings().build(), remote);
    Req r = Req.browser("/docs");
    Outcome first = a.admit(r, DecisionListener.HTTP);
    remote.replies.poll().run();
    assertThat(first.stage().toCompletableFuture().join().action()).isEqualTo(Action.FORWARD);
    Outcome second = a.admit(r, DecisionListener.HTTP);
    assertThat(second.pending()).isTrue();
    remote.replies.poll().run();   // the rule refuses
    assertThat(second.stage().toCompletableFuture()).as("the client's score is asked next")
        .isNotDone();
    remote.replies.poll().run();
    Outcome page = second.stage().toCompletableFuture().join();
    assertThat(page.action()).isEqualTo(Action.CHALLENGE);
    Outcome passed = a.admit(r.cookie("sluice-challenge", solve(page.answer())),
        DecisionListener.HTTP);
    while (!remote.replies.isEmpty() || !passed.stage().toCompletableFuture().isDone()) {
      remote.replies.poll().run();
    }
    assertThat(passed.stage().toCompletableFuture().join().challenge()).isEqualTo("solved");
  }

  @Test
  void actionLog_runsAsAShadowRule_andChallengeSettingsAreValidated() {
    Rule log = Rule.builder("log").limit(Limit.fixedWindow("w", 1, Duration.ofMinutes(1)))
        .action(Rule.Action.LOG).build();
    assertThat(log.mode()).isEqualTo(Mode.SHADOW);
    assertThat(pages(1).difficulty()).isEqualTo(8);
    assertThat(Rule.builder("d").limit(Limit.fixedWindow("w", 1, Duration.ofMinutes(1)))
        .action(Rule.Action.CHALLENGE).build().difficulty()).isEqualTo(16);
    assertThatThrownBy(() -> Rule.builder("x").limit(Limit.fixedWindow("w", 1,
        Duration.ofMinutes(1))).difficulty(10, 10).build())
        .isInstanceOf(InvalidValueException.class)
        .hasMessageContaining("no difficulty unless the rule's action is challenge");
    assertThatThrownBy(() -> Rule.builder("x").difficulty(30, 30))
        .hasMessage("difficulty : 30 (expected: 1..24 leading zero bits (2^24 hashes take a "
            + "browser about 10 s))");
    assertThatThrownBy(() -> Rule.builder("x").limit(Limit.fixedWindow("w", 1,
        Duration.ofMinutes(1))).ban(Duration.ofMinutes(1)).action(Rule.Action.CHALLENGE)
        .build()).hasMessageContaining("no ban on a rule whose action is challenge");
    assertThatThrownBy(() -> Challenge.builder().keys(List.of(new byte[16]), "f"))
        .hasMessage("keys[0] : 16 bytes (expected: at least 32 bytes)");
    assertThatThrownBy(() -> Challenge.builder().status(204))
        .hasMessageContaining("status : 204");
    assertThatThrownBy(() -> Challenge.builder().noscriptWait(Duration.ofSeconds(20))
        .solveWithin(Duration.ofSeconds(15)).build())
        .hasMessageContaining("noscriptWait : PT20S (expected: shorter than solveWithin");
    Rule p1 = Rule.builder("a b").limit(Limit.fixedWindow("w", 1, Duration.ofMinutes(1)))
        .action(Rule.Action.CHALLENGE).build();
    Rule p2 = Rule.builder("a_b").limit(Limit.fixedWindow("w", 1, Duration.ofMinutes(1)))
        .action(Rule.Action.CHALLENGE).build();
    assertThatThrownBy(() -> Policy.builder().rule(p1).rule(p2).build())
        .hasMessageContaining("would share the clearance cookie sluice-clearance-a_b");
  }

  /**
   * A challenging rule beside a concurrency rule: a challenge page or verdict gives the request's
   * lease back (nothing is forwarded), and a request a clearance lets past keeps its lease until
   * it ends, as any forwarded request.
   */
  @Test
  void challengeAnswers_giveTheLeaseBack_aClearedRequestHoldsItUntilItEnds() {
    Rule pages = pages(1);
    Rule conn = Rule.builder("conn").concurrency(1, Duration.ofMinutes(1)).build();
    Policy policy = Policy.builder().rule(pages).rule(conn).global("pages").global("conn")
        .challenge(settings().clearanceRequests(10).build()).build();
    Admission a = Admission.builder().limiter(RateLimiter.of(store)).policy(policy)
        .listener(listener).build();
    Req browser = Req.browser("/docs");
    String key = "conn:" + browser.peer();

    Outcome first = a.admit(browser, DecisionListener.HTTP);
    assertThat(first.action()).isEqualTo(Action.FORWARD);
    assertThat(store.leases(key)).isEqualTo(1);
    first.ended();
    Outcome page = a.admit(browser, DecisionListener.HTTP);
    assertThat(page.action()).isEqualTo(Action.CHALLENGE);
    assertThat(store.leases(key)).as("the page holds no lease").isZero();
    Outcome solved = a.admit(browser.cookie("sluice-challenge", solve(page.answer())),
        DecisionListener.HTTP);
    assertThat(solved.challenge()).isEqualTo("solved");
    assertThat(store.leases(key)).as("nor does the verdict").isZero();

    Req cleared = browser.cookie("sluice-clearance-pages",
        setCookie(solved.answer(), "sluice-clearance-pages"));
    Outcome past = a.admit(cleared, DecisionListener.HTTP);
    assertThat(past.action()).isEqualTo(Action.FORWARD);
    assertThat(events).endsWith("cleared pages");
    assertThat(store.leases(key)).as("the cleared request holds its lease").isEqualTo(1);
    Outcome second = a.admit(cleared, DecisionListener.HTTP);
    assertThat(second.action()).as("the cap of one").isEqualTo(Action.REFUSE);
    assertThat(second.decision().rule()).isEqualTo("conn");
    past.ended();
    assertThat(store.leases(key)).isZero();
    assertThat(a.admit(cleared, DecisionListener.HTTP).action()).isEqualTo(Action.FORWARD);
  }
}
