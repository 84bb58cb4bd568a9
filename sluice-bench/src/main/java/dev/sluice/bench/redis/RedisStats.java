package dev.sluice.bench.redis;

import io.lettuce.core.api.sync.RedisCommands;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * What one run cost redis-server: {@code INFO commandstats} (after {@code CONFIG RESETSTAT}) and
 * the process CPU from {@code INFO cpu}.
 *
 * <p>Commands run by a script are counted twice by Redis: under their own name and inside the
 * script's time. So the command time of a run is the time of the commands the client sent:
 * every script command ({@code FCALL}, {@code EVALSHA}, {@code EVAL}, which include what they
 * call), plus, for a plain command the client also sent (Bucket4j's {@code GET}), the share of
 * its time that matches the calls the client made (the rest ran inside scripts).
 */
final class RedisStats {

  static final Set<String> SCRIPT_COMMANDS =
      Set.of("fcall", "fcall_ro", "evalsha", "evalsha_ro", "eval", "eval_ro");

  /** calls and usec per command, lower case, for example {@code "get" -> {calls, usec}}. */
  final Map<String, long[]> commands;
  final double cpuSeconds;

  private RedisStats(Map<String, long[]> commands, double cpuSeconds) {
    this.commands = commands;
    this.cpuSeconds = cpuSeconds;
  }

  static void reset(RedisCommands<String, String> admin) {
    admin.configResetstat();
  }

  static RedisStats read(RedisCommands<String, String> admin) {
    Map<String, long[]> commands = new HashMap<>();
    for (String line : admin.info("commandstats").split("\r?\n")) {
      if (!line.startsWith("cmdstat_")) {
        continue;
      }
      String name = line.substring("cmdstat_".length(), line.indexOf(':'));
      long calls = 0;
      long usec = 0;
      for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
        String[] kv = field.split("=");
        if (kv[0].equals("calls")) {
          calls = Long.parseLong(kv[1]);
        } else if (kv[0].equals("usec")) {
          usec = Long.parseLong(kv[1]);
        }
      }
      commands.put(name, new long[] {calls, usec});
    }
    double cpu = 0;
    for (String line : admin.info("cpu").split("\r?\n")) {
      if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
        cpu += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
      }
    }
    return new RedisStats(commands, cpu);
  }

  long calls(String command) {
    long[] c = commands.get(command);
    return c == null ? 0 : c[0];
  }

  /** Script commands the client sent (scripts cannot call scripts, so all of them). */
  long scriptCalls() {
    long n = 0;
    for (String s : SCRIPT_COMMANDS) {
      n += calls(s);
    }
    return n;
  }

  /** Every command Redis executed except the admin connection's, scripts' inner calls included. */
  long executedCalls() {
    long n = 0;
    for (Map.Entry<String, long[]> e : commands.entrySet()) {
      if (!e.getKey().equals("info") && !e.getKey().startsWith("config")) {
        n += e.getValue()[0];
      }
    }
    return n;
  }

  /**
   * Microseconds of command time for the commands the client sent: {@code sent} maps a plain
   * command to how many of it the client sent; script commands are taken whole.
   */
  double commandMicros(Map<String, Long> sent) {
    double us = 0;
    for (String s : SCRIPT_COMMANDS) {
      long[] c = commands.get(s);
      us += c == null ? 0 : c[1];
    }
    for (Map.Entry<String, Long> e : sent.entrySet()) {
      long[] c = commands.get(e.getKey());
      if (c == null || c[0] == 0 || SCRIPT_COMMANDS.contains(e.getKey())) {
        continue;
      }
      us += c[1] * Math.min(1.0, (double) e.getValue() / c[0]);
    }
    return us;
  }

  /** A short "name calls usec" listing of the commands worth showing. */
  String describe() {
    StringBuilder sb = new StringBuilder();
    new java.util.TreeMap<>(commands).forEach((name, c) -> {
      if (!name.equals("info") && !name.startsWith("config")) {
        sb.append(String.format("%s=%d calls/%d us (%.2f us/call) ", name, c[0], c[1],
            c[0] == 0 ? 0.0 : (double) c[1] / c[0]));
      }
    });
    return sb.toString().trim();
  }
}
