#!/usr/bin/env python3
"""Two rk6 binaries side by side: `bench/ab.py A_BIN B_BIN [--repeats 3] [--duration 10]`.

For a change to rk6 itself (an allocator, an engine patch) the question is B / A, not rk6 / k6:
this runs the nginx scenarios of runner.py (1-VU baselines, the tight loop at 10 VUs,
sleep(1) at --vus VUs, the journey at 50 VUs, VUs that only sleep at --vus VUs) with both binaries in the same session,
alternating which goes first, and prints medians and B/A ratios of CPU per request, CPU per
iteration and RSS per VU. Only 127.0.0.1 is loaded.
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner as common  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--vus", type=int, default=1000)
    ap.add_argument("--port", type=int, default=18090)
    ap.add_argument("--pause", type=float, default=1.0)
    args = ap.parse_args()
    bins = {"A": os.path.abspath(args.a), "B": os.path.abspath(args.b)}
    D = args.duration
    plan = [  # (key, script, vus, duration, env)
        ("base-sleepy", "sleepy.js", 1, 3, None),
        ("base-journey", "journey.js", 1, 3, {"THINK_TIME_S": "0.5"}),
        ("base-idle", "idle.js", 1, 3, None),
        ("tight", "tight.js", 10, D, None),
        ("sleepy", "sleepy.js", args.vus, D, None),
        ("journey", "journey.js", 50, D, {"THINK_TIME_S": "0.5"}),
        ("idle", "idle.js", args.vus, D, None),
    ]
    nginx = common.Nginx(args.port)
    nginx.start()
    runs = []
    try:
        r = common.Runner(args, f"http://127.0.0.1:{args.port}", nginx)
        for rep in range(args.repeats):
            common.log(f"=== repeat {rep + 1}/{args.repeats} ===")
            order = ["A", "B"] if rep % 2 == 0 else ["B", "A"]
            for key, script, vus, dur, env in plan:
                for who in order:
                    r.rk6 = bins[who]
                    res = r.run("rk6", script, vus, dur, dur + 90, env)
                    runs.append({**res, "who": who, "key": key})
    finally:
        nginx.stop()

    def med(who, key, f):
        xs = [f(x) for x in runs if x["who"] == who and x["key"] == key and x["ok"]]
        xs = [x for x in xs if x is not None]
        return statistics.median(xs) if xs else None

    print(f"\nA = {bins['A']}\nB = {bins['B']}\n{args.repeats} repeats, medians\n")
    print("| Scenario | Measure | A | B | B / A |\n|---|---|---|---|---|")
    for key, base in (("tight", None), ("sleepy", "base-sleepy"), ("journey", "base-journey"), ("idle", "base-idle")):
        rows = [] if key == "idle" else [
            ("CPU µs / request", lambda x: 1e6 * x["cpu"] / x["requests"] if x["requests"] else None)]
        if key != "tight":
            rows.append(("CPU µs / iteration", lambda x: 1e6 * x["cpu"] / x["iterations"] if x["iterations"] else None))
        vals = {}
        for who in ("A", "B"):
            b = med(who, base, lambda x: x["maxrss_kb"]) if base else None
            vals[who] = b
        for label, f in rows:
            a, b = med("A", key, f), med("B", key, f)
            print(f"| {key} | {label} | {a:.1f} | {b:.1f} | {b / a:.3f} |")
        if base:
            vus = next(x["vus"] for x in runs if x["key"] == key)
            a = med("A", key, lambda x: (x["maxrss_kb"] - vals["A"]) / (vus - 1))
            b = med("B", key, lambda x: (x["maxrss_kb"] - vals["B"]) / (vus - 1))
            print(f"| {key} | RSS KiB / VU | {a:.1f} | {b:.1f} | {b / a:.3f} |")
        a, b = med("A", key, lambda x: x["maxrss_kb"] / 1024), med("B", key, lambda x: x["maxrss_kb"] / 1024)
        print(f"| {key} | peak RSS MiB | {a:.1f} | {b:.1f} | {b / a:.3f} |")


if __name__ == "__main__":
    main()
