#!/usr/bin/env bash
# Bytes the gateway's event loops allocate per request (issue 21): `sluice serve` under wrk on
# loopback, a keep-alive flood of one client, measured by the JVM's own per-thread allocation
# counters (JFR's jdk.ThreadAllocationStatistics, read at a dump before and after the flood).
# Two policies: "allowed" (a limit that never refuses: every request decided, forwarded to an
# nginx upstream and answered with its limit headers) and "refused" (one request a day: every
# request after the first is answered 429 by the relay itself).
#
#   sluice-bench/load/relay-alloc.sh            # needs nginx, wrk, the built sluice jar
#
# Environment: SLUICE_JAR (default sluice-server/target/sluice.jar), SECONDS_EACH (default 10),
# CONNECTIONS (default 16). Prints, per policy: requests, bytes allocated by the event-loop
# threads (Netty's multiThreadIoEventLoopGroup-*), bytes per request, and the allocation samples' top frames.
set -euo pipefail

here="$(cd "$(dirname "$0")/../.." && pwd)"
jar="${SLUICE_JAR:-$here/sluice-server/target/sluice.jar}"
secs="${SECONDS_EACH:-10}"
conns="${CONNECTIONS:-16}"
work="$(mktemp -d /tmp/relay-alloc.XXXXXX)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# shellcheck source=upstream.sh
. "$(dirname "$0")/upstream.sh"

up_port="$(free_port)"
upstream_conf "$work/up" "$up_port"
"$(nginx_bin)" -p "$work/up" -c "$work/up/nginx.conf" >/dev/null 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$up_port/" || { echo "the upstream did not start" >&2; exit 1; }

printf 'version: 1\nrules:\n  huge:\n    limits:\n      - {type: token-bucket, burst: 1000000000, refill: 1000000000, period: 1s}\nroutes:\n  - {name: all, rules: [huge]}\n' >"$work/allowed.yaml"
printf 'version: 1\nrules:\n  flood:\n    limits:\n      - {type: token-bucket, burst: 1, refill: 1, period: 1d}\nroutes:\n  - {name: all, rules: [flood]}\n' >"$work/refused.yaml"

# The event loops' allocated bytes in a JFR dump: the largest count seen per thread, summed.
allocated() {
  jfr print --events jdk.ThreadAllocationStatistics "$1" | awk '
    /allocated = / { v = $3; gsub(/[^0-9.]/, "", v); u = $4; a = v * (u ~ /^kB/ ? 1e3 : u ~ /^MB/ ? 1e6 : u ~ /^GB/ ? 1e9 : 1) }
    /thread = "multiThreadIoEventLoopGroup/ { n = $0; if (a > max[n]) max[n] = a }
    END { s = 0; for (n in max) s += max[n]; printf "%.0f\n", s }'
}

for policy in allowed refused; do
  port="$(free_port)"
  java ${JAVA_OPTS:-} -XX:StartFlightRecording=name=alloc,settings=profile -jar "$jar" serve \
    --listen "127.0.0.1:$port" --upstream "http://127.0.0.1:$up_port" \
    --config "$work/$policy.yaml" >"$work/$policy.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  wait_http "http://127.0.0.1:$port/healthz" || { echo "sluice did not start" >&2; exit 1; }
  wrk -t1 -c"$conns" -d5s "http://127.0.0.1:$port/" >/dev/null   # warm-up
  jcmd "$pid" JFR.dump name=alloc filename="$work/$policy-before.jfr" >/dev/null
  wrk -t1 -c"$conns" -d"${secs}s" "http://127.0.0.1:$port/" >"$work/$policy.wrk"
  jcmd "$pid" JFR.dump name=alloc filename="$work/$policy-after.jfr" >/dev/null
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  requests="$(awk '/requests in/ { print $1 }' "$work/$policy.wrk")"
  before="$(allocated "$work/$policy-before.jfr")"
  after="$(allocated "$work/$policy-after.jfr")"
  # Two dumps a few ms apart bound what the dumps themselves cost on the loops: nothing (they
  # run on JFR's own threads), so the difference is the flood's.
  echo "$policy: $requests requests, $((after - before)) bytes on the event loops," \
    "$(awk -v b="$((after - before))" -v r="$requests" 'BEGIN { printf "%.1f", b / r }') B/request"
  grep -E "Non-2xx|Socket errors" "$work/$policy.wrk" || true
  echo "  top allocation samples on the event loops during the flood:"
  jfr print --events jdk.ObjectAllocationSample --stack-depth 3 "$work/$policy-after.jfr" | awk '
    /objectClass = / { c = $3 } /eventThread = "multiThreadIoEventLoopGroup/ { t = 1 }
    /stackTrace = / { getline; if (t) print c " @ " $1; t = 0 }' | sort | uniq -c | sort -rn | head -6
done
echo "work directory: $work"
