"""Shared helpers for the k6-vs-rk6 corpus harness (no network: 127.0.0.1 only)."""
import contextlib
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

HARNESS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HARNESS))
# A checkout of github.com/grafana/jslib.k6.io (its `lib/` holds <library>/<version>/index.js).
JSLIB_CHECKOUT = os.environ.get("JSLIB_CHECKOUT", "")
JSLIB = os.path.join(JSLIB_CHECKOUT, "lib") if os.path.isdir(os.path.join(JSLIB_CHECKOUT, "lib")) else JSLIB_CHECKOUT
SCRATCH = os.path.join(tempfile.gettempdir(), "rk6-jslib-corpus")
WORK = os.environ.get("WORK", os.path.join(SCRATCH, "work"))
OUT = os.environ.get("OUT", os.path.join(SCRATCH, "report"))
K6 = os.environ.get("K6", "k6")
RK6 = os.environ.get("RK6", os.path.join(REPO, "target", "debug", "rk6"))
# k6 is the fixed reference: its results are cached (keyed by everything that feeds the run)
# so re-checking a new rk6 binary costs only the rk6 half. REFRESH_K6=1 ignores the cache.
REFRESH_K6 = os.environ.get("REFRESH_K6") == "1"
K6_CACHE = os.environ.get("K6_CACHE", os.path.join(WORK, "k6-cache.json"))
TLS = os.path.join(WORK, "tls")
CERT = os.path.join(TLS, "ca.pem")  # what SSL_CERT_FILE names
LEAF = os.path.join(TLS, "server.pem")
KEY = os.path.join(TLS, "server-key.pem")
HTTPS_PORT = int(os.environ.get("HARNESS_HTTPS_PORT", "18443"))
DUMMY_PORT = int(os.environ.get("HARNESS_DUMMY_PORT", "18480"))
REMOTE_BASE = f"https://127.0.0.1:{HTTPS_PORT}"

BASE_ENV = {
    "K6_NO_USAGE_REPORT": "true",
    "SSL_CERT_FILE": CERT,  # k6 (Go) trusts the harness's own 127.0.0.1 certificate
    "NO_COLOR": "1",
}

_cache = None


def need_jslib():
    """Exits with how to point the harness at jslib.k6.io when no checkout was given."""
    if not os.path.isdir(JSLIB):
        sys.exit("set JSLIB_CHECKOUT to a checkout of https://github.com/grafana/jslib.k6.io")


def ensure_cert():
    """A private CA and a 127.0.0.1 certificate it signs, made once per WORK directory: k6
    and rk6 trust the CA through SSL_CERT_FILE (webpki refuses a CA certificate as a server's)."""
    if all(os.path.exists(p) for p in (CERT, LEAF, KEY)):
        return
    os.makedirs(TLS, exist_ok=True)
    ca_key, csr, ext = (os.path.join(TLS, n) for n in ("ca-key.pem", "leaf.csr", "leaf.ext"))
    run = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", CERT,
        "-days", "3650", "-subj", "/CN=rk6 jslib-corpus test CA")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", KEY, "-out", csr, "-subj", "/CN=127.0.0.1")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                "extendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", csr, "-CA", CERT, "-CAkey", ca_key, "-CAcreateserial",
        "-out", LEAF, "-days", "3650", "-extfile", ext)


def _load_cache():
    global _cache
    if _cache is None:
        try:
            with open(K6_CACHE) as f:
                _cache = json.load(f)
        except (OSError, ValueError):
            _cache = {}
    return _cache


def save_cache():
    if _cache is not None:
        os.makedirs(os.path.dirname(K6_CACHE), exist_ok=True)
        with open(K6_CACHE, "w") as f:
            json.dump(_cache, f)


def tree_hash(paths):
    """Hash of file contents (files or directories), for the k6 cache key."""
    h = hashlib.sha256()
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for name in sorted(files):
                    fp = os.path.join(root, name)
                    h.update(fp.encode())
                    with open(fp, "rb") as f:
                        h.update(f.read())
        elif os.path.exists(p):
            h.update(p.encode())
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def run_tool(tool, args, cwd, env=None, timeout=60, key_extra=""):
    """Runs k6 or rk6 (tool = 'k6' | 'rk6'); returns {rc, stdout, stderr, secs, timeout}."""
    binary = K6 if tool == "k6" else RK6
    full_env = dict(os.environ)
    full_env.update(BASE_ENV)
    if env:
        full_env.update(env)
    key = None
    if tool == "k6":
        key = hashlib.sha256(
            json.dumps([args, cwd, env or {}, key_extra]).encode()
        ).hexdigest()
        cache = _load_cache()
        if not REFRESH_K6 and key in cache:
            return cache[key]
    t0 = time.time()
    try:
        p = subprocess.run(
            [binary] + args,
            cwd=cwd,
            env=full_env,
            capture_output=True,
            timeout=timeout,
        )
        res = {
            "rc": p.returncode,
            "stdout": p.stdout.decode("utf-8", "replace"),
            "stderr": p.stderr.decode("utf-8", "replace"),
            "timeout": False,
        }
    except subprocess.TimeoutExpired as e:
        res = {
            "rc": None,
            "stdout": (e.stdout or b"").decode("utf-8", "replace"),
            "stderr": (e.stderr or b"").decode("utf-8", "replace"),
            "timeout": True,
        }
    res["secs"] = round(time.time() - t0, 2)
    if key is not None:
        _load_cache()[key] = res
    return res


_LOGFMT = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)')


def _unquote(v):
    if v.startswith('"'):
        try:
            return json.loads(v)
        except ValueError:
            return v[1:-1]
    return v


def parse_log(stderr):
    """logfmt lines (time=... level=... msg=...) as dicts; other lines as {'raw': line}."""
    out = []
    for line in stderr.splitlines():
        if line.startswith("time=") and " level=" in line:
            out.append({k: _unquote(v) for k, v in _LOGFMT.findall(line)})
        elif line.strip():
            out.append({"raw": line})
    return out


def markers(stderr):
    """Payloads the generated scripts print as console.log('@@' + encodeURIComponent(json))."""
    res = []
    for e in parse_log(stderr):
        msg = e.get("msg", "")
        if e.get("source") == "console" and msg.startswith("@@"):
            try:
                res.append(json.loads(urllib.parse.unquote(msg[2:])))
            except ValueError:
                res.append({"unparsed": msg})
    return res


def console_lines(stderr):
    return [e.get("msg", "") for e in parse_log(stderr) if e.get("source") == "console"]


def error_text(res):
    """The error a failed run reports (first level=error message), else the last stderr line."""
    if res.get("timeout"):
        return "TIMEOUT"
    for e in parse_log(res["stderr"]):
        if e.get("level") == "error":
            return e.get("msg", "") + (f" (hint: {e['hint']})" if e.get("hint") else "")
    lines = [l for l in res["stderr"].splitlines() if l.strip()]
    return lines[-1] if lines else ""


def first_line(s, n=300):
    s = (s or "").strip().splitlines()
    return (s[0] if s else "")[:n]


def port_free(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@contextlib.contextmanager
def server(cmd, port):
    """Starts a local server process (bound to 127.0.0.1) and stops it, by its own pid."""
    if not port_free(port):
        sys.exit(f"port {port} on 127.0.0.1 is in use; set HARNESS_*_PORT")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if not port_free(port):
            break
        time.sleep(0.05)
    try:
        yield p
    finally:
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()


def https_server(directory):
    ensure_cert()
    return server(
        [sys.executable, os.path.join(HARNESS, "https_server.py"), str(HTTPS_PORT), directory, LEAF, KEY],
        HTTPS_PORT,
    )


def dummy_server():
    return server(
        [sys.executable, os.path.join(HARNESS, "dummy_server.py"), str(DUMMY_PORT)], DUMMY_PORT
    )


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def tool_version(tool):
    r = subprocess.run([K6 if tool == "k6" else RK6, "version"], capture_output=True)
    return first_line(r.stdout.decode())
