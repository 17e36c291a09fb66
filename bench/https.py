#!/usr/bin/env python3
"""rk6 vs k6 over HTTPS: `bench/https.py [--repeats 3] [--duration 10] [--vus 10]`.

Scenario 1 (scripts/tight.js: one GET and one check per iteration, no think time) against
an nginx on 127.0.0.1 that speaks TLS 1.3 with a throw-away self-signed certificate, once
with HTTP/2 offered by ALPN (what most real targets speak; both tools take it) and once with
HTTP/1.1 only, tools alternated between repeats. Prints CPU per request (the tool's
user+sys over its requests, GNU time), peak RSS and requests, medians, and rk6 / k6.
Writes results/https.md. Only 127.0.0.1 is loaded.
"""

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner as common  # noqa: E402

CONF = """
worker_processes 1;
error_log {root}/error.log warn;
pid {root}/nginx.pid;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {root}/client_body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    keepalive_requests 1000000;
    ssl_certificate {root}/cert.pem;
    ssl_certificate_key {root}/key.pem;
    ssl_protocols TLSv1.3;
    server {{
        listen 127.0.0.1:{h2} ssl http2;
        root {docroot};
        location = / {{ default_type text/html; try_files /index.html =404; }}
    }}
    server {{
        listen 127.0.0.1:{h1} ssl;
        root {docroot};
        location = / {{ default_type text/html; try_files /index.html =404; }}
    }}
}}
"""


def start_nginx(root, h2, h1):
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout", f"{root}/key.pem",
                    "-out", f"{root}/cert.pem"], check=True, capture_output=True)
    conf = os.path.join(root, "nginx.conf")
    with open(conf, "w") as f:
        f.write(CONF.format(root=root, h2=h2, h1=h1,
                            docroot=os.path.join(common.BENCH, "target", "docroot")))
    return subprocess.Popen(["nginx", "-p", root, "-c", conf, "-g", "daemon off;"],
                            start_new_session=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--vus", type=int, default=10)
    ap.add_argument("--port", type=int, default=18443)
    args = ap.parse_args()
    rk6, k6 = common.rk6_binary(), common.find_k6()
    h2, h1 = args.port, args.port + 1
    results = {}
    with tempfile.TemporaryDirectory(prefix="rk6-https.") as root:
        os.chmod(root, 0o755)
        nginx = start_nginx(root, h2, h1)
        try:
            time.sleep(1)
            for r in range(args.repeats):
                tools = [("rk6", rk6), ("k6", k6)]
                if r % 2:
                    tools.reverse()
                for proto, port in (("h2", h2), ("http/1.1", h1)):
                    for name, binary in tools:
                        summary = os.path.join(root, "summary.json")
                        log = os.path.join(root, "run.log")
                        cmd = [binary, "run", "-q", "--insecure-skip-tls-verify", "--summary-export", summary,
                               "-u", str(args.vus), "-d", f"{args.duration}s",
                               "-e", f"BASE_URL=https://127.0.0.1:{port}",
                               os.path.join(common.SCRIPTS, "tight.js")]
                        if name == "k6":
                            cmd[2:2] = ["--address", "127.0.0.1:0"]
                        env = dict(os.environ, K6_NO_USAGE_REPORT="true")
                        m = common.measured_run(cmd, env, args.duration + 60, log)
                        s = common.parse_summary(summary)
                        m.update(s)
                        common.log(f"{name} {proto}: {s['requests']} req, cpu {m['cpu']:.2f}s, "
                                   f"{1e6 * m['cpu'] / s['requests']:.1f} us/req, rss {m['maxrss_kb'] / 1024:.1f} MiB")
                        results.setdefault((proto, name), []).append(m)
        finally:
            nginx.terminate()
            nginx.wait()
    med = lambda xs: statistics.median(xs)  # noqa: E731
    lines = [
        f"# rk6 vs k6 over HTTPS ({datetime.datetime.now():%Y-%m-%d %H:%M})",
        "",
        f"`bench/https.py`: scripts/tight.js, {args.vus} VUs, {args.duration} s, {args.repeats} repeats, "
        "medians; nginx on 127.0.0.1 with TLS 1.3 (P-256 certificate), HTTP/2 by ALPN or HTTP/1.1 only; "
        f"rk6 `{common.git('rev-parse', '--short', 'HEAD')}`, {common.version([k6, 'version'])}.",
        "",
        "| protocol | tool | requests | CPU µs / request | peak RSS MiB |",
        "|---|---|---|---|---|",
    ]
    per = {}
    for (proto, name), ms in results.items():
        cpu = med([1e6 * m["cpu"] / m["requests"] for m in ms])
        per[(proto, name)] = cpu
        lines.append(f"| {proto} | {name} | {med([m['requests'] for m in ms]):,.0f} | {cpu:.1f} | "
                     f"{med([m['maxrss_kb'] for m in ms]) / 1024:.1f} |")
    lines += ["", "| protocol | rk6 / k6 CPU per request |", "|---|---|"]
    for proto in ("h2", "http/1.1"):
        lines.append(f"| {proto} | {per[(proto, 'rk6')] / per[(proto, 'k6')]:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(common.RESULTS, "https.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
