package dev.sluice.moderation;

import dev.sluice.core.InvalidValueException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The lists' text format and the checks on each entry. One entry a line, UTF-8; blank lines and
 * lines starting with '#' are skipped (except the keycap "#️⃣"); surrounding spaces are trimmed.
 * A bad entry fails with {@code where : "value" (expected: ...)}, where is {@code file:line} for a
 * file and {@code blocked[3]} for a collection.
 */
final class Lists {

  static final String BLOCKED = "blocked";
  static final String RESERVED = "reserved";
  static final String ALLOWED = "allowed";
  static final String PALETTE = "palette";
  static final List<String> NAMES = List.of(BLOCKED, RESERVED, ALLOWED, PALETTE);

  static final int MAX_TERM = 64;

  /** One entry and where it came from, for error messages. */
  static final class Entry {
    final String text;
    final String where;

    Entry(String text, String where) {
      this.text = text;
      this.where = where;
    }
  }

  /** A checked block, reserved or allow list entry. */
  static final class Parsed {
    final String written;
    final String key;
    final boolean anywhere;

    Parsed(String written, String key, boolean anywhere) {
      this.written = written;
      this.key = key;
      this.anywhere = anywhere;
    }
  }

  private Lists() {}

  static List<Entry> of(String list, Collection<String> values) {
    if (values == null) {
      throw new InvalidValueException(list, "null", "a collection of entries");
    }
    List<Entry> out = new ArrayList<>(values.size());
    int i = 0;
    for (String v : values) {
      out.add(new Entry(v == null ? null : v.strip(), list + "[" + i++ + "]"));
    }
    return out;
  }

  /** The entries of {@code dir/list.txt}, or null when there is no such file. */
  static List<Entry> read(Path dir, String list) {
    Path file = dir.resolve(list + ".txt");
    if (!Files.isRegularFile(file)) {
      return null;
    }
    try (InputStream in = Files.newInputStream(file)) {
      return parse(in, file.toString());
    } catch (IOException e) {
      throw new UncheckedIOException(file + ": " + e.getMessage(), e);
    }
  }

  /** The built-in list shipped in the jar. */
  static List<Entry> builtIn(String list) {
    String name = list + ".txt";
    try (InputStream in = Lists.class.getResourceAsStream(name)) {
      return parse(in, "built-in " + name);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<Entry> parse(InputStream in, String where) throws IOException {
    byte[] bytes = in.readAllBytes();
    CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    List<Entry> out = new ArrayList<>();
    int n = 0;
    for (int start = 0; start < bytes.length; ) {
      int end = start;
      while (end < bytes.length && bytes[end] != '\n') {
        end++;
      }
      n++;
      String line;
      try {
        line = utf8.decode(ByteBuffer.wrap(bytes, start, end - start)).toString();
      } catch (CharacterCodingException e) {
        throw new InvalidValueException(where + ":" + n, "bytes", "UTF-8 text");
      }
      start = end + 1;
      String s = (n == 1 && line.startsWith("\uFEFF") ? line.substring(1) : line).strip();
      boolean keycap = s.equals("#\uFE0F\u20E3") || s.equals("#\u20E3");
      if (!s.isEmpty() && (keycap || s.charAt(0) != '#')) {
        out.add(new Entry(s, where + ":" + n));
      }
    }
    return out;
  }

  /** A block or reserved term (or allow-list word, {@code starAllowed} false): checked, keyed. */
  static Parsed term(Entry e, boolean starAllowed) {
    String s = e.text;
    if (s == null) {
      throw new InvalidValueException(e.where, "null", "a term");
    }
    boolean anywhere = s.length() > 2 && s.startsWith("*") && s.endsWith("*");
    String body = anywhere ? s.substring(1, s.length() - 1) : s;
    if (body.indexOf('*') >= 0 || (anywhere && !starAllowed)) {
      throw new InvalidValueException(e.where, quote(s), starAllowed
          ? "a term, or *term* to match inside words too" : "a word, without '*'");
    }
    if (Characters.scan(body, true) != Reason.NONE) {
      throw new InvalidValueException(e.where, quote(s),
          "no control, invisible or unassigned characters");
    }
    String key = TermIndex.keyOf(body);
    if (key.isEmpty()) {
      throw new InvalidValueException(e.where, quote(s), "at least one letter or digit");
    }
    if (key.codePointCount(0, key.length()) > MAX_TERM) {
      throw new InvalidValueException(e.where, quote(s), "at most " + MAX_TERM
          + " letters and digits");
    }
    return new Parsed(body, key, anywhere);
  }

  static String paletteEntry(Entry e) {
    String s = e.text;
    if (s == null || s.isEmpty() || s.length() > Palette.MAX_UNITS
        || s.codePoints().anyMatch(Character::isWhitespace)
        || Characters.scan(s, false) != Reason.NONE) {
      throw new InvalidValueException(e.where, quote(s), "one emoji sequence (or short word) of "
          + "1.." + Palette.MAX_UNITS + " UTF-16 units, without spaces or controls");
    }
    return s;
  }

  /** A value as shown in messages: quoted, controls and invisible characters escaped. */
  static String quote(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    s.codePoints().forEach(cp -> {
      if (cp == '"' || cp == '\\' || (cp != ' ' && Characters.isHidden(cp))) {
        b.append(cp == '"' || cp == '\\' ? "\\" + (char) cp : String.format("\\u%04X", cp));
      } else {
        b.appendCodePoint(cp);
      }
    });
    return b.append('"').toString();
  }
}
