package dev.sluice.server.migrate;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * nginx's configuration syntax read into directives: words and quoted strings up to {@code ;} or
 * a {@code {...}} block, {@code #} comments, {@code include} followed (globs too, relative to the
 * including file). Only the syntax: what a directive means is {@link NginxImport}'s business.
 */
final class NginxConfig {

  /** One directive where it was written; {@code block} is null for a simple one. */
  record Directive(String name, List<String> args, String file, int line, List<Directive> block) {

    String where() {
      return file + ":" + line;
    }

    /** The directive as written, on one line ({@code limit_req zone=one burst=5}). */
    String text() {
      return args.isEmpty() ? name : name + " " + String.join(" ", args);
    }
  }

  /** A syntax error, at its file and line. */
  static final class SyntaxError extends Exception {
    private static final long serialVersionUID = 1L;

    SyntaxError(String file, int line, String message) {
      super(file + ":" + line + ": " + message);
    }
  }

  private static final int MAX_INCLUDE_DEPTH = 16;

  private final String text;
  private final String file;
  private final Path dir;
  private final int depth;
  private int pos;
  private int line = 1;

  private NginxConfig(String text, String file, Path dir, int depth) {
    this.text = text;
    this.file = file;
    this.dir = dir;
    this.depth = depth;
  }

  /** The directives of {@code text}, named {@code file}; includes are read from {@code dir}. */
  static List<Directive> parse(String text, String file, Path dir) throws SyntaxError {
    return new NginxConfig(text, file, dir, 0).block(false);
  }

  private List<Directive> block(boolean nested) throws SyntaxError {
    List<Directive> out = new ArrayList<>();
    List<String> words = new ArrayList<>();
    int start = line;
    while (true) {
      String word = next();
      if (word == null) {
        if (nested) {
          throw new SyntaxError(file, line, "unexpected end of file, expecting \"}\"");
        }
        if (!words.isEmpty()) {
          throw new SyntaxError(file, line, "unexpected end of file, expecting \";\" or \"}\"");
        }
        return out;
      }
      if (word.equals(";") || word.equals("{")) {
        if (words.isEmpty()) {
          throw new SyntaxError(file, line, "unexpected \"" + word + "\"");
        }
        String name = words.get(0);
        List<String> args = List.copyOf(words.subList(1, words.size()));
        if (word.equals("{")) {
          out.add(new Directive(name, args, file, start, block(true)));
        } else if (name.equals("include")) {
          out.addAll(include(args, start));
        } else {
          out.add(new Directive(name, args, file, start, null));
        }
        words.clear();
      } else if (word.equals("}")) {
        if (!nested) {
          throw new SyntaxError(file, line, "unexpected \"}\"");
        }
        if (!words.isEmpty()) {
          throw new SyntaxError(file, line, "unexpected \"}\", expecting \";\"");
        }
        return out;
      } else {
        if (words.isEmpty()) {
          start = line;
        }
        words.add(word);
      }
    }
  }

  private List<Directive> include(List<String> args, int at) throws SyntaxError {
    if (args.size() != 1) {
      throw new SyntaxError(file, at, "include takes one file or glob");
    }
    if (dir == null) {
      throw new SyntaxError(file, at, "include " + args.get(0) + ": no directory to read it "
          + "from (standard input)");
    }
    if (depth >= MAX_INCLUDE_DEPTH) {
      throw new SyntaxError(file, at, "include nested more than " + MAX_INCLUDE_DEPTH + " deep");
    }
    Path pattern = dir.resolve(args.get(0));
    List<Path> files = new ArrayList<>();
    String glob = pattern.getFileName().toString();
    if (glob.contains("*") || glob.contains("?") || glob.contains("[")) {
      PathMatcher m = pattern.getFileSystem().getPathMatcher("glob:" + glob);
      try (Stream<Path> s = Files.list(pattern.getParent())) {
        s.filter(p -> m.matches(p.getFileName())).sorted().forEach(files::add);
      } catch (IOException e) {
        // nginx: a glob that matches nothing is fine
      }
    } else {
      files.add(pattern);
    }
    List<Directive> out = new ArrayList<>();
    for (Path p : files) {
      String content;
      try {
        content = Files.readString(p);
      } catch (IOException e) {
        throw new SyntaxError(file, at, "include " + p + ": " + e.getMessage());
      }
      Path parent = p.toAbsolutePath().getParent();
      out.addAll(new NginxConfig(content, p.toString(), parent, depth + 1).block(false));
    }
    return out;
  }

  /** nginx's escapes: quotes, backslash, \t \r \n; any other keeps its backslash (regexes). */
  private static void unescape(StringBuilder w, char c) {
    switch (c) {
      case '"', '\'', '\\' -> w.append(c);
      case 't' -> w.append('\t');
      case 'r' -> w.append('\r');
      case 'n' -> w.append('\n');
      default -> w.append('\\').append(c);
    }
  }

  /** The next token: a word (quotes removed), ";", "{" or "}"; null at the end. */
  private String next() throws SyntaxError {
    int n = text.length();
    while (pos < n) {
      char c = text.charAt(pos);
      if (c == '\n') {
        line++;
        pos++;
      } else if (Character.isWhitespace(c)) {
        pos++;
      } else if (c == '#') {
        while (pos < n && text.charAt(pos) != '\n') {
          pos++;
        }
      } else {
        break;
      }
    }
    if (pos >= n) {
      return null;
    }
    char c = text.charAt(pos);
    if (c == ';' || c == '{' || c == '}') {
      pos++;
      return String.valueOf(c);
    }
    StringBuilder w = new StringBuilder();
    if (c == '"' || c == '\'') {
      int startLine = line;
      pos++;
      while (true) {
        if (pos >= n) {
          throw new SyntaxError(file, startLine, "unterminated " + c + "quoted string");
        }
        char d = text.charAt(pos++);
        if (d == c) {
          return w.toString();
        }
        if (d == '\\' && pos < n) {
          unescape(w, text.charAt(pos++));
          continue;
        }
        if (d == '\n') {
          line++;
        }
        w.append(d);
      }
    }
    while (pos < n) {
      char d = text.charAt(pos);
      if (d == '{' && w.length() > 0 && w.charAt(w.length() - 1) == '$') {
        int close = text.indexOf('}', pos);
        if (close < 0) {
          throw new SyntaxError(file, line, "unterminated ${...} variable");
        }
        w.append(text, pos, close + 1);
        pos = close + 1;
        continue;
      }
      if (Character.isWhitespace(d) || d == ';' || d == '{' || d == '}') {
        break;
      }
      if (d == '\\' && pos + 1 < n) {
        unescape(w, text.charAt(pos + 1));
        pos += 2;
        continue;
      }
      w.append(d);
      pos++;
    }
    return w.toString();
  }
}
