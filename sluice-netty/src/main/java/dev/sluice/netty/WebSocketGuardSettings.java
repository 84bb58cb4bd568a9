package dev.sluice.netty;

import dev.sluice.core.ConcurrencyLimit;
import dev.sluice.core.OnStoreError;
import dev.sluice.core.policy.Policy;
import dev.sluice.core.Rule;
import dev.sluice.core.policy.Source;
import dev.sluice.core.http.WebSocketDefaults;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The guards of {@link WebSocketGuardHandler} (seeds 000 and 001). Immutable; validated where set.
 *
 * <p>Defaults (core's {@link WebSocketDefaults}, which policy files use too): 55 connections per
 * client address, 75 in the shared bucket of addresses that cannot be resolved, 3 per session
 * token (when a session dimension is named), 64 KiB and 1,024 fragments per message, a flood
 * bucket of 120 messages refilled at 40 per second, no per-action limits, 2 s for a client to
 * answer the close frame.
 */
public final class WebSocketGuardSettings {

  public static final int DEFAULT_MAX_CONNECTIONS_PER_IP = WebSocketDefaults.MAX_CONNECTIONS_PER_IP;
  public static final int DEFAULT_MAX_CONNECTIONS_UNKNOWN =
      WebSocketDefaults.MAX_CONNECTIONS_UNKNOWN;
  public static final int DEFAULT_MAX_CONNECTIONS_PER_SESSION =
      WebSocketDefaults.MAX_CONNECTIONS_PER_SESSION;
  public static final int DEFAULT_MAX_MESSAGE_BYTES = WebSocketDefaults.MAX_MESSAGE_BYTES;
  /** See {@link WebSocketDefaults#MAX_FRAGMENTS}. */
  public static final int DEFAULT_MAX_FRAGMENTS = WebSocketDefaults.MAX_FRAGMENTS;
  public static final long DEFAULT_FLOOD_BURST = WebSocketDefaults.FLOOD_BURST;
  public static final long DEFAULT_FLOOD_PER_SECOND = WebSocketDefaults.FLOOD_PER_SECOND;
  public static final Duration DEFAULT_STRIKE_WINDOW = WebSocketDefaults.STRIKE_WINDOW;

  private final Policy policy;
  private final ConcurrencyLimit perIp;
  private final ConcurrencyLimit unknown;
  private final ConcurrencyLimit perSession;
  private final String sessionDimension;
  private final int maxMessageBytes;
  private final int maxFragments;
  private final long floodBurst;
  private final long floodPerSecond;
  private final String actionField;
  private final Map<String, Rule> actionRules;
  private final List<Rule> actionRuleList;
  private final int strikes;
  private final long strikeWindowNanos;
  private final boolean refuseBeforeUpgrade;
  private final Duration closeTimeout;

  private WebSocketGuardSettings(Builder b) {
    this.policy = b.policy;
    this.perIp = cap("ws-ip", "ip", b.maxConnectionsPerIp, b.leaseTtl);
    this.unknown = cap("ws-unknown", "ip", b.maxConnectionsUnknown, b.leaseTtl);
    this.perSession = b.sessionDimension == null ? null
        : cap("ws-session", "session", b.maxConnectionsPerSession, b.leaseTtl);
    this.sessionDimension = b.sessionDimension;
    this.maxMessageBytes = b.maxMessageBytes;
    this.maxFragments = b.maxFragments;
    this.floodBurst = b.floodBurst;
    this.floodPerSecond = b.floodPerSecond;
    this.actionField = b.actionField;
    this.actionRules = Map.copyOf(b.actionRules);
    List<Rule> distinct = new ArrayList<>();
    for (Rule r : b.actionRules.values()) {
      if (!distinct.contains(r)) {
        distinct.add(r);
      }
    }
    this.actionRuleList = List.copyOf(distinct);
    this.strikes = b.strikes;
    this.strikeWindowNanos = b.strikeWindow.toNanos();
    this.refuseBeforeUpgrade = b.refuseBeforeUpgrade;
    this.closeTimeout = b.closeTimeout;
  }

  private static ConcurrencyLimit cap(String name, String key, int max, Duration ttl) {
    return max <= 0 ? null : ConcurrencyLimit.of(name, key, max, ttl, OnStoreError.ALLOW);
  }

  /** Guards for connections whose client address and session token {@code policy} resolves. */
  public static Builder newBuilder(Policy policy) {
    if (policy == null) {
      throw new IllegalArgumentException("policy : null (expected: a policy)");
    }
    return new Builder(policy);
  }

  public Policy policy() {
    return policy;
  }

  /** The per-address cap, or null when off. */
  public ConcurrencyLimit perIp() {
    return perIp;
  }

  /** The cap of the shared bucket of unresolvable addresses, or null when off. */
  public ConcurrencyLimit unknown() {
    return unknown;
  }

  /** The per-session cap, or null when off. */
  public ConcurrencyLimit perSession() {
    return perSession;
  }

  public String sessionDimension() {
    return sessionDimension;
  }

  /** The source of the session token, or null. */
  Source sessionSource() {
    return sessionDimension == null ? null : policy.dimensions().get(sessionDimension);
  }

  public int maxMessageBytes() {
    return maxMessageBytes;
  }

  /** The most frames (first plus continuations) one message may have. */
  public int maxFragments() {
    return maxFragments;
  }

  public long floodBurst() {
    return floodBurst;
  }

  public long floodPerSecond() {
    return floodPerSecond;
  }

  public String actionField() {
    return actionField;
  }

  /** Action name to rule; {@code "*"} is the fallback for actions not listed. */
  public Map<String, Rule> actionRules() {
    return actionRules;
  }

  List<Rule> actionRuleList() {
    return actionRuleList;
  }

  Rule ruleFor(String action) {
    Rule r = actionRules.get(action);
    return r != null ? r : actionRules.get("*");
  }

  public int strikes() {
    return strikes;
  }

  public Duration strikeWindow() {
    return Duration.ofNanos(strikeWindowNanos);
  }

  long strikeWindowNanos() {
    return strikeWindowNanos;
  }

  /** True: refused connects (caps) get 429 before the upgrade; false: 1013 after it. */
  public boolean refuseBeforeUpgrade() {
    return refuseBeforeUpgrade;
  }

  /** How long a closed socket waits for the client's close frame or EOF. */
  public Duration closeTimeout() {
    return closeTimeout;
  }

  /** Builds {@link WebSocketGuardSettings}. */
  public static final class Builder {
    private final Policy policy;
    private int maxConnectionsPerIp = DEFAULT_MAX_CONNECTIONS_PER_IP;
    private int maxConnectionsUnknown = DEFAULT_MAX_CONNECTIONS_UNKNOWN;
    private int maxConnectionsPerSession = DEFAULT_MAX_CONNECTIONS_PER_SESSION;
    private String sessionDimension;
    private Duration leaseTtl = Duration.ofMinutes(2);
    private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;
    private int maxFragments = DEFAULT_MAX_FRAGMENTS;
    private long floodBurst = DEFAULT_FLOOD_BURST;
    private long floodPerSecond = DEFAULT_FLOOD_PER_SECOND;
    private String actionField;
    private final Map<String, Rule> actionRules = new LinkedHashMap<>();
    private int strikes;
    private Duration strikeWindow = DEFAULT_STRIKE_WINDOW;
    private boolean refuseBeforeUpgrade;
    private Duration closeTimeout = WebSockets.DEFAULT_CLOSE_TIMEOUT;

    private Builder(Policy policy) {
      this.policy = policy;
    }

    /** Concurrent connections per client address; 0 turns the cap off. */
    public Builder maxConnectionsPerIp(int max) {
      this.maxConnectionsPerIp = nonNegative(max, "maxConnectionsPerIp");
      return this;
    }

    /** Concurrent connections shared by all unresolvable addresses; 0 turns the cap off. */
    public Builder maxConnectionsUnknown(int max) {
      this.maxConnectionsUnknown = nonNegative(max, "maxConnectionsUnknown");
      return this;
    }

    /** Concurrent connections per session token; 0 turns the cap off. */
    public Builder maxConnectionsPerSession(int max) {
      this.maxConnectionsPerSession = nonNegative(max, "maxConnectionsPerSession");
      return this;
    }

    /** The policy dimension (a header, cookie or query source) holding the session token. */
    public Builder sessionDimension(String dimension) {
      if (dimension != null && !policy.dimensions().containsKey(dimension)) {
        throw new IllegalArgumentException("sessionDimension : '" + dimension
            + "' (expected: a dimension of the policy, one of " + policy.dimensions().keySet()
            + ")");
      }
      this.sessionDimension = dimension;
      return this;
    }

    /** How long a connection's slot survives without renewal (renewed while it is open). */
    public Builder leaseTtl(Duration ttl) {
      if (ttl == null || ttl.compareTo(Duration.ofSeconds(3)) < 0) {
        throw new IllegalArgumentException("leaseTtl : " + ttl + " (expected: >= 3 s)");
      }
      this.leaseTtl = ttl;
      return this;
    }

    /** Largest frame or reassembled message; larger ones close the socket with 1009. */
    public Builder maxMessageBytes(int max) {
      if (max < 125) {
        throw new IllegalArgumentException("maxMessageBytes : " + max + " (expected: >= 125)");
      }
      this.maxMessageBytes = max;
      return this;
    }

    /** The most frames one message may have; more close the socket with 1009. */
    public Builder maxFragments(int max) {
      if (max < 1 || max > 1_000_000) {
        throw new IllegalArgumentException("maxFragments : " + max
            + " (expected: 1..1000000)");
      }
      this.maxFragments = max;
      return this;
    }

    /** How long a socket closed by a guard waits for the client's close frame or EOF. */
    public Builder closeTimeout(Duration timeout) {
      if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0
          || timeout.compareTo(Duration.ofMinutes(1)) > 0) {
        throw new IllegalArgumentException("closeTimeout : " + timeout
            + " (expected: 1 ms..1 min)");
      }
      this.closeTimeout = timeout;
      return this;
    }

    /** The per-connection message bucket; {@code perSecond} 0 turns it off. */
    public Builder flood(long burst, long perSecond) {
      if (burst <= 0) {
        throw new IllegalArgumentException("floodBurst : " + burst + " (expected: > 0)");
      }
      if (perSecond < 0) {
        throw new IllegalArgumentException("floodPerSecond : " + perSecond + " (expected: >= 0)");
      }
      this.floodBurst = burst;
      this.floodPerSecond = perSecond;
      return this;
    }

    /** The top-level JSON string field of text messages naming the action, or null. */
    public Builder actionField(String field) {
      if (field != null && (field.isEmpty() || field.length() > 64)) {
        throw new IllegalArgumentException(
            "actionField : \"" + field + "\" (expected: 1..64 characters)");
      }
      this.actionField = field;
      return this;
    }

    /** Checks messages whose action is {@code action} ({@code "*"}: any other) with {@code rule}. */
    public Builder actionRule(String action, Rule rule) {
      if (action == null || action.isEmpty()) {
        throw new IllegalArgumentException("action : \"" + action + "\" (expected: a name)");
      }
      if (rule == null) {
        throw new IllegalArgumentException("rule : null (expected: a rule for action '" + action
            + "')");
      }
      actionRules.put(action, rule);
      return this;
    }

    /** Checks {@code action} with the policy's rule {@code ruleName}. */
    public Builder actionRule(String action, String ruleName) {
      Rule rule = policy.rules().get(ruleName);
      if (rule == null) {
        throw new IllegalArgumentException("rule : '" + ruleName + "' for action '" + action
            + "' (expected: one of " + policy.rules().keySet() + ")");
      }
      return actionRule(action, rule);
    }

    /** Closes with 1008 after {@code strikes} refused messages within {@code window}; 0: never. */
    public Builder strikes(int strikes, Duration window) {
      nonNegative(strikes, "strikes");
      if (strikes > 1000) {
        throw new IllegalArgumentException("strikes : " + strikes + " (expected: <= 1000)");
      }
      if (window == null || window.isNegative() || window.isZero()) {
        throw new IllegalArgumentException("strikeWindow : " + window + " (expected: > 0)");
      }
      this.strikes = strikes;
      this.strikeWindow = window;
      return this;
    }

    public Builder refuseBeforeUpgrade(boolean on) {
      this.refuseBeforeUpgrade = on;
      return this;
    }

    private static int nonNegative(int v, String name) {
      if (v < 0) {
        throw new IllegalArgumentException(name + " : " + v + " (expected: >= 0)");
      }
      return v;
    }

    public WebSocketGuardSettings build() {
      return new WebSocketGuardSettings(this);
    }
  }

  @Override
  public String toString() {
    return "WebSocketGuardSettings{perIp=" + perIp + ", unknown=" + unknown + ", perSession="
        + perSession + ", maxMessageBytes=" + maxMessageBytes + ", maxFragments=" + maxFragments
        + ", flood=" + floodBurst + "@"
        + floodPerSecond + "/s, actionField=" + actionField + ", actions=" + actionRules.keySet()
        + ", strikes=" + strikes + "}";
  }

}
