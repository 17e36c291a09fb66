#!/usr/bin/env python3
"""rk6 vs k6 on browser VUs: what a browser iteration costs the machine.

Runs bench/scripts/browser_journey.js (three storefront pages of `rk6 demo --serve-only`
on 127.0.0.1 per iteration) with rk6 and k6 1.1.0 at 1, 2 and 4 browser VUs, tool order
rotated between repeats. Each run is put in its own cgroup (v1 cpuacct + memory), so the
CPU of every process it starts counts, Chromium's included (k6 does not reap all of its
Chromium processes, so wait4 alone misses about half); peak memory is the largest sum of
the RSS of the cgroup's processes, sampled every 100 ms (shared pages counted per process,
as `ps` would), and the cgroup's own peak. Writes results/browser.md and browser.json
(medians over the repeats, rk6/k6 ratios). Needs root (cgroups) and Chromium.

    bench/browser.py [--vus 1,2,4] [--duration 20] [--repeats 3]
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
RESULTS = os.path.join(BENCH, "results")
SCRIPT = os.path.join(BENCH, "scripts", "browser_journey.js")
CG = "/sys/fs/cgroup"


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Cgroup:
    """A cpuacct + memory cgroup (v1) for one run."""

    def __init__(self, name):
        self.dirs = {c: os.path.join(CG, c, name) for c in ("cpuacct", "memory")}
        for d in self.dirs.values():
            os.makedirs(d, exist_ok=True)

    def procs_file(self):
        return [os.path.join(d, "cgroup.procs") for d in self.dirs.values()]

    def cpu_seconds(self):
        with open(os.path.join(self.dirs["cpuacct"], "cpuacct.usage")) as f:
            return int(f.read()) / 1e9

    def mem_peak(self):
        with open(os.path.join(self.dirs["memory"], "memory.max_usage_in_bytes")) as f:
            return int(f.read())

    def pids(self):
        with open(os.path.join(self.dirs["cpuacct"], "cgroup.procs")) as f:
            return [int(p) for p in f.read().split()]

    def rss_sum(self):
        total = 0
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1]) * 1024
            except OSError:
                pass
        return total

    def remove(self):
        for pid in self.pids():
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        time.sleep(0.3)
        for d in self.dirs.values():
            try:
                os.rmdir(d)
            except OSError:
                pass


def run(tool, vus, args, base, tmp, n):
    cg = Cgroup(f"rk6bench-{os.getpid()}-{n}")
    export = os.path.join(tmp, f"{tool}-{vus}-{n}.json")
    env = dict(os.environ, BASE_URL=base, VUS=str(vus), DURATION=f"{args.duration}s", K6_NO_USAGE_REPORT="true",
               K6_BROWSER_EXECUTABLE_PATH=args.chromium)
    extra = ["no-sandbox"] if os.getuid() == 0 else []
    extra += [a for a in args.browser_args.split(",") if a]
    if extra:
        env["K6_BROWSER_ARGS"] = ",".join(extra)
    cmd = [args.rk6 if tool == "rk6" else args.k6, "run", "-q", "--summary-export", export]
    if tool == "k6":
        cmd += ["--address", "127.0.0.1:0"]
    cmd.append(SCRIPT)
    # The shell joins the cgroups before it becomes the tool, so every descendant is in them.
    joins = "; ".join(f"echo $$ > {p}" for p in cg.procs_file())
    proc = subprocess.Popen(["sh", "-c", f"{joins}; exec \"$@\"", "sh"] + cmd, env=env, cwd=tmp,
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, f"{tool}-{vus}-{n}.log"), "w"))
    peak_rss = 0
    deadline = time.time() + args.duration + 120
    while proc.poll() is None and time.time() < deadline:
        peak_rss = max(peak_rss, cg.rss_sum())
        time.sleep(0.1)
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    time.sleep(1.0)  # let the browser's leftovers finish (and count)
    cpu = cg.cpu_seconds()
    mem_peak = cg.mem_peak()
    left = len(cg.pids())
    cg.remove()
    with open(export) as f:
        summary = json.load(f)
    m = summary["metrics"]
    iters = m.get("iterations", {}).get("count", 0)
    vital = lambda name: m.get(f"browser_web_vital_{name}", {}).get("med")
    return {"tool": tool, "vus": vus, "cpu_s": cpu, "iterations": iters,
            "cpu_ms_per_iter": 1000 * cpu / iters if iters else None,
            "peak_rss_mib": peak_rss / 2**20, "cgroup_peak_mib": mem_peak / 2**20,
            "lcp_med_ms": vital("lcp"), "fcp_med_ms": vital("fcp"), "ttfb_med_ms": vital("ttfb"),
            "left_processes": left, "exit": proc.returncode}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vus", default="1,2,4")
    ap.add_argument("--duration", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rk6", default=os.environ.get("RK6_BIN") or os.path.join(REPO, "target", "release", "rk6"))
    ap.add_argument("--k6", default=shutil.which("k6") or "k6")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--tools", default="rk6,k6", help="which tools to run (exploring flags: --tools rk6)")
    ap.add_argument("--browser-args", default="", help="extra K6_BROWSER_ARGS for both tools (comma-separated)")
    ap.add_argument("--no-write", action="store_true", help="print, do not write results/ (exploring)")
    args = ap.parse_args()
    if os.getuid() != 0:
        sys.exit("bench/browser.py needs root (it makes a cgroup per run)")
    port = free_port()
    shop = subprocess.Popen([args.rk6, "demo", "--serve-only", "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    time.sleep(1)
    tmp = tempfile.mkdtemp(prefix="rk6-browser-bench-")
    runs, n = [], 0
    try:
        for rep in range(args.repeats):
            tools = [t for t in args.tools.split(",") if t]
            tools = tools if rep % 2 == 0 else tools[::-1]
            for vus in [int(v) for v in args.vus.split(",")]:
                for tool in tools:
                    n += 1
                    r = run(tool, vus, args, base, tmp, n)
                    r["repeat"] = rep
                    runs.append(r)
                    print(json.dumps(r), flush=True)
    finally:
        shop.kill()
        shop.wait()
    med = lambda xs: statistics.median(xs) if xs else None
    rows = []
    for vus in [int(v) for v in args.vus.split(",")]:
        row = {"vus": vus}
        for tool in ("rk6", "k6"):
            rs = [r for r in runs if r["tool"] == tool and r["vus"] == vus and r["iterations"]]
            for key in ("cpu_ms_per_iter", "peak_rss_mib", "cgroup_peak_mib", "iterations", "lcp_med_ms", "fcp_med_ms"):
                row[f"{tool}_{key}"] = med([r[key] for r in rs if r[key] is not None])
        for key in ("cpu_ms_per_iter", "peak_rss_mib", "cgroup_peak_mib"):
            a, b = row.get(f"rk6_{key}"), row.get(f"k6_{key}")
            row[f"ratio_{key}"] = a / b if a and b else None
        rows.append(row)
    if args.no_write:
        for r in rows:
            print(json.dumps(r))
        return
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "browser.json"), "w") as f:
        json.dump({"when": when, "rev": rev, "duration_s": args.duration, "repeats": args.repeats, "rows": rows,
                   "runs": runs}, f, indent=1)
    fmt = lambda v, p=0: "-" if v is None else f"{v:.{p}f}"
    lines = [f"# Browser VUs: rk6 vs k6 1.1.0 ({when}, rk6 {rev}, {args.duration} s runs, {args.repeats} repeats, medians)",
             "", "Journey: `bench/scripts/browser_journey.js` (3 storefront pages per iteration, no think time), "
             "Debian Chromium, 2 cores. CPU and memory are the whole process tree's (a cgroup per run: the tool and "
             "every Chromium process).", "",
             "| browser VUs | iterations rk6 / k6 | CPU per iteration rk6 / k6 (ms) | ratio | peak summed RSS rk6 / k6 (MiB) | ratio | cgroup peak rk6 / k6 (MiB) | ratio | LCP med rk6 / k6 (ms) | FCP med rk6 / k6 (ms) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['vus']} | {fmt(r['rk6_iterations'])} / {fmt(r['k6_iterations'])} | "
                     f"{fmt(r['rk6_cpu_ms_per_iter'])} / {fmt(r['k6_cpu_ms_per_iter'])} | {fmt(r['ratio_cpu_ms_per_iter'], 2)}x | "
                     f"{fmt(r['rk6_peak_rss_mib'])} / {fmt(r['k6_peak_rss_mib'])} | {fmt(r['ratio_peak_rss_mib'], 2)}x | "
                     f"{fmt(r['rk6_cgroup_peak_mib'])} / {fmt(r['k6_cgroup_peak_mib'])} | {fmt(r['ratio_cgroup_peak_mib'], 2)}x | "
                     f"{fmt(r['rk6_lcp_med_ms'])} / {fmt(r['k6_lcp_med_ms'])} | {fmt(r['rk6_fcp_med_ms'])} / {fmt(r['k6_fcp_med_ms'])} |")
    with open(os.path.join(RESULTS, "browser.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"logs and exports: {tmp}")


if __name__ == "__main__":
    main()
