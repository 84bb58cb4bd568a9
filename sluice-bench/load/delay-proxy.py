#!/usr/bin/env python3
"""A TCP forwarder on 127.0.0.1 that delays every chunk by a fixed time in each direction.

    delay-proxy.py LISTEN_PORT TARGET_PORT ONE_WAY_MS [LIFETIME_S]

Stands for a Redis across a slow network in gateway-bench.sh (the machine has no netem). Each
direction of each connection is a queue: a chunk read at time t is written at t + ONE_WAY_MS,
in the order it was read; an end of stream travels the same way, behind the data before it.
Binds 127.0.0.1 only and exits by itself after LIFETIME_S seconds (default 3600).
"""
import asyncio
import collections
import sys


async def relay(reader, writer, delay):
    loop = asyncio.get_running_loop()
    queue = collections.deque()
    ready = asyncio.Event()

    async def drain():
        while True:
            while not queue:
                ready.clear()
                await ready.wait()
            due, data = queue.popleft()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(data)

    sender = asyncio.create_task(drain())
    try:
        while True:
            data = await reader.read(65536)
            queue.append((loop.time() + delay, data))
            ready.set()
            if not data:
                break
    except ConnectionError:
        queue.append((loop.time() + delay, b""))
        ready.set()
    await sender


async def main(listen_port, target_port, delay, lifetime):
    async def accept(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError:
            client_writer.close()
            return
        try:
            await asyncio.gather(relay(client_reader, server_writer, delay),
                                 relay(server_reader, client_writer, delay))
        except ConnectionError:
            pass
        finally:
            client_writer.close()
            server_writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", listen_port)
    async with server:
        await asyncio.sleep(lifetime)


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]) / 1000,
                     float(sys.argv[4]) if len(sys.argv) == 5 else 3600))
