//! A crate's module tree read from its `src/` and the edges between its nodes.
//!
//! An edge `a → b` means code of `a` names an item that lives in `b`: through a `use`, a path
//! in code (`crate::…`, `super::…`, `self::…`, a child module's name, a name a `use` bound),
//! or a glob import. Imports are looked through: naming `crate::Thing` that the root
//! re-exports from `b` (or `super::Thing` a parent imported) is an edge to `b`, where `Thing`
//! is defined. A `use` that only brings a module's name into scope is no edge by itself (what
//! is named through it is). The crate root's `pub use` re-exports are no edges (the root is the
//! crate's face); anywhere else a re-export is an edge of the module that makes it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::scan::{scan, ModuleScan, Use};

/// Where an edge was seen: file, line and the path as written.
#[derive(Debug, Clone)]
pub struct Evidence {
    pub file: String,
    pub line: usize,
    pub path: String,
}

/// A module: its file (relative to `src/`) and what its code says.
struct Module {
    file: String,
    scan: ModuleScan,
    children: BTreeSet<String>,
}

/// All modules of a crate, by path from the root.
pub struct CrateTree {
    modules: BTreeMap<Vec<String>, Module>,
}

/// The edges between files: `from → to → first evidence`.
pub type FileEdges = BTreeMap<String, BTreeMap<String, Evidence>>;

impl CrateTree {
    /// Reads the crate whose root file is `src/root` (`lib.rs`, `main.rs`), following `mod`
    /// declarations; files declared only under `#[cfg(test)]` are left out.
    pub fn load(src: &Path, root: &str) -> Result<CrateTree, String> {
        let mut tree = CrateTree {
            modules: BTreeMap::new(),
        };
        tree.load_file(src, root, Vec::new())?;
        Ok(tree)
    }

    fn load_file(&mut self, src: &Path, rel: &str, path: Vec<String>) -> Result<(), String> {
        let text = std::fs::read_to_string(src.join(rel)).map_err(|e| format!("{rel}: {e}"))?;
        // A file's children live in its folder: `a/mod.rs`, `lib.rs` → `a/`; `a/b.rs` → `a/b/`.
        let owns_folder = path.is_empty() || rel.ends_with("/mod.rs") || rel == "mod.rs";
        let dir = if owns_folder {
            rel.rsplit_once('/')
                .map_or(String::new(), |(d, _)| format!("{d}/"))
        } else {
            format!("{}/", rel.trim_end_matches(".rs"))
        };
        let mut declared = Vec::new();
        for m in scan(&text) {
            let mut full = path.clone();
            full.extend(m.inline.iter().cloned());
            if m.inline.is_empty() {
                declared = m.declared.clone();
            }
            let mut children: BTreeSet<String> = m.declared.iter().cloned().collect();
            children.extend(m.inline_children.iter().cloned());
            self.modules.insert(
                full,
                Module {
                    file: rel.to_string(),
                    scan: m,
                    children,
                },
            );
        }
        for child in declared {
            let flat = format!("{dir}{child}.rs");
            let nested = format!("{dir}{child}/mod.rs");
            let file = if src.join(&flat).is_file() {
                flat
            } else if src.join(&nested).is_file() {
                nested
            } else {
                return Err(format!("{rel}: no file for `mod {child};`"));
            };
            let mut child_path = path.clone();
            child_path.push(child);
            self.load_file(src, &file, child_path)?;
        }
        Ok(())
    }

    /// The name a `use` in module `at` binds to `name`, if any (globs excluded).
    fn binding(&self, at: &[String], name: &str) -> Option<&Use> {
        self.modules
            .get(at)?
            .scan
            .uses
            .iter()
            .find(|u| u.name.as_deref() == Some(name))
    }

    /// `segs` as written in module `at`, made absolute; `None` when it is not a path into
    /// this crate (std, another crate, a local or associated item).
    fn absolute(&self, at: &[String], segs: &[String], depth: usize) -> Option<Vec<String>> {
        if depth > 16 || segs.is_empty() {
            return None;
        }
        let mut out: Vec<String>;
        let rest: &[String];
        match segs[0].as_str() {
            "crate" => {
                out = Vec::new();
                rest = &segs[1..];
            }
            "self" | "super" => {
                out = at.to_vec();
                let mut k = 0;
                if segs[0] == "self" {
                    k = 1;
                }
                while segs.get(k).is_some_and(|s| s == "super") {
                    out.pop()?;
                    k += 1;
                }
                rest = &segs[k..];
            }
            "::" | "Self" => return None,
            first => {
                let module = self.modules.get(at)?;
                if module.children.contains(first) {
                    out = at.to_vec();
                    rest = segs;
                } else {
                    let bound = self.binding(at, first)?;
                    out = self.absolute(at, &bound.path, depth + 1)?;
                    rest = &segs[1..];
                }
            }
        }
        out.extend(rest.iter().cloned());
        Some(out)
    }

    /// The module an absolute path lands in, and whether the path names that module itself.
    fn resolve(&self, abs: &[String], depth: usize) -> Option<(Vec<String>, bool)> {
        if depth > 16 {
            return None;
        }
        let mut cur: Vec<String> = Vec::new();
        for (k, seg) in abs.iter().enumerate() {
            let module = self.modules.get(&cur)?;
            if module.children.contains(seg) {
                cur.push(seg.clone());
                continue;
            }
            let follow = |target: Vec<String>| {
                let mut next = target;
                next.extend(abs[k + 1..].iter().cloned());
                self.resolve(&next, depth + 1)
            };
            if module.scan.defined.contains(seg) {
                return Some((cur, false));
            }
            if let Some(u) = self.binding(&cur, seg) {
                // Imported here: the item lives where the import points (another crate's
                // item counts as this module's).
                return match self.absolute(&cur, &u.path, depth + 1) {
                    Some(target) => follow(target),
                    None => Some((cur, false)),
                };
            }
            for glob in module.scan.uses.iter().filter(|u| u.name.is_none()) {
                let Some(target) = self.absolute(&cur, &glob.path, depth + 1) else {
                    continue;
                };
                let Some((from, true)) = self.resolve(&target, depth + 1) else {
                    continue;
                };
                let source = &self.modules[&from];
                if source.scan.defined.contains(seg)
                    || source.children.contains(seg)
                    || self.binding(&from, seg).is_some()
                {
                    let mut next = from;
                    next.push(seg.clone());
                    return follow(next);
                }
            }
            return Some((cur, false));
        }
        Some((cur, true))
    }

    /// The edges between the crate's files.
    pub fn file_edges(&self) -> FileEdges {
        let mut edges: FileEdges = BTreeMap::new();
        for (at, module) in &self.modules {
            let mut add = |segs: &[String], line: usize, whole_module_is_edge: bool| {
                let Some(abs) = self.absolute(at, segs, 0) else {
                    return;
                };
                let Some((target, is_module)) = self.resolve(&abs, 0) else {
                    return;
                };
                if is_module && !whole_module_is_edge {
                    return;
                }
                let to = &self.modules[&target].file;
                if *to != module.file {
                    edges
                        .entry(module.file.clone())
                        .or_default()
                        .entry(to.clone())
                        .or_insert_with(|| Evidence {
                            file: module.file.clone(),
                            line,
                            path: segs.join("::"),
                        });
                }
            };
            for (segs, line) in &module.scan.paths {
                add(segs, *line, false);
            }
            for u in &module.scan.uses {
                if u.public && at.is_empty() {
                    continue;
                }
                add(&u.path, u.line, u.name.is_none() || u.public);
            }
        }
        edges
    }
}

/// Strongly connected components of more than one node: each is a cycle (Tarjan).
pub fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> T<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    comp.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    fn edges_of(files: &[(&str, &str)]) -> Vec<(String, String)> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("rk6-layering-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write(&dir, files);
        let tree = CrateTree::load(&dir, "lib.rs").unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        tree.file_edges()
            .into_iter()
            .flat_map(|(from, to)| to.into_keys().map(move |t| (from.clone(), t)))
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn imports_are_looked_through_to_where_items_live() {
        let edges = edges_of(&[
            (
                "lib.rs",
                "mod a; mod b; mod c; pub use b::Thing; fn root_item() {}",
            ),
            // Through the root's re-export, an alias and a parent's import.
            (
                "a/mod.rs",
                "mod x; use crate::Thing; use crate::c as cc; fn f() { cc::g(); }",
            ),
            ("a/x.rs", "use super::Thing; fn h() { crate::root_item(); }"),
            ("b.rs", "pub struct Thing;"),
            ("c.rs", "pub fn g() {} use crate::a;"),
        ]);
        assert_eq!(
            edges,
            pairs(&[
                ("a/mod.rs", "b.rs"),
                ("a/mod.rs", "c.rs"),
                ("a/x.rs", "b.rs"),
                ("a/x.rs", "lib.rs"),
            ])
        );
    }

    #[test]
    fn a_parent_that_defines_what_its_children_use_is_a_cycle() {
        let files = [
            ("lib.rs", "mod e;"),
            (
                "e/mod.rs",
                "mod k; pub trait Source {} fn pick() { k::make(); }",
            ),
            ("e/k.rs", "use super::Source; pub fn make() {}"),
        ];
        let edges = edges_of(&files);
        assert_eq!(
            edges,
            pairs(&[("e/k.rs", "e/mod.rs"), ("e/mod.rs", "e/k.rs")])
        );
        let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            map.entry(a).or_default().insert(b);
        }
        assert_eq!(
            cycles(&map),
            [["e/k.rs".to_string(), "e/mod.rs".to_string()]]
        );
    }

    #[test]
    fn a_chain_is_no_cycle() {
        let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        map.entry("a".into()).or_default().insert("b".into());
        map.entry("b".into()).or_default().insert("c".into());
        assert!(cycles(&map).is_empty());
        map.entry("c".into()).or_default().insert("a".into());
        assert_eq!(cycles(&map), [["a", "b", "c"].map(String::from)]);
    }
}
