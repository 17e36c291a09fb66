//! k6's rule for what a file is: an ES module when it parses as one and has an `import` or
//! `export` statement or a top-level `await`; otherwise CommonJS, the body of
//! `(function(module, exports){ … })` parsed strictly. Decided once per test, without a VU.

use boa_engine::ast::operations::{contains, ContainsSymbol};
use boa_engine::ast::scope::Scope;
use boa_engine::ast::ModuleItem;
use boa_engine::interner::Interner;
use boa_engine::parser::{Parser, Source};

/// The opening of k6's CommonJS wrapper; it keeps the file's line numbers (line 1's columns
/// move right by its length, as in k6).
pub(crate) const CJS_PREFIX: &str = "(function(module, exports){";
/// The end of k6's CommonJS wrapper.
pub(crate) const CJS_SUFFIX: &str = "\n})";

/// What a file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An ES module, with the specifiers of its static `import`/`export … from`.
    Esm {
        /// The module's static requests, as written.
        requests: Vec<String>,
    },
    /// A CommonJS file.
    CommonJs,
}

/// The file's kind, or the parser's message (`… at line L, col C`) of the parse k6 reports:
/// the ES-module one when both fail, the wrapped one when only it fails.
pub(crate) fn classify(code: &[u8]) -> Result<Kind, String> {
    let mut interner = Interner::default();
    let module_error = match Parser::new(Source::from_bytes(code))
        .parse_module(&Scope::new_global(), &mut interner)
    {
        Ok(module) => {
            let items = module.items();
            let has_statement = items.items().iter().any(|i| {
                matches!(
                    i,
                    ModuleItem::ImportDeclaration(_) | ModuleItem::ExportDeclaration(_)
                )
            });
            if has_statement || contains(items, ContainsSymbol::AwaitExpression) {
                let requests = items
                    .requests()
                    .into_iter()
                    .map(|sym| interner.resolve_expect(sym).to_string())
                    .collect();
                return Ok(Kind::Esm { requests });
            }
            None
        }
        Err(e) => Some(e.to_string()),
    };
    let wrapped = wrap(code);
    let parse_wrapped = |strict: bool, interner: &mut Interner| {
        let mut parser = Parser::new(Source::from_bytes(&wrapped));
        if strict {
            parser.set_strict();
        }
        parser
            .parse_script(&Scope::new_global(), interner)
            .map(drop)
            .map_err(|e| e.to_string())
    };
    let Err(strict_error) = parse_wrapped(true, &mut interner) else {
        return Ok(Kind::CommonJs);
    };
    // k6 parses the wrapper sloppily and then compiles it strictly: a file only strict mode
    // rejects (`with`, octal literals) fails with the strict error, any other with the
    // module parse's.
    match parse_wrapped(false, &mut interner) {
        Ok(()) => Err(strict_error),
        Err(sloppy_error) => Err(module_error.unwrap_or(sloppy_error)),
    }
}

/// The file as the body of k6's CommonJS wrapper function.
pub(crate) fn wrap(code: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(code.len() + CJS_PREFIX.len() + CJS_SUFFIX.len());
    out.extend_from_slice(CJS_PREFIX.as_bytes());
    out.extend_from_slice(code);
    out.extend_from_slice(CJS_SUFFIX.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(code: &str) -> Result<Kind, String> {
        classify(code.as_bytes())
    }

    #[test]
    fn decides_as_k6_does() {
        assert_eq!(
            kind("import { sleep } from 'k6';\nexport const a = 1;"),
            Ok(Kind::Esm {
                requests: vec!["k6".into()]
            })
        );
        assert_eq!(
            kind("export * from './x.js'"),
            Ok(Kind::Esm {
                requests: vec!["./x.js".into()]
            })
        );
        assert_eq!(
            kind("await Promise.resolve(1)"),
            Ok(Kind::Esm { requests: vec![] })
        );
        assert_eq!(kind("exports.a = 1;"), Ok(Kind::CommonJs));
        assert_eq!(kind("var x = 1;"), Ok(Kind::CommonJs));
        assert_eq!(kind("exports.p = import('./o.js')"), Ok(Kind::CommonJs));
        assert_eq!(
            kind("exports.a = 1; if (exports.a) { return; }"),
            Ok(Kind::CommonJs)
        );
    }

    #[test]
    fn reports_the_parse_k6_reports() {
        // Both fail: the module parse's error (line 2 of the file).
        let both = kind("var a = 1;\nvar b = ;").unwrap_err();
        assert!(both.contains("line 2"), "{both}");
        // Only the strict wrapped parse fails: its error.
        let strict = kind("with (Math) { exports.x = max(1, 2); }").unwrap_err();
        assert!(strict.contains("line 1"), "{strict}");
        let meta = kind("exports.url = import.meta.url;").unwrap_err();
        assert!(!meta.is_empty());
    }
}
