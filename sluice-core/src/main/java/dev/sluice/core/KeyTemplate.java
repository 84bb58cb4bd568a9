package dev.sluice.core;

import dev.sluice.core.internal.Checks;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A rule's key: colon-separated dimension names, such as {@code ip} or seed 003's
 * {@code event:user:ip}. The store key is the rule name followed by each dimension's escaped
 * value.
 *
 * <p>User input never reaches a key verbatim: {@code :}, {@code %}, braces (Redis hash tags),
 * {@code ~}, spaces, control and non-ASCII characters are percent-encoded, and values longer than
 * 256 characters are replaced by a SHA-256 digest. A missing dimension becomes
 * {@code ~<shared bucket>}, which no escaped value can equal.
 */
final class KeyTemplate {

  static final int MAX_VALUE_LENGTH = 256;

  private final String source;
  private final String[] dimensions;
  /** The same names as a list, made once: every request's identity reads it. */
  private final java.util.List<String> dimensionList;

  private KeyTemplate(String source, String[] dimensions) {
    this.source = source;
    this.dimensions = dimensions;
    this.dimensionList = java.util.List.of(dimensions);
  }

  static KeyTemplate parse(String template) {
    Checks.notNull(template, "key");
    String[] parts = template.split(":", -1);
    for (int i = 0; i < parts.length; i++) {
      parts[i] = parts[i].intern(); // lets Identity find "ip" by reference
    }
    for (String part : parts) {
      if (!Checks.isDimension(part)) {
        throw Checks.invalid("key", "\"" + template + "\"",
            "dimension names joined by ':', like \"event:user:ip\"");
      }
    }
    return new KeyTemplate(template, parts);
  }

  static void checkDimension(String name) {
    Checks.dimension(name);
  }

  /** The key of {@code identity} under the rule whose escaped name is {@code rule}. */
  String keyOf(String rule, Identity identity, String sharedBucket) {
    if (dimensions.length == 1) {
      // The common shape (a rule keyed by one value, such as the client address): one
      // allocation when the value needs no escaping.
      String value = identity.get(dimensions[0]);
      if (value != null && isPlain(value)) {
        return rule + ':' + value;
      }
    }
    StringBuilder sb = new StringBuilder(rule.length() + 24 * dimensions.length);
    sb.append(rule);
    for (String dimension : dimensions) {
      sb.append(':');
      String value = identity.get(dimension);
      if (value == null || value.isBlank()) {
        sb.append('~').append(sharedBucket);
      } else {
        appendEscaped(sb, value);
      }
    }
    return sb.toString();
  }

  /** The identity whose key text (the key without the rule name) is {@code key}. */
  Identity identityOf(String key, String sharedBucket) {
    Checks.notNull(key, "key");
    String[] parts = key.split(":", -1);
    if (parts.length != dimensions.length) {
      throw badKey(key, dimensions.length + " escaped value(s) joined by ':', for " + source);
    }
    Identity identity = Identity.empty();
    for (int i = 0; i < parts.length; i++) {
      String part = parts[i];
      if (part.equals("~" + sharedBucket)) {
        continue;
      }
      if (part.startsWith("#")) {
        throw badKey(key, "no digest: values past " + MAX_VALUE_LENGTH
            + " characters are hashed and cannot be named");
      }
      identity = identity.with(dimensions[i], percentDecode(key, part));
    }
    if (!keyOf("r", identity, sharedBucket).equals("r:" + key)) {
      throw badKey(key, "values escaped as listed (percent-encoded UTF-8 for ':', '%', "
          + "braces, '~', '#', spaces and non-ASCII)");
    }
    return identity;
  }

  private static InvalidValueException badKey(String key, String expected) {
    return Checks.invalid("key", "\"" + key + "\"", expected);
  }

  private static String percentDecode(String key, String part) {
    if (part.indexOf('%') < 0) {
      return part;
    }
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(part.length());
    for (int i = 0; i < part.length(); i++) {
      char c = part.charAt(i);
      if (c != '%') {
        bytes.write(c);
        continue;
      }
      int hi = i + 2 < part.length() ? Character.digit(part.charAt(i + 1), 16) : -1;
      int lo = hi < 0 ? -1 : Character.digit(part.charAt(i + 2), 16);
      if (lo < 0) {
        throw badKey(key, "'%' followed by two hex digits");
      }
      bytes.write(hi << 4 | lo);
      i += 2;
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /** True when {@link #appendEscaped} would copy {@code value} unchanged and it is not blank. */
  private static boolean isPlain(String value) {
    int n = value.length();
    if (n == 0 || n > MAX_VALUE_LENGTH) {
      return false;
    }
    for (int i = 0; i < n; i++) {
      char c = value.charAt(i);
      if (c <= ' ' || c >= 0x7f || c == ':' || c == '%' || c == '{' || c == '}' || c == '~'
          || c == '#') {
        return false;
      }
    }
    return true;
  }

  String source() {
    return source;
  }

  /** The dimension names, in order. */
  java.util.List<String> dimensions() {
    return dimensionList;
  }

  /** The dimension names, in order; the array is never modified. */
  String[] dimensionArray() {
    return dimensions;
  }

  static String escape(String value) {
    StringBuilder sb = new StringBuilder(value.length());
    appendEscaped(sb, value);
    return sb.toString();
  }

  private static void appendEscaped(StringBuilder sb, String value) {
    if (value.length() > MAX_VALUE_LENGTH) {
      sb.append('#').append(sha256(value));
      return;
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c > ' ' && c < 0x7f && c != ':' && c != '%' && c != '{' && c != '}' && c != '~'
          && c != '#') {
        sb.append(c);
      } else {
        percentEncode(sb, value, i);
        if (Character.isHighSurrogate(c) && i + 1 < value.length()
            && Character.isLowSurrogate(value.charAt(i + 1))) {
          i++;
        }
      }
    }
  }

  /**
   * Percent-encodes the code point at {@code i} as UTF-8. An unpaired surrogate, which UTF-8
   * cannot carry, is encoded as the three bytes its code unit would take (WTF-8), so no two
   * distinct values share an encoding.
   */
  private static void percentEncode(StringBuilder sb, String value, int i) {
    int cp = value.codePointAt(i);
    if (cp < 0x80) {
      appendByte(sb, cp);
    } else if (cp < 0x800) {
      appendByte(sb, 0xC0 | (cp >> 6));
      appendByte(sb, 0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      appendByte(sb, 0xE0 | (cp >> 12));
      appendByte(sb, 0x80 | ((cp >> 6) & 0x3F));
      appendByte(sb, 0x80 | (cp & 0x3F));
    } else {
      appendByte(sb, 0xF0 | (cp >> 18));
      appendByte(sb, 0x80 | ((cp >> 12) & 0x3F));
      appendByte(sb, 0x80 | ((cp >> 6) & 0x3F));
      appendByte(sb, 0x80 | (cp & 0x3F));
    }
  }

  private static void appendByte(StringBuilder sb, int b) {
    sb.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xF, 16)))
        .append(Character.toUpperCase(Character.forDigit(b & 0xF, 16)));
  }

  private static String sha256(String value) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256")
          .digest(value.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("SHA-256 is required of every JVM", e);
    }
  }

  @Override
  public String toString() {
    return source;
  }
}
