#!/usr/bin/env bash
# Where one `sluice serve` on Redis spends its CPU, by thread: utime + stime and context switches
# (voluntary + involuntary) of every thread of the JVM, from /proc/PID/task/*, over one wrk run.
# Used for docs/bench/gateway.md (issue 9, run C) to see the Lettuce I/O thread's share and the
# switches per request with and without the store's connections on the gateway's loops.
#
#   sluice-bench/load/thread-cpu.sh JAR [LABEL]        # from the repository root
#
# Environment (all optional): JAVA_OPTS (e.g. -Dsluice.redis.eventLoops=true), EXTRA (more
# `sluice serve` flags, e.g. "--io-threads 1"), WARMUP=8s, DURATION=10s, CONNECTIONS=64,
# KEEP=1 (keep the work directory: the server's log, wrk's output).
# Layout as gateway-bench.sh: the server on CPU 0; redis-server, the nginx upstream and wrk on
# CPU 1. The policy is gateway-bench.sh's never-refusing token bucket with the store in Redis.
# Prints requests/s, CPU µs and context switches per request (total and per thread name, digits
# stripped), the store errors the server logged (fail-open decisions Redis did not make, a 200
# all the same), and Redis's FCALL count and time.
set -euo pipefail

jar="$1"
label="${2:-$(basename "$jar")}"
WARMUP="${WARMUP:-8s}"
DURATION="${DURATION:-10s}"
CONNECTIONS="${CONNECTIONS:-64}"
work="$(mktemp -d /tmp/sluice-thread-cpu.XXXXXX)"
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ]; then echo "work directory kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# shellcheck source=upstream.sh
. "$(dirname "$0")/upstream.sh"

rp="$(free_port)"
taskset -c 1 redis-server --bind 127.0.0.1 --port "$rp" --save "" --appendonly no \
  --dir "$work" >"$work/redis.log" 2>&1 &
pids+=("$!")
up="$(free_port)"
upstream_conf "$work/up" "$up"
taskset -c 1 "$(nginx_bin)" -p "$work/up" -c "$work/up/nginx.conf" >/dev/null 2>&1 &
pids+=("$!")
wait_http "http://127.0.0.1:$up/" || { echo "the upstream did not start" >&2; exit 1; }
for _ in $(seq 100); do redis-cli -p "$rp" ping >/dev/null 2>&1 && break; sleep 0.1; done
printf '%s\n' "version: 1" "rules:" "  huge:" "    limits:" \
  "      - {type: token-bucket, burst: 1000000000, refill: 1000000000, period: 1s}" \
  "routes:" "  - {name: all, rules: [huge]}" "store:" "  uri: redis://127.0.0.1:$rp" \
  >"$work/policy.yaml"
sp="$(free_port)"
# shellcheck disable=SC2086
taskset -c 0 java ${JAVA_OPTS:-} -jar "$jar" serve --listen "127.0.0.1:$sp" \
  --upstream "http://127.0.0.1:$up" --config "$work/policy.yaml" --admin off ${EXTRA:-} \
  >"$work/sluice.log" 2>&1 &
spid=$!
pids+=("$spid")
wait_http "http://127.0.0.1:$sp/" || { echo "sluice did not start" >&2; cat "$work/sluice.log" >&2; exit 1; }

taskset -c 1 wrk -t2 -c"$CONNECTIONS" -d"$WARMUP" "http://127.0.0.1:$sp/" >/dev/null
snap() { # one line per thread name: name cpu-ticks context-switches
  local t
  for t in /proc/"$spid"/task/*; do
    printf '%s %s %s\n' "$(sed 's/^[0-9]* (\(.*\)) .*/\1/; s/[-#]*[0-9]*$//; s/ /_/g' "$t/stat")" \
      "$(awk '{sub(/^.*\) /, ""); print $12 + $13}' "$t/stat")" \
      "$(awk '/ctxt_switches/ {s += $2} END {print s + 0}' "$t/status")"
  done | awk '{t[$1] += $2; c[$1] += $3} END {for (n in t) print n, t[n], c[n]}' | sort
}
snap >"$work/before"
taskset -c 1 wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency "http://127.0.0.1:$sp/" \
  >"$work/wrk.txt"
snap >"$work/after"

n="$(awk '/requests in/ {print $1}' "$work/wrk.txt")"
echo "== $label: $n requests, $(awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$work/wrk.txt")" \
  "requests/s, load $(cut -d' ' -f1 /proc/loadavg)"
join -a1 "$work/after" "$work/before" | awk -v n="$n" -v hz="$(getconf CLK_TCK)" '
  { dt[$1] = $2 - $4; dc[$1] = $3 - $5; T += $2 - $4; C += $3 - $5 }
  END {
    printf "total: %.1f us CPU/request, %.3f context switches/request\n", T * 1e6 / hz / n, C / n
    for (k in dt) if (dt[k] > 0 || dc[k] > 0)
      printf "  %-26s %5.1f %% of the CPU, %5.1f us/request, %.3f switches/request\n", k,
        100 * dt[k] / T, dt[k] * 1e6 / hz / n, dc[k] / n
  }'
echo "store errors logged: $(grep -o 'store_errors_total=[0-9]*' "$work/sluice.log" | tail -1 \
  | cut -d= -f2)"
redis-cli -p "$rp" info commandstats | grep '^cmdstat_fcall' || true
