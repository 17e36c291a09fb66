#!/usr/bin/env python3
"""Static HTTPS file server bound to 127.0.0.1 only (for k6 remote-module runs).

usage: https_server.py PORT DIRECTORY CERT KEY
Trust it in k6 with SSL_CERT_FILE=CERT.
"""
import http.server, ssl, sys, os, functools

port, directory, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=directory)
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
httpd.serve_forever()
