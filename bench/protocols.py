#!/usr/bin/env python3
"""rk6 vs k6 on WebSockets and gRPC. Start it through `bench/run.sh --protocols`.

Starts the echo servers of bench/echo (`rk6-bench-echo ws|grpc`) on 127.0.0.1, runs each
protocol scenario with rk6 and k6 in the same session (tool order rotated between repeats),
measures each load generator's CPU time and peak RSS with GNU time, and writes
results/protocols.md (medians over the repeats, rk6/k6 ratios) and the protocols section of
bench/README.md. Only 127.0.0.1 is ever loaded; every run is bounded by a hard timeout.
"""

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner as common  # noqa: E402  (the nginx harness: measured runs, tool lookup, helpers)

BENCH = common.BENCH
SCRIPTS = common.SCRIPTS
RESULTS = common.RESULTS


def echo_binary():
    return os.path.abspath(os.environ.get("ECHO_BIN") or os.path.join(common.REPO, "target", "release",
                                                                        "rk6-bench-echo"))


class Echo:
    """One `rk6-bench-echo MODE PORT` process for the whole session."""

    def __init__(self, mode, port):
        self.mode, self.port = mode, port
        self.proc = None

    def start(self):
        if common.port_open(self.port):
            sys.exit(f"port {self.port} on 127.0.0.1 is already in use; pass another --port")
        self.proc = subprocess.Popen([echo_binary(), self.mode, str(self.port)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"rk6-bench-echo {self.mode} exited at start (rc {self.proc.returncode})")
            if common.port_open(self.port):
                return
            time.sleep(0.05)
        self.stop()
        sys.exit(f"rk6-bench-echo {self.mode} did not listen on {self.port}")

    def cpu(self):
        """user+sys seconds the server has used so far (to show it was not the limit)."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# Scenario: (key, label, script, server, vus or None (the script's own scenario), counted
# metric, what one count is, env)
def scenarios(args):
    D, V = args.duration, args.ws_vus
    session = {"SESSION_S": str(D - 1)}
    return [
        ("ws", f"k6/ws: {V} VUs, each one socket open {D - 1} s, a message a second each way",
         "ws.js", "ws", None, "ws_msgs_received", "message received", {"VUS": str(V), **session}),
        ("websockets", f"k6/experimental/websockets: {V} VUs, the same sessions",
         "websockets.js", "ws", None, "ws_msgs_received", "message received", {"VUS": str(V), **session}),
        ("grpc", f"k6/net/grpc unary `invoke` in a tight loop, {args.grpc_vus} VUs, {D} s",
         "grpc.js", "grpc", args.grpc_vus, "iterations", "call", {}),
        ("grpc_stream", f"k6/net/grpc bidirectional stream, 100 messages per iteration, {args.grpc_vus} VUs, {D} s",
         "grpc_stream.js", "grpc", args.grpc_vus, "grpc_streams_msgs_received", "message received",
         {"MESSAGES": "100"}),
    ]


def counted(summary_path, metric):
    with open(summary_path) as f:
        m = json.load(f)["metrics"]
    checks = m.get("checks", {})
    return int(m.get(metric, {}).get("count", 0)), checks.get("value")


def run_one(args, logdir, n, tool, scen, servers, vus_override=None):
    key, _label, script, server, vus, metric, _unit, env = scen
    env = dict(env)
    if vus_override is not None:
        if vus is None:
            env["VUS"] = str(vus_override)
        else:
            vus = vus_override
    srv = servers[server]
    env["WS_URL"] = f"ws://127.0.0.1:{srv.port}/echo"
    env["GRPC_ADDR"] = f"127.0.0.1:{srv.port}"
    tag = f"{n:03d}-{tool}-{key}-{vus_override or vus or env.get('VUS')}vu"
    logfile = os.path.join(logdir, tag + ".log")
    summary = os.path.join(logdir, tag + ".json")
    eflags = [x for k, v in env.items() for x in ("-e", f"{k}={v}")]
    load = ["-u", str(vus), "-d", f"{args.duration}s"] if vus is not None else []
    if tool == "rk6":
        cmd = [common.rk6_binary(), "run", "-q", "--summary-export", summary, *load, *eflags,
               os.path.join(SCRIPTS, script)]
    else:
        cmd = [common.find_k6(), "run", "-q", "--address", "127.0.0.1:0", "--summary-export", summary, *load,
               *eflags, os.path.join(SCRIPTS, script)]
    penv = dict(os.environ, K6_NO_USAGE_REPORT="true")
    c0 = srv.cpu()
    r = common.measured_run(cmd, penv, args.duration + 90, logfile)
    r.update(tool=tool, scenario=key, vus=vus_override or vus or int(env["VUS"]), server_cpu=srv.cpu() - c0,
             log=logfile)
    try:
        r["count"], r["checks"] = counted(summary, metric)
    except (OSError, ValueError, KeyError) as e:
        r["count"], r["checks"] = None, None
        r["parse_error"] = str(e)
    r["ok"] = bool(r["count"]) and not r["timed_out"] and r["rc"] in (0, 99) and r["cpu"] is not None
    if r["ok"]:
        common.log(f"  {tag}: {r['count']} {metric}, cpu {r['cpu']:.2f}s, rss {r['maxrss_kb'] / 1024:.1f} MiB, "
                   f"wall {r['wall']:.1f}s, checks {r['checks']}, server cpu {r['server_cpu']:.2f}s")
    else:
        with open(logfile) as f:
            common.log(f"  !! {tag} failed (rc={r['rc']}, timed_out={r['timed_out']}):\n{f.read()[-1500:]}")
    time.sleep(args.pause)
    return r


def summarise(runs, baselines):
    ok = [r for r in runs if r["ok"]]
    if not ok:
        return None
    med = common.median
    a = {
        "runs": len(ok),
        "count": med([r["count"] for r in ok]),
        "cpu": med([r["cpu"] for r in ok]),
        "wall": med([r["wall"] for r in ok]),
        "rss_kb": med([r["maxrss_kb"] for r in ok]),
        "checks": med([r["checks"] for r in ok if r["checks"] is not None]),
        "server_cpu": med([r["server_cpu"] for r in ok]),
        "vus": ok[0]["vus"],
    }
    a["cpu_per_unit_us"] = med([1e6 * r["cpu"] / r["count"] for r in ok])
    a["units_per_cpu_s"] = med([r["count"] / r["cpu"] for r in ok if r["cpu"]])
    base = med([b["maxrss_kb"] for b in baselines if b["ok"]])
    if base is not None and a["vus"] > 1:
        a["rss_per_vu_kb"] = med([(r["maxrss_kb"] - base) / (r["vus"] - 1) for r in ok])
    else:
        a["rss_per_vu_kb"] = None
    return a


def report(args, scens, results, meta):
    lines = [
        f"Run {meta['date']} on {meta['machine']}; rk6 {meta['commit']}{meta['dirty']}, k6 {meta['k6']}; "
        f"{args.repeats} repeats of {args.duration} s, medians; load average {meta['load_start']} → "
        f"{meta['load_end']}. Command: `{meta['cmdline']}`.",
        "",
        "| Scenario | Tool | Counted | CPU s | CPU µs per counted | Counted per CPU s | Peak RSS MiB | "
        "RSS per VU KiB | Checks | Server CPU s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    ratios = ["| Scenario | rk6 / k6 CPU per counted | rk6 / k6 RSS per VU | rk6 / k6 counted |",
              "|---|---|---|---|"]
    aggs = {}
    for scen in scens:
        key, label, _s, _srv, _v, metric, unit, _e = scen
        per = {}
        for tool in ("rk6", "k6"):
            runs = [r for r in results if r["scenario"] == key and r["tool"] == tool and not r.get("baseline")]
            base = [r for r in results if r["scenario"] == key and r["tool"] == tool and r.get("baseline")]
            a = summarise(runs, base)
            per[tool] = a
            aggs[f"{key}/{tool}"] = a
            if a is None:
                lines.append(f"| {label} | {tool} | failed |" + " |" * 7)
                continue
            rss_vu = "–" if a["rss_per_vu_kb"] is None else f"{a['rss_per_vu_kb']:.1f}"
            checks = "–" if a["checks"] is None else f"{100 * a['checks']:.1f}%"
            lines.append(
                f"| {label} | {tool} | {a['count']:,.0f} `{metric}` | {a['cpu']:.2f} | {a['cpu_per_unit_us']:.1f} | "
                f"{a['units_per_cpu_s']:,.0f} | {a['rss_kb'] / 1024:.1f} | {rss_vu} | {checks} | "
                f"{a['server_cpu']:.2f} |")
        r, k = per["rk6"], per["k6"]

        def q(key_):
            if not r or not k or not r.get(key_) or not k.get(key_):
                return "–"
            return f"{r[key_] / k[key_]:.2f}×"
        ratios.append(f"| {key} ({unit}) | {q('cpu_per_unit_us')} | {q('rss_per_vu_kb')} | {q('count')} |")
    text = "\n".join(lines) + "\n\nRatios (below 1 means rk6 costs less or did less):\n\n" + "\n".join(ratios)
    return text, aggs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke run: 4 s, 1 repeat, 200 socket VUs")
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--duration", type=int, help="seconds per run (default 10)")
    ap.add_argument("--ws-vus", type=int, help="VUs with an open socket (default 1000)")
    ap.add_argument("--grpc-vus", type=int, default=10)
    ap.add_argument("--only", help="comma-separated scenarios: ws,websockets,grpc,grpc_stream")
    ap.add_argument("--port", type=int, default=18190, help="ws echo port; grpc uses port+1")
    ap.add_argument("--pause", type=float, default=1.0)
    ap.add_argument("--no-readme", action="store_true")
    ap.add_argument("--out", help="results file name without extension (default protocols, or protocols-quick)")
    args = ap.parse_args()
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.duration = args.duration or (4 if args.quick else 10)
    args.ws_vus = args.ws_vus or (200 if args.quick else 1000)
    scens = scenarios(args)
    if args.only:
        keep = set(args.only.split(","))
        scens = [s for s in scens if s[0] in keep]

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 65536) if hard != resource.RLIM_INFINITY else 65536
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))

    meta = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "machine": common.machine(),
        "commit": common.git("rev-parse", "--short", "HEAD") or "?",
        "dirty": "",
        "k6": common.version([common.find_k6() or "k6", "version"]).split(" (")[0].replace("k6 ", ""),
        "cmdline": " ".join(["bench/run.sh --protocols", *sys.argv[1:]]),
        "load_start": open("/proc/loadavg").read().split()[0],
    }
    if os.environ.get("RK6_BIN"):
        meta["dirty"] = f" (binary `{os.environ['RK6_BIN']}`)"
    servers = {"ws": Echo("ws", args.port), "grpc": Echo("grpc", args.port + 1)}
    for s in servers.values():
        s.start()
    logdir = tempfile.mkdtemp(prefix="rk6-bench-protocols.")
    results, n = [], 0
    t0 = time.time()
    try:
        for rep in range(args.repeats):
            common.log(f"=== repeat {rep + 1}/{args.repeats} ===")
            tools = ["rk6", "k6"] if rep % 2 == 0 else ["k6", "rk6"]
            for scen in scens:
                for tool in tools:
                    if scen[4] is None:  # socket scenarios: a 1-VU baseline for RSS per VU
                        n += 1
                        b = run_one(args, logdir, n, tool, scen, servers, vus_override=1)
                        results.append({**b, "baseline": True, "rep": rep})
                    n += 1
                    results.append({**run_one(args, logdir, n, tool, scen, servers), "rep": rep})
    finally:
        for s in servers.values():
            s.stop()
    meta["load_end"] = open("/proc/loadavg").read().split()[0]
    common.log(f"all runs done in {time.time() - t0:.0f}s; logs in {logdir}")
    text, aggs = report(args, scens, results, meta)
    os.makedirs(RESULTS, exist_ok=True)
    out = os.path.join(RESULTS, (args.out or ("protocols-quick" if args.quick else "protocols")) + ".md")
    with open(out, "w") as f:
        f.write("# rk6 vs k6: WebSockets and gRPC\n\n" + text + "\n")
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump({"meta": meta, "args": vars(args), "runs": results, "medians": aggs}, f, indent=1, default=str)
    print("\n" + text)
    if not args.quick and not args.no_readme and not args.only:
        common.update_readme(text, section="protocols")


if __name__ == "__main__":
    main()
