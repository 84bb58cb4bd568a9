package dev.sluice.server;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A client of challenged pages that is not a browser: it reads a page's puzzle and solves it with
 * the JDK's SHA-256 (not the server's), and sends cookies by hand, so a test can edit, move and
 * replay them.
 */
public final class ChallengeClient {

  public static final String HTML = "text/html,application/xhtml+xml,*/*;q=0.8";
  static final Pattern PUZZLE = Pattern.compile("var P=\"([^\"]+)\",D=(\\d+)");

  private final HttpClient http = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();
  private final String base;

  public ChallengeClient(int port) {
    this.base = "http://127.0.0.1:" + port;
  }

  /**
   * GET {@code path} as a browser would ({@code Accept} preferring HTML) from {@code client}
   * (an X-Forwarded-For the gateway trusts; null for none), with {@code cookies} (name=value;
   * ...; null for none).
   */
  public HttpResponse<String> get(String path, String client, String cookies) throws Exception {
    return send(path, HTML, client, cookies);
  }

  public HttpResponse<String> send(String path, String accept, String client, String cookies)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
        .timeout(Duration.ofSeconds(10));
    if (accept != null) {
      b.header("Accept", accept);
    }
    if (client != null) {
      b.header("X-Forwarded-For", client);
    }
    if (cookies != null) {
      b.header("Cookie", cookies);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The value {@code name} is set to by {@code r}, or null. */
  public static String setCookie(HttpResponse<?> r, String name) {
    List<String> all = r.headers().allValues("set-cookie");
    for (String c : all) {
      if (c.startsWith(name + "=")) {
        int end = c.indexOf(';');
        return c.substring(name.length() + 1, end < 0 ? c.length() : end);
      }
    }
    return null;
  }

  /** The answer to the puzzle of challenge page {@code page}: the answer cookie's value. */
  public static String solve(String page) {
    Matcher m = PUZZLE.matcher(page);
    if (!m.find()) {
      throw new AssertionError("no puzzle in the page:\n" + page);
    }
    String puzzle = m.group(1);
    int zeros = Integer.parseInt(m.group(2));
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      for (long n = 0; ; n++) {
        String answer = puzzle + "." + n;
        byte[] d = md.digest(answer.getBytes(StandardCharsets.US_ASCII));
        int z = 0;
        for (byte b : d) {
          if (b != 0) {
            z += Integer.numberOfLeadingZeros(b & 0xff) - 24;
            break;
          }
          z += 8;
        }
        if (z >= zeros) {
          return answer;
        }
      }
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  /** {@code value} with the character at {@code i} replaced by another base64url one. */
  public static String edit(String value, int i) {
    char c = value.charAt(i);
    return value.substring(0, i) + (c == 'A' ? 'B' : 'A') + value.substring(i + 1);
  }
}
