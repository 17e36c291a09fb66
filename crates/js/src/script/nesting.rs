//! A cheap scan that rejects scripts nested deeper than the parsers can take.
//!
//! Boa's parser (and oxc's) recurse once per nesting level, and each level of a parenthesized
//! or array expression costs Boa about 100-200 KiB of native stack: a few hundred levels
//! overflow even the 64 MiB parsing threads, and a stack overflow aborts the process. Real
//! scripts nest a few dozen levels, so the limits below leave room for them and stop
//! adversarial input with a syntax error instead.

use std::path::Path;

use crate::script::program::{ScriptError, ScriptErrorKind};
use crate::script::typescript::line_col;

/// Deepest `(`, `[`, `{` and template `${` nesting accepted.
pub(crate) const MAX_DEPTH: usize = 200;

/// Longest run of prefix operators (`!`, `~`, `+`, `-`) accepted.
pub(crate) const MAX_PREFIX_RUN: usize = 500;

/// Most operators that nest without brackets (`?`, `=>`, `=`, and `else if`) accepted in
/// one statement: `a ? b : c ? ...`, `x => y => ...`, `a = b = ...`, long `else if` chains.
pub(crate) const MAX_CHAIN: usize = 500;

/// Keywords after which a `/` starts a regular expression.
const REGEX_AFTER: &[&str] = &[
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "instanceof",
    "yield",
    "await",
];

#[derive(Clone, Copy, PartialEq)]
enum Open {
    Bracket,
    Template,
}

/// Fails with a syntax error naming the place where `source` nests too deeply.
/// `typescript` also counts type-argument brackets (`Array<Array<...`).
pub(crate) fn check(path: &Path, source: &str, typescript: bool) -> Result<(), ScriptError> {
    match find_too_deep(source, typescript) {
        None => Ok(()),
        Some((offset, what)) => {
            let (line, col) = line_col(source, offset);
            Err(ScriptError::new(
                ScriptErrorKind::Syntax,
                format!(
                    "SyntaxError: file://{}:{line}:{col}: {what}; rk6 refuses such scripts because parsing them would overflow the stack",
                    path.display()
                ),
            ))
        }
    }
}

/// The byte offset and description of the first place nested beyond the limits.
fn find_too_deep(source: &str, typescript: bool) -> Option<(usize, String)> {
    let bytes = source.as_bytes();
    let mut stack: Vec<Open> = Vec::new();
    let mut depth = 0usize;
    let mut prefix_run = 0usize;
    // Bracketless nesting in the current statement; `;` ends it, and so do `,` and braces
    // for all but `else` (whose chain spans the blocks between).
    let mut chain = 0usize;
    let mut elses = 0usize;
    // Whether a `/` here would be a division (after a value) rather than a regex.
    let mut after_value = false;
    let mut in_template = false;
    // `<` right after a name opens type arguments in TypeScript. A comparison written the
    // same way is never closed, so the count restarts at each statement or line.
    let mut angles = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if in_template {
            match c {
                b'\\' => i += 1,
                b'`' => {
                    in_template = false;
                    after_value = true;
                }
                b'$' if bytes.get(i + 1) == Some(&b'{') => {
                    in_template = false;
                    stack.push(Open::Template);
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Some((i, too_deep(depth)));
                    }
                    after_value = false;
                    i += 1;
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        if c != b'!' && c != b'~' && c != b'+' && c != b'-' && !c.is_ascii_whitespace() {
            prefix_run = 0;
        }
        if typescript {
            match c {
                b'<' if i > 0 && (is_word(bytes[i - 1]) || bytes[i - 1] == b'<') => {
                    angles += 1;
                    if depth + angles > MAX_DEPTH {
                        return Some((i, too_deep(depth + angles)));
                    }
                }
                b'>' => angles = angles.saturating_sub(1),
                b';' | b'\n' | b'{' | b'}' => angles = 0,
                _ => {}
            }
        }
        match c {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
                continue;
            }
            b'/' if !after_value => {
                i = skip_regex(bytes, i + 1);
                after_value = true;
                continue;
            }
            b'\'' | b'"' => {
                i = skip_string(bytes, i + 1, c);
                after_value = true;
                continue;
            }
            b'`' => in_template = true,
            b'(' | b'[' | b'{' => {
                if c == b'{' {
                    chain = 0;
                }
                stack.push(Open::Bracket);
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some((i, too_deep(depth)));
                }
                after_value = false;
            }
            b')' | b']' | b'}' => {
                if c == b'}' {
                    chain = 0;
                }
                // Unbalanced input is the parser's to report; never underflow here.
                if let Some(open) = stack.pop() {
                    depth -= 1;
                    if open == Open::Template && c == b'}' {
                        in_template = true;
                    }
                }
                after_value = true;
            }
            b'!' | b'~' | b'+' | b'-' => {
                prefix_run += 1;
                if prefix_run > MAX_PREFIX_RUN {
                    return Some((i, format!("more than {MAX_PREFIX_RUN} operators in a row")));
                }
                after_value = false;
            }
            c if is_word(c) => {
                let start = i;
                while i < bytes.len() && is_word(bytes[i]) {
                    i += 1;
                }
                let word = &source[start..i];
                if word == "else" {
                    elses += 1;
                    if elses > MAX_CHAIN {
                        return Some((start, too_chained()));
                    }
                }
                after_value = !REGEX_AFTER.contains(&word);
                continue;
            }
            c if c.is_ascii_whitespace() => {}
            b';' => {
                chain = 0;
                elses = 0;
                after_value = false;
            }
            b',' => {
                chain = 0;
                after_value = false;
            }
            b'?' if !matches!(bytes.get(i + 1), Some(b'.' | b'?'))
                && (i == 0 || bytes[i - 1] != b'?') =>
            {
                chain += 1;
                if chain > MAX_CHAIN {
                    return Some((i, too_chained()));
                }
                after_value = false;
            }
            b'=' if bytes.get(i + 1) != Some(&b'=')
                && !matches!(bytes[i.saturating_sub(1)], b'=' | b'!' | b'<' | b'>') =>
            {
                chain += 1;
                if chain > MAX_CHAIN {
                    return Some((i, too_chained()));
                }
                after_value = false;
            }
            _ => after_value = false,
        }
        i += 1;
    }
    None
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

fn too_chained() -> String {
    format!("more than {MAX_CHAIN} nested `?`, `=>`, `=` or `else` in one statement")
}

fn too_deep(depth: usize) -> String {
    format!("brackets nested {depth} levels deep (the limit is {MAX_DEPTH})")
}

/// The index after the string literal whose body starts at `i`.
fn skip_string(bytes: &[u8], mut i: usize, quote: u8) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' => return i,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// The index after the regex literal whose body starts at `i`.
fn skip_regex(bytes: &[u8], mut i: usize) -> usize {
    let mut in_class = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' => return i,
            b'[' => {
                in_class = true;
                i += 1;
            }
            b']' => {
                in_class = false;
                i += 1;
            }
            b'/' if !in_class => return i + 1,
            _ => i += 1,
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(open: &str, close: &str, n: usize) -> String {
        format!("let x = {}1{};", open.repeat(n), close.repeat(n))
    }

    #[test]
    fn accepts_ordinary_code() {
        let src = r#"
            const re = /[(\[]+/g; // ((((
            const s = "((((" + '[[[' + `${a({b: [1, 2]})}(((`;
            /* {{{{ */
            function f(a) { return a / 2 / (1 + 1); }
            if (x) { y = -(-1); z = !!w; } else if (a?.b ?? c) { q = a == b ? 1 : 2; }
        "#;
        assert!(find_too_deep(src, true).is_none());
        assert!(find_too_deep(&nested("(", ")", MAX_DEPTH), false).is_none());
    }

    #[test]
    fn rejects_deep_nesting() {
        for (o, c) in [("(", ")"), ("[", "]"), ("{a:", "}"), ("`${", "}`")] {
            let src = nested(o, c, MAX_DEPTH + 1);
            let (offset, what) = find_too_deep(&src, false).expect(o);
            assert!(what.contains("nested 201 levels"), "{what}");
            assert!(offset > 0);
        }
        let functions = "function f() {".repeat(100_000);
        assert!(find_too_deep(&functions, false).is_some());
        let bangs = format!("let x = {}1;", "!".repeat(100_000));
        assert!(find_too_deep(&bangs, false)
            .unwrap()
            .1
            .contains("operators in a row"));
        let ternaries = format!("let x = {} 1{};", "a ? 0 :".repeat(600), "");
        assert!(find_too_deep(&ternaries, false).unwrap().1.contains("`?`"));
        let arrows = format!("let f = {}1;", "x => ".repeat(600));
        assert!(find_too_deep(&arrows, false).is_some());
        let assigns = format!("{}1;", "a = ".repeat(600));
        assert!(find_too_deep(&assigns, false).is_some());
        let elifs = format!("if (a) {{}} {}", "else if (a) {} ".repeat(600));
        assert!(find_too_deep(&elifs, false).is_some());
        let generics = format!(
            "let x: {}number{};",
            "Array<".repeat(1000),
            ">".repeat(1000)
        );
        assert!(find_too_deep(&generics, true).is_some());
        assert!(find_too_deep(&generics, false).is_none());
        // Comparisons on separate lines never add up.
        let comparisons = "if (a<b) x();\n".repeat(1000);
        assert!(find_too_deep(&comparisons, true).is_none());
    }

    #[test]
    fn long_flat_code_is_not_a_chain() {
        let statements =
            "a = b ? c : d;\nif (a) { x(); } else if (b) { y(); } else { z(); }\n".repeat(2000);
        assert!(find_too_deep(&statements, false).is_none());
        let object = format!("const o = {{ {} }};", "k: (x) => x ? 1 : 2, ".repeat(2000));
        assert!(find_too_deep(&object, false).is_none());
    }

    #[test]
    fn reports_line_and_column() {
        let src = format!("let a = 1;\nlet b = {}", "(".repeat(300));
        let err = check(Path::new("/s/deep.js"), &src, false).unwrap_err();
        assert_eq!(err.kind, ScriptErrorKind::Syntax);
        assert!(
            err.message.contains("file:///s/deep.js:2:209:"),
            "{}",
            err.message
        );
    }
}
