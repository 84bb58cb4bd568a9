#!/usr/bin/env bash
# HTTP/2 through the gateway (issue 31): h2load (Debian's nghttp2-client) on loopback, h2c with
# prior knowledge, against `sluice serve` with a limit that never refuses and against nginx's
# HTTP/2 (`listen ... http2`, `limit_req` with the same never-refusing rate, proxy_pass over
# HTTP/1.1 keep-alive), both in front of the same trivial nginx upstream.
#
#   sluice-bench/load/h2-bench.sh            # from the repository root, as root (installs tools)
#
# Environment: ROUNDS=5 REQUESTS=200000 CLIENTS=16 STREAMS=16 WARMUP=100000
#   SERVER_CPU=0 CLIENT_CPU=1   the server under test owns one core, h2load and the upstream the other
#   SLUICE_JAR                  the build measured (default: the repo's sluice-server/target/sluice.jar)
#   BASELINE_JAR                another build measured in the same interleaved rounds (before/after)
#
# Prints, per target and round: requests/s, and the server's CPU microseconds per request
# (utime + stime of its processes from /proc, all threads); then each target's median. Every
# answer must be a 2xx: a round with another status or an error is reported as invalid.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROUNDS="${ROUNDS:-5}"
REQUESTS="${REQUESTS:-200000}"
CLIENTS="${CLIENTS:-16}"
STREAMS="${STREAMS:-16}"
WARMUP="${WARMUP:-100000}"
SERVER_CPU="${SERVER_CPU:-0}"
CLIENT_CPU="${CLIENT_CPU:-1}"
jar="${SLUICE_JAR:-$here/sluice-server/target/sluice.jar}"

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

need=()
command -v h2load >/dev/null 2>&1 || need+=(nghttp2-client)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ "${#need[@]}" -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing ${need[*]}; run as root to install them with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
[ -f "$jar" ] || die "no $jar: build it with mvn -q -B -DskipTests -pl sluice-server -am package"

# shellcheck source=upstream.sh
. "$here/sluice-bench/load/upstream.sh"
work="$(mktemp -d /tmp/sluice-h2-bench.XXXXXX)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
declare -A URL CPUPIDS

up_port="$(free_port)"
upstream_conf "$work/up" "$up_port"
taskset -c "$CLIENT_CPU" "$(nginx_bin)" -p "$work/up" -c "$work/up/nginx.conf" >/dev/null 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$up_port/" || die "the upstream did not start"

printf 'version: 1\nrules:\n  huge:\n    limits:\n      - {type: token-bucket, burst: 1000000000, refill: 1000000000, period: 1s}\nroutes:\n  - {name: all, rules: [huge]}\n' >"$work/limits.yaml"

start_sluice() { # name jar
  local port
  port="$(free_port)"
  taskset -c "$SERVER_CPU" java ${JAVA_OPTS:-} -jar "$2" serve --listen "127.0.0.1:$port" \
    --upstream "http://127.0.0.1:$up_port" --config "$work/limits.yaml" --admin off \
    >"$work/$1.log" 2>&1 &
  CPUPIDS[$1]=$!
  pids+=($!)
  wait_http "http://127.0.0.1:$port/" || die "sluice ($1) did not start; see $work/$1.log"
  URL[$1]="http://127.0.0.1:$port/"
}
start_sluice sluice "$jar"
targets=(sluice nginx)
if [ -n "${BASELINE_JAR:-}" ]; then
  start_sluice base-sluice "$BASELINE_JAR"
  targets=(sluice base-sluice nginx)
fi

ng_port="$(free_port)"
mkdir -p "$work/ng/logs"
cat >"$work/ng/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/ng/nginx.pid;
error_log $work/ng/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/ng/body;
  proxy_temp_path $work/ng/proxy;
  fastcgi_temp_path $work/ng/fastcgi;
  uwsgi_temp_path $work/ng/uwsgi;
  scgi_temp_path $work/ng/scgi;
  keepalive_requests 1000000;
  http2_max_concurrent_streams 128;
  limit_req_zone \$binary_remote_addr zone=bench:10m rate=1000000r/s;
  upstream app { server 127.0.0.1:$up_port; keepalive 64; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:$ng_port http2;
    location / {
      limit_req zone=bench burst=1000000 nodelay;
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
    }
  }
}
CONF
taskset -c "$SERVER_CPU" "$(nginx_bin)" -p "$work/ng" -c "$work/ng/nginx.conf" >/dev/null 2>&1 &
ng_pid=$!
pids+=("$ng_pid")
sleep 0.5
URL[nginx]="http://127.0.0.1:$ng_port/"
CPUPIDS[nginx]="$ng_pid $(pgrep -P "$ng_pid" | tr '\n' ' ')"

cpu_ticks() { # pids...: utime + stime of every thread, in clock ticks
  local sum=0 p
  for p in "$@"; do
    for t in /proc/"$p"/task/*/stat; do
      [ -r "$t" ] || continue
      sum=$((sum + $(awk '{print $14 + $15}' "$t")))
    done
  done
  echo "$sum"
}
hz="$(getconf CLK_TCK)"

run() { # target requests -> "rps cpu_us_per_request ok"
  local t0 t1 out rps ok
  # shellcheck disable=SC2086
  t0="$(cpu_ticks ${CPUPIDS[$1]})"
  out="$(taskset -c "$CLIENT_CPU" h2load -n "$2" -c "$CLIENTS" -m "$STREAMS" "${URL[$1]}" 2>&1)"
  # shellcheck disable=SC2086
  t1="$(cpu_ticks ${CPUPIDS[$1]})"
  rps="$(awk '/^finished in/ {gsub(",", "", $4); print $4}' <<<"$out")"
  ok="$(awk '/^status codes:/ {gsub(",", "", $3); print $3}' <<<"$out")"
  echo "$rps $(( (t1 - t0) * 1000000 / hz / $2 )) $ok"
}

for t in "${targets[@]}"; do
  log "warming $t (${URL[$t]})"
  run "$t" "$WARMUP" >/dev/null
done
log "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A RPS CPU
for r in $(seq "$ROUNDS"); do
  for t in "${targets[@]}"; do
    read -r rps cpu ok < <(run "$t" "$REQUESTS")
    valid="ok"; [ "$ok" = "$REQUESTS" ] || valid="INVALID ($ok of $REQUESTS 2xx)"
    printf '%s round %d %-12s %10s req/s %5s us/req %s\n' "$(date +%H:%M:%S)" "$r" "$t" \
      "$rps" "$cpu" "$valid"
    RPS[$t]+="$rps "
    CPU[$t]+="$cpu "
  done
done
log "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for t in "${targets[@]}"; do
  printf 'median %-12s %10s req/s %5s us/req\n' "$t" "$(median <<<"${RPS[$t]}")" \
    "$(median <<<"${CPU[$t]}")"
done
