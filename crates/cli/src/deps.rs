//! `rk6 deps`: k6 1.6's `k6 deps` — a script's imports and build dependencies.

use std::io::Read;

use rk6_js::deps::{dependencies, Dependencies};
use serde_json::json;

use crate::args::DepsArgs;
use crate::exit::ExitCode;

/// Prints the script's dependencies in k6's layout (`--json`: k6's JSON).
pub fn run(args: DepsArgs) -> ExitCode {
    let (path, text) = if args.script.as_os_str() == "-" {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("reading the script from stdin: {e}");
            return ExitCode::Failure;
        }
        (std::env::current_dir().unwrap_or_default().join("-"), text)
    } else {
        let path = std::path::absolute(&args.script).unwrap_or_else(|_| args.script.clone());
        match std::fs::read_to_string(&path) {
            Ok(t) => (path, t),
            Err(e) => {
                eprintln!("{}: {e}", args.script.display());
                return ExitCode::Failure;
            }
        }
    };
    match dependencies(&path, &text) {
        Ok(deps) => {
            print!(
                "{}",
                if args.json {
                    as_json(&deps)
                } else {
                    as_text(&deps)
                }
            );
            ExitCode::Success
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::ScriptException
        }
    }
}

/// k6's three sections.
fn as_text(deps: &Dependencies) -> String {
    let mut out = String::new();
    if deps.build.is_empty() {
        out.push_str("Build Dependencies: (none)\n\n");
    } else {
        out.push_str("Build Dependencies:\n");
        for (name, constraint) in &deps.build {
            out.push_str(&format!("  {name}: {constraint}\n"));
        }
        out.push('\n');
    }
    if deps.imports.is_empty() {
        out.push_str("Imports: (none)\n\n");
    } else {
        out.push_str("Imports:\n");
        for i in &deps.imports {
            out.push_str(&format!("  {i}\n"));
        }
        out.push('\n');
    }
    let yes = if deps.custom_build_required() {
        "yes"
    } else {
        "no"
    };
    out.push_str(&format!("Custom Build Required: {yes}\n"));
    out
}

/// k6's JSON: two-space indent, keys in k6's order.
fn as_json(deps: &Dependencies) -> String {
    let v = json!({
        "buildDependencies": deps.build,
        "imports": deps.imports,
        "customBuildRequired": deps.custom_build_required(),
    });
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_as_k6_prints_them() {
        let mut deps = Dependencies::default();
        assert_eq!(
            as_text(&deps),
            "Build Dependencies: (none)\n\nImports: (none)\n\nCustom Build Required: no\n"
        );
        deps.imports.insert("k6/http".into());
        deps.build.insert("k6/x/sql".into(), "*".into());
        assert_eq!(
            as_text(&deps),
            "Build Dependencies:\n  k6/x/sql: *\n\nImports:\n  k6/http\n\nCustom Build Required: yes\n"
        );
        let v: serde_json::Value = serde_json::from_str(&as_json(&deps)).unwrap();
        assert_eq!(v["customBuildRequired"], true);
        assert_eq!(v["imports"][0], "k6/http");
    }
}
