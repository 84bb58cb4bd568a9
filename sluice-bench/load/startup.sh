#!/usr/bin/env bash
# Start-up benchmark (issue 21, "A lean server"): the time from starting `sluice serve` to its
# first answered request, beside the JVM's own share, median of RUNS runs each.
#
#   sluice-bench/load/startup.sh               # from the repository root, after mvn package
#
# Environment (all optional): RUNS=10
#   SLUICE_JAR   the server's jar (default sluice-server/target/sluice.jar)
#   JAVA         the java to run (default: java on the PATH)
#   JAVA_OPTS    more JVM options for every sluice run, e.g. "-XX:SharedArchiveFile=sluice.jsa"
#   CDS=1        also measure with an AppCDS archive of the jar, made here the way
#                sluice-dist's launcher makes it (-XX:ArchiveClassesAtExit on one training run:
#                a serve with --rls, stopped with SIGTERM after its first answers)
#
# What is timed, each RUNS times, one after the other, nothing else running:
#   java -version          the JVM starting and stopping: its floor on this machine
#   hello                  a class that prints one line: the JVM plus loading one class
#   sluice --version       the jar's main class and the command line (no listener)
#   serve: first 200       `sluice serve --listen 127.0.0.1:P --admin off` (embedded default
#                          policy, built-in demo upstream) until `GET /api/x` gets its 200
#   serve --rls: first OK  the same with --rls 127.0.0.1:Q until the gateway's 200 and a gRPC
#                          health check answered SERVING (grpcurl is not needed: the check is
#                          a fixed HTTP/2 exchange written here)
# Each serve run also logs -Xlog:class+load (counted: classes loaded, and how many came from
# the CDS archive) and -Xlog:startuptime (the JVM's own "Create VM" phase).
# The poll is a loop of connection attempts 2 ms apart, in python3: its resolution is ~2 ms.
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS=${RUNS:-10}
JAR=${SLUICE_JAR:-sluice-server/target/sluice.jar}
JAVA=${JAVA:-java}
CDS=${CDS:-0}
[ -f "$JAR" ] || { echo "startup.sh: $JAR not found (mvn -pl sluice-server -am package -DskipTests)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "startup.sh: needs python3" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/hello"
cat > "$work/hello/Hello.java" <<'JAVA'
public class Hello { public static void main(String[] a) { System.out.println("hello"); } }
JAVA
"${JAVA%java}javac" -d "$work/hello" "$work/hello/Hello.java" 2>/dev/null || javac -d "$work/hello" "$work/hello/Hello.java"

if [ "$CDS" = 1 ]; then
  # One training run: serve (with --rls, so gRPC's classes are in the archive too) until the
  # first answered request, then stop; the JVM writes the archive of every class it loaded at
  # exit, as the launcher's first serve does.
  python3 - "$JAVA" "$JAR" "$work/sluice.jsa" <<'PY'
import socket, subprocess, sys, time
java, jar, jsa = sys.argv[1:4]
def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
port, rport = free_port(), free_port()
p = subprocess.Popen([java, "-XX:ArchiveClassesAtExit=" + jsa, "-jar", jar, "serve", "--listen",
    "127.0.0.1:%d" % port, "--admin", "off", "--rls", "127.0.0.1:%d" % rport],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=1)
        c.sendall(b"GET /api/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        if c.recv(12).startswith(b"HTTP/1.1 200"):
            socket.create_connection(("127.0.0.1", rport), timeout=1).close()
            break
    except OSError:
        time.sleep(0.01)
p.terminate(); p.wait(60)
PY
fi

python3 - "$JAVA" "$JAR" "$work" "$RUNS" "$CDS" "${JAVA_OPTS:-}" <<'PY'
import os, re, socket, statistics, subprocess, sys, time
java, jar, work, runs, cds, opts = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1", sys.argv[6].split()

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def timed(cmd):
    t = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.monotonic() - t) * 1000

def http_ok(port):
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=1)
        c.sendall(b"GET /api/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        ok = c.recv(12).startswith(b"HTTP/1.1 200")
        c.close()
        return ok
    except OSError:
        return False

# grpc.health.v1.Health/Check with an empty request, over h2c with prior knowledge: the client
# preface, an empty SETTINGS, a HEADERS frame (literal fields, no Huffman, no indexing) and a
# DATA frame with the 5-byte gRPC prefix of an empty message.
def hpack(name, value):
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value
def frame(kind, flags, stream, payload):
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload
def grpc_serving(port):
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=2)
        head = b"".join(hpack(n, v) for n, v in [(b":method", b"POST"), (b":scheme", b"http"),
            (b":path", b"/grpc.health.v1.Health/Check"), (b":authority", b"x"),
            (b"content-type", b"application/grpc"), (b"te", b"trailers")])
        c.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"") + frame(1, 4, 1, head)
            + frame(0, 1, 1, b"\x00\x00\x00\x00\x00"))
        got = b""
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            b = c.recv(4096)
            if not b:
                break
            got += b
            # the response message: gRPC prefix, then field 1 (status) = 1 (SERVING)
            if b"\x00\x00\x00\x00\x02\x08\x01" in got:
                c.close()
                return True
        c.close()
    except OSError:
        pass
    return False

def serve(extra_opts, rls, log):
    port = free_port()
    cmd = [java] + extra_opts + ["-Xlog:class+load:file=" + log, "-Xlog:startuptime:file=" + log + ".vm",
        "-jar", jar, "serve", "--listen", "127.0.0.1:%d" % port, "--admin", "off"]
    rport = free_port() if rls else None
    if rls:
        cmd += ["--rls", "127.0.0.1:%d" % rport]
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = t + 30
        ok_http = ok_rls = False
        while time.monotonic() < deadline:
            ok_http = ok_http or http_ok(port)
            ok_rls = not rls or ok_rls or grpc_serving(rport)
            if ok_http and ok_rls:
                wall = (time.monotonic() - t) * 1000
                # the server's CPU (user + system, all its threads) to that answer: less moved
                # by other work on the machine than the wall time
                stat = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
                tick = os.sysconf("SC_CLK_TCK")
                return wall, (int(stat[11]) + int(stat[12])) * 1000 / tick
            time.sleep(0.002)
        raise SystemExit("sluice did not answer within 30 s: " + " ".join(cmd))
    finally:
        p.terminate(); p.wait(30)

def classes(log):
    lines = open(log).read().splitlines()
    return len(lines), sum(1 for l in lines if "shared objects file" in l)

def create_vm(log):
    m = re.search(r"Create VM, ([0-9.]+) secs", open(log + ".vm").read())
    return float(m.group(1)) * 1000 if m else float("nan")

def row(name, samples, note=""):
    print("| %-34s | %7.0f | %7.0f | %7.0f | %s" % (name, statistics.median(samples), min(samples),
        max(samples), note))

print("load average before: %s" % open("/proc/loadavg").read().split()[:3])
print("| what (%d runs each, ms)              |  median |     min |     max | notes" % runs)
print("|------------------------------------|---------|---------|---------|------")
row("java -version", [timed([java, "-version"]) for _ in range(runs)])
row("hello (one class)", [timed([java, "-cp", work + "/hello", "Hello"]) for _ in range(runs)])
row("sluice --version", [timed([java] + opts + ["-jar", jar, "--version"]) for _ in range(runs)])
variants = [("", opts)]
if cds:
    variants.append((" + AppCDS", opts + ["-XX:SharedArchiveFile=" + work + "/sluice.jsa"]))
for label, o in variants:
    for rls in (False, True):
        samples, cpu, loaded, shared, vm = [], [], [], [], []
        for i in range(runs):
            log = "%s/classes-%d.log" % (work, i)
            w, c = serve(o, rls, log)
            samples.append(w); cpu.append(c)
            n, s = classes(log)
            loaded.append(n); shared.append(s); vm.append(create_vm(log))
        row(("serve --rls: first 200 + SERVING" if rls else "serve: first 200") + label, samples,
            "CPU %.0f ms; classes loaded %d (%d from CDS); JVM Create VM %.0f ms" % (
            statistics.median(cpu), statistics.median(loaded), statistics.median(shared),
            statistics.median(vm)))
print("load average after: %s" % open("/proc/loadavg").read().split()[:3])
PY
