#!/usr/bin/env python3
"""A TCP forwarder on 127.0.0.1 that delays every chunk by a fixed time in each direction.

    delay-proxy.py LISTEN_PORT TARGET_PORT ONE_WAY_MS [LIFETIME_S]

Stands for a Redis across a slow network in gateway-bench.sh (the machine has no netem). Each
direction of each connection is a reader thread and a writer thread with a queue between them:
a chunk read at time t is written at t + ONE_WAY_MS, in the order it was read; an end of stream
travels the same way, behind the data before it. Threads and time.sleep, not an event loop, so
the delay is not rounded up to a poll timeout's millisecond. For the few connections a store
opens. Binds 127.0.0.1 only and exits by itself after LIFETIME_S seconds (default 3600).
"""
import queue
import socket
import sys
import threading
import time


def relay(source, sink, delay):
    chunks = queue.SimpleQueue()

    def read():
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            chunks.put((time.monotonic() + delay, data))
            if not data:
                return

    def write():
        while True:
            due, data = chunks.get()
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                if not data:
                    sink.shutdown(socket.SHUT_WR)
                    return
                sink.sendall(data)
            except OSError:
                return

    for target in (read, write):
        threading.Thread(target=target, daemon=True).start()


def main(listen_port, target_port, delay, lifetime):
    server = socket.create_server(("127.0.0.1", listen_port), backlog=64)
    server.settimeout(1.0)
    end = time.monotonic() + lifetime
    while time.monotonic() < end:
        try:
            client, _ = server.accept()
        except socket.timeout:
            continue
        try:
            upstream = socket.create_connection(("127.0.0.1", target_port))
        except OSError:
            client.close()
            continue
        for s in (client, upstream):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        relay(client, upstream, delay)
        relay(upstream, client, delay)


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]) / 1000,
         float(sys.argv[4]) if len(sys.argv) == 5 else 3600)
