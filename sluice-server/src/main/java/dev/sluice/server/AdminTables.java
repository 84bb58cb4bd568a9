package dev.sluice.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** {@code sluice admin}'s tables: the server's JSON answers, laid out for a person. */
final class AdminTables {

  private AdminTables() {}

  static String render(String command, Map<String, Object> body) {
    if (body == null) {
      return "(no JSON in the answer)\n";
    }
    return switch (command) {
      case "bans" -> listing(list(body.get("bans")), true, "no banned keys");
      case "refused" -> listing(list(body.get("refused")), false,
          "no key of " + body.get("rule") + " is refusing now");
      case "show" -> show(body);
      case "ban" -> "banned " + body.get("key") + " under " + body.get("rule") + " for "
          + duration(number(body.get("banLeftMs"))) + "\n";
      case "unban" -> "lifted the ban of " + body.get("key") + " under " + body.get("rule")
          + (Boolean.TRUE.equals(body.get("stateReset")) ? " and reset its state"
              : " (state kept)") + "\n";
      default -> "reset " + body.get("key") + " under " + body.get("rule")
          + (Boolean.TRUE.equals(body.get("hadState")) ? "" : " (it had no state)") + "\n";
    };
  }

  private static String listing(List<Map<String, Object>> keys, boolean withRule,
      String none) {
    if (keys.isEmpty()) {
      return none + "\n";
    }
    List<String[]> rows = new ArrayList<>();
    rows.add(withRule ? new String[] {"RULE", "KEY", "BANNED FOR", "LAST REFUSED"}
        : new String[] {"KEY", "STATE", "RETRY IN", "LAST REFUSED"});
    for (Map<String, Object> k : keys) {
      String ago = k.get("refusedAgoMs") == null ? "-"
          : duration(number(k.get("refusedAgoMs"))) + " ago";
      if (withRule) {
        rows.add(new String[] {str(k.get("rule")), str(k.get("key")),
            duration(number(k.get("banLeftMs"))), ago});
      } else {
        rows.add(new String[] {str(k.get("key")), state(k), duration(retry(k)), ago});
      }
    }
    return table(rows);
  }

  private static String show(Map<String, Object> k) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"rule", str(k.get("rule"))});
    rows.add(new String[] {"key", str(k.get("key"))});
    rows.add(new String[] {"state", state(k)});
    for (Map<String, Object> l : list(k.get("limits"))) {
      long retry = number(l.get("retryAfterMs"));
      rows.add(new String[] {"limit " + l.get("name"), l.get("remaining") + " left, full in "
          + duration(number(l.get("resetMs")))
          + (retry > 0 ? ", next call in " + duration(retry) : "")});
    }
    return table(rows);
  }

  private static String state(Map<String, Object> k) {
    if (Boolean.TRUE.equals(k.get("banned"))) {
      return "banned for " + duration(number(k.get("banLeftMs")));
    }
    if (Boolean.TRUE.equals(k.get("refusing"))) {
      return "refusing";
    }
    return Boolean.TRUE.equals(k.get("present")) ? "allowing" : "fresh (no state)";
  }

  private static long retry(Map<String, Object> k) {
    long retry = number(k.get("banLeftMs"));
    for (Map<String, Object> l : list(k.get("limits"))) {
      retry = Math.max(retry, number(l.get("retryAfterMs")));
    }
    return retry;
  }

  /** Columns padded to their widest cell, two spaces apart. */
  static String table(List<String[]> rows) {
    int[] width = new int[rows.get(0).length];
    for (String[] r : rows) {
      for (int i = 0; i < r.length; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    StringBuilder sb = new StringBuilder();
    for (String[] r : rows) {
      for (int i = 0; i < r.length; i++) {
        sb.append(r[i]);
        if (i + 1 < r.length) {
          sb.append(" ".repeat(width[i] - r[i].length() + 2));
        }
      }
      sb.append('\n');
    }
    return sb.toString();
  }

  /** {@code 1h2m3s}, {@code 450ms}, {@code 0s}. */
  static String duration(long ms) {
    if (ms <= 0) {
      return "0s";
    }
    if (ms < 1000) {
      return ms + "ms";
    }
    long s = (ms + 999) / 1000;
    StringBuilder sb = new StringBuilder();
    if (s >= 86400) {
      sb.append(s / 86400).append('d');
      s %= 86400;
    }
    if (s >= 3600) {
      sb.append(s / 3600).append('h');
      s %= 3600;
    }
    if (s >= 60) {
      sb.append(s / 60).append('m');
      s %= 60;
    }
    if (s > 0 || sb.length() == 0) {
      sb.append(s).append('s');
    }
    return sb.toString();
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Object v) {
    return v instanceof List<?> l ? (List<Map<String, Object>>) l : List.of();
  }

  private static long number(Object v) {
    return v instanceof Number n ? n.longValue() : 0;
  }

  private static String str(Object v) {
    return String.valueOf(v);
  }
}
