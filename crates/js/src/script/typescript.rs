//! TypeScript without a build step: oxc strips the types (and lowers enums and namespaces),
//! and a position map built from oxc's source map sends stack positions back to the `.ts`.

use std::path::Path;

use oxc::allocator::Allocator;
use oxc::codegen::{Codegen, CodegenOptions};
use oxc::parser::Parser;
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;
use oxc::transformer::{TransformOptions, Transformer};

use crate::script::program::{ScriptError, ScriptErrorKind};

/// Whether `path` names a TypeScript module rk6 transpiles.
pub(crate) fn is_typescript(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("ts" | "mts" | "cts")
    )
}

/// Where generated JavaScript positions came from in the `.ts` source.
#[derive(Debug, Default)]
pub(crate) struct PositionMap {
    /// (generated line, generated column, source line, source column), 0-based, sorted.
    points: Vec<(u32, u32, u32, u32)>,
}

impl PositionMap {
    /// The 1-based `.ts` line and column of the 1-based generated `line`:`col`.
    pub(crate) fn lookup(&self, line: u32, col: u32) -> Option<(u32, u32)> {
        let key = (line.checked_sub(1)?, col.saturating_sub(1));
        let idx = self
            .points
            .partition_point(|p| (p.0, p.1) <= key)
            .checked_sub(1)?;
        let p = self.points[idx];
        // A point on an earlier line still names the statement being run; its column
        // does not apply to this line.
        let src_col = if p.0 == key.0 {
            p.3 + (key.1 - p.1)
        } else {
            p.3
        };
        Some((p.2 + 1, src_col + 1))
    }
}

/// A TypeScript module turned into JavaScript.
#[derive(Debug)]
pub(crate) struct Transpiled {
    /// The JavaScript Boa runs.
    pub(crate) code: String,
    /// Generated → source positions.
    pub(crate) map: PositionMap,
}

/// Strips the types from `source`; syntax errors name the `.ts` file, line and column.
pub(crate) fn transpile(path: &Path, source: &str) -> Result<Transpiled, ScriptError> {
    let allocator = Allocator::default();
    let source_type = SourceType::ts().with_module(true);
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if let Some(d) = parsed.diagnostics.errors().next() {
        let offset = d.labels.first().map_or(0, |l| l.offset());
        return Err(syntax_error(path, source, offset, &d.message));
    }
    let mut program = parsed.program;
    let semantic = SemanticBuilder::new()
        .with_check_syntax_error(true)
        .with_excess_capacity(2.0)
        .with_enum_eval(true)
        .build(&program);
    if let Some(d) = semantic.diagnostics.errors().next() {
        let offset = d.labels.first().map_or(0, |l| l.offset());
        return Err(syntax_error(path, source, offset, &d.message));
    }
    let scoping = semantic.semantic.into_scoping();
    let options = TransformOptions::default();
    let transformed =
        Transformer::new(&allocator, path, &options).build_with_scoping(scoping, &mut program);
    if let Some(d) = transformed.diagnostics.errors().next() {
        let offset = d.labels.first().map_or(0, |l| l.offset());
        return Err(syntax_error(path, source, offset, &d.message));
    }
    let generated = Codegen::new()
        .with_options(CodegenOptions {
            source_map_path: Some(path.to_path_buf()),
            ..CodegenOptions::default()
        })
        .build(&program);
    let mut points: Vec<(u32, u32, u32, u32)> = generated
        .map
        .iter()
        .flat_map(|m| m.get_tokens())
        .map(|t| {
            (
                t.get_dst_line(),
                t.get_dst_col(),
                t.get_src_line(),
                t.get_src_col(),
            )
        })
        .collect();
    points.sort_unstable();
    Ok(Transpiled {
        code: generated.code,
        map: PositionMap { points },
    })
}

/// `file:///x.ts:L:C: message`, the shape of rk6's other syntax errors.
fn syntax_error(path: &Path, source: &str, offset: u32, message: &str) -> ScriptError {
    let (line, col) = line_col(source, offset as usize);
    ScriptError::new(
        ScriptErrorKind::Syntax,
        format!(
            "SyntaxError: file://{}:{line}:{col}: {message}",
            path.display()
        ),
    )
}

/// 1-based line and column (in characters) of byte `offset`.
pub(crate) fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let before = &source[..offset.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_types_and_keeps_code() {
        let src = "interface P { x: number }\nconst p: P = { x: 1 } as P;\nenum E { A, B }\nexport default function f<T>(v: T): T { return v; }\n";
        let out = transpile(Path::new("/t/a.ts"), src).unwrap();
        assert!(!out.code.contains("interface"), "{}", out.code);
        assert!(!out.code.contains(": P"), "{}", out.code);
        assert!(
            out.code.contains("export default function f(v)"),
            "{}",
            out.code
        );
        assert!(out.code.contains("E[\"A\"]"), "{}", out.code);
    }

    #[test]
    fn maps_generated_positions_back() {
        let src = "interface A {\n  a: string;\n}\n\n\nfunction g(): void {\n  throw new Error('x');\n}\n";
        let out = transpile(Path::new("/t/a.ts"), src).unwrap();
        let (gl, gc) = out
            .code
            .lines()
            .enumerate()
            .find_map(|(i, l)| l.find("throw").map(|c| (i as u32 + 1, c as u32 + 1)))
            .unwrap();
        assert_eq!(out.map.lookup(gl, gc), Some((7, 3)));
    }

    #[test]
    fn syntax_errors_point_into_the_ts_source() {
        let src = "const a: number = 1;\nconst b: = 2;\n";
        let err = transpile(Path::new("/t/bad.ts"), src).unwrap_err();
        assert_eq!(err.kind, ScriptErrorKind::Syntax);
        assert!(
            err.message.contains("file:///t/bad.ts:2:"),
            "{}",
            err.message
        );
    }

    #[test]
    fn line_col_counts_characters() {
        assert_eq!(line_col("ab\ncé d", 7), (2, 4));
        assert_eq!(line_col("x", 0), (1, 1));
    }
}
