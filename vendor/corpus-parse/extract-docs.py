#!/usr/bin/env python3
"""Dev-only: writes the whole-script JavaScript code blocks of k6's docs to a directory.

Usage: extract-docs.py [--all] DOCS_DIR OUT_DIR

Takes every ```javascript / ```js block of the Markdown files under DOCS_DIR (indented
blocks are dedented), drops duplicates (the docs repeat across versions), and keeps the
blocks that look like whole k6 scripts or modules: they export a default or a named
function (with --all: every block, fragments too). Each is written as OUT_DIR/<first 12 hex of its sha1>.js, and OUT_DIR/index.tsv
maps it back to the first Markdown file it came from.
"""
import hashlib
import os
import re
import sys
import textwrap

args = sys.argv[1:]
keep_all = args[:1] == ["--all"]
if keep_all:
    args = args[1:]
docs, out = args[0], args[1]
os.makedirs(out, exist_ok=True)
fence = re.compile(r"^(\s*)```\s*(javascript|js)\s*$")
whole = re.compile(r"^\s*export\s+(default\b|(async\s+)?function\b)", re.M)
seen = {}
blocks = 0
for root, dirs, files in os.walk(docs):
    dirs.sort()
    for name in sorted(files):
        if not name.endswith(".md"):
            continue
        path = os.path.join(root, name)
        lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
        i = 0
        while i < len(lines):
            m = fence.match(lines[i])
            if not m:
                i += 1
                continue
            indent = m.group(1)
            j = i + 1
            body = []
            while j < len(lines) and lines[j].strip() != "```":
                body.append(lines[j])
                j += 1
            i = j + 1
            blocks += 1
            code = textwrap.dedent("\n".join(body)).strip("\n") + "\n"
            if not keep_all and not whole.search(code):
                continue
            key = hashlib.sha1(code.encode()).hexdigest()[:12]
            if key not in seen:
                seen[key] = os.path.relpath(path, docs)
                with open(os.path.join(out, key + ".js"), "w", encoding="utf-8") as f:
                    f.write(code)
with open(os.path.join(out, "index.tsv"), "w", encoding="utf-8") as f:
    for key, src in sorted(seen.items()):
        f.write(f"{key}.js\t{src}\n")
print(f"{blocks} blocks, {len(seen)} distinct whole scripts", file=sys.stderr)
