#!/usr/bin/env python3
"""Soak benchmark: rk6 at a constant 10,000 requests/s against the local nginx for a long
time, to show that memory stays flat and that no sample is lost.

- RSS of the rk6 process is sampled every 5 s; the report gives it at 1 minute and at the
  end (10 minutes by default) and the largest value seen.
- Every sample is streamed to a gzipped `-o json` file. The run is stopped with SIGINT
  before its planned end, as a user would, and the number of `http_reqs` Points in the
  file is compared with the summary's `http_reqs` count: they must be equal.

Usage: bench/soak.py [--minutes 10] [--rate 10000] [--port 18091]
Writes bench/results/soak.md (and prints it). Needs nginx (bench/run.sh installs it) and a
release build of rk6 (RK6_BIN to pick one).
"""

import argparse
import gzip
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402  (the Nginx target and helpers of the side-by-side harness)

SCRIPT = """
import http from 'k6/http';
import { check } from 'k6';
export const options = {
  scenarios: { soak: { executor: 'constant-arrival-rate', rate: __ENV.RATE * 1,
    timeUnit: '1s', duration: __ENV.DURATION, preAllocatedVUs: 200, maxVUs: 400 } },
};
export default function () {
  const r = http.get(`${__ENV.BASE_URL}/`);
  check(r, { 'status is 200': (r) => r.status === 200 });
}
"""


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--rate", type=int, default=10000)
    ap.add_argument("--port", type=int, default=18091)
    args = ap.parse_args()

    rk6 = os.environ.get("RK6_BIN") or os.path.join(runner.REPO, "target", "release", "rk6")
    if not os.path.exists(rk6):
        sys.exit(f"no rk6 binary at {rk6}: run `cargo build --release` or set RK6_BIN")
    work = tempfile.mkdtemp(prefix="rk6-soak.")
    script = os.path.join(work, "soak.js")
    with open(script, "w") as f:
        f.write(SCRIPT)
    out = os.path.join(work, "out.json.gz")
    export = os.path.join(work, "summary.json")
    planned = args.minutes * 60
    # The scenario runs longer than we let it: SIGINT ends it, as a user would.
    duration = f"{int(planned + 60)}s"

    nginx = runner.Nginx(args.port)
    nginx.start()
    samples = []
    try:
        env = dict(os.environ, BASE_URL=f"http://127.0.0.1:{args.port}",
                   RATE=str(args.rate), DURATION=duration, K6_NO_USAGE_REPORT="true")
        log = open(os.path.join(work, "rk6.log"), "w")
        proc = subprocess.Popen(
            [rk6, "run", "-q", "--address", "", "--summary-export", export,
             "-o", f"json={out}", script],
            env=env, stdout=log, stderr=subprocess.STDOUT)
        start = time.time()
        while time.time() - start < planned and proc.poll() is None:
            time.sleep(5)
            rss = rss_kib(proc.pid)
            if rss is not None:
                samples.append((time.time() - start, rss))
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=120)
        elapsed = time.time() - start
    finally:
        nginx.stop()

    with open(export) as f:
        summary = json.load(f)
    reqs = int(summary["metrics"]["http_reqs"]["count"])
    dropped = int(summary["metrics"].get("dropped_iterations", {}).get("count", 0))
    points = 0
    with gzip.open(out, "rt") as f:
        for line in f:
            if '"metric":"http_reqs"' in line and '"type":"Point"' in line:
                points += 1

    def rss_at(t):
        near = [r for (s, r) in samples if s <= t]
        return near[-1] if near else None

    at_1m = rss_at(60)
    at_end = samples[-1][1] if samples else None
    peak = max((r for _, r in samples), default=None)
    lines = [
        "# Soak: rk6 at a constant rate for a long run",
        "",
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit "
        f"{runner.git('rev-parse', '--short', 'HEAD')}, machine: {runner.machine()}",
        f"- planned {args.rate} requests/s for {args.minutes:g} min against nginx on 127.0.0.1; "
        f"stopped with SIGINT after {elapsed:.0f} s (exit code {code}, k6's 105 expected)",
        f"- achieved: {reqs} requests = {reqs / elapsed:.0f}/s; dropped iterations: {dropped}",
        f"- RSS: {at_1m} KiB at 1 min, {at_end} KiB at {samples[-1][0] / 60 if samples else 0:.1f} min, "
        f"peak {peak} KiB (sampled every 5 s)",
        f"- JSON output: {points} `http_reqs` Points vs {reqs} in the summary -> "
        + ("**equal, nothing lost**" if points == reqs else f"**MISMATCH ({points - reqs:+d})**"),
        "",
        "| minute | RSS KiB |",
        "|---|---|",
    ]
    for minute in range(0, int(args.minutes) + 1):
        r = rss_at(minute * 60 + 5)
        if r is not None:
            lines.append(f"| {minute} | {r} |")
    report = "\n".join(lines) + "\n"
    os.makedirs(os.path.join(runner.BENCH, "results"), exist_ok=True)
    with open(os.path.join(runner.BENCH, "results", "soak.md"), "w") as f:
        f.write(report)
    print(report)
    print(f"(work files in {work})")
    if points != reqs:
        sys.exit(1)


if __name__ == "__main__":
    main()
