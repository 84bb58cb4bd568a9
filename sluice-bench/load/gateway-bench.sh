#!/usr/bin/env bash
# Gateway load benchmark (issue 3, "Benchmarks"): wrk on loopback against a trivial upstream.
#
#   sudo sluice-bench/load/gateway-bench.sh            # from the repository root, as root
#
# Environment (all optional): ROUNDS=3 DURATION=10s WARMUP=20s THREADS=2 CONNECTIONS=64
#   SERVER_CPU=0 CLIENT_CPU=1   the cores the server under test and the load generator get
#   JAVA_OPTS                   passed to the sluice JVM (default: none; the JVM picks)
#   SLUICE_ARGS                 more flags for every `sluice serve`, e.g. "--io-threads 2"
#   SLUICE_JAR                  another build of the server to measure (default: the repo's)
#   KEEP=1                      keep the work directory (configs, logs, raw wrk output)
#   REDIS=0                     skip the Redis targets (f)-(h)
#   REDIS_DELAY_MS=5            the round-trip delay target (h) puts in front of Redis
#   TARGETS="a b ..."           measure only these targets, by name (default: all of them), e.g.
#                               TARGETS="sluice-limits sluice-redis" for the Redis goal alone
#   BASELINE_JAR                another build measured in the same rounds, interleaved: each of
#                               sluice-limits and sluice-redis among the targets gets a twin
#                               base-sluice-limits / base-sluice-redis run from this jar
# Results in docs/bench/gateway.md. Takes about 10 minutes: 11 targets x (warm-up + ROUNDS runs).
# The warm-up is long for the JVM's sake: after 8 s its JIT still compiled on the server's only
# core, and each JVM target's first round was its slowest (nginx has no such round). It ends
# with a second, 3 s run on new connections: when the first run's connections closed and new
# ones opened, the JIT deoptimized and recompiled the hot paths (0.76 s of C2 CPU in the next
# 5 s; 0.08-0.18 s after the next reconnects), which fell in the first measured round.
#
# What runs, each in turn, every one bound to 127.0.0.1 on a free port:
#   (a) upstream   nginx, one worker, `return 200 '{"ok":true}'`, keep-alive; hit directly
#   (b) sluice     `sluice serve` with a token bucket of 1e9 per second on every route (never refuses)
#   (c) sluice     `sluice serve` with a policy without any rule (passthrough: what (b) aims for)
#   (d) nginx      proxy_pass to the same upstream, `limit_req` keyed on $binary_remote_addr with a
#                  rate that never refuses, HTTP/1.1 upstream keep-alive; one worker
#   (e) nginx      the same proxy_pass without limit_req (what (c) is compared with)
#   (f) sluice     (b) with its limits in a redis-server (standalone, on CLIENT_CPU like the
#                  upstream: the store is another machine); goal: >= 0.8x (b)
#   (g) sluice     (b) again at 256 connections, the reference for (h)
#   (h) sluice     (f) at 256 connections, Redis behind delay-proxy.py adding REDIS_DELAY_MS per
#                  round trip (half each way); goal: >= 0.5x (g). An I/O thread that waited on
#                  Redis would serve one request per delay: 2 threads / 5 ms = 400 requests/s.
#   (i) netty-relay RelayFloor.java: a blind TCP relay on Netty (no HTTP at all), one upstream
#                  connection per client; the least CPU any Netty proxy can spend per request
#   (j) sluice-limits-keys  (b) keyed on an X-Client header that wrk (keys.lua) sets to a random
#                  one of a million clients per request: a new key nearly every time
#   (k) sluice-redis-keys   (j) on the Redis of (f): (f) with a key per request (all of (f)'s
#                  requests come from one address, one key, which Redis batches write once)
#   (l) sluice-flood   one client flooding a limited route: a token bucket of 1 that refills one a
#                  day, so nearly every request is refused (429, answered by the gateway alone)
#   (m) nginx-flood    the same flood against nginx limit_req (rate=1r/m burst=1 nodelay,
#                  limit_req_status 429, limit_req_log_level info: no error-log line per refusal,
#                  as Sluice writes none); goal: sluice-flood >= 1.3x its requests/s and <= 0.8x
#                  its CPU per refusal. For (l) and (m) the 429s are the answer, not errors.
#   (n) sluice-challenge-flood   (l)'s flood from a browser (Accept: text/html, html.lua) on a
#                  rule whose action is challenge, the challenge's own limit out of reach: every
#                  request is answered with the puzzle page (429, about 4.5 KB); goal (issue 22):
#                  no more server CPU per request than (l)'s refusals, in the same run
#   (o) sluice-challenge-limited-flood   (n) with the challenge's own limit at its default (20
#                  pages, one point back per 15 s): after 20 pages the flood gets the small
#                  "too many checks" 429, what a flood of challenged requests really gets
#
# CPU (the machine has 2 cores; everything is pinned with taskset, and every proxy gets exactly
# the same): the server under test owns core SERVER_CPU, and wrk runs on core CLIENT_CPU.
# For (a) the upstream IS the server under test, so it is moved onto SERVER_CPU; for (b)-(d) it
# moves to CLIENT_CPU, next to wrk, so the proxy alone has its core (the upstream answers from a
# constant string and costs little). The JVM then sees one processor (its JIT and GC threads share
# that core too), and nginx proxies with one worker process.
#
# All four servers are started first (an idle server costs nothing) and each gets a warm-up run
# (not reported; the JVM needs it for the JIT). Then ROUNDS rounds each measure every target in
# turn with the same wrk settings, -t THREADS -c CONNECTIONS -d DURATION --latency, and the table
# gives the median of the rounds: interleaving spreads whatever else the machine is doing over
# all targets alike, instead of letting it land on one. Besides wrk's numbers, the table has the
# CPU time the server under test used per request (utime + stime of its processes from /proc,
# all threads), which depends much less than requests/s on what else runs on the machine.
# Any non-2xx answer or socket error is counted in the table; a run with refusals is not valid.
# So is a Redis round with store errors: its fail-open rule answered them unchecked. Each
# sluice has an admin listener on a free port, read between rounds (/metrics) to count them.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-20s}"
THREADS="${THREADS:-2}"
CONNECTIONS="${CONNECTIONS:-64}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---- prerequisites ----------------------------------------------------------------------------
need_apt=()
command -v wrk >/dev/null 2>&1 || need_apt+=(wrk)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
command -v taskset >/dev/null 2>&1 || need_apt+=(util-linux)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
if [ "${REDIS:-1}" = 1 ]; then
  command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
  command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
fi
if [ "${#need_apt[@]}" -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing ${need_apt[*]}; run as root to install them with apt-get"
  log "installing ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
ncpu="$(nproc)"
[ "$ncpu" -gt "$SERVER_CPU" ] && [ "$ncpu" -gt "$CLIENT_CPU" ] \
  || die "SERVER_CPU=$SERVER_CPU / CLIENT_CPU=$CLIENT_CPU do not exist on this $ncpu-CPU machine"

jar="${SLUICE_JAR:-$here/sluice-server/target/sluice.jar}"
if [ ! -f "$jar" ]; then
  log "building $jar"
  (cd "$here" && mvn -q -B -DskipTests -pl sluice-server -am package)
fi

# ---- bookkeeping: everything started here is stopped on exit ----------------------------------
work="$(mktemp -d /tmp/sluice-gateway-bench.XXXXXX)"
pids=()
stop_all() {
  local p
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  pids=()
}
cleanup() {
  stop_all
  if [ "${KEEP:-0}" = 1 ]; then log "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { # below Linux's ephemeral ports (32768-60999), which outgoing connections hold
  local p
  while :; do
    p=$((10000 + RANDOM % 22000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
}

wait_http() { # url [expected status]
  local i
  for i in $(seq 200); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "$1" 2>/dev/null)" = "${2:-200}" ]; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# nginx with its own prefix: no access log, temp files and pid in the work directory.
nginx_conf() { # name body
  local dir="$work/$1"
  mkdir -p "$dir/logs"
  cat >"$dir/nginx.conf" <<EOF
worker_processes 1;
daemon off;
master_process on;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; multi_accept on; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  keepalive_timeout 65s;
  keepalive_requests 1000000;
$2
}
EOF
  echo "$dir"
}

start_nginx() { # dir cpu -> pid of the master (workers inherit the affinity)
  taskset -c "$2" "$NGINX" -p "$1" -c "$1/nginx.conf" -e "$1/logs/error.log" \
    >"$1/logs/stdout" 2>&1 &
  echo $!
}

pin() { # pid cpu: pin a process and all its threads and children
  local p
  taskset -a -p -c "$2" "$1" >/dev/null
  for p in $(pgrep -P "$1" || true); do taskset -a -p -c "$2" "$p" >/dev/null; done
}

# ---- wrk ---------------------------------------------------------------------------------------
to_ms() { # 1.23ms | 456.78us | 1.02s -> milliseconds
  awk -v v="$1" 'BEGIN {
    if (v ~ /us$/) { sub(/us$/, "", v); printf "%.3f", v / 1000 }
    else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.3f", v }
    else if (v ~ /s$/) { sub(/s$/, "", v); printf "%.3f", v * 1000 }
    else printf "%s", v }'
}

cpu_ticks() { # pids...: utime + stime of every thread of these processes, in clock ticks
  local p t=0
  for p in "$@"; do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo "$t"
}

declare -A URL CPUPIDS CONNS RPS P50 P99 CPU ERRS ADMIN STORE_ERRS SCRIPT
conns() { echo "${CONNS[$1]:-$CONNECTIONS}"; }
script() { if [ -n "${SCRIPT[$1]:-}" ]; then echo "-s ${SCRIPT[$1]}"; fi; }
warm() { # name
  log "$1: warm-up $WARMUP"
  # shellcheck disable=SC2046
  taskset -c "$CLIENT_CPU" wrk -t"$THREADS" -c"$(conns "$1")" -d"$WARMUP" $(script "$1") \
    "${URL[$1]}" >"$work/warm-$1.txt" 2>&1
  # And 3 s more on new connections: the JIT recompiles the paths that the first run's end and
  # the new connections take, here instead of in the first measured round.
  sleep 1
  # shellcheck disable=SC2046
  taskset -c "$CLIENT_CPU" wrk -t"$THREADS" -c"$(conns "$1")" -d3s $(script "$1") \
    "${URL[$1]}" >>"$work/warm-$1.txt" 2>&1
}
store_errors() { # name: sluice_store_errors_total from its admin listener (empty: not sluice)
  [ -n "${ADMIN[$1]:-}" ] || return 0
  curl -s "${ADMIN[$1]}/metrics" | awk '/^sluice_store_errors_total/ {s += $2} END {printf "%d", s}'
}
measure() { # name round
  local name="$1" out="$work/wrk-$1-$2.txt" c0 c1 n non2xx sock rps p99 cpu e0 e1
  e0="$(store_errors "$name")"
  # shellcheck disable=SC2086
  c0="$(cpu_ticks ${CPUPIDS[$name]})"
  # shellcheck disable=SC2046
  taskset -c "$CLIENT_CPU" wrk -t"$THREADS" -c"$(conns "$name")" -d"$DURATION" --latency \
    $(script "$name") "${URL[$name]}" >"$out" 2>&1
  # shellcheck disable=SC2086
  c1="$(cpu_ticks ${CPUPIDS[$name]})"
  e1="$(store_errors "$name")"
  if [ -n "$e0" ]; then STORE_ERRS[$name]+="$((e1 - e0)) "; fi
  n="$(awk '/requests in/ {print $1}' "$out")"
  non2xx="$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "$out")"
  sock="$(awk '/Socket errors:/ {gsub(",", ""); print $4 + $6 + $8 + $10}' "$out")"
  rps="$(awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$out")"
  p99="$(to_ms "$(awk '$1 == "99%" {print $2}' "$out")")"
  cpu="$(awk -v t=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v n="${n:-0}" \
    'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print "nan" }')"
  RPS[$name]+="$rps "
  P50[$name]+="$(to_ms "$(awk '$1 == "50%" {print $2}' "$out")") "
  P99[$name]+="$p99 "
  CPU[$name]+="$cpu "
  case "$name" in
    *-flood) ERRS[$name]=$(( ${ERRS[$name]:-0} + ${sock:-0} )) ;;   # 429s are the answer here
    *) ERRS[$name]=$(( ${ERRS[$name]:-0} + ${non2xx:-0} + ${sock:-0} )) ;;
  esac
  log "$name round $2: $rps req/s, p99 $p99 ms, $cpu us CPU/request," \
    "load $(cut -d' ' -f1 /proc/loadavg)"
}
median() { tr ' ' '\n' <<<"$1" | { grep -v '^$' || true; } | sort -g | awk '{a[NR] = $1} END {
  if (NR == 0) print "n/a"; else if (NR % 2) print a[(NR + 1) / 2];
  else printf "%.3f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# ---- (a) the upstream: started once, used by every target --------------------------------------
up_port="$(free_port)"
up_dir="$(nginx_conf upstream "  server {
    listen 127.0.0.1:$up_port reuseport backlog=4096;
    location / { default_type application/json; return 200 '{\"ok\":true}'; }
  }")"
up_pid="$(start_nginx "$up_dir" "$CLIENT_CPU")"
pids+=("$up_pid")
wait_http "http://127.0.0.1:$up_port/" || die "the upstream did not start; see $up_dir/logs"
log "upstream on 127.0.0.1:$up_port (nginx pid $up_pid)"
URL[direct]="http://127.0.0.1:$up_port/"
CPUPIDS[direct]="$up_pid $(pgrep -P "$up_pid" | tr '\n' ' ')"

# ---- (b), (c) sluice --------------------------------------------------------------------------
{
  echo "# A token bucket of a billion, refilled a billion per second, on every request: never"
  echo "# refuses, but every request is decided and answered with its limit headers."
  echo "version: 1"
  echo "rules:"
  echo "  huge:"
  echo "    limits:"
  echo "      - {type: token-bucket, burst: 1000000000, refill: 1000000000, period: 1s}"
  echo "routes:"
  echo "  - {name: all, rules: [huge]}"
} >"$work/never-refuses.yaml"
printf '# No rule at all: the gateway only proxies.\nversion: 1\n' >"$work/passthrough.yaml"
{
  echo "# One request a day per client: a flood from one address is refused (429) at once."
  echo "version: 1"
  echo "rules:"
  echo "  flood:"
  echo "    limits:"
  echo "      - {type: token-bucket, burst: 1, refill: 1, period: 1d}"
  echo "routes:"
  echo "  - {name: all, rules: [flood]}"
} >"$work/flood.yaml"
# (n), (o): the flood's limit on a rule that challenges browsers; (n) keeps the challenge's own
# limit out of reach, so every answer is a puzzle page.
sed 's/^  flood:$/  flood:\n    action: challenge/' "$work/flood.yaml" >"$work/challenge-limited.yaml"
{ cat "$work/challenge-limited.yaml"
  printf 'challenge:\n  limit: {maxScore: 1000000000, decay: 10ms}\n'; } >"$work/challenge-flood.yaml"
cat >"$work/html.lua" <<'EOF'
-- wrk: every request as a browser's navigation asks for a page
wrk.headers["Accept"] = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
EOF
# The same limit keyed on a header that keys.lua sets to a random one of a million clients per
# request, so that a batch of Redis decisions rarely meets a key twice.
sed 's/^rules:$/dimensions:\n  client: header:X-Client\nrules:/; s/^  huge:$/  huge:\n    key: client/' \
  "$work/never-refuses.yaml" >"$work/many-keys.yaml"
cat >"$work/keys.lua" <<'EOF'
-- wrk: each request from a random one of a million clients (X-Client), seeded per thread
init = function(args)
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)"), 16) % 100000)
end
request = function()
  return wrk.format(nil, nil, {["X-Client"] = tostring(math.random(1000000))})
end
EOF

start_sluice() { # name policy [jar]
  local port pid admin
  port="$(free_port)"
  admin="$(free_port)"
  # shellcheck disable=SC2086
  taskset -c "$SERVER_CPU" java ${JAVA_OPTS:-} -jar "${3:-$jar}" serve --listen "127.0.0.1:$port" \
    --upstream "http://127.0.0.1:$up_port" --config "$2" --admin "127.0.0.1:$admin" ${SLUICE_ARGS:-} >"$work/$1.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  wait_http "http://127.0.0.1:$port/" || die "sluice ($1) did not start; see $work/$1.log"
  log "$1: sluice on 127.0.0.1:$port (pid $pid); a response's headers:"
  curl -s -D - -o /dev/null "http://127.0.0.1:$port/" | tr -d '\r' | sed 's/^/    /' >&2
  URL[$1]="http://127.0.0.1:$port/"
  ADMIN[$1]="http://127.0.0.1:$admin"
  CPUPIDS[$1]="$pid"
}
start_sluice sluice-limits "$work/never-refuses.yaml"
start_sluice sluice-passthrough "$work/passthrough.yaml"
start_sluice sluice-flood "$work/flood.yaml"
start_sluice sluice-challenge-flood "$work/challenge-flood.yaml"
start_sluice sluice-challenge-limited-flood "$work/challenge-limited.yaml"
for t in sluice-challenge-flood sluice-challenge-limited-flood; do
  SCRIPT[$t]="$work/html.lua"
  log "$t: a browser's answer:"
  curl -s -D - -o "$work/$t.page" -H 'Accept: text/html' "${URL[$t]}" | tr -d '\r' \
    | grep -iv '^content-security-policy\|^set-cookie' | sed 's/^/    /' >&2
  log "    ($(wc -c <"$work/$t.page") bytes of body)"
done
if [ -n "${BASELINE_JAR:-}" ]; then
  [ -f "$BASELINE_JAR" ] || die "BASELINE_JAR=$BASELINE_JAR: no such file"
  start_sluice base-sluice-limits "$work/never-refuses.yaml" "$BASELINE_JAR"
fi

# ---- (f), (g), (h) sluice on Redis ------------------------------------------------------------
if [ "${REDIS:-1}" = 1 ]; then
  redis_port="$(free_port)"
  taskset -c "$CLIENT_CPU" redis-server --bind 127.0.0.1 --port "$redis_port" --save "" \
    --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
  pids+=("$!")
  for _ in $(seq 100); do
    redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  delay_port="$(free_port)"
  taskset -c "$CLIENT_CPU" python3 "$here/sluice-bench/load/delay-proxy.py" "$delay_port" \
    "$redis_port" "$(awk -v d="${REDIS_DELAY_MS:-5}" 'BEGIN { print d / 2 }')" 3600 \
    >"$work/delay-proxy.log" 2>&1 &
  pids+=("$!")
  log "redis-server on 127.0.0.1:$redis_port, delay proxy on 127.0.0.1:$delay_port"
  for p in "$redis_port" "$delay_port"; do
    { cat "$work/never-refuses.yaml"; printf 'store:\n  uri: redis://127.0.0.1:%s\n' "$p"; } \
      >"$work/redis-$p.yaml"
  done
  start_sluice sluice-redis "$work/redis-$redis_port.yaml"
  if [ -n "${BASELINE_JAR:-}" ]; then
    start_sluice base-sluice-redis "$work/redis-$redis_port.yaml" "$BASELINE_JAR"
  fi
  { cat "$work/many-keys.yaml"; printf 'store:\n  uri: redis://127.0.0.1:%s\n' "$redis_port"; } \
    >"$work/redis-keys.yaml"
  start_sluice sluice-limits-keys "$work/many-keys.yaml"
  start_sluice sluice-redis-keys "$work/redis-keys.yaml"
  if [ -n "${BASELINE_JAR:-}" ]; then
    start_sluice base-sluice-limits-keys "$work/many-keys.yaml" "$BASELINE_JAR"
    start_sluice base-sluice-redis-keys "$work/redis-keys.yaml" "$BASELINE_JAR"
  fi
  for t in sluice-limits-keys sluice-redis-keys base-sluice-limits-keys base-sluice-redis-keys; do
    SCRIPT[$t]="$work/keys.lua"
  done
  start_sluice sluice-limits-256 "$work/never-refuses.yaml"
  start_sluice sluice-redis-delayed-256 "$work/redis-$delay_port.yaml"
  CONNS[sluice-limits-256]=256
  CONNS[sluice-redis-delayed-256]=256
fi

# ---- (d), (m), (e): nginx proxy_pass to the same upstream, with or without limit_req ------------
nginx_proxy() { # target-name dir-name http-lines location-lines: one nginx proxy, started and known
  local port dir pid
  port="$(free_port)"
  dir="$(nginx_conf "$2" "${3:+$3
}  upstream app { server 127.0.0.1:$up_port; keepalive 64; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:$port reuseport backlog=4096;
    location / {$4
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection \"\";
      proxy_set_header Host \$host;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
    }
  }")"
  pid="$(start_nginx "$dir" "$SERVER_CPU")"
  pids+=("$pid")
  wait_http "http://127.0.0.1:$port/" || die "nginx ($1) did not start; see $dir/logs"
  log "$1 on 127.0.0.1:$port (pid $pid)"
  URL[$1]="http://127.0.0.1:$port/"
  CPUPIDS[$1]="$pid $(pgrep -P "$pid" | tr '\n' ' ')"
}

# (d) a rate that never refuses
nginx_proxy nginx-limit_req proxy "  limit_req_zone \$binary_remote_addr zone=bench:10m rate=1000000r/s;" "
      limit_req zone=bench burst=1000000 nodelay;"
# (m) refusing a flood. limit_req_log_level below the error log's level: nginx writes no
# "limiting requests" line per refusal (a write(2) and its formatting each: 9.5M lines in one run
# before this), as Sluice writes none; both count refusals without logging each one.
nginx_proxy nginx-flood flood "  limit_req_zone \$binary_remote_addr zone=flood:10m rate=1r/m;
  limit_req_status 429;
  limit_req_log_level info;" "
      limit_req zone=flood burst=1 nodelay;"
# (e) proxy_pass alone
nginx_proxy nginx-proxy_pass passthrough "" ""

# ---- (i) the floor of a Netty proxy: a blind TCP relay (RelayFloor.java) -------------------------
nr_port="$(free_port)"
taskset -c "$SERVER_CPU" java ${JAVA_OPTS:-} -cp "$jar" "$here/sluice-bench/load/RelayFloor.java" \
  "$nr_port" "$up_port" >"$work/netty-relay.log" 2>&1 &
nr_pid=$!
pids+=("$nr_pid")
wait_http "http://127.0.0.1:$nr_port/" || die "the Netty relay did not start; see $work/netty-relay.log"
log "netty-relay on 127.0.0.1:$nr_port (pid $nr_pid)"
URL[netty-relay]="http://127.0.0.1:$nr_port/"
CPUPIDS[netty-relay]="$nr_pid"

# ---- runs -------------------------------------------------------------------------------------
targets=(direct sluice-limits sluice-passthrough nginx-limit_req nginx-proxy_pass netty-relay
  sluice-flood nginx-flood sluice-challenge-flood sluice-challenge-limited-flood)
if [ "${REDIS:-1}" = 1 ]; then
  targets+=(sluice-redis sluice-limits-256 sluice-redis-delayed-256 sluice-limits-keys
    sluice-redis-keys)
fi
if [ -n "${TARGETS:-}" ]; then
  read -r -a wanted <<<"$TARGETS"
  for w in "${wanted[@]}"; do
    [[ " ${targets[*]} " == *" $w "* ]] || die "TARGETS: unknown target $w (known: ${targets[*]})"
  done
  targets=("${wanted[@]}")
fi
if [ -n "${BASELINE_JAR:-}" ]; then
  with_base=()
  for t in "${targets[@]}"; do
    with_base+=("$t")
    if [ -n "${URL[base-$t]:-}" ]; then with_base+=("base-$t"); fi
  done
  targets=("${with_base[@]}")
fi
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
place_upstream() { # target: the upstream owns the server core only when it is the target
  if [ "$1" = direct ]; then pin "$up_pid" "$SERVER_CPU"; else pin "$up_pid" "$CLIENT_CPU"; fi
}
for t in "${targets[@]}"; do
  place_upstream "$t"
  warm "$t"
done
for r in $(seq "$ROUNDS"); do
  for t in "${targets[@]}"; do
    place_upstream "$t"
    measure "$t" "$r"
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

# ---- report -----------------------------------------------------------------------------------
declare -A M
# Every known target, measured or not (TARGETS), so that a ratio to one left out reads n/a.
for t in direct sluice-limits sluice-passthrough nginx-limit_req nginx-proxy_pass netty-relay \
  sluice-flood nginx-flood sluice-challenge-flood sluice-challenge-limited-flood sluice-redis \
  sluice-limits-256 sluice-redis-delayed-256 sluice-limits-keys sluice-redis-keys \
  "${targets[@]}"; do
  RPS[$t]="${RPS[$t]:-}" P50[$t]="${P50[$t]:-}" P99[$t]="${P99[$t]:-}" CPU[$t]="${CPU[$t]:-}"
  ERRS[$t]="${ERRS[$t]:-0}"
  M[$t]="$(median "${RPS[$t]}")"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }
verdict() { awk -v r="$1" -v g="$2" 'BEGIN { print r == "n/a" ? "n/a" : (r + 0 >= g) ? "met" : "missed" }'; }

echo
echo "wrk -t$THREADS -c$CONNECTIONS (or the table's connections) -d$DURATION --latency," \
  "$ROUNDS interleaved rounds after a" \
  "$WARMUP warm-up each, loopback; server under test on CPU $SERVER_CPU, wrk on CPU $CLIENT_CPU" \
  "(upstream: CPU $SERVER_CPU when it is the target, else CPU $CLIENT_CPU); $(nproc) CPUs;" \
  "load average before $load_before, after $load_after"
echo
echo "| target | connections | requests/s (median) | each round | p50 ms | p99 ms | server CPU µs/request | CPU µs each round | errors | vs direct | vs sluice passthrough | vs nginx limit_req | vs nginx proxy_pass |"
echo "|---|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"
for t in "${targets[@]}"; do
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" \
    "$(conns "$t")" "${M[$t]}" \
    "$(sed 's/ *$//; s/ /, /g' <<<"${RPS[$t]}")" "$(median "${P50[$t]}")" \
    "$(median "${P99[$t]}")" "$(median "${CPU[$t]}")" \
    "$(sed 's/ *$//; s/ /, /g' <<<"${CPU[$t]}")" "${ERRS[$t]}" \
    "$(ratio "${M[$t]}" "${M[direct]}")" "$(ratio "${M[$t]}" "${M[sluice-passthrough]}")" \
    "$(ratio "${M[$t]}" "${M[nginx-limit_req]}")" "$(ratio "${M[$t]}" "${M[nginx-proxy_pass]}")"
done
# A fail-open rule answers 200 when Redis misses the deadline: those requests look served but
# were not decided by Redis, and make a Redis target look faster than it is.
for t in "${targets[@]}"; do
  if [ -f "$work/$t.log" ]; then
    n="$(grep -o 'store_errors_total=[0-9]*' "$work/$t.log" | tail -1 | cut -d= -f2 || true)"
    echo "$t: store errors (decided by onStoreError) in each round:" \
      "$(sed 's/ *$//; s/ /, /g' <<<"${STORE_ERRS[$t]:-}"); logged since start (warm-up too): ${n:-0}"
  fi
done
own="$(ratio "${M[sluice-limits]}" "${M[sluice-passthrough]}")"
ngx="$(ratio "${M[sluice-limits]}" "${M[nginx-limit_req]}")"
cpu_own="$(ratio "$(median "${CPU[sluice-passthrough]}")" "$(median "${CPU[sluice-limits]}")")"
cpu_ngx="$(ratio "$(median "${CPU[nginx-limit_req]}")" "$(median "${CPU[sluice-limits]}")")"
echo
echo "goal 1, sluice with limits >= 0.90 x its passthrough: requests/s $own ($(verdict "$own" 0.90));" \
  "by CPU per request $cpu_own ($(verdict "$cpu_own" 0.90))"
echo "goal 2, sluice with limits >= 1.00 x nginx limit_req: requests/s $ngx ($(verdict "$ngx" 1.00));" \
  "by CPU per request $cpu_ngx ($(verdict "$cpu_ngx" 1.00))"
p99x="$(ratio "$(median "${P99[sluice-limits]}")" "$(median "${P99[nginx-limit_req]}")")"
echo "goal 2b, sluice with limits p99 <= 1.5 x nginx limit_req's: $p99x" \
  "($(awk -v r="$p99x" 'BEGIN { print (r + 0 <= 1.5) ? "met" : "missed" }'))"
flood="$(ratio "${M[sluice-flood]}" "${M[nginx-flood]}")"
cpu_flood="$(ratio "$(median "${CPU[sluice-flood]}")" "$(median "${CPU[nginx-flood]}")")"
echo "goal 6, sluice refusing a flood >= 1.30 x nginx limit_req refusing it: requests/s $flood" \
  "($(verdict "$flood" 1.30)); CPU per refusal $cpu_flood x nginx's" \
  "($(awk -v r="$cpu_flood" 'BEGIN { print r == "n/a" ? "n/a" : (r + 0 <= 0.8) ? "met" : "missed" }'))"
cpu_page="$(ratio "$(median "${CPU[sluice-challenge-flood]}")" "$(median "${CPU[sluice-flood]}")")"
cpu_lim="$(ratio "$(median "${CPU[sluice-challenge-limited-flood]}")" \
  "$(median "${CPU[sluice-flood]}")")"
le1() { awk -v r="$1" 'BEGIN { print r == "n/a" ? "n/a" : (r + 0 <= 1.0) ? "met" : "missed" }'; }
echo "goal 7 (issue 22), a flood of challenge pages costs no more server CPU per request than a" \
  "flood of refusals: $cpu_page x sluice-flood's ($(le1 "$cpu_page")); past the challenge's own" \
  "limit: $cpu_lim x ($(le1 "$cpu_lim"))"
pass="$(ratio "${M[sluice-passthrough]}" "${M[nginx-proxy_pass]}")"
cpu_pass="$(ratio "$(median "${CPU[nginx-proxy_pass]}")" "$(median "${CPU[sluice-passthrough]}")")"
echo "goal 3, sluice passthrough >= 1.00 x nginx proxy_pass: requests/s $pass ($(verdict "$pass" 1.00));" \
  "by CPU per request $cpu_pass ($(verdict "$cpu_pass" 1.00))"
if [ "${REDIS:-1}" = 1 ]; then
  red="$(ratio "${M[sluice-redis]}" "${M[sluice-limits]}")"
  cpu_red="$(ratio "$(median "${CPU[sluice-limits]}")" "$(median "${CPU[sluice-redis]}")")"
  echo "goal 4, sluice on redis >= 0.80 x sluice in memory at $CONNECTIONS connections:" \
    "requests/s $red ($(verdict "$red" 0.80)); by CPU per request $cpu_red" \
    "($(verdict "$cpu_red" 0.80))"
  if [ -n "${URL[base-sluice-redis]:-}" ] && [ -n "${M[base-sluice-redis]:-}" ]; then
    bred="$(ratio "${M[base-sluice-redis]}" "${M[base-sluice-limits]:-${M[sluice-limits]}}")"
    bcpu="$(ratio "$(median "${CPU[base-sluice-limits]:-${CPU[sluice-limits]}}")" \
      "$(median "${CPU[base-sluice-redis]}")")"
    echo "goal 4 for BASELINE_JAR ($BASELINE_JAR): requests/s $bred; by CPU per request $bcpu"
  fi
  keys="$(ratio "${M[sluice-redis-keys]}" "${M[sluice-limits-keys]}")"
  cpu_keys="$(ratio "$(median "${CPU[sluice-limits-keys]}")" "$(median "${CPU[sluice-redis-keys]}")")"
  echo "goal 4 with a million clients (a key per request): requests/s $keys" \
    "($(verdict "$keys" 0.80)); by CPU per request $cpu_keys ($(verdict "$cpu_keys" 0.80))"
  if [ -n "${M[base-sluice-redis-keys]:-}" ]; then
    echo "  for BASELINE_JAR: requests/s $(ratio "${M[base-sluice-redis-keys]}" \
      "${M[base-sluice-limits-keys]}"); by CPU per request $(ratio \
      "$(median "${CPU[base-sluice-limits-keys]}")" "$(median "${CPU[base-sluice-redis-keys]}")")"
  fi
  slow="$(ratio "${M[sluice-redis-delayed-256]}" "${M[sluice-limits-256]}")"
  echo "goal 5, sluice on redis ${REDIS_DELAY_MS:-5} ms away >= 0.50 x sluice in memory at 256" \
    "connections: requests/s $slow ($(verdict "$slow" 0.50))"
fi
