//! Rust source as the few tokens the layering check reads: identifiers, `::` and single
//! punctuation, each with its line. Comments, strings, chars, numbers and lifetimes become
//! nothing or an opaque literal, so a path inside a string or comment is never an edge.

/// One token of a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
    /// A string, char or number literal.
    Lit,
}

/// A token and the line it starts on (1-based).
#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
}

fn ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Splits `src` into tokens.
pub fn tokens(src: &str) -> Vec<Token> {
    let s: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Advances over `s[from..to]`, counting the lines it passes.
    let skip = |from: usize, to: usize, line: &mut usize| {
        *line += s[from..to.min(s.len())]
            .iter()
            .filter(|c| **c == '\n')
            .count();
        to
    };
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let (mut depth, mut j) = (0, i);
            while j < s.len() {
                if s[j] == '/' && s.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if s[j] == '*' && s.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            i = skip(i, j, &mut line);
        } else if let Some(end) = raw_string(&s, i) {
            out.push(Token {
                tok: Tok::Lit,
                line,
            });
            i = skip(i, end, &mut line);
        } else if c == '"' || (matches!(c, 'b' | 'c') && next == Some('"')) {
            let mut j = if c == '"' { i + 1 } else { i + 2 };
            while j < s.len() && s[j] != '"' {
                j += if s[j] == '\\' { 2 } else { 1 };
            }
            out.push(Token {
                tok: Tok::Lit,
                line,
            });
            i = skip(i, j + 1, &mut line);
        } else if c == '\'' || (c == 'b' && next == Some('\'')) {
            let q = if c == '\'' { i } else { i + 1 };
            if s.get(q + 1) == Some(&'\\') {
                // An escaped char: after the escaped character, up to the next quote.
                let mut j = q + 3;
                while j < s.len() && s[j] != '\'' {
                    j += 1;
                }
                out.push(Token {
                    tok: Tok::Lit,
                    line,
                });
                i = j + 1;
            } else if s.get(q + 2) == Some(&'\'') {
                out.push(Token {
                    tok: Tok::Lit,
                    line,
                });
                i = q + 3;
            } else {
                // A lifetime or label: the quote and its name are no path.
                let mut j = q + 1;
                while j < s.len() && ident_char(s[j]) {
                    j += 1;
                }
                i = j;
            }
        } else if c == 'r' && next == Some('#') && s.get(i + 2).is_some_and(|c| ident_start(*c)) {
            // A raw identifier, `r#type`.
            let mut j = i + 2;
            while j < s.len() && ident_char(s[j]) {
                j += 1;
            }
            out.push(Token {
                tok: Tok::Ident(s[i + 2..j].iter().collect()),
                line,
            });
            i = j;
        } else if ident_start(c) {
            let mut j = i;
            while j < s.len() && ident_char(s[j]) {
                j += 1;
            }
            out.push(Token {
                tok: Tok::Ident(s[i..j].iter().collect()),
                line,
            });
            i = j;
        } else if c.is_ascii_digit() {
            let mut j = i;
            while j < s.len()
                && (ident_char(s[j])
                    || (s[j] == '.' && s.get(j + 1).is_some_and(char::is_ascii_digit)))
            {
                j += 1;
            }
            out.push(Token {
                tok: Tok::Lit,
                line,
            });
            i = j;
        } else if c == ':' && next == Some(':') {
            out.push(Token {
                tok: Tok::Sep,
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                tok: Tok::Punct(c),
                line,
            });
            i += 1;
        }
    }
    out
}

/// The end of a raw string (`r"…"`, `r#"…"#`, `br"…"`, `cr#"…"#`) starting at `i`.
fn raw_string(s: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if matches!(s[j], 'b' | 'c') {
        j += 1;
    }
    if s.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while s.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if s.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < s.len() {
        if s[j] == '"' && (1..=hashes).all(|k| s.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(src: &str) -> Vec<String> {
        tokens(src)
            .into_iter()
            .map(|t| match t.tok {
                Tok::Ident(s) => s,
                Tok::Sep => "::".into(),
                Tok::Punct(c) => c.to_string(),
                Tok::Lit => "LIT".into(),
            })
            .collect()
    }

    #[test]
    fn literals_and_comments_hide_paths() {
        let src = r###"a "crate::x" r#"crate::y "# b'c' '\'' 'a: x // crate::z
/* crate::w /* nested */ crate::v */ b"crate::u" br##"crate::t"## 1.5e3 r#type"###;
        assert_eq!(
            idents(src),
            ["a", "LIT", "LIT", "LIT", "LIT", ":", "x", "LIT", "LIT", "LIT", "type"]
        );
    }

    #[test]
    fn lines_are_counted_through_literals() {
        let toks = tokens("a\n\"x\ny\"\n/*\n*/ b");
        let last = toks.last().unwrap();
        assert_eq!((last.tok.clone(), last.line), (Tok::Ident("b".into()), 5));
    }
}
