//! Files import downward: inside every crate of the workspace, the edges between its nodes
//! (files, or feature folders where the table says so) form no cycle. The edges and how they
//! are read are in `graph.rs`; `cargo test --test cli layering -- --nocapture` prints them.

mod graph;
mod lex;
mod scan;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use graph::{cycles, CrateTree, Evidence};

/// How a crate's files group into the nodes whose edges must form no cycle.
enum Grain {
    /// Every file is a node.
    File,
    /// Every folder is one node, its files free to use each other; the files directly in
    /// the folders listed (`""` is `src/`) are nodes of their own.
    Folder { file_level: &'static [&'static str] },
}

/// One crate: its manifest and layer, its `src/`, its root file, its grain, and the edges
/// allowed to close a cycle (`from`, `to`, why).
struct Row {
    name: &'static str,
    /// Its Cargo.toml (the root one is the `rk6` package's).
    manifest: &'static str,
    /// Its layer in the crate graph: it may depend only on crates of a lower layer.
    layer: u8,
    src: &'static str,
    root: &'static str,
    grain: Grain,
    allowed: &'static [(&'static str, &'static str, &'static str)],
}

/// Every crate of the workspace. rk6-js is checked by folder: a feature folder (`vu/`,
/// `host/`, `script/`, `modules/http/`, ...) is one piece whose files share private helpers,
/// and what matters is that the folders import downward; its top-level files and the modules
/// directly in `modules/` are leaves of their own. The other crates are small enough that
/// each file is a piece.
const CRATES: &[Row] = &[
    Row {
        name: "rk6",
        manifest: "Cargo.toml",
        layer: 3,
        src: "crates/cli/src",
        root: "main.rs",
        grain: Grain::File,
        allowed: &[],
    },
    Row {
        name: "rk6-bench",
        manifest: "crates/bench/Cargo.toml",
        layer: 2,
        src: "crates/bench/src",
        root: "lib.rs",
        grain: Grain::File,
        allowed: &[],
    },
    Row {
        name: "rk6-bench-echo",
        manifest: "bench/echo/Cargo.toml",
        layer: 0,
        src: "bench/echo/src",
        root: "main.rs",
        grain: Grain::File,
        allowed: &[],
    },
    Row {
        name: "rk6-http",
        manifest: "crates/http/Cargo.toml",
        layer: 0,
        src: "crates/http/src",
        root: "lib.rs",
        grain: Grain::File,
        allowed: &[],
    },
    Row {
        name: "rk6-js",
        manifest: "crates/js/Cargo.toml",
        layer: 2,
        src: "crates/js/src",
        root: "lib.rs",
        grain: Grain::Folder {
            file_level: &["", "modules"],
        },
        allowed: &[],
    },
    Row {
        name: "rk6-metrics",
        manifest: "crates/metrics/Cargo.toml",
        layer: 1,
        src: "crates/metrics/src",
        root: "lib.rs",
        grain: Grain::File,
        allowed: &[],
    },
    Row {
        name: "rk6-cdp",
        manifest: "crates/cdp/Cargo.toml",
        layer: 0,
        src: "crates/cdp/src",
        root: "lib.rs",
        grain: Grain::File,
        allowed: &[],
    },
    Row {
        name: "rk6-options",
        manifest: "crates/options/Cargo.toml",
        layer: 0,
        src: "crates/options/src",
        root: "lib.rs",
        grain: Grain::File,
        allowed: &[],
    },
    Row {
        name: "rk6-output",
        manifest: "crates/output/Cargo.toml",
        layer: 2,
        src: "crates/output/src",
        root: "lib.rs",
        grain: Grain::File,
        allowed: &[],
    },
    Row {
        name: "rk6-scheduler",
        manifest: "crates/scheduler/Cargo.toml",
        layer: 1,
        src: "crates/scheduler/src",
        root: "lib.rs",
        grain: Grain::File,
        allowed: &[],
    },
];

/// The node a file (relative to `src/`) belongs to.
fn node_of(grain: &Grain, file: &str) -> String {
    match grain {
        Grain::File => file.to_string(),
        Grain::Folder { file_level } => {
            let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
            if file_level.contains(&dir) {
                file.to_string()
            } else {
                format!("{dir}/")
            }
        }
    }
}

/// A crate's edges between nodes, each with the first place it was seen.
fn node_edges(row: &Row) -> BTreeMap<String, BTreeMap<String, Evidence>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(row.src);
    let tree = CrateTree::load(&src, row.root).unwrap_or_else(|e| panic!("{}: {e}", row.name));
    let mut out: BTreeMap<String, BTreeMap<String, Evidence>> = BTreeMap::new();
    for (from, to) in tree.file_edges() {
        for (to, evidence) in to {
            let (a, b) = (node_of(&row.grain, &from), node_of(&row.grain, &to));
            if a != b {
                out.entry(a).or_default().entry(b).or_insert(evidence);
            }
        }
    }
    out
}

#[test]
fn crates_import_downward() {
    let mut report = String::new();
    let mut failed = false;
    for row in CRATES {
        let edges = node_edges(row);
        report += &format!("== {}\n", row.name);
        for (from, to) in &edges {
            let to: Vec<&str> = to.keys().map(String::as_str).collect();
            report += &format!("  {from} -> {}\n", to.join(", "));
        }
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in &edges {
            for to in to.keys() {
                let allowed = row.allowed.iter().any(|(a, b, _)| a == from && b == to);
                if !allowed {
                    graph.entry(from.clone()).or_default().insert(to.clone());
                }
            }
        }
        for comp in cycles(&graph) {
            failed = true;
            report += &format!("  CYCLE: {}\n", comp.join(" <-> "));
            for from in &comp {
                for (to, e) in &edges[from] {
                    if comp.contains(to) && graph[from].contains(to) {
                        report +=
                            &format!("    {from} -> {to}: {}:{} {}\n", e.file, e.line, e.path);
                    }
                }
            }
        }
        for (a, b, _) in row.allowed {
            assert!(
                edges.get(*a).is_some_and(|to| to.contains_key(*b)),
                "{}: the allowed edge {a} -> {b} is gone; drop it from the table",
                row.name
            );
        }
    }
    println!("{report}");
    assert!(!failed, "import cycles:\n{report}");
}

/// The workspace crates (`rk6…`) a manifest depends on, in any of the package's dependency
/// tables (normal, dev, build, per target), each with its line; `[workspace.dependencies]`
/// only declares them and is left out.
fn rk6_dependencies(manifest: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut in_deps = false;
    for (i, line) in manifest.lines().enumerate() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_matches(|c| c == '[' || c == ']').trim();
            let table = header.rsplit_once('.').map_or(header, |(_, t)| t);
            let deps = |t: &str| t.ends_with("dependencies");
            in_deps = false;
            if header.starts_with("workspace") {
                continue;
            }
            // `[dependencies.rk6-x]` names the crate in the header.
            match header.split_once('.') {
                Some((kind, name)) if deps(kind) && !deps(table) => {
                    if name.starts_with("rk6") {
                        out.push((name.trim_matches('"').to_string(), i + 1));
                    }
                }
                _ => in_deps = deps(table),
            }
            continue;
        }
        if !in_deps {
            continue;
        }
        let key = line
            .split(|c: char| c == '=' || c == '.' || c.is_whitespace())
            .next()
            .unwrap_or("")
            .trim_matches('"');
        if key.starts_with("rk6") {
            out.push((key.to_string(), i + 1));
        }
    }
    out
}

#[test]
fn crates_depend_downward() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut wrong = Vec::new();
    for row in CRATES {
        let text = std::fs::read_to_string(root.join(row.manifest))
            .unwrap_or_else(|e| panic!("{}: {e}", row.manifest));
        for (dep, line) in rk6_dependencies(&text) {
            match CRATES.iter().find(|r| r.name == dep) {
                Some(d) if d.layer < row.layer => {}
                Some(d) => wrong.push(format!(
                    "{}:{line}: {} (layer {}) depends on {dep} (layer {})",
                    row.manifest, row.name, row.layer, d.layer
                )),
                None => wrong.push(format!(
                    "{}:{line}: {dep} has no row in tests/layering/mod.rs",
                    row.manifest
                )),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "crates depend downward only (layers in tests/layering/mod.rs, as docs/architecture.md \
         draws them):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn manifests_are_read_for_their_rk6_dependencies() {
    let toml = r#"
[workspace.dependencies]
rk6-http = { path = "crates/http" }

[dependencies]
serde = "1"
rk6-options.workspace = true
rk6-http = { workspace = true }

[dev-dependencies]
"rk6-js" = { path = "../js" }

[target.'cfg(unix)'.dependencies]
rk6-metrics.workspace = true

[dependencies.rk6-output]
workspace = true

[lints]
rk6-nothing = 1
"#;
    let names: Vec<String> = rk6_dependencies(toml).into_iter().map(|d| d.0).collect();
    assert_eq!(
        names,
        [
            "rk6-options",
            "rk6-http",
            "rk6-js",
            "rk6-metrics",
            "rk6-output"
        ]
    );
    let root = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .expect("read Cargo.toml");
    assert!(
        rk6_dependencies(&root).len() >= 7,
        "the rk6 package uses every crate"
    );
}

#[test]
fn every_crate_has_a_row() {
    // The workspace's crates, and the benchmark helpers' crates beside bench/'s scripts.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs: BTreeSet<String> = ["crates", "bench"]
        .iter()
        .flat_map(|top| {
            std::fs::read_dir(root.join(top))
                .unwrap_or_else(|e| panic!("read {top}/: {e}"))
                .filter_map(|e| e.ok())
                .filter(|e| e.path().join("src").is_dir())
                .map(move |e| format!("{top}/{}/src", e.file_name().to_string_lossy()))
        })
        .collect();
    let rows: BTreeSet<String> = CRATES.iter().map(|r| r.src.to_string()).collect();
    assert_eq!(
        dirs, rows,
        "tests/layering/mod.rs: CRATES lists every crate"
    );
}

#[test]
fn the_scan_reads_the_crates() {
    // Guards against a scan that silently sees nothing: these edges exist.
    let row = |name: &str| CRATES.iter().find(|r| r.name == name).expect("a row");
    let js = node_edges(row("rk6-js"));
    assert!(js["modules/http/"].contains_key("host/"), "{js:?}");
    let sched = node_edges(row("rk6-scheduler"));
    assert!(sched["pool.rs"].contains_key("job.rs"), "{sched:?}");
}

#[test]
fn folders_group_files_where_the_table_says() {
    let g = Grain::Folder {
        file_level: &["", "modules"],
    };
    assert_eq!(node_of(&g, "value.rs"), "value.rs");
    assert_eq!(node_of(&g, "modules/k6.rs"), "modules/k6.rs");
    assert_eq!(node_of(&g, "modules/mod.rs"), "modules/mod.rs");
    assert_eq!(node_of(&g, "modules/http/request.rs"), "modules/http/");
    assert_eq!(node_of(&g, "vu/mod.rs"), "vu/");
    assert_eq!(node_of(&Grain::File, "vu/mod.rs"), "vu/mod.rs");
}
