package dev.sluice.server.replay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.address.ClientAddress;
import dev.sluice.core.address.ClientAddressResolver;
import dev.sluice.core.policy.RequestTarget;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * The view's shortcuts (targets remembered by their bytes, a logged dotted quad keyed without
 * its string) against the plain reading they stand for: the target {@link RequestTarget#parse}
 * makes of the decoded field, the address the resolver makes of the decoded peer.
 */
class ReplayViewProperties {

  private static final LineFormat COMBINED = Formats.of("combined");

  /**
   * Lines of targets drawn from a small set (so most repeat, from the cache, and many share a
   * set of it: a view of a few sets, or of the replay's) and addresses of every kind, read by
   * one view in turn: each line's target and client are what the plain reading gives, for a
   * resolver that trusts no proxy and one that trusts a hop.
   */
  @Property(tries = 300)
  void shortcuts_readAsThePlainReading(
      @ForAll @Size(min = 1, max = 200) List<@IntRange(min = 0, max = 1_000_000) Integer> picks,
      @ForAll("addresses") String address, @ForAll boolean few) {
    ReplayView view = few ? new ReplayView(RequestTarget.Rules.defaults(), 4)
        : new ReplayView(RequestTarget.Rules.defaults());
    int parsed = 0;
    LogRecord r = new LogRecord();
    ClientAddressResolver direct = ClientAddressResolver.direct();
    ClientAddressResolver oneHop = ClientAddressResolver.builder().trustedHops(1).build();
    for (int pick : picks) {
      String target = TARGETS[pick % TARGETS.length] + (pick % 5 == 0 ? "" : pick % 37);
      byte[] line = ("" + (pick % 3 == 0 ? address : "10.0." + pick % 256 + ".7")
          + " - - [01/Jun/2025:00:00:00 +0000] \"GET " + target + " HTTP/1.1\" 200 5"
          + " \"-\" \"curl/8\"").getBytes(StandardCharsets.ISO_8859_1);
      r.reset(line);
      if (!COMBINED.parse(line, 0, line.length, r)) {
        assertThat(address).as("only an address with a space breaks the line").contains(" ");
        continue;
      }
      parsed++;
      String rawTarget = LogRecord.decode(line, r.start[Field.TARGET.ordinal()],
          r.end[Field.TARGET.ordinal()]);
      RequestTarget plain = RequestTarget.parse(rawTarget, RequestTarget.Rules.defaults());
      String peer = r.has(Field.ADDR) ? r.get(Field.ADDR) : null;
      view.reset(r);
      RequestTarget seen = view.target();
      assertThat(seen.ok()).as(target).isEqualTo(plain.ok());
      assertThat(seen.path()).as(target).isEqualTo(plain.path());
      assertThat(seen.query()).as(target).isEqualTo(plain.query());
      assertThat(seen.problem()).as(target).isEqualTo(plain.problem());
      ClientAddress byDirect = view.clientAddress(direct);
      assertThat(byDirect).as(peer).isEqualTo(direct.resolve(peer, null));
      assertThat(byDirect.toString()).as(peer).isEqualTo(direct.resolve(peer, null).toString());
      assertThat(view.clientAddress(oneHop)).as(peer).isEqualTo(oneHop.resolve(peer, null));
    }
    assertThat(parsed).isPositive();
  }

  /** Every dotted quad of four bytes, written plainly, is read as those four bytes. */
  @Property(tries = 500)
  void plainDottedQuads_readAsTheirBytes(@ForAll @IntRange(min = 0, max = 255) int a,
      @ForAll @IntRange(min = 0, max = 255) int b, @ForAll @IntRange(min = 0, max = 255) int c,
      @ForAll @IntRange(min = 0, max = 255) int d) {
    byte[] text = (a + "." + b + "." + c + "." + d).getBytes(StandardCharsets.US_ASCII);
    assertThat(Bytes.dottedQuad(text, 0, text.length))
        .isEqualTo((long) a << 24 | (long) b << 16 | (long) c << 8 | d);
  }

  /** Whatever else it is given, it accepts only what the resolver reads as the same address. */
  @Property(tries = 2000)
  void anythingElse_acceptedOnlyAsTheResolverReadsIt(@ForAll("addresses") String text) {
    byte[] b = text.getBytes(StandardCharsets.ISO_8859_1);
    long v = Bytes.dottedQuad(b, 0, b.length);
    if (v >= 0) {
      assertThat(ClientAddressResolver.direct().resolve(text, null))
          .isEqualTo(ClientAddress.ipv4((int) v));
    }
  }

  private static final String[] TARGETS = {"/api/items/", "/api/analysis/report/",
      "/static/app-", "/records/", "/a//b/../c?q=", "/%61pi/x;p=1/", "/x%2Fy/", "/x\\x5Cy/",
      "http://example.com/api/", "/\\xC3\\xA9t\\xC3\\xA9/", "*", "/api/" + "y".repeat(100),
      "/search?q=%2F&n=", "/healthz", "/api/analysis/../items/"};

  @Provide
  Arbitrary<String> addresses() {
    Arbitrary<String> quads = Combinators.combine(octet(), octet(), octet(), octet())
        .as((a, b, c, d) -> a + "." + b + "." + c + "." + d);
    Arbitrary<String> noise = Arbitraries.strings().withChars("0123456789.:-/[]abf ")
        .ofMinLength(0).ofMaxLength(18);
    return Arbitraries.oneOf(quads, noise, Arbitraries.of("-", "::1", "[::1]:80",
        "10.0.0.1:8080", "::ffff:10.1.2.3", "2001:db8::1", "010.1.1.1", "1.2.3.256",
        "1.2.3.4.", " 1.2.3.4", "/1.2.3.4", "1.2.3.4 "));
  }

  private static Arbitrary<String> octet() {
    return Arbitraries.oneOf(Arbitraries.integers().between(0, 255).map(String::valueOf),
        Arbitraries.of("0", "00", "01", "255", "256", "999", "0000"));
  }
}
