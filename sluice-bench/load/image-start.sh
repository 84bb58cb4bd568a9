#!/usr/bin/env bash
# Start to first answer of the OCI image (docs/KUBERNETES.md): unpacks sluice-dist/target/oci
# with umoci, then RUNS times starts its entrypoint and command as the image's config says (user
# 65532) in a chroot of its root file system with a private /proc and /dev, and measures from the
# spawn to the first answered request on the seed 000 loop's path (polled every 5 ms). Prints
# each start and the median, and the load average before and after: a median from a busy minute
# is re-run, not reported. Needs root, umoci, curl.
#   sluice-bench/load/image-start.sh [RUNS]      (default 10)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-10}
version=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' pom.xml | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
umoci unpack --image "sluice-dist/target/oci:$version" "$work/bundle" >/dev/null
rootfs=$work/bundle/rootfs
mkdir -p "$rootfs/proc" "$rootfs/dev"
echo "image-start-token-0123456789" > "$rootfs/run/secrets/sluice/admin-token"
mapfile -t args < <(python3 -c 'import json,sys; [print(a) for a in json.load(open(sys.argv[1]))["process"]["args"]]' "$work/bundle/config.json")
echo "load before: $(uptime)"
times=()
cpus=()
for i in $(seq "$runs"); do
  read -r port admin < <(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1", 0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
  a=("${args[@]/0.0.0.0:8080/127.0.0.1:$port}"); a=("${a[@]/0.0.0.0:9090/127.0.0.1:$admin}")
  start=$(date +%s%N)
  unshare --mount --fork --kill-child sh -c 'mount -t proc proc "$1/proc" && mount --bind /dev "$1/dev" && exec chroot --userspec=65532:65532 "$@"' sh "$rootfs" "${a[@]}" >"$work/run.log" 2>&1 &
  pid=$!
  until curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/api/analysis/x"; do
    kill -0 "$pid" 2>/dev/null || { cat "$work/run.log"; exit 1; }
    sleep 0.005
  done
  end=$(date +%s%N)
  ms=$(( (end - start) / 1000000 ))
  times+=("$ms")
  # the CPU the JVM used until then (user + system), which a busy machine does not stretch
  java=$(pgrep -P "$pid" | head -1)
  cpu=$(awk -v hz="$(getconf CLK_TCK)" '{print int(($14 + $15) * 1000 / hz)}' "/proc/$java/stat")
  cpus+=("$cpu")
  echo "start $i: first answer after $ms ms, $cpu ms of CPU"
  # the JVM runs as another user, which clears the parent-death signal: stop it, then unshare
  pkill -TERM -P "$pid" || true
  wait "$pid" 2>/dev/null || true
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
cpu=$(printf '%s\n' "${cpus[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
echo "median of $runs: $median ms to the first answer, $cpu ms of CPU"
echo "load after: $(uptime)"
