#!/usr/bin/env python3
"""Section 1: every jslib.k6.io library/version imported both ways under k6 and rk6.

Writes OUT/jslib.json and OUT/jslib.md; prints the summary counts.
"""
import json
import os
import re
import sys

import mirror
from common import (
    JSLIB, OUT, WORK, REMOTE_BASE, error_text, need_jslib, first_line, https_server, markers,
    run_tool, save_cache, tool_version, write,
)

GEN = os.path.join(WORK, "jslib")
RK6_ENV = {"RK6_MODULE_CACHE": mirror.RK6_CACHE}
IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
K6_MOD = re.compile(r"""(?:from\s*|require\(\s*)["'](k6(?:/[\w/-]+)?)["']""")

PRELUDE = r"""
const T = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const types = (v) => {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return null;
  const o = {};
  for (const k of Object.keys(v).sort()) {
    try { o[k] = T(v[k]); } catch (e) { o[k] = 'throws'; }
  }
  return o;
};
const flag = (v) => { try { return v === undefined ? null : String(v.__esModule); } catch (e) { return 'throws'; } };
const out = (o) => console.log('@@' + encodeURIComponent(JSON.stringify(o)));
"""
TAIL = "\nexport default function () {}\n"


def scripts_for(spec, ns_names=None):
    s = {}
    s["both"] = (
        f"import * as m from {json.dumps(spec)};\nimport d from {json.dumps(spec)};\n" + PRELUDE
        + "out({ns: types(m), nsEsModule: ('__esModule' in m) ? String(m.__esModule) : null,"
        " dt: T(d), dk: types(d), dEsModule: (d !== null && d !== undefined) ? flag(d) : null});"
        + TAIL
    )
    s["ns"] = (
        f"import * as m from {json.dumps(spec)};\n" + PRELUDE
        + "out({ns: types(m), nsEsModule: ('__esModule' in m) ? String(m.__esModule) : null});" + TAIL
    )
    s["def"] = (
        f"import d from {json.dumps(spec)};\n" + PRELUDE
        + "out({dt: T(d), dk: types(d), dEsModule: (d !== null && d !== undefined) ? flag(d) : null});"
        + TAIL
    )
    s["missing"] = (
        f"import {{ __rk6_probe_missing__ as x }} from {json.dumps(spec)};\n" + PRELUDE
        + "out({missing: T(x)});" + TAIL
    )
    if ns_names:
        names = [n for n in ns_names if n != "default" and IDENT.match(n)]
        if names:
            binds = ", ".join(f"{n} as n{i}" for i, n in enumerate(names))
            body = ", ".join(f"{json.dumps(n)}: T(n{i})" for i, n in enumerate(names))
            s["named"] = (
                f"import {{ {binds} }} from {json.dumps(spec)};\n" + PRELUDE
                + f"out({{named: {{{body}}}}});" + TAIL
            )
    return s


def run_one(tool, path, env):
    res = run_tool(tool, ["inspect", path], os.path.dirname(path), env=env)
    m = markers(res["stderr"])
    ok = res["rc"] == 0 and bool(m)
    return {
        "ok": ok,
        "rc": res["rc"],
        "data": m[0] if m else None,
        "error": None if ok else error_text(res),
    }


def entries():
    """(lib, version, entry file) for every published library/version and its other .js files."""
    res = []
    for lib in sorted(os.listdir(JSLIB)):
        ld = os.path.join(JSLIB, lib)
        if not os.path.isdir(ld):
            continue
        for ver in sorted(os.listdir(ld)):
            vd = os.path.join(ld, ver)
            if not os.path.isdir(vd):
                continue
            files = sorted(f for f in os.listdir(vd) if f.endswith(".js"))
            for f in ["index.js"] + [f for f in files if f != "index.js"]:
                if f in files:
                    res.append((lib, ver, f))
    return res


def load_result(tool, mode, key, spec, env):
    """Runs 'both'; if it fails, 'ns' and 'def' apart so each half is still recorded.

    loads = the namespace import works; default_ok = the default import works.
    """
    d = os.path.join(GEN, mode, tool, key)
    sc = scripts_for(spec)
    r = {}
    write(os.path.join(d, "both.js"), sc["both"])
    both = run_one(tool, os.path.join(d, "both.js"), env)
    r["both_ok"] = both["ok"]
    r["both_error"] = both["error"]
    if both["ok"]:
        r.update({k: both["data"].get(k) for k in ("ns", "nsEsModule", "dt", "dk", "dEsModule")})
        r.update(loads=True, error=None, default_ok=True, default_error=None)
        return r
    for part, fields in (("ns", ("ns", "nsEsModule")), ("def", ("dt", "dk", "dEsModule"))):
        write(os.path.join(d, part + ".js"), sc[part])
        pr = run_one(tool, os.path.join(d, part + ".js"), env)
        ok_key, err_key = ("loads", "error") if part == "ns" else ("default_ok", "default_error")
        r[ok_key] = pr["ok"]
        r[err_key] = pr["error"]
        if pr["ok"]:
            r.update({k: pr["data"].get(k) for k in fields})
    return r


def extra_result(tool, mode, key, spec, env, ns_names):
    d = os.path.join(GEN, mode, tool, key)
    sc = scripts_for(spec, ns_names)
    r = {}
    write(os.path.join(d, "missing.js"), sc["missing"])
    mr = run_one(tool, os.path.join(d, "missing.js"), env)
    r["missing_named_import"] = (
        {"ok": True, "value": mr["data"].get("missing")} if mr["ok"] else {"ok": False, "error": mr["error"]}
    )
    if "named" in sc:
        write(os.path.join(d, "named.js"), sc["named"])
        nr = run_one(tool, os.path.join(d, "named.js"), env)
        r["named_imports"] = (
            {"ok": True, "types": nr["data"].get("named")} if nr["ok"] else {"ok": False, "error": nr["error"]}
        )
    return r


def same(a, b):
    keys = ("loads", "ns", "default_ok", "dt", "dk")
    return all(a.get(k) == b.get(k) for k in keys)


def classify(k6r, rk6r):
    """Cause group of an rk6 result that differs from k6's."""
    if same(k6r, rk6r):
        return "same"
    ns_err = rk6r.get("error") or ""
    def_err = rk6r.get("default_error") or ""
    if rk6r.get("loads"):
        if not k6r.get("loads"):
            return "rk6 loads, k6 does not"
        if rk6r.get("ns") != k6r.get("ns"):
            return "loads, namespace differs (UMD takes its no-CommonJS branch: nothing exported)"
        if "could not find export" in def_err:
            return "namespace same, default import fails (could not find export `default`)"
        return "loads, default differs"
    if re.search(r"(exports|module) is not defined", ns_err):
        return "exports/module is not defined (CommonJS file run as an ES module)"
    if re.search(r"unexpected token 'return'", ns_err):
        return "top-level return (parser error in module mode)"
    if re.search(r"not supported by rk6|unknown module", ns_err):
        return "missing k6 module"
    if "abrupt end" in ns_err:
        return "parser error: `export { ... }` as the last statement without `;` (abrupt end)"
    if "SyntaxError" in ns_err and "could not find export" not in ns_err:
        return "parser error (other)"
    if "cannot convert 'null' or 'undefined' to object" in ns_err:
        return "UMD wrapper throws: top-level `this` is undefined in an ES module"
    if "could not find export" in ns_err:
        return "could not find export"
    if not k6r.get("loads"):
        return "fails in both (different error)"
    return "other"


def main():
    need_jslib()
    rewritten = mirror.build()
    results = []
    ents = entries()
    only = os.environ.get("JSLIB_ONLY")
    if only:
        ents = [e for e in ents if re.search(only, "/".join(e))]
    with https_server(mirror.REMOTE_MIRROR):
        for lib, ver, f in ents:
            key = f"{lib}/{ver}/{f}"
            is_index = f == "index.js"
            entry = {"library": lib, "version": ver, "file": f, "entry": is_index}
            local = os.path.join(mirror.FILE_MIRROR, lib, ver, f)
            rel = os.path.join(lib, ver, f)
            entry["needed_rewrite"] = rewritten.get(rel, [])
            with open(local, encoding="utf-8", errors="replace") as fh:
                entry["k6_modules"] = sorted(set(K6_MOD.findall(fh.read())))
            for tool in ("k6", "rk6"):
                env = RK6_ENV if tool == "rk6" else None
                entry[tool] = load_result(tool, "file", key, local, env)
            k6ns = sorted((entry["k6"].get("ns") or {}).keys())
            for tool in ("k6", "rk6"):
                env = RK6_ENV if tool == "rk6" else None
                entry[tool].update(extra_result(tool, "file", key, local, env, k6ns))
            mk = entry["k6"]["missing_named_import"]
            entry["k6_kind"] = (
                "commonjs" if mk["ok"] else "esm" if "does not provide an export named" in (mk.get("error") or "")
                else "unknown"
            )
            entry["cause"] = classify(entry["k6"], entry["rk6"])
            if is_index:
                spec = f"{REMOTE_BASE}/{lib}/{ver}/{f}"
                entry["remote"] = {}
                for tool in ("k6", "rk6"):
                    env = RK6_ENV if tool == "rk6" else None
                    entry["remote"][tool] = load_result(tool, "remote", key, spec, env)
                entry["remote"]["cause"] = classify(entry["remote"]["k6"], entry["remote"]["rk6"])
            results.append(entry)
            print(f"{key:55s} k6={'ok' if entry['k6']['loads'] else 'FAIL'} "
                  f"rk6={'ok' if entry['rk6']['loads'] else 'FAIL'} {entry['cause']}", file=sys.stderr)
            save_cache()
    save_cache()
    os.makedirs(OUT, exist_ok=True)
    meta = {"k6": tool_version("k6"), "rk6": tool_version("rk6")}
    with open(os.path.join(OUT, "jslib.json"), "w") as fh:
        json.dump({"versions": meta, "entries": results}, fh, indent=1, sort_keys=True)
    write(os.path.join(OUT, "jslib.md"), render(results, meta))
    idx = [e for e in results if e["entry"]]
    n_same = sum(e["cause"] == "same" for e in idx)
    n_rsame = sum(e["remote"]["cause"] == "same" for e in idx)
    print(f"jslib: {n_same}/{len(idx)} library/versions load in rk6 as in k6 (file imports); "
          f"{n_rsame}/{len(idx)} as remote imports; other entry files: "
          f"{sum(e['cause'] == 'same' for e in results if not e['entry'])}/"
          f"{sum(not e['entry'] for e in results)}")


def _short(err, n=160):
    err = (err or "").replace(mirror.FILE_MIRROR, "<lib>").replace(mirror.REMOTE_MIRROR, "<lib>")
    err = err.replace(REMOTE_BASE, "<remote>")
    return first_line(err, n).replace("|", "\\|")


def render(results, meta):
    idx = [e for e in results if e["entry"]]
    others = [e for e in results if not e["entry"]]
    L = []
    L.append("# jslib.k6.io under k6 1.1.0 and rk6\n")
    L.append(f"Generated by `tools/jslib-corpus/jslib.py` — k6: `{meta['k6']}`; rk6: `{meta['rk6']}`.\n")
    L.append(
        "Each library/version's `index.js` is imported by a one-file script as "
        "`import * as m` and `import d` (local absolute path into a copy of the corpus; the "
        "copies' own `https://jslib.k6.io/...` imports point at the local copies), and printed "
        "from the init context with `inspect`. 'Same' = both load, same namespace names and "
        "value types, same `typeof default` and default's own enumerable keys and their types "
        "(or both fail). 'remote' = the same via `https://127.0.0.1:PORT/...` (k6: a local TLS "
        "server; rk6: `RK6_MODULE_CACHE`).\n"
    )
    n_same = sum(e["cause"] == "same" for e in idx)
    n_k6 = sum(e["k6"]["loads"] for e in idx)
    n_rk6 = sum(e["rk6"]["loads"] for e in idx)
    L.append("## Summary\n")
    L.append(f"- library/versions (index.js): **{len(idx)}**")
    L.append(f"- namespace import works in k6: **{n_k6}**; in rk6: **{n_rk6}**")
    L.append(f"- default import works in k6: **{sum(bool(e['k6'].get('default_ok')) for e in idx)}**; "
             f"in rk6: **{sum(bool(e['rk6'].get('default_ok')) for e in idx)}**")
    L.append(f"- **same as k6 in rk6 today (file imports): {n_same}/{len(idx)}**")
    L.append(f"- same as k6 as remote imports: {sum(e['remote']['cause'] == 'same' for e in idx)}/{len(idx)}")
    kinds = {}
    for e in idx:
        kinds.setdefault(e["k6_kind"], []).append(e)
    L.append("- k6 treats as: " + ", ".join(f"{k} {len(v)}" for k, v in sorted(kinds.items())))
    L.append(f"- other entry files (aws/*/s3.js, ...): {sum(e['cause'] == 'same' for e in others)}/"
             f"{len(others)} same\n")
    L.append("## rk6 failures by cause (index.js)\n")
    groups = {}
    for e in idx:
        if e["cause"] != "same":
            groups.setdefault(e["cause"], []).append(e)
    L.append("| cause | count | library/versions | rk6 error (first) |")
    L.append("|---|---|---|---|")
    for cause, es in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        names = ", ".join(f"{e['library']}/{e['version']}" for e in es)
        L.append(f"| {cause} | {len(es)} | {names} | {_short(es[0]['rk6'].get('error') or es[0]['rk6'].get('default_error'))} |")
    L.append("")
    L.append("## Remote-import failures by cause (index.js)\n")
    rg = {}
    for e in idx:
        if e["remote"]["cause"] != "same":
            rg.setdefault(e["remote"]["cause"], []).append(e)
    L.append("| cause | count | library/versions | rk6 error (first) |")
    L.append("|---|---|---|---|")
    for cause, es in sorted(rg.items(), key=lambda kv: -len(kv[1])):
        names = ", ".join(f"{e['library']}/{e['version']}" for e in es)
        L.append(f"| {cause} | {len(es)} | {names} | {_short(es[0]['remote']['rk6'].get('error') or es[0]['remote']['rk6'].get('default_error'))} |")
    L.append("")
    L.append("## Other entry files by cause\n")
    og = {}
    for e in others:
        og.setdefault(e["cause"], []).append(e)
    L.append("| cause | count | files |")
    L.append("|---|---|---|")
    for cause, es in sorted(og.items(), key=lambda kv: -len(kv[1])):
        L.append(f"| {cause} | {len(es)} | " + ", ".join(f"{e['library']}/{e['version']}/{e['file']}" for e in es) + " |")
    L.append("")
    L.append("## Per library/version (index.js)\n")
    L.append("| library/version | k6 kind | k6 | rk6 | k6 namespace | k6 default | named imports (k6) | `__esModule` (k6: ns / default) | rewrite |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for e in idx:
        k, r = e["k6"], e["rk6"]
        ns = sorted((k.get("ns") or {}).keys())
        nsd = ", ".join(ns) if len(ns) <= 8 else ", ".join(ns[:8]) + f", … ({len(ns)})"
        dk = sorted((k.get("dk") or {}).keys())
        dd = (f"{k.get('dt')}" + (f" {{{len(dk)} keys}}" if k.get("dk") is not None else "")) if k.get("default_ok") else "no default: " + _short(k.get("default_error"), 50)
        ni = k.get("named_imports")
        nis = "—" if ni is None else ("ok" if ni["ok"] else "FAIL: " + _short(ni.get("error"), 60))
        k6s = "ok" if k["loads"] else "FAIL: " + _short(k.get("error"), 80)
        rk6s = "same" if e["cause"] == "same" else ("differs: " + e["cause"] if r["loads"] else "FAIL: " + _short(r.get("error"), 80))
        L.append(
            f"| {e['library']}/{e['version']} | {e['k6_kind']} | {k6s} | {rk6s} | {nsd} | {dd} | {nis} "
            f"| {k.get('nsEsModule')} / {k.get('dEsModule')} | {'yes' if e['needed_rewrite'] else ''} |"
        )
    L.append("")
    return "\n".join(L)


if __name__ == "__main__":
    main()
