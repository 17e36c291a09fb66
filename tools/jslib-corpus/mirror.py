"""Local copies of jslib.k6.io with its own cross-library imports pointed at local copies.

mirror-file/   https://jslib.k6.io/X -> /abs/path/mirror-file/X   (plain file imports)
mirror-remote/ https://jslib.k6.io/X -> https://127.0.0.1:PORT/X  (served by https_server.py for
               k6; for rk6 the same URLs are read from rk6-cache/127.0.0.1:PORT -> mirror-remote)
"""
import os
import re
import shutil

from common import JSLIB, REMOTE_BASE, HTTPS_PORT, WORK

JSLIB_URL = re.compile(r"https://jslib\.k6\.io/")
FILE_MIRROR = os.path.join(WORK, "mirror-file")
REMOTE_MIRROR = os.path.join(WORK, "mirror-remote")
RK6_CACHE = os.path.join(WORK, "rk6-cache")


def _copy(dst, repl):
    rewritten = {}
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    for root, dirs, files in os.walk(JSLIB):
        rel = os.path.relpath(root, JSLIB)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for name in files:
            src = os.path.join(root, name)
            out = os.path.join(dst, rel, name)
            if name.endswith(".js"):
                with open(src, encoding="utf-8", errors="surrogateescape") as f:
                    text = f.read()
                new, n = JSLIB_URL.subn(repl, text)
                if n:
                    rewritten[os.path.normpath(os.path.join(rel, name))] = sorted(
                        set(m.group(0) for m in re.finditer(r"https://jslib\.k6\.io/[^'\"]+", text))
                    )
                with open(out, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(new)
            else:
                shutil.copyfile(src, out)
    return rewritten


def build():
    """(Re)builds both mirrors; returns {relative file: [jslib URLs it imported]}."""
    rewritten = _copy(FILE_MIRROR, FILE_MIRROR + "/")
    _copy(REMOTE_MIRROR, REMOTE_BASE + "/")
    os.makedirs(RK6_CACHE, exist_ok=True)
    link = os.path.join(RK6_CACHE, f"127.0.0.1:{HTTPS_PORT}")
    if os.path.islink(link) or os.path.exists(link):
        os.remove(link)
    os.symlink(REMOTE_MIRROR, link)
    return rewritten


if __name__ == "__main__":
    print(build())
