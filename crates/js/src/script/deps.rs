//! `rk6 deps` (k6 1.6's `k6 deps`): a script's ES imports, followed through its local
//! files without running anything, and the build dependencies they declare (`k6/x/…`
//! extensions, `"use k6 …"` directives). `require()` calls are not imports, as in k6.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use oxc::allocator::Allocator;
use oxc::parser::Parser;
use oxc::span::SourceType;
use url::Url;

/// What `rk6 deps` reports.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Dependencies {
    /// `k6` or a `k6/x/…` extension → its version constraint (`*` when none is given).
    pub build: BTreeMap<String, String>,
    /// Every module imported, as k6 names them: k6's modules by name, files and remote
    /// modules by URL; sorted.
    pub imports: BTreeSet<String>,
}

impl Dependencies {
    /// Whether running the script needs a k6 build with extensions, which rk6 cannot run.
    pub fn custom_build_required(&self) -> bool {
        self.build.keys().any(|k| k.starts_with("k6/x/"))
    }
}

/// The dependencies of the script at `main` (its text is `source`, read by the caller:
/// `-` is stdin).
pub fn dependencies(main: &Path, source: &str) -> Result<Dependencies, String> {
    let mut deps = Dependencies::default();
    let mut seen = BTreeSet::new();
    let mut todo = vec![(main.to_path_buf(), source.to_string())];
    while let Some((path, text)) = todo.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        for specifier in scan(&path, &text, &mut deps.build)? {
            if specifier == "k6" || specifier.starts_with("k6/") {
                if specifier.starts_with("k6/x/") {
                    deps.build
                        .entry(specifier.clone())
                        .or_insert_with(|| "*".into());
                }
                deps.imports.insert(specifier);
            } else if specifier.starts_with("https://") || specifier.starts_with("http://") {
                deps.imports.insert(specifier);
            } else {
                let file = resolve(&path, &specifier);
                let url = Url::from_file_path(&file)
                    .map(String::from)
                    .unwrap_or_else(|_| file.display().to_string());
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| format!("{}: {e}", file.display()))?;
                deps.imports.insert(url);
                todo.push((file, text));
            }
        }
    }
    Ok(deps)
}

/// `specifier` of a file imported by `from`, as a path.
fn resolve(from: &Path, specifier: &str) -> PathBuf {
    let s = specifier.strip_prefix("file://").unwrap_or(specifier);
    let base = from.parent().unwrap_or(Path::new("."));
    let joined = base.join(s);
    // Lexically, as k6 resolves URLs: `a/../b` is `b` even when `a` does not exist.
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            p => out.push(p),
        }
    }
    out
}

/// The modules one file imports, and its `"use k6 …"` directives added to `build`.
fn scan(
    path: &Path,
    text: &str,
    build: &mut BTreeMap<String, String>,
) -> Result<Vec<String>, String> {
    let ts = path.extension().is_some_and(|e| e == "ts");
    let source_type = if ts {
        SourceType::ts()
    } else {
        SourceType::mjs()
    };
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, text, source_type).parse();
    if let Some(e) = parsed.diagnostics.first() {
        return Err(format!("{}: {e}", path.display()));
    }
    for d in &parsed.program.directives {
        if let Some((name, constraint)) = use_k6(d.expression.value.as_str()) {
            build.insert(name, constraint);
        }
    }
    let mut out: Vec<String> = parsed
        .module_record
        .requested_modules
        .keys()
        .map(|k| k.to_string())
        .collect();
    out.sort();
    Ok(out)
}

/// A `"use k6 >= 1.2"` or `"use k6 with k6/x/sql >= 0.4"` directive: the dependency and
/// its constraint.
fn use_k6(directive: &str) -> Option<(String, String)> {
    let rest = directive.strip_prefix("use k6")?;
    if rest.is_empty() {
        return None;
    }
    let rest = rest.trim();
    if let Some(ext) = rest.strip_prefix("with ") {
        let ext = ext.trim();
        let (name, constraint) = ext.split_once(char::is_whitespace).unwrap_or((ext, ""));
        let constraint = constraint.trim();
        let constraint = if constraint.is_empty() {
            "*"
        } else {
            constraint
        };
        return Some((name.to_string(), constraint.to_string()));
    }
    Some(("k6".into(), rest.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_name_k6_or_an_extension() {
        assert_eq!(
            use_k6("use k6 >= 1.2"),
            Some(("k6".into(), ">= 1.2".into()))
        );
        assert_eq!(
            use_k6("use k6 with k6/x/sql >= 0.4"),
            Some(("k6/x/sql".into(), ">= 0.4".into()))
        );
        assert_eq!(
            use_k6("use k6 with k6/x/faker"),
            Some(("k6/x/faker".into(), "*".into()))
        );
        assert_eq!(use_k6("use strict"), None);
    }

    #[test]
    fn imports_are_followed_through_local_files() {
        let dir = std::env::temp_dir().join(format!("rk6-deps-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(
            dir.join("lib/a.js"),
            "import { sleep } from 'k6';\nexport const a = 1;\nconst x = require('./c.js');\n",
        )
        .unwrap();
        let main = dir.join("main.js");
        let src = "\"use k6 with k6/x/sql >= 0.4\";\nimport http from 'k6/http';\nimport { a } from './lib/a.js';\nimport sql from 'k6/x/sql';\nimport { x } from 'https://jslib.k6.io/k6-utils/1.4.0/index.js';\nexport default function () {}\n";
        let deps = dependencies(&main, src).unwrap();
        let a = Url::from_file_path(dir.join("lib/a.js"))
            .unwrap()
            .to_string();
        assert_eq!(
            deps.imports.iter().cloned().collect::<Vec<_>>(),
            [
                a.as_str(),
                "https://jslib.k6.io/k6-utils/1.4.0/index.js",
                "k6",
                "k6/http",
                "k6/x/sql"
            ]
        );
        assert_eq!(
            deps.build.get("k6/x/sql").map(String::as_str),
            Some(">= 0.4")
        );
        assert!(deps.custom_build_required());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
