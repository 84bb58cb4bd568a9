package dev.sluice.server;

import dev.sluice.core.InvalidValueException;
import dev.sluice.moderation.Moderator;
import dev.sluice.moderation.Ruling;
import dev.sluice.moderation.Surface;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code sluice moderate [--lists DIR] [--surface S] [--] TEXT...}: checks each text as the
 * gateway would and prints one line per text, like
 * {@code "p\u0430ypal" rejected mixed_scripts (normalized "paypal")}. Characters that would hide
 * or reorder text on a terminal are printed escaped ({@code \u202E}).
 *
 * <p>Exit codes: 0 every text allowed; 1 at least one rejected; 2 a bad command line or an invalid
 * list file (every problem as {@code file:line : "entry" (expected: ...)}).
 */
final class ModerateCommand {

  static final int REFUSED = 1;

  private final PrintStream out;
  private final PrintStream err;

  ModerateCommand(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  int run(List<String> args) throws Main.UsageException {
    Path lists = null;
    Surface surface = Surface.DISPLAY_NAME;
    List<String> texts = new ArrayList<>();
    boolean options = true;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (options && arg.equals("--")) {
        options = false;
        continue;
      }
      if (!options || !arg.startsWith("--")) {
        texts.add(arg);
        continue;
      }
      int eq = arg.indexOf('=');
      String name = eq > 0 ? arg.substring(0, eq) : arg;
      if (!Commands.MODERATE.accepts(name)) {
        throw Main.unknownOption(Commands.MODERATE, name);
      }
      if (eq < 0 && i + 1 >= args.size()) {
        throw new Main.UsageException(name + " needs a value "
            + Commands.hint(Commands.MODERATE));
      }
      String value = eq > 0 ? arg.substring(eq + 1) : args.get(++i);
      if (name.equals("--lists")) {
        lists = Path.of(value);
      } else {
        surface = surface(value);
      }
    }
    if (texts.isEmpty()) {
      throw new Main.UsageException("moderate needs at least one TEXT "
          + Commands.hint(Commands.MODERATE));
    }
    Moderator moderator;
    try {
      Moderator.Builder b = Moderator.builder();
      moderator = (lists == null ? b : b.lists(lists)).build();
    } catch (InvalidValueException | UncheckedIOException e) {
      err.println("sluice: invalid moderation lists: " + e.getMessage());
      return Main.INVALID_POLICY;
    }
    int code = Main.OK;
    for (String text : texts) {
      Ruling r = moderator.check(text, surface);
      out.println(line(text, r));
      if (!r.allowed()) {
        code = REFUSED;
      }
    }
    return code;
  }

  static String line(String text, Ruling r) {
    StringBuilder sb = new StringBuilder();
    quote(sb, text);
    if (r.allowed()) {
      sb.append(" allowed");
    } else {
      sb.append(" rejected ").append(r.reason().label());
      r.matchedTerm().ifPresent(t -> quote(sb.append(' '), t));
    }
    return quote(sb.append(" (normalized "), r.normalized()).append(')').toString();
  }

  static Surface surface(String value) throws Main.UsageException {
    String v = value.trim().replace('-', '_');
    for (Surface s : Surface.values()) {
      if (s.label().equalsIgnoreCase(v)) {
        return s;
      }
    }
    throw new Main.UsageException("--surface : \"" + value + "\" (expected: username, "
        + "display-name, room-name or reaction)");
  }

  /** Quoted, with whatever would hide, reorder or break the line escaped. */
  static StringBuilder quote(StringBuilder sb, String s) {
    sb.append('"');
    s.codePoints().forEach(cp -> {
      int t = Character.getType(cp);
      boolean hidden = t == Character.CONTROL || t == Character.FORMAT
          || t == Character.LINE_SEPARATOR || t == Character.PARAGRAPH_SEPARATOR
          || (t == Character.SPACE_SEPARATOR && cp != ' ') || t == Character.UNASSIGNED
          || t == Character.PRIVATE_USE || t == Character.SURROGATE
          || cp == 0x2800 || cp == 0x3164 || cp == 0x115F || cp == 0x1160 || cp == 0xFFA0;
      if (cp == '"' || cp == '\\') {
        sb.append('\\').appendCodePoint(cp);
      } else if (hidden) {
        sb.append(cp > 0xFFFF ? String.format("\\u{%X}", cp) : String.format("\\u%04X", cp));
      } else {
        sb.appendCodePoint(cp);
      }
    });
    return sb.append('"');
  }
}
