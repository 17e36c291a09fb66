"""A WebSocket server for the k6/rk6 parity tests (Python's `websockets` library).

Listens on 127.0.0.1 port 0 and prints the port on the first line of stdout. Paths:
/echo echoes text and binary messages; /close/<code> closes at once with that code;
/ping sends a ping, waits for its pong, then echoes; /reject answers 403 to the upgrade;
/proto accepts the subprotocol `chat`; /cookies sends the request's Cookie header back; /drop drops the connection without a close frame.
"""

import asyncio
import http
import sys

from websockets.asyncio.server import serve


async def handler(ws):
    path = ws.request.path
    if path.startswith("/close/"):
        await ws.close(int(path.rsplit("/", 1)[1]), "bye")
        return
    if path == "/drop":
        ws.transport.abort()
        return
    if path == "/cookies":
        await ws.send(ws.request.headers.get("Cookie", ""))
    if path == "/ping":
        pong = await ws.ping(b"srv")
        await pong
    try:
        async for msg in ws:
            await ws.send(msg)
    except Exception:
        pass


def process_request(conn, request):
    if request.path == "/reject":
        return conn.respond(http.HTTPStatus.FORBIDDEN, "go away\n")
    return None


async def main():
    async with serve(
        handler,
        "127.0.0.1",
        0,
        process_request=process_request,
        subprotocols=["chat"],
        select_subprotocol=lambda conn, protos: "chat" if "chat" in protos else None,
        compression=None,
    ) as server:
        port = server.sockets[0].getsockname()[1]
        print(port, flush=True)
        await asyncio.get_running_loop().create_future()


asyncio.run(main())
