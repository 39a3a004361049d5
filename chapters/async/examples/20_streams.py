"""Lesson 20: asyncio streams on 127.0.0.1: receiving, framing and closing a connection.

  1. TCP is a byte stream: two writes arrive as one run of bytes, boundaries are gone
  2. length-prefixed frames: readexactly(4) for the header, readexactly(n) for the body
  3. delimiter frames: readuntil(b"\\n\\n"), and what a too-long frame does (LimitOverrunError)
  4. closing: EOF between frames vs. EOF inside a frame (IncompleteReadError.partial)
  5. write() never waits (what the socket cannot take stays buffered); drain() waits while the peer is not reading

Every server listens on 127.0.0.1 with port 0 (the kernel picks a free port, never printed),
every connection and server is closed, and the whole run is bounded by one timeout.
"""

import asyncio
import struct

HOST = "127.0.0.1"


def frame(payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + payload      # 4-byte big-endian length, then the body


async def read_frame(reader: asyncio.StreamReader) -> bytes | None:
    """One frame, or None on a clean EOF between frames. EOF inside a frame raises IncompleteReadError."""
    try:
        header = await reader.readexactly(4)
    except asyncio.IncompleteReadError as exc:
        if exc.partial == b"":
            return None
        raise
    (length,) = struct.unpack(">I", header)
    return await reader.readexactly(length)


async def serve(handler, **kwargs):
    server = await asyncio.start_server(handler, HOST, 0, **kwargs)
    port = server.sockets[0].getsockname()[1]
    return server, port


async def close_server(server):
    server.close()
    await server.wait_closed()


async def scene_byte_stream():
    print("== 1. a byte stream has no message boundaries ==")
    got = asyncio.get_running_loop().create_future()

    async def handler(reader, writer):
        got.set_result(await reader.read())   # read() with no size: everything until EOF
        writer.close()
        await writer.wait_closed()

    server, port = await serve(handler)
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(b"hello")
    writer.write(b"world")
    writer.write_eof()                        # "I will send nothing more"
    print(f"sent b'hello' and b'world' in two writes; server read {await got!r}")
    writer.close()
    await writer.wait_closed()
    await close_server(server)


async def scene_length_prefix():
    print("== 2. length-prefixed frames ==")

    async def echo_upper(reader, writer):
        while (msg := await read_frame(reader)) is not None:
            writer.write(frame(msg.upper()))
            await writer.drain()
        writer.close()                        # the client said EOF: close our side too
        await writer.wait_closed()

    server, port = await serve(echo_upper)
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(frame(b"one") + frame(b"") + frame(b"three"))   # three frames in one write
    big = frame(b"x" * 10)
    writer.write(big[:6])                     # one frame split across two writes
    await writer.drain()
    writer.write(big[6:])
    writer.write_eof()
    replies = []
    while (msg := await read_frame(reader)) is not None:
        replies.append(msg)
    print(f"replies: {replies}")
    writer.close()
    await writer.wait_closed()
    await close_server(server)


async def scene_delimiter():
    print("== 3. delimiter frames with readuntil ==")
    events = []

    async def sse_reader(reader, writer):
        try:
            while True:
                events.append(await reader.readuntil(b"\n\n"))
        except asyncio.LimitOverrunError:
            events.append("LimitOverrunError: the frame is longer than the reader's limit")
        except asyncio.IncompleteReadError as exc:
            events.append(f"EOF, {len(exc.partial)} bytes left without a delimiter")
        writer.close()
        await writer.wait_closed()

    for body in (b"data: a\n\ndata: b\n\n", b"data: " + b"z" * 100 + b"\n\n"):
        events.clear()
        server, port = await serve(sse_reader, limit=64)   # the reader buffers at most ~64 bytes
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.write(body)
        writer.write_eof()
        await reader.read()                  # wait until the server has closed its side
        writer.close()
        await writer.wait_closed()
        await close_server(server)
        print(f"sent {len(body)} bytes -> {events}")


async def scene_close():
    print("== 4. EOF between frames vs. inside a frame ==")
    outcome = asyncio.Queue()

    async def handler(reader, writer):
        try:
            while (msg := await read_frame(reader)) is not None:
                await outcome.put(f"frame {msg!r}")
            await outcome.put("clean EOF between frames")
        except asyncio.IncompleteReadError as exc:
            await outcome.put(f"IncompleteReadError: expected {exc.expected}, partial {exc.partial!r}")
        writer.close()
        await writer.wait_closed()

    server, port = await serve(handler)
    for data in (frame(b"ok"), frame(b"0123456789")[:7]):   # the second one stops mid-frame
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.write(data)
        writer.close()                       # close() sends what is buffered, then FIN
        await writer.wait_closed()
        while True:
            line = await outcome.get()
            print(f"  server: {line}")
            if not line.startswith("frame"):
                break
    await close_server(server)


async def scene_drain():
    print("== 5. write() buffers, drain() waits for the reader ==")
    release = asyncio.Event()
    received = 0

    async def slow_reader(reader, writer):
        nonlocal received
        await release.wait()                 # do not read until told to
        while chunk := await reader.read(1 << 20):
            received += len(chunk)
        writer.close()
        await writer.wait_closed()

    server, port = await serve(slow_reader)
    reader, writer = await asyncio.open_connection(HOST, port)
    total = 32 * (1 << 20)
    writer.write(b"\0" * total)              # returns at once: the bytes go to a buffer
    buffered = writer.transport.get_write_buffer_size()
    print(f"write() returned with {'some' if buffered else 'no'} bytes still in our buffer")
    try:
        async with asyncio.timeout(0.3):
            await writer.drain()
        print("drain() returned at once")
    except TimeoutError:
        print("drain() still waiting after 0.3 s: the server is not reading")
    release.set()
    await writer.drain()
    writer.write_eof()
    while received < total:
        await asyncio.sleep(0.01)
    print(f"after the server reads: drain() returned, server received {received // (1 << 20)} MiB")
    writer.close()
    await writer.wait_closed()
    await close_server(server)


async def main():
    async with asyncio.timeout(10):          # the experiment stops by itself whatever happens
        await scene_byte_stream()
        await scene_length_prefix()
        await scene_delimiter()
        await scene_close()
        await scene_drain()


asyncio.run(main())
