#!/usr/bin/env python3
"""Lists the module-to-module edges inside Rust crates and fails on an import cycle.

Usage: tools/module-edges.py [--tests] CRATE_DIR...   (e.g. crates/output crates/metrics)

An edge `a -> b` means a file of module `a` names an item of module `b`: through
`use crate::b::..`, `crate::b::..` in code, `super::..`, a child module's name, or an item
the crate root re-exports from `b` (`crate::Thing`); an item defined in lib.rs itself is an edge
to `(root)`. The root's `mod` declarations and `pub use` re-exports are not edges, the
items it uses are. `#[cfg(test)]` modules are left out unless
`--tests` is given. Exit status 1 when the edges form a cycle, which is printed.
"""

import re
import sys
from pathlib import Path


def module_of(src: Path, file: Path) -> str:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("lib", "main", "mod"):
        parts.pop()
    return "::".join(parts)


def strip(text: str, tests: bool) -> str:
    """Source without comments, string and char literals (and test modules)."""
    text = re.sub(r'r(#*)".*?"\1', '""', text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text, flags=re.S)
    text = re.sub(r"'(\\.|[^'\\])'", "' '", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    pos = 0
    while (m := re.compile(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s*)?mod\s+\w+\s*\{").search(text, pos)):
        depth, i = 0, m.end() - 1
        while i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        # Inside an inline test module `super` is the file's own module.
        block = "" if not tests else re.sub(r"\bsuper::", "self::", text[m.end() : i])
        text = text[: m.start()] + block + text[i + 1 :]
        pos = m.start() + len(block)
    return text


def use_paths(tree: str, prefix: str = ""):
    """Expands a `use` tree (`a::{b, c::{d, e}}`) into full paths."""
    tree = tree.strip()
    brace = tree.find("{")
    if brace < 0:
        yield prefix + re.split(r"\s+as\s+", tree)[0].strip()
        return
    head, body = tree[:brace], tree[brace + 1 : tree.rfind("}")]
    depth, start = 0, 0
    for i, ch in enumerate(body + ","):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            part = body[start:i].strip()
            start = i + 1
            if part:
                yield from use_paths(part, prefix + head)


def main() -> int:
    args = sys.argv[1:]
    tests = "--tests" in args
    crates = [Path(a) for a in args if a != "--tests"]
    cyclic = False
    for crate in crates:
        src = crate / "src"
        files = sorted(src.rglob("*.rs"))
        modules = {module_of(src, f): f for f in files}
        texts = {module_of(src, f): strip(f.read_text(), tests) for f in files}
        # Items the root re-exports: name -> module.
        reexports = {}
        for tree in re.findall(r"\bpub\s+use\s+([^;]+);", texts.get("", "")):
            for p in use_paths(tree):
                segs = [s for s in p.split("::") if s not in ("crate", "self")]
                if segs and segs[0] in modules:
                    reexports[segs[-1]] = segs[0]

        def resolve(segs):
            """The longest module prefix of an absolute path."""
            best = None
            for n in range(1, len(segs) + 1):
                if "::".join(segs[:n]) in modules:
                    best = "::".join(segs[:n])
            if best is None and len(segs) == 1 and segs[0] in reexports:
                best = reexports[segs[0]]
            if best is None and len(segs) >= 1 and segs[0] in reexports:
                best = reexports[segs[0]]
            return best

        edges = {}
        for mod, text in texts.items():
            if mod == "":
                # Declarations and re-exports do not make the root depend on a module.
                text = re.sub(r"\b(pub(\([^)]*\))?\s+)?mod\s+\w+;|\bpub\s+use\s+[^;]+;", "", text)
            here = mod.split("::") if mod else []
            children = {
                m.split("::")[-1]
                for m in modules
                if m and m.split("::")[:-1] == here
            }
            paths = []
            for tree in re.findall(r"\buse\s+([^;]+);", text):
                paths.extend(use_paths(tree))
            paths += re.findall(r"(?<![\w:])((?:crate|super|self)(?:::\w+)+)", text)
            for child in children:
                paths += re.findall(rf"(?<![\w:])({child}(?:::\w+)+)", text)
            targets = set()
            for p in paths:
                segs = p.split("::")
                if segs[0] == "crate":
                    absolute = segs[1:]
                elif segs[0] in ("super", "self"):
                    base = list(here)
                    while segs and segs[0] in ("super", "self"):
                        if segs.pop(0) == "super":
                            base.pop()
                    absolute = base + segs
                elif segs[0] in children:
                    absolute = here + segs
                else:
                    continue
                target = resolve(absolute) if absolute else ""
                if target is None:
                    # An item of the root: re-exported from a module, or its own.
                    target = reexports.get(absolute[0], "")
                if target != mod:
                    targets.add(target)
            edges[mod] = sorted(targets)

        print(f"== {crate}")
        for mod in sorted(edges):
            names = [e or "(root)" for e in edges[mod]]
            print(f"  {mod or '(root)'} -> {', '.join(names) or '-'}")
        # Cycles: strongly connected components of more than one module (Tarjan).
        index, low, stack, on, sccs = {}, {}, [], set(), []

        def visit(v):
            index[v] = low[v] = len(index)
            stack.append(v)
            on.add(v)
            for w in edges.get(v, []):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))

        for v in sorted(edges):
            if v not in index:
                visit(v)
        for comp in sccs:
            cyclic = True
            print(f"  CYCLE: {' <-> '.join(c or '(root)' for c in comp)}")
        if not sccs:
            print("  no cycles")
    return 1 if cyclic else 0


if __name__ == "__main__":
    sys.exit(main())
