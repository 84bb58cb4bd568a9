package dev.sluice.server;

import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import dev.sluice.server.admin.AdminToken;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * {@code sluice admin}: a command-line client of a running server's incident endpoints (see
 * {@code Incidents}). Prints a table, or the server's JSON with {@code --json}.
 *
 * <p>The token: {@code --token-file}, else {@code SLUICE_ADMIN_TOKEN_FILE}, else the token a
 * server on this machine generated for this user ({@link AdminToken#defaultFile}) when it exists.
 *
 * <p>Exit codes: 0 done; 1 not found (an unknown rule, a key that is not banned); 2 usage (a bad
 * command line, or input or a token the server refused: 400, 401, 403, 421); 3 the server or its store
 * cannot be reached (no connection, no answer in 10 s, 5xx).
 */
final class AdminCommand {

  static final int OK = 0;
  static final int NOT_FOUND = 1;
  static final int USAGE = 2;
  static final int UNREACHABLE = 3;


  private final PrintStream out;
  private final PrintStream err;
  private final Map<String, String> env;

  AdminCommand(PrintStream out, PrintStream err, Map<String, String> env) {
    this.out = out;
    this.err = err;
    this.env = env;
  }

  int run(List<String> args) {
    List<String> words = new ArrayList<>();
    List<String> flags = new ArrayList<>();
    boolean json = false;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (a.equals("--json")) {
        json = true;
      } else if (a.equals("--help") || a.equals("-h")) {
        out.print(Commands.help(Commands.ADMIN));
        return OK;
      } else if (a.startsWith("--")) {
        flags.add(a);
        if (!a.contains("=") && !Commands.ADMIN.isSwitch(a) && i + 1 < args.size()) {
          flags.add(args.get(++i));
        }
      } else {
        words.add(a);
      }
    }
    try {
      Map<String, String> o = Main.options(flags, Commands.ADMIN);
      String address = o.getOrDefault("--admin", env.getOrDefault("SLUICE_ADMIN",
          "127.0.0.1:9090"));
      InetSocketAddress admin = Main.hostPort("--admin", address, "127.0.0.1");
      String tokenFile = o.getOrDefault("--token-file", env.get("SLUICE_ADMIN_TOKEN_FILE"));
      if (tokenFile == null || tokenFile.isBlank()) {
        // the token a server on this machine generated for this user, when there is one
        Path generated = AdminToken.defaultFile(env);
        tokenFile = Files.isReadable(generated) ? generated.toString() : null;
      }
      String token = tokenFile == null || tokenFile.isBlank() ? null : readToken(tokenFile);
      String actor = o.getOrDefault("--actor", env.getOrDefault("USER", ""));
      String limit = o.get("--limit");
      boolean keepState = o.containsKey("--keep-state");
      if (keepState && !(words.size() > 0 && words.get(0).equals("unban"))) {
        throw new Main.UsageException("--keep-state applies to unban only");
      }
      HttpRequest request = request(words, limit, admin, token, actor, keepState);
      return send(request, words.get(0), json);
    } catch (Main.UsageException e) {
      String m = e.getMessage();
      err.println("sluice admin: " + m + (m.endsWith("--help)") ? "" : " "
          + Commands.hint(Commands.ADMIN)));
      return USAGE;
    }
  }

  private static String readToken(String file) throws Main.UsageException {
    try {
      return Files.readString(Path.of(file), StandardCharsets.UTF_8).strip();
    } catch (IOException | RuntimeException e) {
      throw new Main.UsageException("--token-file : " + file + " (expected: a readable file "
          + "holding the token; " + e.getMessage() + ")");
    }
  }

  private static HttpRequest request(List<String> words, String limit, InetSocketAddress admin,
      String token, String actor, boolean keepState) throws Main.UsageException {
    if (words.isEmpty()) {
      throw new Main.UsageException("a command is needed: bans, refused, show, ban, unban or "
          + "reset");
    }
    String command = words.get(0);
    int arity = switch (command) {
      case "bans" -> words.size() <= 2 ? words.size() - 1 : -1;
      case "refused" -> 1;
      case "show", "unban", "reset" -> 2;
      case "ban" -> 3;
      default -> throw new Main.UsageException("unknown command '" + command
          + "' (expected: bans, refused, show, ban, unban or reset)");
    };
    if (arity < 0 || words.size() - 1 != arity) {
      throw new Main.UsageException(command + ": expected " + switch (command) {
        case "bans" -> "at most a RULE";
        case "refused" -> "a RULE";
        case "ban" -> "a RULE, a KEY and a DURATION like 10m";
        default -> "a RULE and a KEY";
      } + ", got " + (words.size() - 1) + " argument(s)");
    }
    if (limit != null && (command.equals("show") || command.equals("unban")
        || command.equals("reset") || command.equals("ban"))) {
      throw new Main.UsageException("--limit applies to bans and refused only");
    }
    String query = limit == null ? "" : "limit=" + segment(limit);
    String path;
    String method = "GET";
    switch (command) {
      case "bans" -> path = "/v1/bans" + join(words.size() == 2
          ? "rule=" + segment(words.get(1)) : "", query);
      case "refused" -> path = "/v1/refused" + join("rule=" + segment(words.get(1)), query);
      case "show" -> path = "/v1/keys/" + segment(words.get(1)) + "/" + segment(words.get(2));
      case "unban" -> {
        path = "/v1/bans/" + segment(words.get(1)) + "/" + segment(words.get(2))
            + (keepState ? "?keepState" : "");
        method = "DELETE";
      }
      case "ban" -> {
        path = "/v1/bans/" + segment(words.get(1)) + "/" + segment(words.get(2)) + "?duration="
            + segment(words.get(3));
        method = "POST";
      }
      default -> {
        path = "/v1/keys/" + segment(words.get(1)) + "/" + segment(words.get(2)) + "/reset";
        method = "POST";
      }
    }
    String host = admin.getHostString().contains(":") ? "[" + admin.getHostString() + "]"
        : admin.getHostString();
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + host + ":"
        + admin.getPort() + path)).timeout(Duration.ofSeconds(10))
        .method(method, HttpRequest.BodyPublishers.noBody());
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    String a = actor.replaceAll("[^\\x21-\\x7e]", "_");
    if (!a.isEmpty()) {
      b.header("X-Sluice-Actor", a);
    }
    return b.build();
  }

  private static String join(String a, String b) {
    String q = a.isEmpty() ? b : b.isEmpty() ? a : a + "&" + b;
    return q.isEmpty() ? "" : "?" + q;
  }

  /** Percent-encodes everything but RFC 3986's unreserved characters: '/' and '%' included. */
  static String segment(String s) {
    StringBuilder sb = new StringBuilder();
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xFF;
      if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
          || c == '.' || c == '_' || c == '~') {
        sb.append((char) c);
      } else {
        sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
      }
    }
    return sb.toString();
  }

  private int send(HttpRequest request, String command, boolean json) {
    HttpResponse<String> response;
    try {
      HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      response = client.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (ConnectException | HttpConnectTimeoutException e) {
      err.println("sluice admin: cannot reach " + request.uri().getAuthority() + " ("
          + e.getClass().getSimpleName() + "); is the server running with --admin there?");
      return UNREACHABLE;
    } catch (HttpTimeoutException e) {
      err.println("sluice admin: no answer from " + request.uri().getAuthority() + " in 10 s");
      return UNREACHABLE;
    } catch (IOException e) {
      err.println("sluice admin: cannot reach " + request.uri().getAuthority() + " (" + e
          + ")");
      return UNREACHABLE;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return UNREACHABLE;
    }
    int status = response.statusCode();
    Map<String, Object> body = parse(response.body());
    if (json) {
      out.print(response.body().endsWith("\n") ? response.body() : response.body() + "\n");
    }
    if (status == 200) {
      if (!json) {
        out.print(AdminTables.render(command, body));
      }
      return OK;
    }
    String error = body != null && body.get("error") != null ? String.valueOf(body.get("error"))
        : "HTTP " + status;
    if (!json) {
      err.println("sluice admin: " + error + (status == 404 && body != null
          && body.get("expected") != null ? " (expected: " + body.get("expected") + ")" : ""));
    }
    if (!json && status == 401) {
      err.println("sluice admin: give the server's admin token with --token-file (the file its "
          + "log names at start: --admin-token-file, or the generated "
          + AdminToken.defaultFile(env) + ")");
    }
    return switch (status) {
      case 404 -> NOT_FOUND;
      case 400, 401, 403, 405, 421 -> USAGE;
      default -> UNREACHABLE;
    };
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> parse(String body) {
    try {
      Object tree = new Yaml(new SafeConstructor(new LoaderOptions())).load(body);
      return tree instanceof Map<?, ?> m ? (Map<String, Object>) m : null;
    } catch (RuntimeException e) {
      return null;
    }
  }
}
