#!/usr/bin/env python3
"""Section 3: k6's examples and the whole-script k6-docs (v1.1.x) snippets under k6 and rk6.

Every script is copied under WORK/scripts and rewritten so that nothing leaves 127.0.0.1:
  - https://jslib.k6.io/X in an import/require -> the local copy (mirror-file/X);
  - any other remote import/require -> the script is skipped (not run, not inspected);
  - every other http(s)://HOST / ws(s)://HOST URL -> the local dummy server.
Then `inspect` under both; `run` (1 VU, 1 iteration, or the script's own scenarios with a
timeout) only for scripts that use no non-HTTP network module and name no host left.
Writes OUT/scripts.json and OUT/scripts.md; prints the summary counts.
"""
import json
import os
import re
import shutil
import sys

import mirror
from common import (
    DUMMY_PORT, OUT, WORK, dummy_server, error_text, first_line, run_tool,
    save_cache, tool_version, write,
)

# Checkouts of github.com/grafana/k6 (its examples/) and github.com/grafana/k6-docs.
EXAMPLES = os.path.join(os.environ.get("K6_CHECKOUT", ""), "examples")
DOCS = os.path.join(os.environ.get("K6_DOCS_CHECKOUT", ""), "docs", "sources", "k6", os.environ.get("DOCS_VERSION", "v1.1.x"))
GEN = os.path.join(WORK, "scripts")
LOCAL = f"127.0.0.1:{DUMMY_PORT}"
RUN_TIMEOUT = int(os.environ.get("RUN_TIMEOUT", "30"))
DO_RUN = os.environ.get("SCRIPTS_RUN", "1") == "1"

IMPORT_SPEC = re.compile(r"""((?:\bfrom|\bimport|\brequire\s*\()\s*['"])(https?://[^'"]+)(['"])""")
URL = re.compile(r"""\b(https?|wss?)://([A-Za-z0-9.\-_]+|\[[0-9a-fA-F:]+\])(:\d+)?""")
# Modules that open non-HTTP connections (or a browser) that the rewrite cannot point locally.
NET_MODULES = re.compile(
    r"""['"](k6/ws|k6/net/grpc|k6/browser|k6/experimental/[\w/-]+|k6/x/[\w/-]+|k6/websockets)['"]"""
)
HOSTLIKE = re.compile(
    r"""['"`][^'"`\s]*?\b(?!127\.0\.0\.1)([a-z0-9-]+\.)+(com|io|org|net|dev|app|cloud|local|"""
    r"""internal|test|example|info|co|us|eu|de|amazonaws)\b(:\d+)?""",
    re.I,
)
# 127.0.0.1 blocks: 0/2 64/3 96/4 112/5 120/6 124/7 126/8 128/1 leave only 127.0.0.0/8.
BLOCK = [
    "--block-hostnames", "*",
    "--blacklist-ip", "0.0.0.0/2,64.0.0.0/3,96.0.0.0/4,112.0.0.0/5,120.0.0.0/6,124.0.0.0/7,126.0.0.0/8,128.0.0.0/1",
    "--address", "",
]


def rewrite(src):
    """(new source, notes) with remote imports mapped and every other URL made local."""
    notes = {"jslib": [], "unmapped_remote_import": [], "urls_rewritten": 0}

    def imp(m):
        url = m.group(2)
        if url.startswith("https://jslib.k6.io/"):
            notes["jslib"].append(url)
            return m.group(1) + mirror.FILE_MIRROR + "/" + url[len("https://jslib.k6.io/"):] + m.group(3)
        notes["unmapped_remote_import"].append(url)
        return m.group(0)

    src = IMPORT_SPEC.sub(imp, src)

    def url(m):
        scheme, host = m.group(1), m.group(2)
        if host in ("127.0.0.1", "localhost") and (m.group(3) or "") == f":{DUMMY_PORT}":
            return m.group(0)
        notes["urls_rewritten"] += 1
        return ("ws" if scheme.startswith("ws") else "http") + "://" + LOCAL

    # Only outside the mapped import specifiers (those are absolute paths now).
    src = URL.sub(url, src)
    return src, notes


def collect_examples():
    dst = os.path.join(GEN, "k6-examples")
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    shutil.copytree(EXAMPLES, dst, ignore=shutil.ignore_patterns("node_modules"))
    res = []
    for root, _, files in os.walk(dst):
        for f in sorted(files):
            if f.endswith((".js", ".ts")) and not f.endswith(".d.ts"):
                p = os.path.join(root, f)
                rel = os.path.relpath(p, dst)
                # only entry scripts: files that export default or options/scenario functions
                with open(p, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                if not re.search(r"export\s+default\b|export\s+(const|let|var)\s+options\b", text):
                    continue
                res.append({"id": "examples/" + rel, "path": p, "source": "k6/examples/" + rel,
                            "skip_marked": False})
    return res


FENCE = re.compile(r"^(\s*)```(\w+)?\s*$")
PARAM = re.compile(r"""\{\{<\s*param\s+"?([A-Za-z_]+)"?\s*>\}\}""")


def doc_params():
    """Hugo `cascade` params (JSLIB_*_VERSION, ...) from the docs' _index.md files."""
    params = {}
    for f in (os.path.join(os.path.dirname(DOCS), "_index.md"), os.path.join(DOCS, "_index.md")):
        if os.path.exists(f):
            with open(f, encoding="utf-8") as fh:
                for line in fh:
                    m = re.match(r"^\s+([A-Z][A-Z0-9_]+):\s*(\S+)\s*$", line)
                    if m:
                        params[m.group(1)] = m.group(2)
    return params


def collect_docs():
    dst = os.path.join(GEN, "docs")
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    res = []
    params = doc_params()
    for root, dirs, files in os.walk(DOCS):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".md"):
                continue
            p = os.path.join(root, f)
            with open(p, encoding="utf-8") as fh:
                lines = fh.read().split("\n")
            i = 0
            while i < len(lines):
                m = FENCE.match(lines[i])
                if m and m.group(2) == "javascript":
                    ind = len(m.group(1))
                    j, body = i + 1, []
                    while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
                        body.append(lines[j][ind:] if lines[j][:ind].strip() == "" else lines[j])
                        j += 1
                    code = PARAM.sub(lambda m: params.get(m.group(1), m.group(0)), "\n".join(body) + "\n")
                    prev = " ".join(l for l in lines[max(0, i - 4):i] if l.strip())
                    whole = re.search(r"export\s+default\b", code) or (
                        re.search(r"\bexec\s*:", code) and re.search(r"export\s+(async\s+)?function", code)
                    )
                    if whole:
                        rel = os.path.relpath(p, DOCS)
                        sid = f"docs/{rel[:-3]}#L{i + 1}"
                        out = os.path.join(dst, rel[:-3].replace("/", "__") + f"__L{i + 1}", "script.js")
                        write(out, code)
                        res.append({"id": sid, "path": out, "source": f"k6-docs/.../v1.1.x/{rel}:{i + 1}",
                                    "skip_marked": "md-k6:skip" in prev})
                    i = j + 1
                    continue
                i += 1
    return res


def prepare(s):
    with open(s["path"], encoding="utf-8", errors="replace") as fh:
        src = fh.read()
    new, notes = rewrite(src)
    s["notes"] = notes
    if new != src:
        with open(s["path"], "w", encoding="utf-8") as fh:
            fh.write(new)
    s["net_modules"] = sorted(set(NET_MODULES.findall(new)))
    # URLs already pointed at the dummy server may carry host-like paths; look past them.
    scan = re.sub(r"(https?|wss?)://" + re.escape(LOCAL) + r"[^\s'\"`]*", "", new)
    left = [m.group(0) for m in HOSTLIKE.finditer(scan)]
    s["hosts_left"] = sorted(set(left))[:5]
    return new


def env_args(src):
    """Dummy credentials for scripts that build an AWS config from __ENV in the init context."""
    if "AWS_" in src:
        return ["-e", "AWS_REGION=us-east-1", "-e", "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
                "-e", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"]
    return []


def inspect(tool, s):
    d = os.path.dirname(s["path"])
    src = open(s["path"], encoding="utf-8", errors="replace").read()
    res = run_tool(tool, ["inspect"] + env_args(src) + [os.path.basename(s["path"])], d,
                   env={"RK6_MODULE_CACHE": mirror.RK6_CACHE} if tool == "rk6" else None,
                   key_extra=open(s["path"], encoding="utf-8", errors="replace").read())
    out = None
    if res["rc"] == 0:
        try:
            out = json.loads(res["stdout"])
        except ValueError:
            out = res["stdout"]
    return {"rc": res["rc"], "ok": res["rc"] == 0, "options": out,
            "error": None if res["rc"] == 0 else error_text(res)}


def run(tool, s, src):
    d = os.path.dirname(s["path"])
    args = ["run", "-q"] + BLOCK + env_args(src)
    if re.search(r"export\s+default\b", src):
        args += ["--iterations", "1", "--vus", "1"]
    args.append(os.path.basename(s["path"]))
    res = run_tool(tool, args, d, timeout=RUN_TIMEOUT,
                   env={"RK6_MODULE_CACHE": mirror.RK6_CACHE} if tool == "rk6" else None,
                   key_extra=src)
    return {"rc": res["rc"], "timeout": res["timeout"], "secs": res["secs"],
            "error": None if res["rc"] == 0 else error_text(res)}


def diff_keys(a, b):
    if not isinstance(a, dict) or not isinstance(b, dict):
        return ["<output>"] if a != b else []
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


CAUSES = [
    ("exports/module is not defined (CommonJS file run as an ES module)", r"(exports|module) is not defined"),
    ("could not find export (CommonJS named/default exports)", r"could not find export"),
    ("parser: `export { ... }` last without `;` (abrupt end)", r"abrupt end"),
    ("parser: top-level return", r"unexpected token 'return'"),
    ("TLS cipher suite not supported (rustls)", r"cipher suite .* not supported"),
    ("k6 module not supported by rk6 yet", r"not supported by rk6 yet|unknown module"),
    ("removed/renamed module", r"has been removed|was removed|replaced by"),
    ("parser: `export default async () => ...` (Boa)", r"in async function declaration"),
    ("other SyntaxError", r"SyntaxError"),
    ("open(): file handling", r"open\(|no such file|couldn't be found"),
    ("TypeError (API missing or different)", r"TypeError"),
    ("ReferenceError", r"ReferenceError"),
    ("CLI --iterations/--vus over the script's stages/duration is rejected (k6 lets the CLI win)",
     r"multiple execution config shortcuts"),
    ("option / config validation", r"option|config|scenario|executor|threshold"),
    ("timeout", r"^TIMEOUT$"),
]


def cause_of(err):
    for name, rx in CAUSES:
        if re.search(rx, err or "", re.I | re.M):
            return name
    return "other"


def main():
    if not os.path.isdir(EXAMPLES) or not os.path.isdir(DOCS):
        sys.exit("set K6_CHECKOUT and K6_DOCS_CHECKOUT to checkouts of github.com/grafana/k6 and "
                 "github.com/grafana/k6-docs (and JSLIB_CHECKOUT) for the scripts part")
    if os.environ.get("SCRIPTS_RENDER_ONLY") == "1":  # re-render OUT/scripts.json only
        with open(os.path.join(OUT, "scripts.json")) as f:
            data = json.load(f)
        write(os.path.join(OUT, "scripts.md"), render(data["scripts"], data["versions"]))
        print(summary_line(data["scripts"]))
        return
    mirror.build()
    scripts = collect_examples() + collect_docs()
    only = os.environ.get("SCRIPTS_ONLY")
    if only:
        scripts = [s for s in scripts if re.search(only, s["id"])]
    grep = os.environ.get("SCRIPTS_GREP")  # regex on the script's source
    if grep:
        scripts = [s for s in scripts
                   if re.search(grep, open(s["path"], encoding="utf-8", errors="replace").read())]
        only = only or grep
    with dummy_server():
        for n, s in enumerate(scripts):
            src = prepare(s)
            if s["notes"]["unmapped_remote_import"]:
                s["status"] = "skipped: remote import not available locally"
                continue
            s["inspect"] = {t: inspect(t, s) for t in ("k6", "rk6")}
            ki, ri = s["inspect"]["k6"], s["inspect"]["rk6"]
            s["inspect_diff"] = diff_keys(ki["options"], ri["options"]) if ki["ok"] and ri["ok"] else []
            builds_hosts = [u for u in s["notes"]["jslib"] if re.search(r"/(aws|sm-screenshots)/", u)]
            runnable = (DO_RUN and ki["ok"] and not s["net_modules"] and not s["hosts_left"]
                        and not builds_hosts)
            if runnable:
                s["run"] = {t: run(t, s, src) for t in ("k6", "rk6")}
            else:
                s["run_skipped"] = ("k6 inspect fails" if not ki["ok"] else
                                    "jslib builds remote host names (aws)" if builds_hosts else
                                    "non-HTTP network module " + ",".join(s["net_modules"]) if s["net_modules"] else
                                    "host names left: " + ",".join(s["hosts_left"]) if s["hosts_left"] else
                                    "run disabled")
            s["status"] = status(s)
            print(f"[{n + 1}/{len(scripts)}] {s['id'][:70]:70s} {s['status']}", file=sys.stderr)
            if n % 20 == 0:
                save_cache()
    save_cache()
    meta = {"k6": tool_version("k6"), "rk6": tool_version("rk6")}
    prev = os.path.join(OUT, "scripts.json")
    if only and os.path.exists(prev):  # a filtered run updates its entries in the full report
        with open(prev) as f:
            old = json.load(f)["scripts"]
        new = {s["id"]: s for s in scripts}
        scripts = [new.pop(s["id"], s) for s in old] + list(new.values())
    with open(os.path.join(OUT, "scripts.json"), "w") as f:
        json.dump({"versions": meta, "scripts": scripts}, f, indent=1)
    write(os.path.join(OUT, "scripts.md"), render(scripts, meta))
    print(summary_line(scripts))


def status(s):
    ki, ri = s["inspect"]["k6"], s["inspect"]["rk6"]
    if ki["ok"] and not ri["ok"]:
        return "rk6 inspect fails"
    if not ki["ok"] and ri["ok"]:
        return "k6 inspect fails, rk6 passes"
    if not ki["ok"]:
        return "both inspect fail"
    if s["inspect_diff"]:
        return "inspect output differs"
    r = s.get("run")
    if r:
        k, x = r["k6"], r["rk6"]
        if k["rc"] == x["rc"]:
            return "same"
        if k["rc"] in (0, 99) and x["rc"] not in (0, 99):
            return "rk6 run fails"
        return f"run exit codes differ (k6 {k['rc']}, rk6 {x['rc']})"
    return "same (inspect only)"


def summary_line(scripts):
    done = [s for s in scripts if "inspect" in s]
    k6ok = [s for s in done if s["inspect"]["k6"]["ok"]]
    rk6_fail = [s for s in k6ok if not s["inspect"]["rk6"]["ok"]]
    runs = [s for s in done if "run" in s]
    run_fail = [s for s in runs if s["status"] == "rk6 run fails"]
    return (f"scripts: {len(scripts)} collected, {len(scripts) - len(done)} skipped (remote import); "
            f"inspect ok in k6: {len(k6ok)}, of which rk6 inspect fails: {len(rk6_fail)}, "
            f"inspect output differs: {sum(s['status'] == 'inspect output differs' for s in done)}; "
            f"run: {len(runs)} run, rk6 fails where k6 passes: {len(run_fail)}, "
            f"other exit-code differences: {sum(s['status'].startswith('run exit codes differ') for s in runs)}")


def _e(t, n=150):
    t = (t or "").replace(mirror.FILE_MIRROR, "<jslib>").replace(GEN, "<scripts>")
    return first_line(t, n).replace("|", "\\|")


def render(scripts, meta):
    done = [s for s in scripts if "inspect" in s]
    L = ["# k6 examples and k6-docs snippets under k6 1.1.0 and rk6\n",
         f"Generated by `tools/jslib-corpus/scripts.py` — k6: `{meta['k6']}`; rk6: `{meta['rk6']}`.\n",
         "Scripts: every `k6/examples/**/*.{js,ts}` that exports `default` or `options`, and every "
         "```javascript block of the k6-docs v1.1.x sources that is a whole script (has "
         "`export default`, or scenarios with `exec` and exported functions). Imports of "
         "`https://jslib.k6.io/...` point at the local copy; other remote imports are skipped; "
         "every other URL is rewritten to a dummy server on 127.0.0.1. `run` (1 VU, 1 iteration "
         "when there is a default function; `--block-hostnames '*'` and everything but 127/8 "
         "blacklisted) only for scripts that k6 can inspect, use no non-HTTP network module "
         "(ws, grpc, browser, experimental, extensions) and name no host after the rewrite.\n",
         "## Summary\n", "- " + summary_line(scripts).replace("; ", "\n- "), ""]
    skip_marked = [s for s in done if s["skip_marked"]]
    L.append(f"- docs snippets marked `md-k6:skip` by the docs (included above): {len(skip_marked)}")
    L.append(f"- scripts that needed the jslib mapping: {sum(bool(s['notes']['jslib']) for s in scripts)}; "
             f"with URLs rewritten to 127.0.0.1: {sum(bool(s['notes']['urls_rewritten']) for s in scripts)}")
    st = {}
    for s in scripts:
        st[s["status"]] = st.get(s["status"], 0) + 1
    L.append("\n| status | count |\n|---|---|")
    for k, v in sorted(st.items(), key=lambda kv: -kv[1]):
        L.append(f"| {k} | {v} |")
    L.append("")
    # rk6 fails where k6 does not: by cause
    fails = [s for s in done if s["status"] in ("rk6 inspect fails", "rk6 run fails")]
    groups = {}
    for s in fails:
        err = s["inspect"]["rk6"]["error"] if s["status"] == "rk6 inspect fails" else s["run"]["rk6"]["error"]
        groups.setdefault(cause_of(err), []).append((s, err))
    L.append(f"## Fail under rk6 but not k6: {len(fails)}, by cause\n")
    L.append("| cause | count | jslib-dependent | scripts (first 12) | first rk6 error |")
    L.append("|---|---|---|---|---|")
    for cause, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        ids = ", ".join(f"`{s['id']}`" for s, _ in items[:12]) + (" …" if len(items) > 12 else "")
        L.append(f"| {cause} | {len(items)} | {sum(bool(s['notes']['jslib']) for s, _ in items)} | {ids} | {_e(items[0][1])} |")
    L.append("")
    # by missing module specifically
    mods = {}
    for s, err in [(s, e) for items in groups.values() for s, e in items]:
        m = re.search(r"module (k6/[\w/-]+|k6)\b.*not supported", err or "")
        if m:
            mods[m.group(1)] = mods.get(m.group(1), 0) + 1
    if mods:
        L.append("Missing k6 modules: " + ", ".join(f"`{k}` {v}" for k, v in sorted(mods.items(), key=lambda kv: -kv[1])) + "\n")
    libs = {}
    for s in done:
        for url in set(s["notes"]["jslib"]):
            lib = "/".join(url[len("https://jslib.k6.io/"):].split("/")[:2])
            e = libs.setdefault(lib, {"scripts": 0, "k6_ok": 0, "rk6_fail": 0})
            e["scripts"] += 1
            if s["inspect"]["k6"]["ok"]:
                e["k6_ok"] += 1
                if s["status"] in ("rk6 inspect fails", "rk6 run fails"):
                    e["rk6_fail"] += 1
    if libs:
        L.append("## jslib libraries used by the scripts\n")
        L.append("| library/version | scripts | k6 inspect ok | of those, rk6 fails (any cause) |")
        L.append("|---|---|---|---|")
        for lib, e in sorted(libs.items(), key=lambda kv: -kv[1]["scripts"]):
            L.append(f"| {lib} | {e['scripts']} | {e['k6_ok']} | {e['rk6_fail']} |")
        L.append("")
    diffs = [s for s in done if s["status"] == "inspect output differs"]
    if diffs:
        keys = {}
        for s in diffs:
            for k in s["inspect_diff"]:
                keys[k] = keys.get(k, 0) + 1
        L.append(f"## `inspect` output differs (both succeed): {len(diffs)}\n")
        L.append("Differing top-level keys: " + ", ".join(f"`{k}` {v}" for k, v in sorted(keys.items(), key=lambda kv: -kv[1])) + "\n")
        L.append("| script | keys |\n|---|---|")
        for s in diffs[:40]:
            L.append(f"| `{s['id']}` | {', '.join(s['inspect_diff'])} |")
        L.append("")
    other = [s for s in done if s["status"].startswith("run exit codes differ") or s["status"] == "k6 inspect fails, rk6 passes"]
    if other:
        L.append(f"## Other differences: {len(other)}\n")
        L.append("| script | status | k6 error | rk6 error |\n|---|---|---|---|")
        for s in other:
            k = s.get("run", s["inspect"])["k6"] if "run" in s else s["inspect"]["k6"]
            r = s.get("run", s["inspect"])["rk6"] if "run" in s else s["inspect"]["rk6"]
            L.append(f"| `{s['id']}` | {s['status']} | {_e(k.get('error'), 100)} | {_e(r.get('error'), 100)} |")
        L.append("")
    bf = [s for s in done if s["status"] == "both inspect fail"]
    if bf:
        L.append(f"## Both fail `inspect` ({len(bf)}; not counted as rk6 failures)\n")
        c = {}
        for s in bf:
            c.setdefault(_e(s["inspect"]["k6"]["error"], 90), []).append(s["id"])
        L.append("| k6 error | count | example |\n|---|---|---|")
        for k, v in sorted(c.items(), key=lambda kv: -len(kv[1]))[:30]:
            L.append(f"| {k} | {len(v)} | `{v[0]}` |")
        L.append("")
    sk = [s for s in scripts if s["status"].startswith("skipped")]
    if sk:
        L.append(f"## Skipped ({len(sk)})\n")
        for s in sk:
            L.append(f"- `{s['id']}`: {s['status']} ({', '.join(s['notes']['unmapped_remote_import'])})")
        L.append("")
    rs = {}
    for s in done:
        if "run_skipped" in s:
            key = s["run_skipped"].split(":")[0].split(" k6/")[0]
            rs[key] = rs.get(key, 0) + 1
    L.append("## Not run (inspect only)\n")
    for k, v in sorted(rs.items(), key=lambda kv: -kv[1]):
        L.append(f"- {k}: {v}")
    L.append("")
    return "\n".join(L)


if __name__ == "__main__":
    main()
