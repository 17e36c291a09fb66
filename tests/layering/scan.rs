//! What one file's code says about the crate's modules: the modules it declares, the items it
//! defines, its `use` imports and the paths its code names. Code under `#[cfg(test)]` is left
//! out: tests may reach anywhere.

use std::collections::BTreeSet;

use super::lex::{tokens, Tok, Token};

/// One `use` leaf: `use a::b::{c, d as e, f::*}` gives `a::b::c` (binding `c`), `a::b::d`
/// (binding `e`) and the glob `a::b::f` (no binding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Use {
    pub path: Vec<String>,
    /// The name the import binds; `None` for a glob.
    pub name: Option<String>,
    /// `pub use` (any visibility): a re-export.
    pub public: bool,
    pub line: usize,
}

/// A module of a file: the file's own, or an inline `mod name { … }` in it.
#[derive(Debug, Default)]
pub struct ModuleScan {
    /// The path from the file's module: empty for the file's own, `[name]` for `mod name {}`.
    pub inline: Vec<String>,
    /// `mod name;` declarations outside `#[cfg(test)]` (their files are modules too).
    pub declared: Vec<String>,
    /// Names of inline child modules.
    pub inline_children: Vec<String>,
    /// Items defined here (`fn`, `struct`, `enum`, `trait`, `type`, `const`, `static`,
    /// `union`, `macro_rules!`).
    pub defined: BTreeSet<String>,
    pub uses: Vec<Use>,
    /// Paths of two or more segments in code (outside `use`), with their line.
    pub paths: Vec<(Vec<String>, usize)>,
}

/// Scans one file; the first module is the file's own.
pub fn scan(src: &str) -> Vec<ModuleScan> {
    Scanner {
        t: tokens(src),
        mods: vec![ModuleScan::default()],
    }
    .run()
}

struct Scanner {
    t: Vec<Token>,
    mods: Vec<ModuleScan>,
}

impl Scanner {
    fn tok(&self, i: usize) -> Option<&Tok> {
        self.t.get(i).map(|t| &t.tok)
    }

    fn ident(&self, i: usize) -> Option<&str> {
        match self.tok(i) {
            Some(Tok::Ident(s)) => Some(s),
            _ => None,
        }
    }

    fn is(&self, i: usize, c: char) -> bool {
        self.tok(i) == Some(&Tok::Punct(c))
    }

    /// The index after the bracket group opening at `i` (`(`, `[` or `{`).
    fn after_group(&self, i: usize) -> usize {
        let mut depth = 0;
        let mut j = i;
        while j < self.t.len() {
            match self.tok(j) {
                Some(Tok::Punct('(' | '[' | '{')) => depth += 1,
                Some(Tok::Punct(')' | ']' | '}')) => {
                    depth -= 1;
                    if depth == 0 {
                        return j + 1;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        j
    }

    /// The index after the item starting at `i`: its `;`, or its first `{…}` block, at
    /// bracket depth 0.
    fn after_item(&self, i: usize) -> usize {
        let mut j = i;
        while j < self.t.len() {
            match self.tok(j) {
                Some(Tok::Punct(';')) => return j + 1,
                Some(Tok::Punct('{')) => return self.after_group(j),
                Some(Tok::Punct('(' | '[')) => j = self.after_group(j),
                _ => j += 1,
            }
        }
        j
    }

    /// The index after a visibility (`pub`, `pub(crate)`, `pub(in a::b)`) at `i`.
    fn after_visibility(&self, i: usize) -> usize {
        if self.ident(i) != Some("pub") {
            return i;
        }
        if self.is(i + 1, '(') {
            self.after_group(i + 1)
        } else {
            i + 1
        }
    }

    fn run(mut self) -> Vec<ModuleScan> {
        // (index into mods, brace depth its block opened at)
        let mut stack: Vec<(usize, i32)> = vec![(0, -1)];
        let mut depth = 0;
        let mut test_next = false;
        let mut i = 0;
        while i < self.t.len() {
            let cur = stack.last().map_or(0, |s| s.0);
            let line = self.t[i].line;
            if self.is(i, '#') {
                let open = if self.is(i + 1, '!') { i + 2 } else { i + 1 };
                if self.is(open, '[') {
                    let end = self.after_group(open);
                    let body: Vec<&Tok> =
                        self.t[open + 1..end - 1].iter().map(|t| &t.tok).collect();
                    let cfg_test = [
                        Tok::Ident("cfg".into()),
                        Tok::Punct('('),
                        Tok::Ident("test".into()),
                        Tok::Punct(')'),
                    ];
                    if body.len() == 4 && body.iter().zip(&cfg_test).all(|(a, b)| *a == b) {
                        test_next = true;
                    }
                    i = end;
                    continue;
                }
            }
            if test_next {
                test_next = false;
                let j = self.after_visibility(i);
                // A test-only `mod name;` is not followed: its file is left out.
                i = self.after_item(j);
                continue;
            }
            match self.tok(i) {
                Some(Tok::Punct('{')) => {
                    depth += 1;
                    i += 1;
                    continue;
                }
                Some(Tok::Punct('}')) => {
                    depth -= 1;
                    if stack.len() > 1 && stack.last().is_some_and(|s| s.1 == depth) {
                        stack.pop();
                    }
                    i += 1;
                    continue;
                }
                _ => {}
            }
            let prev_sep = i > 0 && matches!(self.tok(i - 1), Some(Tok::Sep | Tok::Punct('.')));
            let Some(word) = self.ident(i).map(str::to_string) else {
                i += 1;
                continue;
            };
            if prev_sep {
                i += 1;
                continue;
            }
            match word.as_str() {
                "pub" => {
                    let j = self.after_visibility(i);
                    if self.ident(j) == Some("use") {
                        i = self.use_decl(cur, j + 1, true);
                    } else {
                        i = j;
                    }
                }
                "use" => i = self.use_decl(cur, i + 1, false),
                "mod" => {
                    let Some(name) = self.ident(i + 1).map(str::to_string) else {
                        i += 1;
                        continue;
                    };
                    if self.is(i + 2, '{') {
                        let mut inline = self.mods[cur].inline.clone();
                        inline.push(name.clone());
                        self.mods[cur].inline_children.push(name);
                        self.mods.push(ModuleScan {
                            inline,
                            ..ModuleScan::default()
                        });
                        stack.push((self.mods.len() - 1, depth));
                        depth += 1;
                        i += 3;
                    } else {
                        self.mods[cur].declared.push(name);
                        i += 2;
                    }
                }
                "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" | "union" => {
                    let mut j = i + 1;
                    if self.ident(j) == Some("mut") {
                        j += 1;
                    }
                    match self.ident(j) {
                        Some("fn") | None => {}
                        Some(name) => {
                            let name = name.to_string();
                            self.mods[cur].defined.insert(name);
                        }
                    }
                    i += 1;
                }
                "macro_rules" if self.is(i + 1, '!') => {
                    if let Some(name) = self.ident(i + 2).map(str::to_string) {
                        self.mods[cur].defined.insert(name);
                    }
                    i += 3;
                }
                _ if self.tok(i + 1) == Some(&Tok::Sep) => {
                    let mut path = vec![word];
                    let mut j = i + 1;
                    while self.tok(j) == Some(&Tok::Sep) {
                        match self.ident(j + 1) {
                            Some(seg) => {
                                path.push(seg.to_string());
                                j += 2;
                            }
                            None => break,
                        }
                    }
                    self.mods[cur].paths.push((path, line));
                    i = j;
                }
                _ => i += 1,
            }
        }
        self.mods
    }

    /// Reads the use tree starting at `i` (after `use`); returns the index after its `;`.
    fn use_decl(&mut self, cur: usize, i: usize, public: bool) -> usize {
        let line = self.t.get(i).map_or(0, |t| t.line);
        let mut leaves = Vec::new();
        let end = self.use_tree(i, Vec::new(), &mut leaves);
        for (path, name) in leaves {
            self.mods[cur].uses.push(Use {
                path,
                name,
                public,
                line,
            });
        }
        let mut j = end;
        while j < self.t.len() && !self.is(j, ';') {
            j += 1;
        }
        j + 1
    }

    fn use_tree(
        &self,
        i: usize,
        prefix: Vec<String>,
        out: &mut Vec<(Vec<String>, Option<String>)>,
    ) -> usize {
        let mut path = prefix;
        let mut j = i;
        if self.tok(j) == Some(&Tok::Sep) {
            // `::name` is another crate.
            path.push("::".into());
            j += 1;
        }
        loop {
            match self.tok(j) {
                Some(Tok::Ident(seg)) if seg != "as" => {
                    path.push(seg.clone());
                    j += 1;
                    if self.tok(j) == Some(&Tok::Sep) {
                        j += 1;
                        continue;
                    }
                    break;
                }
                Some(Tok::Punct('*')) => {
                    out.push((path, None));
                    return j + 1;
                }
                Some(Tok::Punct('{')) => {
                    j += 1;
                    while j < self.t.len() && !self.is(j, '}') {
                        j = self.use_tree(j, path.clone(), out);
                        if self.is(j, ',') {
                            j += 1;
                        }
                    }
                    return j + 1;
                }
                _ => break,
            }
        }
        if path.last().is_some_and(|s| s == "self") {
            path.pop();
        }
        let mut name = path.last().cloned();
        if self.ident(j) == Some("as") {
            name = self.ident(j + 1).map(str::to_string);
            j += 2;
        }
        out.push((path, name));
        j
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<String> {
        s.split("::").map(String::from).collect()
    }

    #[test]
    fn use_trees_expand_with_bindings_and_globs() {
        let m =
            &scan("pub(crate) use crate::host::{self, Host, tags::{Pairs as P, *}};\nuse ::x::y;")
                [0];
        let got: Vec<(Vec<String>, Option<&str>, bool)> = m
            .uses
            .iter()
            .map(|u| (u.path.clone(), u.name.as_deref(), u.public))
            .collect();
        assert_eq!(
            got,
            [
                (p("crate::host"), Some("host"), true),
                (p("crate::host::Host"), Some("Host"), true),
                (p("crate::host::tags::Pairs"), Some("P"), true),
                (p("crate::host::tags"), None, true),
                (
                    ["::", "x", "y"].map(String::from).to_vec(),
                    Some("y"),
                    false
                ),
            ]
        );
    }

    #[test]
    fn code_paths_inline_modules_and_test_code() {
        let src = r#"
mod a;
#[cfg(test)]
mod helpers;
pub(crate) fn f() -> x::Y { super::super::z::w(); s.crate_thing::<u8>(); }
mod inner { use super::*; const C: u8 = 1; }
#[cfg(test)]
mod tests { use crate::hidden::X; }
#[cfg(test)]
pub(crate) fn only_tests() -> crate::hidden2::Y { todo!() }
static mut S: u8 = crate::k::V;
"#;
        let mods = scan(src);
        assert_eq!(mods.len(), 2);
        let (file, inner) = (&mods[0], &mods[1]);
        assert_eq!(file.declared, ["a"]);
        assert_eq!(file.inline_children, ["inner"]);
        assert_eq!(file.defined, ["f", "S"].map(String::from).into());
        let paths: Vec<&Vec<String>> = file.paths.iter().map(|(p, _)| p).collect();
        assert_eq!(
            paths,
            [&p("x::Y"), &p("super::super::z::w"), &p("crate::k::V")]
        );
        assert_eq!(inner.inline, ["inner"]);
        assert_eq!(inner.uses[0].path, p("super"));
        assert_eq!(inner.uses[0].name, None);
        assert_eq!(inner.defined, ["C"].map(String::from).into());
    }
}
