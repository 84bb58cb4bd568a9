package dev.sluice.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** SHA-256 through its buffer, the HMAC and base64url against the JDK's, on random inputs. */
class Sha256Properties {

  @Property(tries = 500)
  void digest_isTheJdks(@ForAll @Size(max = 300) byte[] message) throws Exception {
    byte[] out = new byte[32];
    new Sha256().update(message, 0, message.length).digest(out, 0);
    assertThat(out).isEqualTo(MessageDigest.getInstance("SHA-256").digest(message));
  }

  @Property(tries = 200)
  void firstInt_isTheDigestsFirstFourBytes(@ForAll @Size(max = 200) byte[] message)
      throws Exception {
    byte[] d = MessageDigest.getInstance("SHA-256").digest(message);
    int first = new Sha256().update(message, 0, message.length).digestFirstInt();
    assertThat(first).isEqualTo(((d[0] & 0xff) << 24) | ((d[1] & 0xff) << 16)
        | ((d[2] & 0xff) << 8) | (d[3] & 0xff));
  }

  @Property(tries = 300)
  void hmac_isTheJdks(@ForAll @Size(min = 1, max = 150) byte[] key,
      @ForAll @Size(max = 200) byte[] message) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    assertThat(new HmacKey(key).mac(message)).isEqualTo(mac.doFinal(message));
  }

  /** The same instance, reused: no state of one message leaks into the next. */
  @Property(tries = 100)
  void reusedInstances_giveTheSameMacs(@ForAll @Size(min = 1, max = 80) byte[] key,
      @ForAll @Size(max = 120) byte[] a, @ForAll @Size(max = 120) byte[] b) {
    HmacKey k = new HmacKey(key);
    Sha256 s = new Sha256();
    byte[] out = new byte[32];
    k.begin(s).update(a, 0, a.length);
    k.mac(s, out, 0);
    k.begin(s).update(b, 0, b.length);
    k.mac(s, out, 0);
    assertThat(out).isEqualTo(k.mac(b));
  }

  @Property(tries = 300)
  void base64url_isTheJdksWithoutPadding(@ForAll @Size(max = 64) byte[] bytes) {
    String ours = Base64Url.encode(bytes);
    assertThat(ours).isEqualTo(Base64.getUrlEncoder().withoutPadding().encodeToString(bytes));
    assertThat(Base64Url.decode(ours)).isEqualTo(bytes);
    assertThat(Base64Url.equalsBytes(ours, 0, ours.length(), bytes, 0, bytes.length)).isTrue();
  }

  /** Any one character changed, the comparison fails: a MAC edited by one byte is not equal. */
  @Property(tries = 300)
  void base64url_oneCharacterChanged_isNotEqual(@ForAll @Size(min = 1, max = 40) byte[] bytes,
      @ForAll @IntRange(min = 0, max = 1000) int where, @ForAll char replacement) {
    String s = Base64Url.encode(bytes);
    int i = where % s.length();
    if (s.charAt(i) == replacement) {
      return;
    }
    String edited = s.substring(0, i) + replacement + s.substring(i + 1);
    assertThat(Base64Url.equalsBytes(edited, 0, edited.length(), bytes, 0, bytes.length))
        .as("%s vs %s", edited, s).isFalse();
  }
}
