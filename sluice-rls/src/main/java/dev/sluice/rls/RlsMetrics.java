package dev.sluice.rls;

import java.util.List;

/** What the rate limit service reports about its decisions; {@link #NONE} ignores them. */
interface RlsMetrics {

  RlsMetrics NONE = new RlsMetrics() {
    @Override
    public void record(CheckRequest request, List<Status> statuses, long nanos) {}

    @Override
    public void invalid() {}

    @Override
    public void limited() {}
  };

  /** One answered request, every descriptor's status, the time to decide it. */
  void record(CheckRequest request, List<Status> statuses, long nanos);

  /** One request refused as {@code INVALID_ARGUMENT}. */
  void invalid();

  /** One decision request refused by the decision API's own limit (429). */
  void limited();
}
