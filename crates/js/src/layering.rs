//! Checks that the crate's folders import downward: the `crate::`/`super::` paths between
//! them form no cycle. Files inside one feature folder (`host/`, `vu/`, `modules/http/`, ...)
//! may use each other; the files directly in `src/` and `src/modules/` are leaves of their
//! own. `cargo test -p rk6-js layering -- --nocapture` prints the edges that remain.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Folders whose files are separate nodes rather than one feature.
const LAYERS: &[&str] = &["", "modules"];

/// Files only compiled for tests, left out of the graph.
const TEST_ONLY: &[&str] = &["test_js.rs", "modules/html/tests.rs", "layering.rs"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file: `modules/http/request.rs` → `[modules, http, request]`,
/// `modules/http/mod.rs` → `[modules, http]`.
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The node a file belongs to: its folder, or the file itself in a layer folder.
fn node_of(rel: &str) -> String {
    let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
    if LAYERS.contains(&dir) && !rel.ends_with("mod.rs") {
        rel.to_string()
    } else {
        dir.to_string()
    }
}

/// The names `lib.rs` re-exports (`pub use a::b::{C, D}`), with the module path each is in.
fn reexports(src: &Path) -> BTreeMap<String, Vec<String>> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("read lib.rs");
    let mut out = BTreeMap::new();
    let flat: String = lib.split_whitespace().collect::<Vec<_>>().join(" ");
    for line in flat
        .split(';')
        .filter_map(|l| l.trim().strip_prefix("pub use "))
    {
        let line = line.replace(' ', "");
        let line = line.as_str();
        let (module, names) = match line.split_once("::{") {
            Some((m, rest)) => (m, rest.trim_end_matches('}')),
            None => line.rsplit_once("::").unwrap_or(("", line)),
        };
        let module: Vec<String> = module.split("::").map(String::from).collect();
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            out.insert(name.to_string(), module.clone());
        }
    }
    out
}

/// The file a module path (from the crate root) lands in: the deepest module file it names.
fn resolve(src: &Path, path: &[String]) -> Option<String> {
    if let Some(module) = path.first().and_then(|first| reexports(src).remove(first)) {
        return resolve(src, &module);
    }
    let mut dir = PathBuf::new();
    let mut file = None;
    for seg in path {
        if src.join(&dir).join(seg).join("mod.rs").exists() {
            dir.push(seg);
            file = Some(dir.join("mod.rs"));
        } else if src.join(&dir).join(format!("{seg}.rs")).exists() {
            file = Some(dir.join(format!("{seg}.rs")));
            break;
        } else {
            break;
        }
    }
    file.map(|f| f.to_string_lossy().into_owned())
}

/// Every path a file's code names from `crate::`, `super::` or `self::`, with `{...}`
/// groups expanded; comments and the trailing `mod tests` left out.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let code: String = code
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let code = match code.find("#[cfg(test)]\nmod tests {") {
        Some(at) => &code[..at],
        None => &code[..],
    };
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .find(|p| bytes[i..].starts_with(p.as_bytes()));
        let boundary = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b':');
        match starts {
            Some(p) if boundary => {
                let (paths, end) = parse_path(code, i, p.trim_end_matches(':'));
                out.extend(paths);
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}

/// Parses `head::a::b` or `head::a::{b, c::d}` at `at`; returns the paths and the end.
fn parse_path(code: &str, at: usize, head: &str) -> (Vec<Vec<String>>, usize) {
    let mut prefix = vec![head.to_string()];
    let mut i = at + head.len();
    let bytes = code.as_bytes();
    loop {
        if !code[i..].starts_with("::") {
            return (vec![prefix], i);
        }
        i += 2;
        if bytes.get(i) == Some(&b'{') {
            let mut depth = 0;
            let start = i + 1;
            let mut end = i;
            for (j, c) in code[i..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = i + j;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let mut out = Vec::new();
            for part in split_top(&code[start..end]) {
                let part = part.trim();
                // A nested group counts by its prefix: that names the file it lands in.
                let name: String = part
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let mut path = prefix.clone();
                path.extend(
                    name.split("::")
                        .filter(|s| !s.is_empty() && *s != "self")
                        .map(String::from),
                );
                out.push(path);
            }
            return (out, end + 1);
        }
        let name: String = code[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            return (vec![prefix], i);
        }
        i += name.len();
        prefix.push(name);
    }
}

/// Splits a `{...}` group's contents on its top-level commas.
fn split_top(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// The edges between nodes: `from → {to}`.
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "lib.rs" || TEST_ONLY.contains(&rel.as_str()) {
            continue;
        }
        let from = node_of(&rel);
        let module = module_of(&rel);
        let code = std::fs::read_to_string(&file).expect("read file");
        for path in paths_in(&code) {
            let (mut base, rest) = match path[0].as_str() {
                "crate" => (Vec::new(), &path[1..]),
                "self" => (module.clone(), &path[1..]),
                _ => {
                    let mut base = module.clone();
                    let mut rest = &path[..];
                    while rest.first().is_some_and(|s| s == "super") {
                        base.pop();
                        rest = &rest[1..];
                    }
                    (base, rest)
                }
            };
            base.extend(rest.iter().cloned());
            add(&src, &mut edges, &from, &base);
        }
    }
    edges
}

fn add(src: &Path, edges: &mut BTreeMap<String, BTreeSet<String>>, from: &str, path: &[String]) {
    let Some(file) = resolve(src, path) else {
        return;
    };
    if file == "lib.rs" || TEST_ONLY.contains(&file.as_str()) {
        return;
    }
    let to = node_of(&file);
    if to != from {
        edges.entry(from.to_string()).or_default().insert(to);
    }
}

/// A cycle in `edges`, if there is one.
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == n) {
            let mut c = path[at..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for next in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in edges.keys() {
        if let Some(c) = visit(n, edges, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn folders_import_downward() {
    let edges = edges();
    for (from, to) in &edges {
        let to: Vec<&str> = to.iter().map(String::as_str).collect();
        println!("{from} -> {}", to.join(", "));
    }
    assert!(
        edges.contains_key("modules/http"),
        "the scan found the http module's imports"
    );
    assert_eq!(cycle(&edges), None, "an import cycle between folders");
}

#[test]
fn a_cycle_is_found() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    assert_eq!(cycle(&edges), None);
    edges.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        cycle(&edges),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn the_scan_sees_groups_super_and_nesting() {
    let paths = paths_in("use crate::host::{Host, tags::{Pairs, TagContext}};\nlet x = super::super::a::b(); // crate::not\n");
    assert_eq!(
        paths,
        [
            vec!["crate", "host", "Host"],
            vec!["crate", "host", "tags"],
            vec!["super", "super", "a", "b"],
        ]
    );
}
