//! CSV records read the way Go's `encoding/csv` reads them with k6's settings (no lazy
//! quotes, no comments, no space trimming, every record as wide as the first): empty lines
//! are skipped, `\r\n` ends a line like `\n` (also inside a quoted field, where it becomes
//! `\n`), a `"` inside an unquoted field or after a closing quote is an error, and the errors
//! name lines and 1-based byte columns with Go's words. The `csv` crate accepts what Go
//! rejects (bare quotes, text after a closing quote), so it is not used.

use std::sync::Arc;

/// A record that could not be read, worded as Go's `csv.ParseError`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RecordError {
    /// A record with another number of fields than the first.
    #[error("record on line {line}: wrong number of fields")]
    FieldCount {
        /// The line the record starts on.
        line: usize,
    },
    /// A malformed field.
    #[error("{}", parse_message(*start_line, *line, *column, *bare))]
    Parse {
        /// The line the record starts on.
        start_line: usize,
        /// The line of the fault.
        line: usize,
        /// Its 1-based byte column.
        column: usize,
        /// A `"` in an unquoted field (else a misplaced or missing `"` in a quoted one).
        bare: bool,
    },
}

fn parse_message(start_line: usize, line: usize, column: usize, bare: bool) -> String {
    let what = if bare {
        "bare \" in non-quoted-field"
    } else {
        "extraneous or missing \" in quoted-field"
    };
    if start_line != line {
        format!("record on line {start_line}; parse error on line {line}, column {column}: {what}")
    } else {
        format!("parse error on line {line}, column {column}: {what}")
    }
}

impl RecordError {
    /// (start line, line, column) as Go's `ParseError` fields hold them.
    pub(crate) fn position(&self) -> (usize, usize, usize) {
        match *self {
            RecordError::FieldCount { line } => (line, line, 1),
            RecordError::Parse {
                start_line,
                line,
                column,
                ..
            } => (start_line, line, column),
        }
    }
}

/// Reads records from shared bytes, from an offset on.
pub(crate) struct Records {
    data: Arc<[u8]>,
    pos: usize,
    line: usize,
    comma: u8,
    fields: Option<usize>,
}

impl Records {
    /// A reader of `data` from byte `from` on, with the one-byte delimiter `comma`.
    pub(crate) fn new(data: Arc<[u8]>, from: usize, comma: u8) -> Self {
        Records {
            data,
            pos: from,
            line: 0,
            comma,
            fields: None,
        }
    }

    /// The next line, `\r\n` normalised to `\n` (a final `\r` without `\n` dropped), or
    /// `None` at the end.
    fn read_line(&mut self) -> Option<Vec<u8>> {
        if self.pos >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.pos..];
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        let mut line = rest[..end].to_vec();
        self.pos += end;
        self.line += 1;
        if line.last() != Some(&b'\n') && line.last() == Some(&b'\r') {
            line.pop();
        }
        let n = line.len();
        if n >= 2 && line[n - 2] == b'\r' && line[n - 1] == b'\n' {
            line.truncate(n - 1);
            line[n - 2] = b'\n';
        }
        Some(line)
    }

    /// The next record as strings (invalid UTF-8 replaced, as Go strings reach JS), `None`
    /// at the end of the data.
    pub(crate) fn next_record(&mut self) -> Option<Result<Vec<String>, RecordError>> {
        let mut line = loop {
            let line = self.read_line()?;
            if line != b"\n" {
                break line;
            }
        };
        let start_line = self.line;
        let mut fields: Vec<Vec<u8>> = Vec::new();
        let mut col = 1usize;
        let mut at = 0usize;
        let without_nl = |l: &[u8]| l.len() - usize::from(l.last() == Some(&b'\n'));
        'field: loop {
            let rest = &line[at..];
            if rest.first() != Some(&b'"') {
                let comma = rest.iter().position(|&b| b == self.comma);
                let field = match comma {
                    Some(i) => &rest[..i],
                    None => &rest[..without_nl(rest)],
                };
                if let Some(j) = field.iter().position(|&b| b == b'"') {
                    return Some(Err(RecordError::Parse {
                        start_line,
                        line: self.line,
                        column: col + j,
                        bare: true,
                    }));
                }
                fields.push(field.to_vec());
                match comma {
                    Some(i) => {
                        at += i + 1;
                        col += i + 1;
                        continue 'field;
                    }
                    None => break 'field,
                }
            }
            // A quoted field, possibly over several lines.
            let mut field = Vec::new();
            at += 1;
            col += 1;
            loop {
                let rest = &line[at..];
                if let Some(i) = rest.iter().position(|&b| b == b'"') {
                    field.extend_from_slice(&rest[..i]);
                    at += i + 1;
                    col += i + 1;
                    let after = &line[at..];
                    match after.first() {
                        Some(b'"') => {
                            field.push(b'"');
                            at += 1;
                            col += 1;
                        }
                        Some(&c) if c == self.comma => {
                            at += 1;
                            col += 1;
                            fields.push(field);
                            continue 'field;
                        }
                        _ if without_nl(after) == 0 => {
                            fields.push(field);
                            break 'field;
                        }
                        _ => {
                            return Some(Err(RecordError::Parse {
                                start_line,
                                line: self.line,
                                column: col - 1,
                                bare: false,
                            }))
                        }
                    }
                } else if !rest.is_empty() {
                    field.extend_from_slice(rest);
                    col += rest.len();
                    match self.read_line() {
                        Some(next) => {
                            line = next;
                            at = 0;
                            col = 1;
                        }
                        None => {
                            line = Vec::new();
                            at = 0;
                        }
                    }
                } else {
                    // The data ended inside the quotes.
                    return Some(Err(RecordError::Parse {
                        start_line,
                        line: self.line,
                        column: col,
                        bare: false,
                    }));
                }
            }
        }
        let record: Vec<String> = fields
            .into_iter()
            .map(|f| String::from_utf8_lossy(&f).into_owned())
            .collect();
        match self.fields {
            None => self.fields = Some(record.len()),
            Some(n) if n != record.len() => {
                return Some(Err(RecordError::FieldCount { line: start_line }))
            }
            Some(_) => {}
        }
        Some(Ok(record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(data: &str) -> Vec<Result<Vec<String>, String>> {
        let mut r = Records::new(data.as_bytes().into(), 0, b',');
        let mut out = Vec::new();
        while let Some(rec) = r.next_record() {
            let failed = rec.is_err();
            out.push(rec.map_err(|e| e.to_string()));
            if failed {
                break;
            }
        }
        out
    }

    fn ok(rows: &[&[&str]]) -> Vec<Result<Vec<String>, String>> {
        rows.iter()
            .map(|r| Ok(r.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn reads_quotes_crlf_and_skips_empty_lines() {
        assert_eq!(
            all("name,age\nalice,30\n\"car, ol\",\"5\"\"2\"\n"),
            ok(&[&["name", "age"], &["alice", "30"], &["car, ol", "5\"2"]])
        );
        assert_eq!(
            all("\u{feff}a,b\r\n\"multi\r\nline\",1\r\n\r\nx,2\r"),
            ok(&[&["\u{feff}a", "b"], &["multi\nline", "1"], &["x", "2"]])
        );
        assert_eq!(all(""), ok(&[]));
        assert_eq!(all("a,,\n,,\n"), ok(&[&["a", "", ""], &["", "", ""]]));
        assert_eq!(all("a\rb,c\n"), ok(&[&["a\rb", "c"]]));
    }

    #[test]
    fn errors_as_go_words_them() {
        let last = |d: &str| all(d).pop().unwrap().unwrap_err();
        assert_eq!(
            last("a,b\nc,d,e\n"),
            "record on line 2: wrong number of fields"
        );
        assert_eq!(
            last("a,b\n\n  \n"),
            "record on line 3: wrong number of fields"
        );
        assert_eq!(
            last("a,b\"c\n"),
            "parse error on line 1, column 4: bare \" in non-quoted-field"
        );
        assert_eq!(
            last("\u{feff}\"q\",b\n"),
            "parse error on line 1, column 4: bare \" in non-quoted-field"
        );
        assert_eq!(
            last("\"a\"b,c\n"),
            "parse error on line 1, column 3: extraneous or missing \" in quoted-field"
        );
        assert_eq!(
            last("a,b\n\"unterminated\n"),
            "parse error on line 2, column 15: extraneous or missing \" in quoted-field"
        );
        assert_eq!(
            last("x\n\"a\nb\"c\n"),
            "record on line 2; parse error on line 3, column 2: extraneous or missing \" in quoted-field"
        );
    }
}
