"""A WebSocket server for the k6/rk6 parity tests (Python's `websockets` library).

Listens on 127.0.0.1 port 0 and prints the port on the first line of stdout. Paths:
/echo echoes text and binary messages; /close/<code> closes at once with that code;
/ping sends a ping, waits for its pong, then echoes; /reject answers 403 to the upgrade;
/proto accepts the subprotocol `chat`; /cookies sends the request's Cookie header back; /drop drops the connection without a close frame.

permessage-deflate is on (the library's default settings) for clients that offer it. On any
path the text message `wire?` is answered (instead of echoed) with a JSON object of what the
server saw on this connection: `offer` and `answer` (the Sec-WebSocket-Extensions request and
response values), `compressed` and `plain` (data frames received with and without RSV1,
`wire?` itself included) and `sent_compressed` (data frames sent with RSV1).
"""

import asyncio
import http
import json
import sys

from websockets.asyncio.server import serve
from websockets.extensions import permessage_deflate

# Counts the frames each connection's extension decodes and encodes, on the extension
# object itself (one per connection).
_decode = permessage_deflate.PerMessageDeflate.decode
_encode = permessage_deflate.PerMessageDeflate.encode


def decode(self, frame, *, max_size=None):
    if frame.opcode.value in (1, 2):
        key = "compressed" if frame.rsv1 else "plain"
        setattr(self, key, getattr(self, key, 0) + 1)
    return _decode(self, frame, max_size=max_size)


def encode(self, frame):
    out = _encode(self, frame)
    if out.rsv1:
        self.sent_compressed = getattr(self, "sent_compressed", 0) + 1
    return out


permessage_deflate.PerMessageDeflate.decode = decode
permessage_deflate.PerMessageDeflate.encode = encode


def wire(ws):
    ext = ws.protocol.extensions[0] if ws.protocol.extensions else None
    return json.dumps({
        "offer": ws.request.headers.get("Sec-WebSocket-Extensions", ""),
        "answer": ws.response.headers.get("Sec-WebSocket-Extensions", ""),
        "compressed": getattr(ext, "compressed", 0),
        "plain": getattr(ext, "plain", 0),
        "sent_compressed": getattr(ext, "sent_compressed", 0),
    })


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
            await ws.send(wire(ws) if msg == "wire?" else msg)
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
    ) as server:
        port = server.sockets[0].getsockname()[1]
        print(port, flush=True)
        await asyncio.get_running_loop().create_future()


asyncio.run(main())
