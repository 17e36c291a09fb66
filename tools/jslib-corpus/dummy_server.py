#!/usr/bin/env python3
"""Dummy HTTP target bound to 127.0.0.1: any method/path -> 200 with a small JSON echo
(method, url, headers, data).

usage: dummy_server.py PORT
"""
import http.server, json, sys


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        out = json.dumps({
            "method": self.command, "url": self.path,
            # Header names in canonical form (as httpbin shows them), whatever case came in.
            "headers": {"-".join(w.capitalize() for w in k.split("-")): v for k, v in self.headers.items()},
            "data": body.decode("utf-8", "replace"), "json": None, "args": {},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = _any

    def log_message(self, *a):
        pass


class S(http.server.ThreadingHTTPServer):
    request_queue_size = 1024  # the default (5) drops SYNs when 100 VUs connect at once
    daemon_threads = True


S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
