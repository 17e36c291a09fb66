#!/usr/bin/env python3
"""How rk6's cost and its own pauses grow with the VU count: `bench/scale.py A_BIN [B_BIN]`.

Runs scripts/sleepy.js (one GET of nginx on 127.0.0.1 and sleep(1) per iteration) at
--vus VU counts (1000, 5000, 18000 by default: below the 20,000 open files a process gets
here, as every VU holds a connection) with each binary, alternating which goes first, and
prints medians of: CPU per iteration, RSS per VU, the share of planned iterations done,
the worker threads' wake-up lateness p(99) and the garbage-collection pause p(99) and max
(both from rk6's own `-v` report), and the process's peak thread count. With two binaries
it adds B / A. Only 127.0.0.1 is loaded; every run is bounded by its duration.

`--equal-rate R` asks whether the cost of an iteration stays flat as VUs grow, like for
like: every VU count makes the same R iterations a second (think time = VUs / R, the VUs'
first requests spread over one think time so they do not arrive in bursts), and the cost is
read in a window of the run (`--window 90,150` seconds by default) from the process's CPU
time and the iteration count of rk6's REST API: start-up and the end stay out of it, and so
does the first minute, while the VUs' heaps still grow towards their first collections
(at 18,000 VUs and a 10 s think time, each VU makes only a few iterations a minute).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner as common  # noqa: E402

PAUSES = re.compile(r"garbage-collection pauses up to ([\d.]+)ms \(p\(99\) <= (\d+)ms over (\d+)")
WOKE = re.compile(r"worker threads woke up to ([\d.]+)ms late \(p\(99\) <= (\d+)ms")


def peak_threads(proc, box):
    """Samples the thread count of the rk6 under GNU time every 200 ms."""
    while proc.poll() is None:
        try:
            for child in os.listdir(f"/proc/{proc.pid}/task"):
                with open(f"/proc/{proc.pid}/task/{child}/children") as f:
                    for pid in f.read().split():
                        with open(f"/proc/{pid}/status") as s:
                            for line in s:
                                if line.startswith("Threads:"):
                                    box[0] = max(box[0], int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.2)


def run_one(binary, vus, duration, port, workdir):
    summary = os.path.join(workdir, "summary.json")
    log = os.path.join(workdir, "run.log")
    timefile = log + ".time"
    env = dict(os.environ, BASE_URL=f"http://127.0.0.1:{port}")
    cmd = [common.TIME, "-f", "%e %U %S %M %x", "-o", timefile, binary, "run", "-v", "-q",
           "-u", str(vus), "-d", f"{duration}s", "--summary-export", summary,
           os.path.join(common.SCRIPTS, "sleepy.js")]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        box = [0]
        t = threading.Thread(target=peak_threads, args=(proc, box))
        t.start()
        proc.wait(timeout=duration + 120)
        t.join()
    with open(timefile) as f:
        _e, user, sys_, maxrss, _rc = f.read().split()[-5:]
    with open(log) as f:
        text = f.read()
    with open(summary) as f:
        iterations = json.load(f)["metrics"]["iterations"]["count"]
    pauses = PAUSES.search(text)
    woke = WOKE.search(text)
    cpu = float(user) + float(sys_)
    return {
        "cpu_us_per_iter": cpu / iterations * 1e6,
        "rss_kib_per_vu": int(maxrss) / vus,
        "planned_pct": 100.0 * iterations / (vus * duration),
        "lag_p99_ms": float(woke.group(2)) if woke else 0.0,
        "gc_p99_ms": float(pauses.group(2)) if pauses else 0.0,
        "gc_max_ms": float(pauses.group(1)) if pauses else 0.0,
        "threads": box[0],
    }


def steady(binary, vus, args, workdir):
    """CPU per iteration and RSS in the window of a run at `args.equal_rate` iterations/s."""
    t0, t1 = (float(x) for x in args.window.split(","))
    think = vus / args.equal_rate
    api = args.port + 1
    env = dict(os.environ, BASE_URL=f"http://127.0.0.1:{args.port}", THINK_TIME_S=f"{think:.4f}",
               START_SPREAD_S=f"{think:.4f}")
    cmd = [binary, "run", "-q", "--address", f"127.0.0.1:{api}", "-u", str(vus), "-d", f"{int(t1) + 10}s",
           os.path.join(common.SCRIPTS, "sleepy.js")]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(workdir, "run.log"), "w"))

    def cpu():
        fields = open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_kib():
        with open(f"/proc/{proc.pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

    def iterations():
        with urllib.request.urlopen(f"http://127.0.0.1:{api}/v1/metrics/iterations") as r:
            return json.load(r)["data"]["attributes"]["sample"]["count"]

    try:
        time.sleep(t0)
        c0, i0, r0 = cpu(), iterations(), rss_kib()
        time.sleep(t1 - t0)
        c1, i1, r1 = cpu(), iterations(), rss_kib()
    finally:
        proc.wait(timeout=think + 120)
    return {
        "steady_cpu_us_per_iter": (c1 - c0) / (i1 - i0) * 1e6,
        "rss_kib_per_vu": r1 / vus,
        "rss_growth_mib": (r1 - r0) / 1024,
        "planned_pct": 100.0 * (i1 - i0) / (args.equal_rate * (t1 - t0)),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bins", nargs="+")
    ap.add_argument("--vus", default="1000,5000,18000")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--port", type=int, default=18090)
    ap.add_argument("--equal-rate", type=float, help="iterations per second at every VU count (steady-state mode)")
    ap.add_argument("--window", default="90,150", help="steady-state mode: seconds of the run to measure in")
    args = ap.parse_args()
    bins = [os.path.abspath(b) for b in args.bins]
    nginx = common.Nginx(args.port)
    nginx.start()
    results = {}
    try:
        with tempfile.TemporaryDirectory(prefix="rk6-scale.") as workdir:
            for vus in [int(v) for v in args.vus.split(",")]:
                for r in range(args.repeats):
                    order = bins if r % 2 == 0 else list(reversed(bins))
                    for b in order:
                        if args.equal_rate:
                            m = steady(b, vus, args, workdir)
                        else:
                            m = run_one(b, vus, args.duration, args.port, workdir)
                        common.log(f"{os.path.basename(b)} {vus} VUs: {m}")
                        results.setdefault((b, vus), []).append(m)
    finally:
        nginx.stop()
    keys = ["cpu_us_per_iter", "rss_kib_per_vu", "planned_pct", "lag_p99_ms", "gc_p99_ms", "gc_max_ms", "threads"]
    if args.equal_rate:
        keys = ["steady_cpu_us_per_iter", "rss_kib_per_vu", "rss_growth_mib", "planned_pct"]
        print(f"\nequal rate: {args.equal_rate:g} iterations/s at every VU count (think time = VUs / rate), "
              f"measured from {args.window.replace(',', ' to ')} s of each run; {args.repeats} repeats, medians\n")
    else:
        print(f"\n{args.repeats} repeats of {args.duration} s, medians\n")
    head = "| VUs | measure | " + " | ".join(bins) + (" | B / A |" if len(bins) == 2 else " |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for vus in sorted({v for _, v in results}):
        for k in keys:
            meds = [statistics.median(m[k] for m in results[(b, vus)]) for b in bins]
            row = f"| {vus} | {k} | " + " | ".join(f"{x:.1f}" for x in meds)
            if len(bins) == 2:
                row += f" | {meds[1] / meds[0]:.2f}" if meds[0] else " | -"
            print(row + " |")


if __name__ == "__main__":
    main()
