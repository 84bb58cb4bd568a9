package dev.sluice.server.admin;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * How the admin listener guards its door and its threads: the names it answers to besides its own
 * address, its timeouts and its connection cap, and where a token it generates is kept. Build from
 * {@link #DEFAULTS} with the {@code with...} methods; each checks its value at once and names it
 * (the command line's flag) with the value and what was expected.
 *
 * <p>Why these defaults. A probe, a scrape and an operator's page send their whole head in one
 * packet, so 10 s for a head or a body is generous for every honest client on any network, and a
 * client that stalls gives its connection back within it. A keep-alive connection may sit 60 s
 * between requests (Prometheus scrapes every 15-60 s). 128 connections hold a few console pages
 * (each uses up to 6, one of them its event stream), scrapers and probes many times over; past
 * the cap the connection that has waited longest for a head, a body or a next request is closed
 * to make room, so stalled clients cannot keep a probe out.
 *
 * @param hosts names the listener answers to besides its address and {@code localhost}
 *     ({@code --admin-hosts}), lower case
 * @param headTimeout time from a connection's start, or a next request's first byte, to its
 *     head's end ({@code --admin-head-timeout})
 * @param bodyTimeout time from a head's end to its body's end ({@code --admin-body-timeout})
 * @param idleTimeout time a connection may wait for its next request, or for the client to take
 *     an answer ({@code --admin-idle-timeout})
 * @param maxConnections connections open at once ({@code --admin-max-connections})
 * @param generatedTokenFile where a token is generated when none is given, or null for
 *     {@link AdminToken#defaultFile}
 */
public record AdminOptions(List<String> hosts, Duration headTimeout, Duration bodyTimeout,
    Duration idleTimeout, int maxConnections, Path generatedTokenFile) {

  static final Duration MIN_TIMEOUT = Duration.ofMillis(100);
  static final Duration MAX_TIMEOUT = Duration.ofHours(1);
  static final int MIN_CONNECTIONS = 8;
  static final int MAX_CONNECTIONS = 65_536;

  public static final AdminOptions DEFAULTS = new AdminOptions(List.of(), Duration.ofSeconds(10),
      Duration.ofSeconds(10), Duration.ofSeconds(60), 128, null);

  public AdminOptions {
    hosts = hosts.stream().map(h -> h.toLowerCase(Locale.ROOT)).toList();
    for (String h : hosts) {
      if (!validHost(h)) {
        throw new IllegalArgumentException("--admin-hosts : \"" + h + "\" (expected: host names "
            + "or IP addresses without ports, separated by commas, like "
            + "sluice-admin.internal,10.0.0.7)");
      }
    }
    timeout("--admin-head-timeout", headTimeout);
    timeout("--admin-body-timeout", bodyTimeout);
    timeout("--admin-idle-timeout", idleTimeout);
    if (maxConnections < MIN_CONNECTIONS || maxConnections > MAX_CONNECTIONS) {
      throw new IllegalArgumentException("--admin-max-connections : " + maxConnections
          + " (expected: " + MIN_CONNECTIONS + " to " + MAX_CONNECTIONS + ")");
    }
  }

  public AdminOptions withHosts(List<String> names) {
    return new AdminOptions(names, headTimeout, bodyTimeout, idleTimeout, maxConnections,
        generatedTokenFile);
  }

  public AdminOptions withHeadTimeout(Duration d) {
    return new AdminOptions(hosts, d, bodyTimeout, idleTimeout, maxConnections,
        generatedTokenFile);
  }

  public AdminOptions withBodyTimeout(Duration d) {
    return new AdminOptions(hosts, headTimeout, d, idleTimeout, maxConnections,
        generatedTokenFile);
  }

  public AdminOptions withIdleTimeout(Duration d) {
    return new AdminOptions(hosts, headTimeout, bodyTimeout, d, maxConnections,
        generatedTokenFile);
  }

  public AdminOptions withMaxConnections(int n) {
    return new AdminOptions(hosts, headTimeout, bodyTimeout, idleTimeout, n, generatedTokenFile);
  }

  public AdminOptions withGeneratedTokenFile(Path file) {
    return new AdminOptions(hosts, headTimeout, bodyTimeout, idleTimeout, maxConnections, file);
  }

  private static void timeout(String flag, Duration d) {
    if (d == null || d.compareTo(MIN_TIMEOUT) < 0 || d.compareTo(MAX_TIMEOUT) > 0) {
      throw new IllegalArgumentException(flag + " : " + d + " (expected: a duration from 100ms "
          + "to 1h, like 10s)");
    }
  }

  /** A DNS name (letters, digits, '-', '.', '_') or an IP address; no port, no scheme. */
  private static boolean validHost(String h) {
    if (h.isEmpty() || h.length() > 253) {
      return false;
    }
    if (h.startsWith("[") && h.endsWith("]")) {
      return h.length() > 2 && h.substring(1, h.length() - 1).chars()
          .allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.');
    }
    return h.chars().allMatch(c -> c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
        || c == '.' || c == '_');
  }
}
