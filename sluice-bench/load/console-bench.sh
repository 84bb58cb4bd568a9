#!/usr/bin/env bash
# What an open console costs the gateway (issue 24): wrk against one `sluice serve` whose token
# bucket never refuses, in rounds that alternate between no console page open and the console
# open in a headless Chromium (one page: its event stream, its charts redrawn every second).
#
#   sluice-bench/load/console-bench.sh          # from the repository root
#
# Environment (all optional): ROUNDS=5 DURATION=10s WARMUP=20s THREADS=2 CONNECTIONS=64
#   SERVER_CPU=0 CLIENT_CPU=1   the server's core; wrk's and the browser's core
#   SLUICE_JAR                  the build to measure (default: sluice-server/target/sluice.jar)
#   KEEP=1                      keep the work directory (policy, logs, raw wrk output)
#
# The upstream is the server's built-in demo upstream (a small JSON 200 answered by the gateway
# itself), so the rounds measure the gateway and whatever the console adds to the same process:
# the 1 Hz sampler, the store's recent-refusal lists, the event stream's writes. Each round runs
# both modes, in alternating order, the same server throughout (its JIT warm from the warm-up);
# the table gives each mode's median over the rounds and the server's CPU time per request
# (utime + stime of the JVM from /proc, all threads), which varies less than requests/s with what
# else runs on the machine, and the CPU time of the console's own threads (sluice-console*: the
# sampler and the streams) and the admin listener's (sluice-admin: the page's other calls) per
# second of the run, which no other load on the machine changes. A round with any non-2xx answer
# or socket error is counted in the table.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROUNDS="${ROUNDS:-5}"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-20s}"
THREADS="${THREADS:-2}"
CONNECTIONS="${CONNECTIONS:-64}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
SLUICE_JAR="${SLUICE_JAR:-$here/sluice-server/target/sluice.jar}"

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v wrk >/dev/null 2>&1 || die "wrk is missing (apt-get install wrk)"
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium is missing (apt-get install chromium)"
[ -f "$SLUICE_JAR" ] || die "$SLUICE_JAR is missing: mvn -q -o -pl sluice-server -am package -DskipTests"

work="$(mktemp -d /tmp/sluice-console-bench.XXXXXX)"
server_pid=""
browser_pid=""
cleanup() {
  [ -n "$browser_pid" ] && kill "$browser_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  if [ "${KEEP:-0}" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

cat > "$work/policy.yaml" <<'EOF'
rules:
  open:
    key: ip
    limits: [{type: token-bucket, burst: 1000000000, refill: 1000000000, period: 1s}]
routes:
  - {name: all, paths: ["/**"], rules: [open]}
EOF

listen="$(free_port)"
admin="$(free_port)"
# timeout: the server stops by itself even if this script is killed outright.
taskset -c "$SERVER_CPU" timeout 1800 java -jar "$SLUICE_JAR" serve --listen "127.0.0.1:$listen" \
  --admin "127.0.0.1:$admin" --config "$work/policy.yaml" --log-level warn \
  > "$work/sluice.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$admin/readyz" >/dev/null 2>&1 && \
    curl -fs -o /dev/null "http://127.0.0.1:$listen/x" 2>/dev/null && break
  sleep 0.1
done
curl -fs -o /dev/null "http://127.0.0.1:$listen/x" || die "sluice did not start (see $work/sluice.log)"
java_pid="$(pgrep -P "$server_pid" java)"   # timeout's child
log "sluice pid $java_pid on :$listen (admin :$admin), server core $SERVER_CPU, client core $CLIENT_CPU"

pages() {
  curl -fs "http://127.0.0.1:$admin/v1/console/snapshot" | grep -o '"streams":{"open":[0-9]*' \
    | grep -o '[0-9]*$'
}

open_console() {
  taskset -c "$CLIENT_CPU" timeout 600 /usr/bin/chromium --headless=new --no-sandbox --disable-gpu \
    --disable-dev-shm-usage --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$work/profile-$1" \
    "http://127.0.0.1:$admin/" > "$work/chromium-$1.log" 2>&1 &
  browser_pid=$!
  for _ in $(seq 1 200); do
    [ "$(pages)" = 1 ] && return 0
    sleep 0.05
  done
  die "the console page did not open its event stream"
}

close_console() {
  kill "$browser_pid" 2>/dev/null || true
  wait "$browser_pid" 2>/dev/null || true
  browser_pid=""
  for _ in $(seq 1 200); do
    [ "$(pages)" = 0 ] && return 0
    sleep 0.05
  done
  die "the console's event stream did not close"
}

cpu_ticks() {
  awk '{print $14 + $15}' "/proc/$java_pid/stat"
}

# CPU ticks of the console's own threads (the sampler, the streams) and the admin listener's.
console_ticks() {
  local sum=0 t comm
  for t in /proc/"$java_pid"/task/*; do
    comm="$(cat "$t/comm" 2>/dev/null || true)"
    case "$comm" in
      sluice-console*|sluice-admin*)
        sum=$((sum + $(sed 's/^.*) //' "$t/stat" | awk '{print $12 + $13}'))) ;;
    esac
  done
  echo "$sum"
}

# One wrk run; prints "rps p50 p99 cpu_us_per_request errors".
run() {
  local out="$work/wrk-$1.txt" before after
  local cbefore cafter
  before="$(cpu_ticks)"
  cbefore="$(console_ticks)"
  taskset -c "$CLIENT_CPU" wrk -t "$THREADS" -c "$CONNECTIONS" -d "$DURATION" --latency \
    "http://127.0.0.1:$listen/x" > "$out"
  after="$(cpu_ticks)"
  cafter="$(console_ticks)"
  python3 - "$out" "$before" "$after" "$(getconf CLK_TCK)" "$cbefore" "$cafter" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
before, after, hz = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def ms(s):
    v, unit = re.match(r'([\d.]+)(us|ms|s)', s).groups()
    return float(v) * {'us': 0.001, 'ms': 1, 's': 1000}[unit]
rps = float(re.search(r'Requests/sec:\s+([\d.]+)', text).group(1))
total = int(re.search(r'(\d+) requests in', text).group(1))
p50 = ms(re.search(r'^\s+50%\s+(\S+)', text, re.M).group(1))
p99 = ms(re.search(r'^\s+99%\s+(\S+)', text, re.M).group(1))
errors = sum(int(n) for n in re.findall(r'(?:connect|read|write|timeout) (\d+)', text))
m = re.search(r'Non-2xx or 3xx responses: (\d+)', text)
errors += int(m.group(1)) if m else 0
cpu_us = (after - before) / hz * 1e6 / max(1, total)
secs = float(re.search(r'requests in ([\d.]+)s', text).group(1))
console_ms = (int(sys.argv[6]) - int(sys.argv[5])) / hz * 1000 / secs
print(f"{rps:.0f} {p50:.3f} {p99:.3f} {cpu_us:.2f} {errors} {console_ms:.1f}")
EOF
}

log "warm-up $WARMUP"
taskset -c "$CLIENT_CPU" wrk -t "$THREADS" -c "$CONNECTIONS" -d "$WARMUP" "http://127.0.0.1:$listen/x" >/dev/null
taskset -c "$CLIENT_CPU" wrk -t "$THREADS" -c "$CONNECTIONS" -d 3s "http://127.0.0.1:$listen/x" >/dev/null

: > "$work/results.txt"
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="off on"; else order="on off"; fi
  for mode in $order; do
    if [ "$mode" = on ]; then open_console "$r"; fi
    line="$(run "$mode-$r")"
    echo "$r $mode $line" >> "$work/results.txt"
    log "round $r console $mode: $line (requests/s, p50 ms, p99 ms, server CPU us/request, errors, console+admin threads CPU ms/s)"
    if [ "$mode" = on ]; then close_console; fi
  done
done

python3 - "$work/results.txt" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("| console | requests/s (median) | p50 ms | p99 ms | server CPU us/request | console+admin threads CPU ms/s | errors | rounds (requests/s) |")
print("|---|---:|---:|---:|---:|---:|---:|---|")
for mode in ("off", "on"):
    m = [r for r in rows if r[1] == mode]
    med = lambda i: statistics.median(float(r[i]) for r in m)
    print(f"| {mode} | {med(2):.0f} | {med(3):.3f} | {med(4):.3f} | {med(5):.2f} | "
          f"{med(7):.1f} | {sum(int(r[6]) for r in m)} | {', '.join(r[2] for r in m)} |")
EOF
