package dev.sluice.core.policy;

import dev.sluice.core.Identity;
import dev.sluice.core.Limit;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.Rule;
import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.internal.Base64Url;
import dev.sluice.core.internal.HmacKey;
import dev.sluice.core.internal.Sha256;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The cryptography and the texts of a policy's challenges, built once per policy: per challenging
 * rule, keys derived from each signing key, its cookie's name and its puzzle pages. The flow is
 * {@link Admission}'s ({@code challenged}); this class only makes and checks values.
 *
 * <p><b>Clearance cookie</b> {@code <kid>.<expiry>.<id>.<mac>}: {@code kid} names the signing key
 * (4 characters of its hash), {@code expiry} is in epoch seconds, {@code id} is the solved
 * puzzle's nonce (16 characters: the key its budget is counted under in the store), {@code mac}
 * is base64url of HMAC-SHA256 under the rule's clearance key over the client's network (a family
 * byte and 16 bytes, masked to the prefix), the expiry (8 bytes) and the id. The rule's key is HMAC-SHA256 of the
 * signing key over the rule's name, its difficulty and the settings' {@code fingerprint}, so a
 * cookie is bound to all of them without carrying any. Checking one is two SHA-256 blocks.
 *
 * <p><b>Puzzle</b> {@code <kid>.<rule>.<difficulty>.<issued>.<nonce>.<mac>}: {@code rule} is 8
 * characters of the rule's name's hash, {@code nonce} 16 characters (12 bytes) unique to this
 * puzzle, {@code mac} the rule's puzzle key over the network, difficulty, issued time and nonce.
 * An answer is {@code <puzzle>.<n>}, whose SHA-256 must start with {@code difficulty} zero bits;
 * without JavaScript the puzzle alone, once {@code noscriptWait} has passed.
 */
final class Challenges {

  /** The cookie an answer comes back in, set by the page's script (or by the server, without). */
  static final String ANSWER_COOKIE = "sluice-challenge";

  static final int VALID = 0;
  static final int NONE = 1;
  static final int EXPIRED = 2;
  static final int INVALID = 3;

  private static final int KID_CHARS = 4;
  private static final int TAG_CHARS = 8;
  private static final int NONCE_CHARS = 16;
  private static final int MAC_CHARS = Base64Url.length(Sha256.LENGTH);
  /** A puzzle issued this far in the future is forged (clocks of a fleet differ by less). */
  private static final long SKEW_SECONDS = 60;

  private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

  /** One thread's hashing state: nothing is allocated to check a cookie or an answer. */
  static final class Scratch {
    final Sha256 sha = new Sha256();
    final byte[] mac = new byte[Sha256.LENGTH];
  }

  /**
   * A challenging rule's keys (one per signing key, in the same order), cookie, tag, and the
   * budget of its clearances: a bucket per clearance id holding its requests past the rule.
   */
  static final class Keys {
    final Rule rule;
    final String tag;
    final String cookie;
    final HmacKey[] clearance;
    final HmacKey[] puzzle;
    final Rule budget;

    Keys(Rule rule, String tag, String cookie, HmacKey[] clearance, HmacKey[] puzzle,
        Rule budget) {
      this.rule = rule;
      this.tag = tag;
      this.cookie = cookie;
      this.clearance = clearance;
      this.puzzle = puzzle;
      this.budget = budget;
    }
  }

  private final Challenge settings;
  private final ClientAddressResolver resolver;
  private final String[] kids;
  private final Map<String, Keys> byRule = new HashMap<>();
  private final HmacKey nonceKey;
  private final byte[] nonceSalt = new byte[16];
  private final AtomicLong nonces = new AtomicLong();
  private final long clearanceSeconds;
  private final long solveSeconds;
  private final long waitSeconds;
  private final ChallengePages pages;
  /** The single use of nonces: a bucket of one per nonce that refills after solveWithin. */
  final Rule nonceRule;
  /** The challenge's own limit per client (pages, wrong answers), keyed by the client address. */
  final Rule clientRule;

  private Challenges(Challenge settings, List<Rule> rules, ClientAddressResolver resolver) {
    this.settings = settings;
    this.resolver = resolver;
    this.kids = new String[settings.keyCount()];
    for (int i = 0; i < kids.length; i++) {
      kids[i] = Base64Url.encode(Sha256.of(settings.key(i))).substring(0, KID_CHARS);
    }
    for (int i = 0; i < kids.length; i++) {
      for (int j = 0; j < i; j++) {
        if (kids[i].equals(kids[j])) {
          throw new IllegalArgumentException("keys : two keys share the id " + kids[i]
              + " (expected: keys made at random)");
        }
      }
    }
    Map<String, String> tags = new HashMap<>();
    Map<String, String> cookies = new HashMap<>();
    for (Rule rule : rules) {
      if (rule.action() != Rule.Action.CHALLENGE) {
        continue;
      }
      String tag = Base64Url.encode(Sha256.of(rule.name().getBytes(StandardCharsets.UTF_8)))
          .substring(0, TAG_CHARS);
      String clash = tags.put(tag, rule.name());
      if (clash != null) {
        throw new IllegalArgumentException("rules : '" + clash + "' and '" + rule.name()
            + "' share a challenge tag (expected: rename one)");
      }
      String cookie = settings.cookie() + "-" + cookieSafe(rule.name());
      clash = cookies.put(cookie, rule.name());
      if (clash != null) {
        throw new IllegalArgumentException("rules : '" + clash + "' and '" + rule.name()
            + "' would share the clearance cookie " + cookie + " (expected: names that differ "
            + "in a letter or digit)");
      }
      HmacKey[] clearance = new HmacKey[kids.length];
      HmacKey[] puzzle = new HmacKey[kids.length];
      for (int i = 0; i < kids.length; i++) {
        HmacKey master = new HmacKey(settings.key(i));
        clearance[i] = new HmacKey(master.mac(binding("clearance", rule, settings)));
        puzzle[i] = new HmacKey(master.mac(binding("puzzle", rule, settings)));
      }
      long requests = settings.clearanceRequests();
      if (requests == 0) {
        requests = Long.MAX_VALUE;
        for (Limit l : rule.limits()) {
          requests = Math.min(requests, l.capacity());
        }
      }
      // A bucket of the budget that refills one request per clearance lifetime: a clearance
      // buys at most its budget (and one) before it expires.
      Rule budget = Rule.builder("~challenge-budget-" + tag).key("clearance")
          .limit(Limit.tokenBucket("clearance", requests, 1, settings.clearance())).build();
      byRule.put(rule.name(), new Keys(rule, tag, cookie, clearance, puzzle, budget));
    }
    byte[] k = new byte[32];
    SecureRandom random = new SecureRandom();
    random.nextBytes(k);
    random.nextBytes(nonceSalt);
    this.nonceKey = new HmacKey(k);
    this.clearanceSeconds = settings.clearance().toSeconds();
    this.solveSeconds = settings.solveWithin().toSeconds();
    this.waitSeconds = settings.noscriptWait().toSeconds();
    this.pages = new ChallengePages(settings, ANSWER_COOKIE);
    this.nonceRule = Rule.builder("~challenge-nonces").key("nonce")
        .limit(Limit.tokenBucket("once", 1, 1, settings.solveWithin()))
        .onStoreError(OnStoreError.DENY).build();
    this.clientRule = Rule.builder("~challenge-clients").key("ip")
        .limit(Limit.score("challenges", settings.maxScore(), 1, settings.decay())).build();
  }

  /** The challenges of {@code policy}, or null when none of its rules challenges. */
  static Challenges of(Policy policy) {
    boolean any = false;
    for (Rule rule : policy.rules().values()) {
      any |= rule.action() == Rule.Action.CHALLENGE;
    }
    if (!any) {
      return null;
    }
    Challenge settings = policy.challenge() == null ? Challenge.defaults() : policy.challenge();
    return new Challenges(settings, List.copyOf(policy.rules().values()),
        policy.clientAddress());
  }

  private static byte[] binding(String purpose, Rule rule, Challenge s) {
    return ("sluice " + purpose + " v1\n" + rule.name() + "\n" + rule.difficulty() + ".."
        + rule.maxDifficulty() + "\n" + s.fingerprint()).getBytes(StandardCharsets.UTF_8);
  }

  /** A rule name as a cookie name's tail: letters, digits, '-', '_', '.' kept, others '_'. */
  static String cookieSafe(String name) {
    StringBuilder sb = new StringBuilder(name.length());
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '-' || c == '_' || c == '.';
      sb.append(ok ? c : '_');
    }
    return sb.toString();
  }

  Challenge settings() {
    return settings;
  }

  ChallengePages pages() {
    return pages;
  }

  ClientAddressResolver resolver() {
    return resolver;
  }

  /** The keys of a challenging rule, or null for a rule that does not challenge. */
  Keys keys(Rule rule) {
    return byRule.get(rule.name());
  }

  long now() {
    return Math.floorDiv(settings.clock().millis(), 1000);
  }

  // ---- Clearance cookies ------------------------------------------------------------------

  /**
   * A clearance of {@code keys}' rule for {@code client} from {@code now}, counted under
   * {@code id} (the solved puzzle's nonce): the cookie's value.
   */
  String clearance(Keys keys, ClientAddress client, long now, String id) {
    long expiry = now + clearanceSeconds;
    Scratch s = SCRATCH.get();
    HmacKey key = keys.clearance[0];
    network(key.begin(s.sha), client).updateLong(expiry).updateAscii(id, 0, id.length());
    key.mac(s.sha, s.mac, 0);
    StringBuilder sb = new StringBuilder(KID_CHARS + 31 + MAC_CHARS).append(kids[0]).append('.')
        .append(expiry).append('.').append(id).append('.');
    return Base64Url.encode(s.mac, 0, Sha256.LENGTH, sb).toString();
  }

  /**
   * Whether {@code cookie} clears {@code keys}' rule for {@code client} at {@code now}:
   * {@link #VALID}, {@link #NONE} (no cookie), {@link #EXPIRED} (a true cookie past its expiry)
   * or {@link #INVALID} (edited, forged, from another network, under a retired key or other
   * settings). Allocates nothing; {@link #clearanceId} reads a valid one's id.
   */
  int check(Keys keys, String cookie, ClientAddress client, long now) {
    if (cookie == null) {
      return NONE;
    }
    int n = cookie.length();
    int idAt = n - MAC_CHARS - 1 - NONCE_CHARS;
    if (n < KID_CHARS + 4 + NONCE_CHARS + MAC_CHARS || n > KID_CHARS + 15 + NONCE_CHARS
        + MAC_CHARS || cookie.charAt(KID_CHARS) != '.' || cookie.charAt(idAt - 1) != '.'
        || cookie.charAt(n - MAC_CHARS - 1) != '.') {
      return INVALID;
    }
    int key = keyIndex(cookie, 0);
    long expiry = digits(cookie, KID_CHARS + 1, idAt - 1);
    if (key < 0 || expiry < 0) {
      return INVALID;
    }
    Scratch s = SCRATCH.get();
    HmacKey k = keys.clearance[key];
    network(k.begin(s.sha), client).updateLong(expiry).updateAscii(cookie, idAt,
        idAt + NONCE_CHARS);
    k.mac(s.sha, s.mac, 0);
    if (!Base64Url.equalsBytes(cookie, n - MAC_CHARS, n, s.mac, 0, Sha256.LENGTH)) {
      return INVALID;
    }
    return expiry > now ? VALID : EXPIRED;
  }

  /** The id of a clearance cookie {@link #check} found valid. */
  static String clearanceId(String cookie) {
    int end = cookie.length() - MAC_CHARS - 1;
    return cookie.substring(end - NONCE_CHARS, end);
  }

  // ---- Puzzles and answers ----------------------------------------------------------------

  /** A new puzzle of {@code keys}' rule at {@code difficulty} for {@code client}. */
  String puzzle(Keys keys, ClientAddress client, int difficulty, long now) {
    Scratch s = SCRATCH.get();
    nonceKey.begin(s.sha).update(nonceSalt, 0, nonceSalt.length)
        .updateLong(nonces.incrementAndGet());
    nonceKey.mac(s.sha, s.mac, 0);
    StringBuilder sb = new StringBuilder(96).append(kids[0]).append('.').append(keys.tag)
        .append('.').append(difficulty).append('.').append(now).append('.');
    int nonceAt = sb.length();
    Base64Url.encode(s.mac, 0, 12, sb);
    HmacKey key = keys.puzzle[0];
    network(key.begin(s.sha), client).update((byte) difficulty).updateLong(now)
        .updateAscii(sb, nonceAt, nonceAt + NONCE_CHARS);
    key.mac(s.sha, s.mac, 0);
    sb.append('.');
    return Base64Url.encode(s.mac, 0, Sha256.LENGTH, sb).toString();
  }

  /** The nonce of a puzzle made by {@link #puzzle}: its CSP nonce and its store key. */
  static String nonceOf(String puzzle) {
    int end = puzzle.length() - MAC_CHARS - 1;
    return puzzle.substring(end - NONCE_CHARS, end);
  }

  /** What an answer cookie says, once read. */
  static final class Answer {
    /** Not for this rule, or stale (past solveWithin, too early): ignored, a new puzzle. */
    static final int IGNORED = 0;
    /** A wrong answer: forged, from another network, a hash without the zeros. */
    static final int WRONG = 1;
    /** Right: its nonce is then spent in the store. */
    static final int RIGHT = 2;

    final int verdict;
    final String nonce;
    final String why;

    Answer(int verdict, String nonce, String why) {
      this.verdict = verdict;
      this.nonce = nonce;
      this.why = why;
    }
  }

  /**
   * Reads the answer cookie {@code value} for {@code keys}' rule from {@code client} at
   * {@code now}. Its nonce is not spent here: the caller spends it in the store.
   */
  Answer answer(Keys keys, String value, ClientAddress client, long now) {
    // kid . tag . difficulty . issued . nonce . mac [. n]
    int[] dots = new int[7];
    int count = 0;
    int n = value.length();
    if (n > 160) {
      return new Answer(Answer.WRONG, null, "too long");
    }
    for (int i = 0; i < n && count <= 6; i++) {
      if (value.charAt(i) == '.') {
        dots[count++] = i;
      }
    }
    if (count != 5 && count != 6) {
      return new Answer(Answer.WRONG, null, "not a puzzle");
    }
    int macEnd = count == 6 ? dots[5] : n;
    if (dots[0] != KID_CHARS || dots[1] - dots[0] - 1 != TAG_CHARS
        || dots[4] - dots[3] - 1 != NONCE_CHARS || macEnd - dots[4] - 1 != MAC_CHARS) {
      return new Answer(Answer.WRONG, null, "not a puzzle");
    }
    if (!value.regionMatches(dots[0] + 1, keys.tag, 0, TAG_CHARS)) {
      return new Answer(Answer.IGNORED, null, "another rule's puzzle");
    }
    int key = keyIndex(value, 0);
    long difficulty = digits(value, dots[1] + 1, dots[2]);
    long issued = digits(value, dots[2] + 1, dots[3]);
    if (key < 0 || difficulty < 1 || difficulty > Rule.MAX_DIFFICULTY || issued < 0) {
      return new Answer(Answer.WRONG, null, "not a puzzle");
    }
    Scratch s = SCRATCH.get();
    HmacKey k = keys.puzzle[key];
    network(k.begin(s.sha), client).update((byte) difficulty).updateLong(issued)
        .updateAscii(value, dots[3] + 1, dots[4]);
    k.mac(s.sha, s.mac, 0);
    if (!Base64Url.equalsBytes(value, dots[4] + 1, macEnd, s.mac, 0, Sha256.LENGTH)) {
      return new Answer(Answer.WRONG, null, "a forged puzzle, or another network's");
    }
    if (issued > now + SKEW_SECONDS) {
      return new Answer(Answer.WRONG, null, "a puzzle from the future");
    }
    if (now - issued > solveSeconds) {
      return new Answer(Answer.IGNORED, null, "a puzzle past solveWithin");
    }
    String nonce = value.substring(dots[3] + 1, dots[4]);
    if (count == 5) {
      if (settings.noscript() != Challenge.NoScript.REFRESH) {
        return new Answer(Answer.WRONG, null, "no proof of work (noscript: refuse)");
      }
      if (now - issued < waitSeconds) {
        return new Answer(Answer.IGNORED, null, "back before noscriptWait");
      }
      return new Answer(Answer.RIGHT, nonce, "waited without JavaScript");
    }
    if (digits(value, dots[5] + 1, n) < 0 || n - dots[5] - 1 > 15) {
      return new Answer(Answer.WRONG, null, "not a number");
    }
    int first = s.sha.reset().updateAscii(value, 0, n).digestFirstInt();
    if (Integer.numberOfLeadingZeros(first) < difficulty) {
      return new Answer(Answer.WRONG, null, "a hash without " + difficulty + " zero bits");
    }
    return new Answer(Answer.RIGHT, nonce, "solved");
  }

  /** The identity a clearance's budget is counted under. */
  static Identity clearanceIdentity(String id) {
    return Identity.empty().with("clearance", id);
  }

  /** The identity the two internal rules key on: the nonce and the client. */
  static Identity identity(String nonce, ClientAddress client) {
    Identity id = Identity.ip(client);
    return nonce == null ? id : id.with("nonce", nonce);
  }

  /** The difficulty for a client whose challenge score is {@code score}, for {@code rule}. */
  int difficulty(Rule rule, double score) {
    if (Double.isNaN(score) || rule.maxDifficulty() <= rule.difficulty()) {
      return rule.difficulty();
    }
    long raise = (long) (score / settings.raiseEvery());
    return (int) Math.min(rule.maxDifficulty(), rule.difficulty() + raise);
  }

  // ---- Cookie headers ---------------------------------------------------------------------

  String clearanceCookie(Keys keys, String value) {
    return keys.cookie + "=" + value + "; Path=/; Max-Age=" + clearanceSeconds
        + "; HttpOnly; SameSite=Lax" + (settings.secureCookie() ? "; Secure" : "");
  }

  /** The answer cookie as the server sets it for a page without JavaScript: the puzzle alone. */
  String answerCookie(String puzzle) {
    return ANSWER_COOKIE + "=" + puzzle + "; Path=/; Max-Age=" + solveSeconds + "; SameSite=Lax"
        + (settings.secureCookie() ? "; Secure" : "");
  }

  /** Removes the answer cookie (after its verdict). */
  String spentAnswerCookie() {
    return ANSWER_COOKIE + "=; Path=/; Max-Age=0; SameSite=Lax"
        + (settings.secureCookie() ? "; Secure" : "");
  }

  // ---- Helpers ----------------------------------------------------------------------------

  /** The client's network as 17 bytes: a family byte (4, 6 or 0 unknown) and 16 masked bytes. */
  private Sha256 network(Sha256 s, ClientAddress client) {
    if (client == null || !client.known()) {
      return s.update((byte) 0).updateLong(0).updateLong(0);
    }
    if (client.ipv4()) {
      int bits = settings.ipv4Prefix();
      long mask = bits == 32 ? 0xFFFF_FFFFL : (0xFFFF_FFFFL << (32 - bits)) & 0xFFFF_FFFFL;
      return s.update((byte) 4).updateLong(0).updateLong(client.low() & mask);
    }
    int bits = settings.ipv6Prefix();
    long high = bits >= 64 ? client.high() : client.high() & (-1L << (64 - bits));
    long low = bits >= 128 ? client.low() : bits <= 64 ? 0 : client.low() & (-1L << (128 - bits));
    return s.update((byte) 6).updateLong(high).updateLong(low);
  }

  /** The index of the signing key whose id starts {@code s} at {@code at}, or -1. */
  private int keyIndex(CharSequence s, int at) {
    for (int i = 0; i < kids.length; i++) {
      String kid = kids[i];
      boolean same = true;
      for (int j = 0; j < KID_CHARS; j++) {
        same &= s.charAt(at + j) == kid.charAt(j);
      }
      if (same) {
        return i;
      }
    }
    return -1;
  }

  /** The decimal number {@code from..to} (1 to 15 digits), or -1. */
  private static long digits(CharSequence s, int from, int to) {
    if (to <= from || to - from > 15) {
      return -1;
    }
    long v = 0;
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }
}
