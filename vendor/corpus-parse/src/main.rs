//! Dev-only corpus check (not an upstream Boa crate): parses each `.js` file given (files or
//! directories, recursively) the way k6 1.x decides what a file is, but with the vendored
//! Boa parser, and prints one tab-separated line per file: `path  esm|cjs|fail  error`.
//!
//! k6 parses a file as an ES module first; when that fails, or the module has no import,
//! export or top-level await, it parses it again wrapped as a CommonJS function body,
//! `(function(module, exports){` + code + `\n})`, and a file is CommonJS when that works.
//! When both fail the module error is the one reported.

use std::path::{Path, PathBuf};

use boa_ast::ModuleItem;
use boa_ast::operations::{ContainsSymbol, contains};
use boa_ast::scope::Scope;
use boa_interner::Interner;
use boa_parser::{Parser, Source};

enum Outcome {
    Esm,
    Cjs,
    Fail(String),
}

fn parse_module(code: &[u8]) -> Result<bool, String> {
    let mut interner = Interner::default();
    let module = Parser::new(Source::from_bytes(code))
        .parse_module(&Scope::new_global(), &mut interner)
        .map_err(|e| e.to_string())?;
    let has_import_export = module.items().items().iter().any(|item| {
        matches!(
            item,
            ModuleItem::ImportDeclaration(_) | ModuleItem::ExportDeclaration(_)
        )
    });
    Ok(has_import_export || contains(&module, ContainsSymbol::AwaitExpression))
}

fn parse_commonjs(code: &[u8]) -> Result<(), String> {
    let mut wrapped = b"(function(module, exports){".to_vec();
    wrapped.extend_from_slice(code);
    wrapped.extend_from_slice(b"\n})\n");
    let mut interner = Interner::default();
    Parser::new(Source::from_bytes(&wrapped))
        .parse_script(&Scope::new_global(), &mut interner)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn classify(code: &[u8]) -> Outcome {
    match parse_module(code) {
        Ok(true) => Outcome::Esm,
        Ok(false) => match parse_commonjs(code) {
            Ok(()) => Outcome::Cjs,
            Err(e) => Outcome::Fail(format!("commonjs: {e}")),
        },
        Err(module_err) => match parse_commonjs(code) {
            Ok(()) => Outcome::Cjs,
            Err(_) => Outcome::Fail(format!("module: {module_err}")),
        },
    }
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.sort();
        for e in entries {
            collect(&e, out);
        }
    } else if path.extension().is_some_and(|e| e == "js" || e == "mjs" || e == "cjs") {
        out.push(path.to_path_buf());
    }
}

fn main() {
    let mut files = Vec::new();
    for arg in std::env::args_os().skip(1) {
        collect(Path::new(&arg), &mut files);
    }
    // Boa's parser recurses per nesting level; bundled libraries nest deeply.
    let handle = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || {
            for file in files {
                let line = match std::fs::read(&file) {
                    Err(e) => format!("fail\tread: {e}"),
                    Ok(code) => match std::panic::catch_unwind(|| classify(&code)) {
                        Ok(Outcome::Esm) => "esm\t".to_string(),
                        Ok(Outcome::Cjs) => "cjs\t".to_string(),
                        Ok(Outcome::Fail(e)) => format!("fail\t{}", e.replace(['\n', '\t'], " ")),
                        Err(_) => "fail\tparser panicked".to_string(),
                    },
                };
                println!("{}\t{line}", file.display());
            }
        })
        .expect("spawn parser thread");
    handle.join().expect("parser thread");
}
