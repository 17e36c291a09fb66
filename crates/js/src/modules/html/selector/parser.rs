//! Reading selector text into [`Group`]s with the grammar of k6's selector library
//! (cascadia): CSS 3 selectors plus `:contains`, `:containsOwn`, `:matches`, `:matchesOwn`,
//! `:has`, `:haschild`, `:input`, `:link`, `:lang`, `:enabled`, `:disabled`, `:checked`, the
//! attribute operators `!=` and `#=` (a regular expression) and the `i` flag. Pseudo-elements
//! are refused, as goquery compiles selectors without them.

use regex::Regex;

use super::{AttrOp, Combinator, Complex, Compound, Group, Simple};

/// Why selector text could not be read (the selection is then empty, as in k6).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ParseError(String);

type Result<T> = std::result::Result<T, ParseError>;

fn fail<T>(m: impl Into<String>) -> Result<T> {
    Err(ParseError(m.into()))
}

/// Parses a whole selector group; text left over is an error.
pub(crate) fn parse_group(text: &str) -> Result<Group> {
    let mut p = Parser { s: text, i: 0 };
    let group = p.group()?;
    if p.i < text.len() {
        return fail(format!(
            "parsing {text:?}: {} bytes left over",
            text.len() - p.i
        ));
    }
    Ok(group)
}

struct Parser<'a> {
    s: &'a str,
    i: usize,
}

fn name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c > 127
}

fn name_char(c: u8) -> bool {
    name_start(c) || c == b'-' || c.is_ascii_digit()
}

const PSEUDO_ELEMENTS: &[&str] = &[
    "after",
    "backdrop",
    "before",
    "cue",
    "first-letter",
    "first-line",
    "grammar-error",
    "marker",
    "placeholder",
    "selection",
    "spelling-error",
];

impl Parser<'_> {
    fn bytes(&self) -> &[u8] {
        self.s.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.i).copied()
    }

    fn at_end(&self) -> bool {
        self.i >= self.s.len()
    }

    /// Skips white space and comments; whether anything was skipped.
    fn skip_whitespace(&mut self) -> bool {
        let start = self.i;
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r' | b'\n' | 0x0c) => self.i += 1,
                Some(b'/') if self.s[self.i..].starts_with("/*") => {
                    match self.s[self.i + 2..].find("*/") {
                        Some(end) => self.i += end + 4,
                        None => break,
                    }
                }
                _ => break,
            }
        }
        self.i > start
    }

    /// `\` escapes: up to six hex digits (and one white space after), or one character.
    fn escape(&mut self) -> Result<String> {
        let b = self.bytes();
        if b.len() < self.i + 2 || b[self.i] != b'\\' {
            return fail("invalid escape sequence");
        }
        let start = self.i + 1;
        let c = b[start];
        if matches!(c, b'\r' | b'\n' | 0x0c) {
            return fail("escaped line ending outside string");
        }
        if c.is_ascii_hexdigit() {
            let mut j = start;
            while j < start + 6 && j < b.len() && b[j].is_ascii_hexdigit() {
                j += 1;
            }
            let v = u32::from_str_radix(&self.s[start..j], 16).unwrap_or(0);
            match b.get(j) {
                Some(b'\r') => {
                    j += 1;
                    if b.get(j) == Some(&b'\n') {
                        j += 1;
                    }
                }
                Some(b' ' | b'\t' | b'\n' | 0x0c) => j += 1,
                _ => {}
            }
            self.i = j;
            return Ok(char::from_u32(v).unwrap_or('\u{fffd}').to_string());
        }
        // One (possibly multi-byte) character.
        let ch = self.s[start..].chars().next().unwrap_or('\u{fffd}');
        self.i = start + ch.len_utf8();
        Ok(ch.to_string())
    }

    fn identifier(&mut self) -> Result<String> {
        let mut dashes = 0;
        while self.peek() == Some(b'-') {
            self.i += 1;
            dashes += 1;
        }
        match self.peek() {
            None => return fail("expected identifier, found EOF instead"),
            Some(c) if !(name_start(c) || c == b'\\') => {
                return fail(format!("expected identifier, found {} instead", c as char))
            }
            _ => {}
        }
        let name = self.name()?;
        Ok("-".repeat(dashes) + &name)
    }

    fn name(&mut self) -> Result<String> {
        let mut out = String::new();
        loop {
            match self.peek() {
                Some(c) if name_char(c) => {
                    let start = self.i;
                    while self.peek().is_some_and(name_char) {
                        self.i += 1;
                    }
                    out.push_str(&self.s[start..self.i]);
                }
                Some(b'\\') => out.push_str(&self.escape()?),
                _ => break,
            }
        }
        if out.is_empty() {
            return fail("expected name, found EOF instead");
        }
        Ok(out)
    }

    fn string(&mut self) -> Result<String> {
        let b = self.bytes();
        if b.len() < self.i + 2 {
            return fail("expected string, found EOF instead");
        }
        let quote = b[self.i];
        self.i += 1;
        let mut out = String::new();
        loop {
            let b = self.bytes();
            match b.get(self.i) {
                None => return fail("EOF in string"),
                Some(&c) if c == quote => break,
                Some(b'\\') => match b.get(self.i + 1) {
                    Some(b'\r') if b.get(self.i + 2) == Some(&b'\n') => self.i += 3,
                    Some(b'\r' | b'\n' | 0x0c) => self.i += 2,
                    _ => out.push_str(&self.escape()?),
                },
                Some(b'\r' | b'\n' | 0x0c) => return fail("unexpected end of line in string"),
                Some(_) => {
                    let start = self.i;
                    while let Some(&c) = self.bytes().get(self.i) {
                        if c == quote || matches!(c, b'\\' | b'\r' | b'\n' | 0x0c) {
                            break;
                        }
                        self.i += 1;
                    }
                    out.push_str(&self.s[start..self.i]);
                }
            }
        }
        self.i += 1;
        Ok(out)
    }

    /// A regular expression up to the `)` or `]` that closes the enclosing bracket.
    fn regex(&mut self) -> Result<Regex> {
        if self.s.len() < self.i + 2 {
            return fail("expected regular expression, found EOF instead");
        }
        let mut depth = 0i32;
        let mut j = self.i;
        let b = self.bytes();
        while j < b.len() {
            match b[j] {
                b'(' | b'[' => depth += 1,
                b')' | b']' => {
                    depth -= 1;
                    if depth < 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        if j >= b.len() {
            return fail("EOF in regular expression");
        }
        let rx = Regex::new(&self.s[self.i..j]).map_err(|e| ParseError(e.to_string()))?;
        self.i = j;
        Ok(rx)
    }

    fn open_paren(&mut self) -> bool {
        if self.peek() == Some(b'(') {
            self.i += 1;
            self.skip_whitespace();
            return true;
        }
        false
    }

    fn close_paren(&mut self) -> bool {
        let start = self.i;
        self.skip_whitespace();
        if self.peek() == Some(b')') {
            self.i += 1;
            return true;
        }
        self.i = start;
        false
    }

    fn expect_open(&mut self) -> Result<()> {
        if self.open_paren() {
            Ok(())
        } else {
            fail("expected '(' but didn't find it")
        }
    }

    fn expect_close(&mut self) -> Result<()> {
        if self.close_paren() {
            Ok(())
        } else {
            fail("expected ')' but didn't find it")
        }
    }

    fn group(&mut self) -> Result<Group> {
        let mut out = vec![self.complex()?];
        while self.peek() == Some(b',') {
            self.i += 1;
            out.push(self.complex()?);
        }
        Ok(Group(out))
    }

    fn complex(&mut self) -> Result<Complex> {
        self.skip_whitespace();
        let first = self.compound()?;
        let mut rest = Vec::new();
        loop {
            let mut combinator = self.skip_whitespace().then_some(Combinator::Descendant);
            match self.peek() {
                None | Some(b',' | b')') => break,
                Some(c @ (b'+' | b'>' | b'~')) => {
                    combinator = Some(match c {
                        b'+' => Combinator::Adjacent,
                        b'>' => Combinator::Child,
                        _ => Combinator::Sibling,
                    });
                    self.i += 1;
                    self.skip_whitespace();
                }
                _ => {}
            }
            let Some(c) = combinator else { break };
            rest.push((c, self.compound()?));
        }
        Ok(Complex { first, rest })
    }

    fn compound(&mut self) -> Result<Compound> {
        let mut parts = Vec::new();
        match self.peek() {
            None => return fail("expected selector, found EOF instead"),
            Some(b'*') => {
                self.i += 1;
                if self.s[self.i..].starts_with("|*") && self.i + 2 < self.s.len() {
                    self.i += 2;
                }
            }
            Some(b'#' | b'.' | b'[' | b':') => {}
            Some(_) => parts.push(Simple::Tag(self.identifier()?.to_ascii_lowercase())),
        }
        loop {
            let part = match self.peek() {
                Some(b'#') => {
                    self.i += 1;
                    Simple::Id(self.name()?)
                }
                Some(b'.') => {
                    self.i += 1;
                    Simple::Class(self.identifier()?)
                }
                Some(b'[') => self.attribute()?,
                Some(b':') => self.pseudo()?,
                _ => break,
            };
            parts.push(part);
        }
        Ok(Compound(parts))
    }

    fn attribute(&mut self) -> Result<Simple> {
        self.i += 1;
        self.skip_whitespace();
        let key = self.identifier()?.to_ascii_lowercase();
        self.skip_whitespace();
        if self.at_end() {
            return fail("unexpected EOF in attribute selector");
        }
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Simple::Attr {
                key,
                op: AttrOp::Exists,
                value: String::new(),
                regex: None,
                insensitive: false,
            });
        }
        if self.i + 2 >= self.s.len() {
            return fail("unexpected EOF in attribute selector");
        }
        let two = &self.bytes()[self.i..self.i + 2];
        let op = if two[0] == b'=' {
            AttrOp::Equals
        } else if two[1] != b'=' {
            return fail(format!(
                "expected equality operator, found {:?} instead",
                String::from_utf8_lossy(two)
            ));
        } else {
            match two[0] {
                b'!' => AttrOp::NotEquals,
                b'~' => AttrOp::Includes,
                b'|' => AttrOp::DashMatch,
                b'^' => AttrOp::Prefix,
                b'$' => AttrOp::Suffix,
                b'*' => AttrOp::Substring,
                b'#' => AttrOp::Regex,
                _ => {
                    return fail(format!(
                        "attribute operator {:?} is not supported",
                        String::from_utf8_lossy(two)
                    ))
                }
            }
        };
        self.i += if op == AttrOp::Equals { 1 } else { 2 };
        self.skip_whitespace();
        if self.at_end() {
            return fail("unexpected EOF in attribute selector");
        }
        let (value, regex) = if op == AttrOp::Regex {
            (String::new(), Some(self.regex()?))
        } else if matches!(self.peek(), Some(b'"' | b'\'')) {
            (self.string()?, None)
        } else {
            (self.identifier()?, None)
        };
        self.skip_whitespace();
        if self.at_end() {
            return fail("unexpected EOF in attribute selector");
        }
        let insensitive = matches!(self.peek(), Some(b'i' | b'I'));
        if insensitive {
            self.i += 1;
        }
        self.skip_whitespace();
        match self.peek() {
            None => fail("unexpected EOF in attribute selector"),
            Some(b']') => {
                self.i += 1;
                Ok(Simple::Attr {
                    key,
                    op,
                    value,
                    regex,
                    insensitive,
                })
            }
            Some(c) => fail(format!("expected ']', found '{}' instead", c as char)),
        }
    }

    fn pseudo(&mut self) -> Result<Simple> {
        self.i += 1;
        if self.at_end() {
            return fail("got empty pseudoclass (or pseudoelement)");
        }
        let double = self.peek() == Some(b':');
        if double {
            self.i += 1;
        }
        let name = self.identifier()?.to_ascii_lowercase();
        if double || PSEUDO_ELEMENTS.contains(&name.as_str()) {
            if !PSEUDO_ELEMENTS.contains(&name.as_str()) {
                return fail(format!("unknown pseudoelement :{name}"));
            }
            return fail(format!(
                "pseudo-element {name} found, but pseudo-elements support is disabled"
            ));
        }
        let nth = |a, b, last, of_type| Simple::Nth {
            a,
            b,
            last,
            of_type,
        };
        Ok(match name.as_str() {
            "not" | "has" | "haschild" => {
                self.expect_open()?;
                let group = self.group()?;
                self.expect_close()?;
                match name.as_str() {
                    "not" => Simple::Not(group),
                    "has" => Simple::Has(group),
                    _ => Simple::HasChild(group),
                }
            }
            "contains" | "containsown" => {
                self.expect_open()?;
                if self.at_end() {
                    return fail("unmatched '('");
                }
                let value = if matches!(self.peek(), Some(b'"' | b'\'')) {
                    self.string()?
                } else {
                    self.identifier()?
                };
                self.skip_whitespace();
                if self.at_end() {
                    return fail("unexpected EOF in pseudo selector");
                }
                self.expect_close()?;
                Simple::Contains {
                    own: name == "containsown",
                    value: value.to_lowercase(),
                }
            }
            "matches" | "matchesown" => {
                self.expect_open()?;
                let regex = self.regex()?;
                if self.at_end() {
                    return fail("unexpected EOF in pseudo selector");
                }
                self.expect_close()?;
                Simple::Matches {
                    own: name == "matchesown",
                    regex,
                }
            }
            "nth-child" | "nth-last-child" | "nth-of-type" | "nth-last-of-type" => {
                self.expect_open()?;
                let (a, b) = self.nth()?;
                self.expect_close()?;
                nth(a, b, name.contains("last"), name.ends_with("of-type"))
            }
            "first-child" => nth(0, 1, false, false),
            "last-child" => nth(0, 1, true, false),
            "first-of-type" => nth(0, 1, false, true),
            "last-of-type" => nth(0, 1, true, true),
            "only-child" => Simple::OnlyChild { of_type: false },
            "only-of-type" => Simple::OnlyChild { of_type: true },
            "input" => Simple::Input,
            "empty" => Simple::Empty,
            "root" => Simple::Root,
            "link" => Simple::Link,
            "lang" => {
                self.expect_open()?;
                if self.at_end() {
                    return fail("unmatched '('");
                }
                let lang = self.identifier()?.to_lowercase();
                self.skip_whitespace();
                if self.at_end() {
                    return fail("unexpected EOF in pseudo selector");
                }
                self.expect_close()?;
                Simple::Lang(lang)
            }
            "enabled" => Simple::Enabled,
            "disabled" => Simple::Disabled,
            "checked" => Simple::Checked,
            "visited" | "hover" | "active" | "focus" | "target" => Simple::Never,
            _ => return fail(format!("unknown pseudoclass or pseudoelement :{name}")),
        })
    }

    fn integer(&mut self) -> Result<i64> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        if self.i == start {
            return fail("expected integer, but didn't find it");
        }
        self.s[start..self.i]
            .parse()
            .map_err(|e: std::num::ParseIntError| ParseError(e.to_string()))
    }

    /// `an+b`, `odd`, `even`.
    fn nth(&mut self) -> Result<(i64, i64)> {
        let eof = || fail("unexpected EOF while attempting to parse expression of form an+b");
        let invalid =
            || fail("unexpected character while attempting to parse expression of form an+b");
        let sign: i64 = match self.peek() {
            None => return eof(),
            Some(b'-') => {
                self.i += 1;
                -1
            }
            Some(b'+') => {
                self.i += 1;
                1
            }
            Some(b'o' | b'O' | b'e' | b'E') => {
                let id = self.name()?.to_ascii_lowercase();
                return match id.as_str() {
                    "odd" => Ok((2, 1)),
                    "even" => Ok((2, 0)),
                    _ => fail(format!(
                        "expected 'odd' or 'even', but found '{id}' instead"
                    )),
                };
            }
            Some(c) if c.is_ascii_digit() || c == b'n' || c == b'N' => 1,
            Some(_) => return invalid(),
        };
        let a = match self.peek() {
            None => return eof(),
            Some(c) if c.is_ascii_digit() => {
                let a = sign * self.integer()?;
                match self.peek() {
                    None => return eof(),
                    Some(b'n' | b'N') => {
                        self.i += 1;
                        a
                    }
                    Some(_) => return Ok((0, a)),
                }
            }
            Some(b'n' | b'N') => {
                self.i += 1;
                sign
            }
            Some(_) => return invalid(),
        };
        self.skip_whitespace();
        match self.peek() {
            None => eof(),
            Some(b'+') => {
                self.i += 1;
                self.skip_whitespace();
                Ok((a, self.integer()?))
            }
            Some(b'-') => {
                self.i += 1;
                self.skip_whitespace();
                Ok((a, -self.integer()?))
            }
            Some(_) => Ok((a, 0)),
        }
    }
}
