#!/usr/bin/env python3
"""rk6 vs k6 vs wrk benchmark runner. Start it through bench/run.sh (which installs the tools).

Starts an nginx target on 127.0.0.1, runs every scenario with every comparable tool in the
same session (tool order rotated between repeats), measures each load generator's own CPU
time and peak RSS with GNU time (wait4), and writes a Markdown report with medians over the repeats.
Only 127.0.0.1 is ever loaded; every run is bounded by its duration and a hard timeout.
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
SCRIPTS = os.path.join(BENCH, "scripts")
RESULTS = os.path.join(BENCH, "results")

# Targets from the issue.
TARGET_S1_CPU_US_PER_REQ = 20.0  # ≈ 0.25× k6 (issue 16; moonshot 15)
TARGET_S2_ITER_PCT = 98.0
TARGET_S3_CPU_RATIO = 0.5
TARGET_S2_RATIO = 0.5  # RSS per VU and CPU per iteration, each ≤ this × k6's (issue 16)
TARGET_S6_RSS_KIB = 40.0  # a VU that only sleeps (issue 16; k6 ~98 KiB)
TARGET_S7_ITER_RATIO = 1.0  # JS-heavy journey without think time: at least k6's iterations (all cores work)
TARGET_S8_RSS_RATIO = 0.5  # 20,000 sleeping VUs: peak RSS ≤ this × k6's (issue 16)

SLEEPY_THINK_S = 1.0  # sleep() per iteration in scripts/sleepy.js
JOURNEY_THINK_S = 0.5  # THINK_TIME_S passed to scripts/journey.js
ARRIVAL_RATE = 1000  # iterations per second in scripts/arrival.js
S7_VUS = 20  # the JS-heavy journey: fewer VUs than a worker holds, more than the cores
S8_THINK_S = 5.0  # THINK_TIME_S passed to scripts/sleepy.js in scenario 8
S8_SPREAD_S = 4.0  # scenario 8 spreads the first requests over this (< S8_THINK_S: same planned count)
SCENARIOS = ("s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8")


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# --------------------------------------------------------------------------------------------
# Tools


def rk6_binary():
    return os.path.abspath(os.environ.get("RK6_BIN") or os.path.join(REPO, "target", "release", "rk6"))


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def find_k6():
    """The real k6 binary: measuring through a pyenv shim would add bash/python to the CPU time."""
    cand = shutil.which("k6")
    if cand and is_elf(os.path.realpath(cand)):
        return os.path.realpath(cand)
    if shutil.which("pyenv"):
        try:
            p = subprocess.run(["pyenv", "which", "k6"], capture_output=True, text=True, timeout=30)
            path = p.stdout.strip()
            if p.returncode == 0 and is_elf(path):
                return path
        except (OSError, subprocess.SubprocessError):
            pass
    import sysconfig

    path = os.path.join(sysconfig.get_path("scripts"), "k6")
    if is_elf(path):
        return path
    return cand  # last resort; CPU then includes the wrapper


# --------------------------------------------------------------------------------------------
# nginx target


class Nginx:
    def __init__(self, port):
        self.port = port
        self.dir = tempfile.mkdtemp(prefix="rk6-bench-nginx.")
        os.chmod(self.dir, 0o755)
        self.proc = None

    def start(self):
        with open(os.path.join(BENCH, "target", "nginx.conf.in")) as f:
            conf = f.read()
        conf = (
            conf.replace("@ROOT@", self.dir)
            .replace("@PORT@", str(self.port))
            .replace("@DOCROOT@", os.path.join(BENCH, "target", "docroot"))
        )
        conf_path = os.path.join(self.dir, "nginx.conf")
        with open(conf_path, "w") as f:
            f.write(conf)
        if port_open(self.port):
            sys.exit(f"port {self.port} on 127.0.0.1 is already in use; pass --port")
        self.out = open(os.path.join(self.dir, "nginx.out"), "w")
        self.proc = subprocess.Popen(
            ["nginx", "-p", self.dir, "-c", conf_path, "-g", "daemon off;"],
            stdout=self.out, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=1) as r:
                    if r.status == 200 and len(r.read()) > 900:
                        log(f"nginx target up on 127.0.0.1:{self.port} (config in {self.dir})")
                        return
            except OSError:
                time.sleep(0.1)
        self.stop()
        with open(os.path.join(self.dir, "nginx.out")) as f:
            sys.exit("nginx did not start:\n" + f.read())

    def worker_cpu(self):
        """user+sys seconds of the nginx worker(s) so far (to show the target was not the limit)."""
        total = 0.0
        tck = os.sysconf("SC_CLK_TCK")
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if self.proc and int(fields[1]) == self.proc.pid:  # ppid == master
                total += (int(fields[11]) + int(fields[12])) / tck
        return total

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful stop of master + worker
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def port_open(port):
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


# --------------------------------------------------------------------------------------------
# One measured run


TIME = "/usr/bin/time"


def measured_run(cmd, env, timeout, logfile):
    """Run cmd under GNU time and return dict(rc, wall, user, sys, cpu, maxrss_kb, timed_out).

    GNU time wait4()s for the load generator and reports its own rusage (user+sys CPU and peak
    RSS, children it waited for included). It is a small C program, so unlike a fork of this
    Python process it does not inflate ru_maxrss (which survives exec) with its own memory."""
    timefile = logfile + ".time"
    with open(logfile, "w") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        t0 = time.monotonic()
        p = subprocess.Popen([TIME, "-f", "%e %U %S %M %x", "-o", timefile, *cmd], env=env, stdout=out,
                             stderr=subprocess.STDOUT, cwd=SCRIPTS, start_new_session=True)
        timed_out = False
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        wall = time.monotonic() - t0
    r = {"rc": p.returncode, "wall": wall, "user": None, "sys": None, "cpu": None, "maxrss_kb": None,
         "timed_out": timed_out}
    try:
        with open(timefile) as f:
            last = f.read().strip().splitlines()[-1].split()
        _e, user, sys_, maxrss, rc = last
        r.update(user=float(user), sys=float(sys_), cpu=float(user) + float(sys_), maxrss_kb=int(maxrss),
                 rc=int(rc))
    except (OSError, ValueError, IndexError):
        r["timed_out"] = True if timed_out else r["timed_out"]
    return r


def parse_summary(path):
    with open(path) as f:
        m = json.load(f)["metrics"]
    d = m.get("http_req_duration", {})
    failed = m.get("http_req_failed", {})
    checks = m.get("checks", {})
    return {
        "requests": int(m.get("http_reqs", {}).get("count", 0)),
        "iterations": int(m.get("iterations", {}).get("count", 0)),
        "p50_ms": d.get("med"),
        "p95_ms": d.get("p(95)"),
        "failed_rate": failed.get("value"),
        "checks_rate": checks.get("value"),
    }


def parse_wrk(text):
    m = re.search(r"BENCH requests=(\d+) duration_us=(\d+) errors=(\d+) p50_us=(\d+) p95_us=(\d+)", text)
    if not m:
        return None
    req, _dur, err, p50, p95 = (int(x) for x in m.groups())
    return {"requests": req, "iterations": None, "p50_ms": p50 / 1000, "p95_ms": p95 / 1000,
            "failed_rate": (err / req) if req else None, "checks_rate": None}


def parse_rk6_bench(path):
    with open(path) as f:
        d = json.load(f)
    lat = d.get("latency_ms", {})
    req = d.get("requests", 0)
    return {"requests": req, "iterations": None, "p50_ms": lat.get("p50"), "p95_ms": lat.get("p99"),
            "failed_rate": (d.get("errors_total", 0) / req) if req else None, "checks_rate": None}


class Runner:
    def __init__(self, args, base_url, nginx):
        self.args = args
        self.base_url = base_url
        self.nginx = nginx
        self.rk6 = rk6_binary()
        self.k6 = find_k6()
        self.wrk = shutil.which("wrk")
        self.logdir = tempfile.mkdtemp(prefix="rk6-bench-logs.")
        self.n = 0
        log(f"rk6: {self.rk6}\n         k6: {self.k6}\n         wrk: {self.wrk}\n         logs: {self.logdir}")

    def run(self, tool, script, vus, duration, timeout, extra_env=None):
        self.n += 1
        tag = f"{self.n:03d}-{tool}-{os.path.splitext(script)[0]}-{vus if vus is not None else 'scenario'}vu"
        logfile = os.path.join(self.logdir, tag + ".log")
        summary = os.path.join(self.logdir, tag + ".json")
        env = dict(os.environ)
        env["K6_NO_USAGE_REPORT"] = "true"
        envs = {"BASE_URL": self.base_url, **(extra_env or {})}
        eflags = [x for k, v in envs.items() for x in ("-e", f"{k}={v}")]
        # vus=None: the script's own options.scenarios decide the load (arrival-rate).
        load = ["-u", str(vus), "-d", f"{duration}s"] if vus is not None else []
        if tool == "rk6":
            cmd = [self.rk6, "run", "-q", "--summary-export", summary, *load, *eflags,
                   os.path.join(SCRIPTS, script)]
        elif tool == "k6":
            cmd = [self.k6, "run", "-q", "--address", "127.0.0.1:0", "--summary-export", summary,
                   *load, *eflags, os.path.join(SCRIPTS, script)]
        elif tool == "rk6bench":
            # One thread, like the wrk run it is compared with.
            cmd = [self.rk6, "bench", "-t", "1", "-c", str(vus), "-d", f"{duration}s", "--json", summary,
                   f"{self.base_url}/"]
        elif tool == "wrk":
            # One wrk thread, one connection per VU: the closest wrk gets to "-u N, tight loop".
            cmd = [self.wrk, "-t1", f"-c{vus}", f"-d{duration}s", "--latency", "--timeout", "10s",
                   "-s", os.path.join(SCRIPTS, "wrk_report.lua"), f"{self.base_url}/"]
        else:
            raise ValueError(tool)
        ng0 = self.nginx.worker_cpu()
        r = measured_run(cmd, env, timeout, logfile)
        r["nginx_cpu"] = self.nginx.worker_cpu() - ng0
        r.update(tool=tool, script=script, vus=vus, duration=duration, log=logfile)
        parsed = None
        try:
            if tool == "wrk":
                with open(logfile) as f:
                    parsed = parse_wrk(f.read())
            elif tool == "rk6bench":
                parsed = parse_rk6_bench(summary)
            elif os.path.exists(summary):
                parsed = parse_summary(summary)
        except (OSError, ValueError, KeyError) as e:
            r["parse_error"] = str(e)
        r["ok"] = (parsed is not None and not r["timed_out"] and r["rc"] in (0, 99)
                   and r["cpu"] is not None)
        if parsed:
            r.update(parsed)
        if not r["ok"]:
            with open(logfile) as f:
                tail = f.read()[-1500:]
            log(f"  !! {tag} failed (rc={r['rc']}, timed_out={r['timed_out']}); log tail:\n{tail}")
        else:
            cpu_req = 1e6 * r["cpu"] / r["requests"] if r["requests"] else float("nan")
            log(f"  {tag}: {r['requests']} req, cpu {r['cpu']:.2f}s ({cpu_req:.1f} us/req), "
                f"rss {r['maxrss_kb'] / 1024:.1f} MiB, wall {r['wall']:.1f}s, nginx cpu {r['nginx_cpu']:.2f}s")
        time.sleep(self.args.pause)
        return r


# --------------------------------------------------------------------------------------------
# Plan, execution, report


def mem_available_kb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return 0


def median(xs):
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.median(xs) if xs else None


def execute(args, runner):
    D = args.duration
    BD = args.baseline_duration
    results = []  # list of dicts with 'scenario' key
    want = set(args.only)
    tools_s1 = ["rk6", "k6"] + (["wrk"] if runner.wrk else [])
    # Scenario 5 (scriptless): rk6 bench against wrk, same connections and duration.
    tools_s5 = ["rk6bench"] + (["wrk"] if runner.wrk else [])
    for rep in range(args.repeats):
        log(f"=== repeat {rep + 1}/{args.repeats} ===")

        def order(tools):
            k = rep % len(tools)
            return tools[k:] + tools[:k]

        # 1-VU baselines, one per script, for RSS per VU.
        needs = {"tight.js": "s1", "sleepy.js": "s2", "journey.js": "s3", "idle.js": "s6"}
        for script in [sc for sc, scen in needs.items() if scen in want]:
            for tool in order(["rk6", "k6"]):
                env = {"THINK_TIME_S": str(JOURNEY_THINK_S)} if script == "journey.js" else None
                r = runner.run(tool, script, 1, BD, BD + 60, env)
                results.append({**r, "scenario": f"baseline-{script}", "rep": rep})
        if runner.wrk and want & {"s1", "s5"}:
            r = runner.run("wrk", "tight.js", 1, BD, BD + 30)
            results.append({**r, "scenario": "baseline-tight.js", "rep": rep})

        # Scenario 1: tight loop, 10 VUs (wrk's run is also scenario 5's reference).
        for tool in order(tools_s1) if want & {"s1", "s5"} else []:
            r = runner.run(tool, "tight.js", 10, D, D + 60)
            results.append({**r, "scenario": "s1", "rep": rep})

        # Scenario 5: scriptless, 10 connections (wrk's figures come from scenario 1).
        for tool in [t for t in order(tools_s5) if t == "rk6bench"] if "s5" in want else []:
            r = runner.run(tool, "tight.js", 10, D, D + 60)
            results.append({**r, "scenario": "s5", "rep": rep})

        # Scenario 2: 1000 (and 5000) VUs with sleep(1).
        for vus in args.vus2 if "s2" in want else []:
            for tool in order(["rk6", "k6"]):
                prev = [x for x in results if x["scenario"] == "s2" and x["tool"] == tool
                        and x["rep"] == rep and x["ok"] and x["vus"] < vus]
                if prev:  # memory / time guard for the big run, from the smaller one
                    p = prev[-1]
                    base = [x for x in results if x["scenario"] == "baseline-sleepy.js" and x["tool"] == tool
                            and x["rep"] == rep and x["ok"]]
                    b = base[-1]["maxrss_kb"] if base else 0
                    est = b + (p["maxrss_kb"] - b) * vus / p["vus"]
                    if est > 0.6 * mem_available_kb():
                        log(f"  skip {tool} {vus} VUs: estimated {est / 1048576:.1f} GiB RSS")
                        results.append({"tool": tool, "scenario": "s2", "vus": vus, "rep": rep, "ok": False,
                                        "skipped": f"estimated {est / 1048576:.1f} GiB RSS"})
                        continue
                r = runner.run(tool, "sleepy.js", vus, D, D + 60 + vus * 0.05)
                results.append({**r, "scenario": "s2", "rep": rep})

        # Scenario 6: VUs that only sleep (no request), at the first scenario-2 VU count.
        for tool in order(["rk6", "k6"]) if "s6" in want else []:
            r = runner.run(tool, "idle.js", args.vus2[0], D, D + 60 + args.vus2[0] * 0.05)
            results.append({**r, "scenario": "s6", "rep": rep})

        # Scenario 4: open model, constant-arrival-rate from the script's options.
        for tool in order(["rk6", "k6"]) if "s4" in want else []:
            r = runner.run(tool, "arrival.js", None, D, D + 60,
                           {"RATE": str(ARRIVAL_RATE), "DURATION_S": str(D)})
            results.append({**r, "scenario": "s4", "rep": rep})

        # Scenario 3: the journey.
        for tool in order(["rk6", "k6"]) if "s3" in want else []:
            r = runner.run(tool, "journey.js", args.vus3, D, D + 90, {"THINK_TIME_S": str(JOURNEY_THINK_S)})
            results.append({**r, "scenario": "s3", "rep": rep})

        # Scenario 7: the same journey without think time, fewer VUs than a worker holds: how
        # many iterations the JavaScript allows when every core has to work.
        for tool in order(["rk6", "k6"]) if "s7" in want else []:
            r = runner.run(tool, "journey.js", S7_VUS, D, D + 90, {"THINK_TIME_S": "0"})
            results.append({**r, "scenario": "s7", "rep": rep})

        # Scenario 8: 20,000 VUs with sleep(5): the peak memory of a very large test.
        for tool in order(["rk6", "k6"]) if "s8" in want else []:
            r = runner.run(tool, "sleepy.js", args.vus8, args.duration8, args.duration8 + 120 + args.vus8 * 0.02,
                           {"THINK_TIME_S": str(S8_THINK_S), "START_SPREAD_S": str(S8_SPREAD_S),
                            "FRESH_CONNECTIONS": "true"})
            results.append({**r, "scenario": "s8", "rep": rep})
    return results


def planned_iterations(scenario, vus, duration):
    if scenario in ("s2", "s6"):
        return vus * math.ceil(duration / SLEEPY_THINK_S)
    if scenario == "s3":
        return vus * math.ceil(duration / JOURNEY_THINK_S)
    if scenario == "s8":
        return vus * math.ceil(duration / S8_THINK_S)
    if scenario == "s4":
        return ARRIVAL_RATE * duration + 1  # k6 also starts an iteration at the very end
    return None


def aggregate(results, tool, scenario, vus, baseline_script):
    runs = [r for r in results if r["tool"] == tool and r["scenario"] == scenario and r.get("vus") == vus]
    ok = [r for r in runs if r["ok"]]
    if not ok:
        why = next((r.get("skipped") for r in runs if r.get("skipped")), None)
        if why:
            return {"status": f"skipped ({why})"}
        return {"status": "FAILED" if runs else "not run", "runs": len(runs)}
    base = {r["rep"]: r["maxrss_kb"] for r in results
            if r["tool"] == tool and r["scenario"] == f"baseline-{baseline_script}" and r["ok"]}
    per_run = []
    for r in ok:
        cpu_req = 1e6 * r["cpu"] / r["requests"] if r["requests"] else None
        iters = r.get("iterations")
        cpu_iter = 1e6 * r["cpu"] / iters if iters else None
        b = base.get(r["rep"])
        rss_vu = (r["maxrss_kb"] - b) / vus if b is not None and vus else None
        per_run.append({"cpu": r["cpu"], "cpu_req": cpu_req, "cpu_iter": cpu_iter, "rss_vu_kb": rss_vu,
                        "requests": r["requests"], "iterations": iters, "maxrss_kb": r["maxrss_kb"],
                        "p50": r.get("p50_ms"), "p95": r.get("p95_ms"), "failed": r.get("failed_rate"),
                        "nginx_cpu": r.get("nginx_cpu"), "wall": r["wall"], "duration": r["duration"]})
    agg = {k: median([p[k] for p in per_run]) for k in per_run[0]}
    per_req = [p["cpu_req"] for p in per_run if p["cpu_req"] is not None]  # none for idle VUs
    agg["cpu_req_min"] = min(per_req, default=None)
    agg["cpu_req_max"] = max(per_req, default=None)
    agg["runs"] = len(ok)
    agg["failed_runs"] = len(runs) - len(ok)
    agg["planned"] = planned_iterations(scenario, vus, ok[0]["duration"])
    agg["status"] = "ok"
    return agg


def fmt(x, nd=1, unit=""):
    if x is None:
        return "–"
    return f"{x:,.{nd}f}{unit}"


def build_report(args, results, meta):
    D = args.duration
    rows = []  # (scenario label, tool, agg)
    aggs = {}
    s1_tools = ["rk6", "k6", "wrk"]
    for tool in s1_tools:
        aggs[("s1", tool, 10)] = aggregate(results, tool, "s1", 10, "tight.js")
    for vus in args.vus2:
        for tool in ("rk6", "k6"):
            aggs[("s2", tool, vus)] = aggregate(results, tool, "s2", vus, "sleepy.js")
    for tool in ("rk6", "k6"):
        aggs[("s3", tool, args.vus3)] = aggregate(results, tool, "s3", args.vus3, "journey.js")
        aggs[("s4", tool, None)] = aggregate(results, tool, "s4", None, "arrival.js")
        aggs[("s6", tool, args.vus2[0])] = aggregate(results, tool, "s6", args.vus2[0], "idle.js")
        aggs[("s7", tool, S7_VUS)] = aggregate(results, tool, "s7", S7_VUS, "journey.js")
        aggs[("s8", tool, args.vus8)] = aggregate(results, tool, "s8", args.vus8, "sleepy.js")

    head = ("| Scenario | Tool | Requests | Iterations achieved / planned | CPU s (user+sys) | "
            "CPU µs / request (min–max) | CPU µs / iteration | Wall s | Peak RSS MiB | RSS / VU KiB | "
            "p50 ms | p95 ms | Failed req |")
    sep = "|" + "---|" * 13
    lines = [head, sep]

    def row(label, tool, a, note=None):
        if a is None or a.get("status") != "ok":
            status = note or (a or {}).get("status", "not run")
            lines.append(f"| {label} | {tool} | {status} |" + " |" * 10)
            return
        if a["planned"]:
            it = f"{a['iterations']:,.0f} / {a['planned']:,} ({100 * a['iterations'] / a['planned']:.1f}%)"
        elif a["iterations"] is not None:
            it = f"{a['iterations']:,.0f} / n/a (closed loop)"
        else:
            it = "n/a"
        cpu_iter = fmt(a["cpu_iter"], 1) if a["iterations"] else "–"
        failed = "–" if a["failed"] is None else f"{100 * a['failed']:.2f}%"
        rng = "–" if a["cpu_req"] is None else f"{a['cpu_req']:.1f} ({a['cpu_req_min']:.1f}–{a['cpu_req_max']:.1f})"
        rss_vu = a["rss_vu_kb"]
        rss_vu = "≈0" if rss_vu is not None and rss_vu < 1 else fmt(rss_vu, 1)
        lines.append(
            f"| {label} | {tool} | {a['requests']:,.0f} | {it} | {a['cpu']:.2f} | {rng} | {cpu_iter} | "
            f"{a['wall']:.1f} | {a['maxrss_kb'] / 1024:.1f} | {rss_vu} | {fmt(a['p50'], 3)} | {fmt(a['p95'], 3)} | "
            f"{failed} |")

    s1 = f"1. tight loop, 10 VUs, {D} s"
    for tool in s1_tools:
        row(s1, tool, aggs[("s1", tool, 10)])
    for vus in args.vus2:
        for tool in ("rk6", "k6"):
            row(f"2. sleep(1), {vus} VUs, {D} s", tool, aggs[("s2", tool, vus)])
    for tool in ("rk6", "k6"):
        row(f"3. journey, {args.vus3} VUs, {D} s", tool, aggs[("s3", tool, args.vus3)])
    for tool in ("rk6", "k6"):
        row(f"4. constant-arrival-rate {ARRIVAL_RATE}/s, maxVUs 200, {D} s", tool, aggs[("s4", tool, None)])
    for tool in ("rk6", "k6"):
        row(f"6. only sleep(1), {args.vus2[0]} VUs, {D} s", tool, aggs[("s6", tool, args.vus2[0])])
    for tool in ("rk6", "k6"):
        row(f"7. journey without think time, {S7_VUS} VUs, {D} s", tool, aggs[("s7", tool, S7_VUS)])
    for tool in ("rk6", "k6"):
        row(f"8. sleep({S8_THINK_S:g}), {args.vus8:,} VUs, {args.duration8} s", tool, aggs[("s8", tool, args.vus8)])
    w = aggs[("s1", "wrk", 10)]
    aggs[("s5", "rk6bench", 10)] = aggregate(results, "rk6bench", "s5", 10, "none")
    row(f"5. scriptless `rk6 bench -t1 -c10` (p95 column: p99), {D} s", "rk6 bench", aggs[("s5", "rk6bench", 10)])
    row(f"5. scriptless, 10 conns, {D} s", "wrk (= row 1)", w)

    # Ratios
    def ratio(a, b, key):
        if a.get("status") != "ok" or b.get("status") != "ok" or not a.get(key) or not b.get(key):
            return None
        return a[key] / b[key]

    s5 = aggs[("s5", "rk6bench", 10)]
    rl = ["| Scenario | rk6 / k6 CPU per request | rk6 / k6 CPU per iteration | rk6 / k6 RSS per VU | "
          "rk6 / k6 p95 | rk6 / wrk CPU per request |", "|---|---|---|---|---|---|"]

    def rfmt(x):
        return "–" if x is None else f"{x:.2f}×"

    a, b = aggs[("s1", "rk6", 10)], aggs[("s1", "k6", 10)]
    rl.append(f"| 1 | {rfmt(ratio(a, b, 'cpu_req'))} | {rfmt(ratio(a, b, 'cpu_iter'))} | "
              f"{rfmt(ratio(a, b, 'rss_vu_kb'))} | {rfmt(ratio(a, b, 'p95'))} | {rfmt(ratio(a, w, 'cpu_req'))} |")
    for vus in args.vus2:
        a, b = aggs[("s2", "rk6", vus)], aggs[("s2", "k6", vus)]
        rl.append(f"| 2 ({vus} VUs) | {rfmt(ratio(a, b, 'cpu_req'))} | {rfmt(ratio(a, b, 'cpu_iter'))} | "
                  f"{rfmt(ratio(a, b, 'rss_vu_kb'))} | {rfmt(ratio(a, b, 'p95'))} | – |")
    a, b = aggs[("s3", "rk6", args.vus3)], aggs[("s3", "k6", args.vus3)]
    rl.append(f"| 3 | {rfmt(ratio(a, b, 'cpu_req'))} | {rfmt(ratio(a, b, 'cpu_iter'))} | "
              f"{rfmt(ratio(a, b, 'rss_vu_kb'))} | {rfmt(ratio(a, b, 'p95'))} | – |")
    a, b = aggs[("s4", "rk6", None)], aggs[("s4", "k6", None)]
    rl.append(f"| 4 | {rfmt(ratio(a, b, 'cpu_req'))} | {rfmt(ratio(a, b, 'cpu_iter'))} | "
              f"– | {rfmt(ratio(a, b, 'p95'))} | – |")
    a, b = aggs[("s6", "rk6", args.vus2[0])], aggs[("s6", "k6", args.vus2[0])]
    rl.append(f"| 6 ({args.vus2[0]} idle VUs) | – | {rfmt(ratio(a, b, 'cpu_iter'))} | "
              f"{rfmt(ratio(a, b, 'rss_vu_kb'))} | – | – |")
    a, b = aggs[("s7", "rk6", S7_VUS)], aggs[("s7", "k6", S7_VUS)]
    rl.append(f"| 7 | {rfmt(ratio(a, b, 'cpu_req'))} | {rfmt(ratio(a, b, 'cpu_iter'))} | "
              f"– | {rfmt(ratio(a, b, 'p95'))} | – |")
    a, b = aggs[("s8", "rk6", args.vus8)], aggs[("s8", "k6", args.vus8)]
    rl.append(f"| 8 ({args.vus8:,} VUs) | {rfmt(ratio(a, b, 'cpu_req'))} | {rfmt(ratio(a, b, 'cpu_iter'))} | "
              f"{rfmt(ratio(a, b, 'rss_vu_kb'))} | {rfmt(ratio(a, b, 'p95'))} | – |")

    # Targets
    tl = ["| Target (from the issue) | Measured | Met? |", "|---|---|---|"]
    a, b = aggs[("s1", "rk6", 10)], aggs[("s1", "k6", 10)]
    if a.get("status") == "ok":
        v = a["cpu_req"]
        ok = v <= TARGET_S1_CPU_US_PER_REQ
        gap = "" if ok else f" — {v / TARGET_S1_CPU_US_PER_REQ:.1f}× the target, {v - TARGET_S1_CPU_US_PER_REQ:.1f} µs over"
        ref = f"k6 {fmt(b.get('cpu_req'))} µs, wrk {fmt(w.get('cpu_req'))} µs"
        tl.append(f"| S1: rk6 ≤ {TARGET_S1_CPU_US_PER_REQ:.0f} µs CPU / request (≈ 0.25× k6; k6 ~90–130, wrk ~8) | "
                  f"rk6 {v:.1f} µs ({ref}){gap} | {'yes' if ok else '**no**'} |")
    else:
        tl.append(f"| S1: rk6 ≤ {TARGET_S1_CPU_US_PER_REQ:.0f} µs CPU / request | rk6 {a.get('status')} | **no** |")
    for vus in args.vus2:
        a, b = aggs[("s2", "rk6", vus)], aggs[("s2", "k6", vus)]
        label = (f"| S2 ({vus} VUs): RSS / VU and CPU / iteration ≤ {TARGET_S2_RATIO}× k6's, "
                 f"≥ {TARGET_S2_ITER_PCT:.0f}% planned iterations | ")
        if a.get("status") != "ok":
            tl.append(label + f"rk6 {a.get('status')} | **no** |")
            continue
        pct = 100 * a["iterations"] / a["planned"]
        rss_r, cpu_r = ratio(a, b, "rss_vu_kb"), ratio(a, b, "cpu_iter")
        txt = (f"RSS/VU rk6 {fmt(a.get('rss_vu_kb'), 0)} KiB vs k6 {fmt(b.get('rss_vu_kb'), 0)} KiB ({rfmt(rss_r)}); "
               f"CPU/iteration {fmt(a.get('cpu_iter'), 0)} vs {fmt(b.get('cpu_iter'), 0)} µs ({rfmt(cpu_r)}); "
               f"iterations {pct:.1f}% of planned")
        ok = (rss_r is not None and rss_r <= TARGET_S2_RATIO and cpu_r is not None and cpu_r <= TARGET_S2_RATIO
              and pct >= TARGET_S2_ITER_PCT)
        tl.append(label + f"{txt} | {'yes' if ok else '**no**'} |")
    a, b = aggs[("s6", "rk6", args.vus2[0])], aggs[("s6", "k6", args.vus2[0])]
    if a.get("status") == "ok" and a.get("rss_vu_kb") is not None:
        v = a["rss_vu_kb"]
        tl.append(f"| S6: a VU that only sleeps ≤ {TARGET_S6_RSS_KIB:.0f} KiB | rk6 {v:.0f} KiB (k6 "
                  f"{fmt(b.get('rss_vu_kb'), 0)} KiB) | {'yes' if v <= TARGET_S6_RSS_KIB else '**no**'} |")
    else:
        tl.append(f"| S6: a VU that only sleeps ≤ {TARGET_S6_RSS_KIB:.0f} KiB | rk6 {a.get('status')} | **no** |")
    a, b = aggs[("s3", "rk6", args.vus3)], aggs[("s3", "k6", args.vus3)]
    if a.get("status") == "ok" and b.get("status") == "ok" and a.get("cpu_iter") and b.get("cpu_iter"):
        rr = a["cpu_iter"] / b["cpu_iter"]
        ok = rr <= TARGET_S3_CPU_RATIO
        gap = "" if ok else f" — needs {rr / TARGET_S3_CPU_RATIO:.1f}× less CPU to get there"
        tl.append(f"| S3: rk6 CPU / iteration ≤ ½ of k6's | rk6 {a['cpu_iter']:.0f} µs vs k6 {b['cpu_iter']:.0f} µs "
                  f"= {rr:.2f}×{gap} | {'yes' if ok else '**no**'} |")
    else:
        tl.append(f"| S3: rk6 CPU / iteration ≤ ½ of k6's | rk6 {a.get('status')}, k6 {b.get('status')} | **no** |")
    a, b = aggs[("s7", "rk6", S7_VUS)], aggs[("s7", "k6", S7_VUS)]
    label = f"| S7: the journey without think time at {S7_VUS} VUs completes at least k6's iterations (all cores work) | "
    if a.get("status") == "ok" and b.get("status") == "ok" and b.get("iterations"):
        rr = a["iterations"] / b["iterations"]
        tl.append(label + f"rk6 {a['iterations']:,.0f} vs k6 {b['iterations']:,.0f} = {rr:.2f}×; CPU / iteration "
                  f"{rfmt(ratio(a, b, 'cpu_iter'))} | {'yes' if rr >= TARGET_S7_ITER_RATIO else '**no**'} |")
    else:
        tl.append(label + f"rk6 {a.get('status')}, k6 {b.get('status')} | **no** |")
    a, b = aggs[("s8", "rk6", args.vus8)], aggs[("s8", "k6", args.vus8)]
    label = (f"| S8: {args.vus8:,} VUs with sleep({S8_THINK_S:g}): peak RSS ≤ {TARGET_S8_RSS_RATIO}× k6's, "
             f"≥ {TARGET_S2_ITER_PCT:.0f}% planned iterations | ")
    if a.get("status") == "ok" and b.get("status") == "ok":
        rr = a["maxrss_kb"] / b["maxrss_kb"]
        pct = 100 * a["iterations"] / a["planned"]
        kpct = 100 * b["iterations"] / b["planned"]
        ok = rr <= TARGET_S8_RSS_RATIO and pct >= TARGET_S2_ITER_PCT
        tl.append(label + f"peak RSS rk6 {a['maxrss_kb'] / 1024:,.0f} MiB vs k6 {b['maxrss_kb'] / 1024:,.0f} MiB "
                  f"= {rr:.3f}×; iterations {pct:.1f}% of planned (k6 {kpct:.1f}%) | {'yes' if ok else '**no**'} |")
    elif a.get("status") == "ok":
        pct = 100 * a["iterations"] / a["planned"]
        tl.append(label + f"rk6 {a['maxrss_kb'] / 1024:,.0f} MiB, {pct:.1f}% of planned iterations; "
                  f"k6 {b.get('status')} | **no** (no k6 figure) |")
    else:
        tl.append(label + f"rk6 {a.get('status')}, k6 {b.get('status')} | **no** |")
    if s5.get("status") == "ok" and w.get("status") == "ok":
        rr = s5["cpu_req"] / w["cpu_req"]
        tl.append(f"| S5: `rk6 bench` ≤ 1.2× wrk's CPU / request | rk6 bench {s5['cpu_req']:.1f} µs vs wrk "
                  f"{w['cpu_req']:.1f} µs = {rr:.2f}× | {'yes' if rr <= 1.2 else '**no**'} |")
    else:
        tl.append(f"| S5: `rk6 bench` ≤ 1.2× wrk's CPU / request | rk6 bench {s5.get('status')} | **no** |")

    # A target whose scenario was left out (--only) is neither met nor missed.
    tl = [line[: -len("| **no** |")] + "| not run |" if " not run" in line and line.endswith("| **no** |") else line
          for line in tl]

    failed_runs = [r for r in results if not r.get("ok") and not r.get("skipped")]
    out = []
    out.append(f"Run {meta['date']} on {meta['machine']}; rk6 commit `{meta['commit']}`{meta['dirty']}; "
               f"k6 {meta['k6']}, {meta['wrk']}, nginx {meta['nginx']}. {args.repeats} repeat(s), medians; "
               f"`{meta['cmdline']}`, {meta['elapsed_min']} min; 1-min load average {meta['load_start']} at the start, "
               f"{meta['load_end']} at the end (other work shares the machine).")
    out.append("")
    out += lines
    out.append("")
    out.append("Ratios (medians; below 1.00× means rk6 uses less):")
    out.append("")
    out += rl
    out.append("")
    out += tl
    out.append("")
    if failed_runs:
        out.append(f"{len(failed_runs)} run(s) failed or timed out: " + ", ".join(
            f"{r['tool']} {r['scenario']} {r.get('vus')} VUs (rc={r.get('rc')}, timeout={r.get('timed_out')})"
            for r in failed_runs) + ".")
        out.append("")
    return "\n".join(out), aggs


def git(*a):
    try:
        return subprocess.run(["git", "-C", REPO, *a], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def version(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return (p.stdout + p.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "?"


def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) / 1048576
    return f"{os.cpu_count()} CPUs ({model}), {mem:.0f} GiB RAM, {platform.system()} {platform.release()}"


def update_readme(report, section="results"):
    """Replaces the text between bench/README.md's `<!-- SECTION:start/end -->` markers."""
    path = os.path.join(BENCH, "README.md")
    with open(path) as f:
        text = f.read()
    start, end = f"<!-- {section}:start -->", f"<!-- {section}:end -->"
    if start not in text or end not in text:
        log(f"bench/README.md has no {section} markers; not updated")
        return
    pre, rest = text.split(start, 1)
    _, post = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(pre + start + "\n" + report + "\n" + end + post)
    log(f"bench/README.md {section} section updated")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke run: 3 s durations, 1 repeat, 1000 VUs only")
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--duration", type=int, help="seconds per scenario run (default 10, quick 3)")
    ap.add_argument("--baseline-duration", type=int, help="seconds per 1-VU baseline run (default 3)")
    ap.add_argument("--vus2", type=str, help="comma-separated VU counts for scenario 2 (default 1000,5000)")
    ap.add_argument("--vus3", type=int, default=50, help="VUs for the journey (default 50)")
    ap.add_argument("--vus8", type=int, default=20000, help="VUs for scenario 8 (default 20000)")
    ap.add_argument("--duration8", type=int, help="seconds of scenario 8 (default 20, quick 10)")
    ap.add_argument("--only", type=str,
                    help=f"comma-separated scenarios to run, of {','.join(SCENARIOS)} "
                         "(default all; --quick leaves out s8)")
    ap.add_argument("--port", type=int, default=18090)
    ap.add_argument("--pause", type=float, default=1.0, help="seconds between runs")
    ap.add_argument("--out", help="report file (default results/latest.md, quick: results/quick.md)")
    ap.add_argument("--no-readme", action="store_true", help="do not update bench/README.md")
    ap.add_argument("--serve", type=int, metavar="SECONDS",
                    help="only start the nginx target for SECONDS (or until SIGTERM), for profiling")
    args = ap.parse_args()
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.duration = args.duration or (3 if args.quick else 10)
    args.baseline_duration = args.baseline_duration or (2 if args.quick else 3)
    args.duration8 = args.duration8 or (10 if args.quick else 20)
    args.only = args.only.split(",") if args.only else [x for x in SCENARIOS if not (args.quick and x == "s8")]
    if set(args.only) - set(SCENARIOS):
        ap.error(f"--only: unknown scenario(s) {','.join(sorted(set(args.only) - set(SCENARIOS)))}")
    args.vus2 = [int(v) for v in (args.vus2 or ("1000" if args.quick else "1000,5000")).split(",")]
    out = args.out or os.path.join(RESULTS, "quick.md" if args.quick else "latest.md")

    # Many VUs need many sockets.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(soft, min(hard, 65536)) if hard != resource.RLIM_INFINITY else 65536
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    most = max(args.vus2)  # scenario 8 opens a connection per iteration and holds few at once
    if want < most + 1000:
        log(f"warning: open-file limit {want} is low for {most} VUs")

    meta = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M %Z").strip(),
        "machine": machine(),
        "commit": git("rev-parse", "--short", "HEAD") or "?",
        "dirty": " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no",
                                                       "--", ":!bench") else "",
        "k6": version([find_k6() or "k6", "version"]).split(" (")[0].replace("k6 ", ""),
        "wrk": version(["wrk", "--version"]).split(" [")[0],
        "nginx": version(["nginx", "-v"]).split("/")[-1],
        "cmdline": " ".join(["bench/run.sh", *sys.argv[1:]]),
    }
    if os.environ.get("RK6_BIN"):
        # The working tree does not matter then; RK6_BIN_DESC says where the binary came from.
        desc = os.environ.get("RK6_BIN_DESC", "")
        meta["dirty"] = f" (binary `{os.environ['RK6_BIN']}`{', ' + desc if desc else ''})"
    if os.environ.get("RK6_BUILD_FAILED"):
        built = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(rk6_binary())))
        meta["dirty"] += f" (WARNING: the working tree did not build; binary from {built})"
    if args.serve:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        nginx = Nginx(args.port)
        nginx.start()
        try:
            time.sleep(args.serve)
        finally:
            nginx.stop()
        return
    meta["load_start"] = open("/proc/loadavg").read().split()[0]
    nginx = Nginx(args.port)
    nginx.start()
    t0 = time.time()
    try:
        runner = Runner(args, f"http://127.0.0.1:{args.port}", nginx)
        results = execute(args, runner)
    finally:
        nginx.stop()
    log(f"all runs done in {time.time() - t0:.0f}s")
    meta["load_end"] = open("/proc/loadavg").read().split()[0]
    meta["elapsed_min"] = f"{(time.time() - t0) / 60:.0f}"
    os.makedirs(RESULTS, exist_ok=True)
    raw = os.path.splitext(out)[0] + ".json"
    with open(raw, "w") as f:  # the runs first: a report that fails to build loses none of them
        json.dump({"meta": meta, "args": vars(args), "runs": results}, f, indent=1, default=str)
    report, aggs = build_report(args, results, meta)
    with open(out, "w") as f:
        f.write(f"# rk6 benchmark results\n\n{report}")
    with open(raw, "w") as f:
        json.dump({"meta": meta, "args": vars(args), "runs": results,
                   "medians": {f"{k[0]}/{k[1]}/{k[2]}": v for k, v in aggs.items()}}, f, indent=1, default=str)
    print("\n" + report)
    log(f"wrote {out} and {raw}; per-run logs in {runner.logdir}")
    if not args.quick and not args.no_readme and not args.out:
        update_readme(report)


if __name__ == "__main__":
    main()
