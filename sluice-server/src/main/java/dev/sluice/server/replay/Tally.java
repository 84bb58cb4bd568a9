package dev.sluice.server.replay;

import java.util.List;

/** What one replay engine saw: per rule counts and series, the clients, the refused ones. */
final class Tally {

  /** Rows of the per-rule series: requests, refused, shadow-refused, for each rule in order. */
  static final int PER_RULE = 3;

  final List<String> rules;
  final long[] windowMicros;
  final long[] requests;
  final long[] refused;
  final long[] shadow;
  final long[] firstRefusal;
  final String[] firstRefused;
  final long[] firstShadow;
  final Series series;
  final ClientTable clients;
  final RefusedClients refusedClients;
  long decided;
  long allowedCount;
  long refusedCount;
  long shadowCount;
  long exempt;
  long allowlisted;
  long unlimited;
  /** Requests the gateway refuses before deciding (a target its path rule refuses). */
  long invalid;
  long firstMicros = Long.MIN_VALUE;
  long lastMicros = Long.MIN_VALUE;

  Tally(List<String> rules, long[] windowMicros, int clientCap) {
    this.rules = rules;
    this.windowMicros = windowMicros;
    int n = rules.size();
    requests = new long[n];
    refused = new long[n];
    shadow = new long[n];
    firstRefusal = new long[n];
    firstRefused = new String[n];
    firstShadow = new long[n];
    java.util.Arrays.fill(firstRefusal, Long.MIN_VALUE);
    java.util.Arrays.fill(firstShadow, Long.MIN_VALUE);
    series = new Series(n * PER_RULE);
    clients = new ClientTable(clientCap, windowMicros);
    refusedClients = new RefusedClients(n);
  }

  /** Adds another partition's tally (its clients are other clients: partitions split by client). */
  void addAll(Tally o) {
    for (int i = 0; i < rules.size(); i++) {
      requests[i] += o.requests[i];
      refused[i] += o.refused[i];
      shadow[i] += o.shadow[i];
      if (o.firstRefusal[i] != Long.MIN_VALUE && (firstRefusal[i] == Long.MIN_VALUE
          || o.firstRefusal[i] < firstRefusal[i])) {
        firstRefusal[i] = o.firstRefusal[i];
        firstRefused[i] = o.firstRefused[i];
      }
      if (o.firstShadow[i] != Long.MIN_VALUE && (firstShadow[i] == Long.MIN_VALUE
          || o.firstShadow[i] < firstShadow[i])) {
        firstShadow[i] = o.firstShadow[i];
      }
      clients.histograms[i].addAll(o.clients.histograms[i]);
    }
    series.addAll(o.series);
    clients.dropped += o.clients.dropped;
    for (RefusedClients.Entry e : o.refusedClients.entries()) {
      refusedClients.entries().add(e);
    }
    refusedClients.approximate |= o.refusedClients.approximate;
    decided += o.decided;
    allowedCount += o.allowedCount;
    refusedCount += o.refusedCount;
    shadowCount += o.shadowCount;
    exempt += o.exempt;
    allowlisted += o.allowlisted;
    unlimited += o.unlimited;
    invalid += o.invalid;
    if (o.firstMicros != Long.MIN_VALUE && (firstMicros == Long.MIN_VALUE
        || o.firstMicros < firstMicros)) {
      firstMicros = o.firstMicros;
    }
    lastMicros = Math.max(lastMicros, o.lastMicros);
  }
}
