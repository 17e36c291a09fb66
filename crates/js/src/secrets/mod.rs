//! The run's secret sources (`--secret-source`, k6's syntax) and the redaction k6 applies
//! to every log line once a secret was read: each value handed to the script is replaced
//! by `***SECRET_REDACTED***` in log messages and fields. An empty value is not redacted
//! (k6 1.1.0 then puts the marker between every two characters of every line).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

mod url;

/// What replaces a secret in the logs.
pub const REDACTED: &str = "***SECRET_REDACTED***";

/// k6's name for the source `secrets.get` reads.
const DEFAULT: &str = "default";

/// One source: its keys and values, or where to fetch them.
#[derive(Debug)]
enum Source {
    /// `mock` and `file`: read at the start.
    Values(HashMap<String, String>),
    /// `url` (k6 1.5): each fetched when asked for.
    Url(url::UrlSource),
}

/// The secret sources of a run, by name, and the values read so far.
#[derive(Debug, Default)]
pub struct Secrets {
    sources: HashMap<String, Arc<Source>>,
    /// Values handed out, in the order first read (the order redaction tries them in).
    read: RwLock<Vec<String>>,
    /// Serialises the first reads so a value is listed once.
    first_reads: Mutex<()>,
}

/// Why `--secret-source` flags could not be used (k6's words; k6 exits 255).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SecretSourceError(String);

/// Why a secret could not be read (k6's words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GetError {
    /// No `--secret-source` was given.
    #[error("no secret sources are configured")]
    NoSources,
    /// No source has that name.
    #[error("no secret source with name {0:?} is configured")]
    UnknownSource(String),
    /// The source has no such key.
    #[error("no value")]
    NoValue,
    /// A `url` source could not fetch it.
    #[error("{0}")]
    Fetch(String),
}

impl Secrets {
    /// The sources the `--secret-source` flags describe: `TYPE=CONFIG` with `mock`
    /// (`key=value,…`) or `file` (`path` or `filename=path`, lines of `key=value`), each
    /// also taking `name=NAME` and `default`, or `url` (k6 1.5: `urlTemplate=…{key}…` and
    /// its other settings, also from `K6_SECRET_SOURCE_URL_*` looked up through `env`).
    /// Relative file paths are read from `cwd`.
    pub fn from_flags(
        flags: &[String],
        cwd: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Secrets, SecretSourceError> {
        let err = |m: String| SecretSourceError(m);
        let mut sources: HashMap<String, Arc<Source>> = HashMap::new();
        let mut default_set = false;
        for line in flags {
            // A bare `url` takes its settings from the environment.
            let (kind, config) = match line.split_once('=') {
                Some(kc) => kc,
                None if line == "url" => ("url", ""),
                None => {
                    return Err(err(format!(
                        "couldn't parse secret source configuration {line:?}"
                    )))
                }
            };
            if kind != "mock" && kind != "file" && kind != "url" {
                return Err(err(format!(
                    "no secret source for type {kind:?} for configuration {line:?}"
                )));
            }
            let (name, is_default, config) = name_and_default(config);
            let source = Arc::new(match kind {
                "mock" => mock(&config)?,
                "file" => file(&config, cwd)?,
                _ => Source::Url(url::UrlSource::new(url::UrlConfig::parse(
                    &config, cwd, env,
                )?)),
            });
            if sources.contains_key(&name) {
                // k6 names the type here, not the name.
                return Err(err(format!(
                    "secret source for name {kind:?} already registered before configuration {line:?}"
                )));
            }
            sources.insert(name, source.clone());
            if is_default {
                if default_set {
                    return Err(err(format!(
                        "can't have two secret sources that are default ones, second one was {config:?}"
                    )));
                }
                default_set = true;
                sources.insert(DEFAULT.into(), source);
            }
        }
        if sources.len() == 1 {
            let only = sources.values().next().cloned();
            if let Some(only) = only {
                sources.insert(DEFAULT.into(), only);
            }
        }
        Ok(Secrets {
            sources,
            ..Secrets::default()
        })
    }

    /// Whether any source is configured.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// The value of `key` in the source `source`; from now on it is redacted from logs.
    pub fn get(&self, source: &str, key: &str) -> Result<String, GetError> {
        if self.sources.is_empty() {
            return Err(GetError::NoSources);
        }
        let src = self
            .sources
            .get(source)
            .ok_or_else(|| GetError::UnknownSource(source.to_string()))?;
        let value = match &**src {
            Source::Values(values) => values.get(key).ok_or(GetError::NoValue)?.clone(),
            Source::Url(u) => u.get(key).map_err(GetError::Fetch)?,
        };
        if !value.is_empty() && !self.is_listed(&value) {
            let _first = self.first_reads.lock().unwrap_or_else(|e| e.into_inner());
            if !self.is_listed(&value) {
                self.read
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(value.clone());
            }
        }
        Ok(value)
    }

    fn is_listed(&self, value: &str) -> bool {
        self.read
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|v| v == value)
    }

    /// `text` with every secret read so far replaced, or `None` when it holds none. As Go's
    /// `strings.Replacer`: left to right, at each position the first secret (in the order
    /// they were read) that matches there.
    pub fn redact(&self, text: &str) -> Option<String> {
        let read = self.read.read().unwrap_or_else(|e| e.into_inner());
        if read.is_empty() || !read.iter().any(|s| text.contains(s.as_str())) {
            return None;
        }
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            if let Some(s) = read.iter().find(|s| rest.starts_with(s.as_str())) {
                out.push_str(REDACTED);
                i += s.len();
                continue;
            }
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
        Some(out)
    }
}

/// Takes `name=…` and `default` out of a source's config, as k6 does.
fn name_and_default(config: &str) -> (String, bool, String) {
    let (mut name, mut is_default) = (String::new(), false);
    let mut rest = Vec::new();
    for kv in config.split(',') {
        if kv == DEFAULT {
            is_default = true;
            continue;
        }
        match kv.split_once('=') {
            Some(("name", v)) => name = v.to_string(),
            None if kv == "name" => name = String::new(),
            _ => rest.push(kv),
        }
    }
    (name, is_default, rest.join(","))
}

fn pairs<'a>(items: impl Iterator<Item = &'a str>) -> Result<Source, SecretSourceError> {
    let mut values = HashMap::new();
    for kv in items {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(SecretSourceError(format!("parsing {kv:?}, needs =")));
        };
        values.insert(k.to_string(), v.to_string());
    }
    Ok(Source::Values(values))
}

/// `mock=key=value,…`.
fn mock(config: &str) -> Result<Source, SecretSourceError> {
    pairs(config.split(','))
}

/// `file=path` or `file=filename=path`: a file of `key=value` lines.
fn file(config: &str, cwd: &Path) -> Result<Source, SecretSourceError> {
    let mut filename = String::new();
    for kv in config.split(',') {
        match kv.split_once('=') {
            None => filename = kv.to_string(),
            Some(("filename", v)) => filename = v.to_string(),
            Some((k, _)) => {
                return Err(SecretSourceError(format!(
                    "unknown configuration key for file secret source {k:?}"
                )))
            }
        }
    }
    let text = std::fs::read(cwd.join(&filename)).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            std::io::ErrorKind::IsADirectory => "is a directory".to_string(),
            _ => e.to_string(),
        };
        SecretSourceError(format!("open {filename}: {why}"))
    })?;
    let text = String::from_utf8_lossy(&text);
    // Go's bufio.Scanner lines: `\n` ends a line and one `\r` before it is dropped.
    pairs(text.lines())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(f: &[&str]) -> Result<Secrets, String> {
        let v: Vec<String> = f.iter().map(|s| s.to_string()).collect();
        Secrets::from_flags(&v, &std::env::temp_dir(), &|_| None).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_mock_sources_with_names_and_default() {
        let s = flags(&["mock=cool=s3cret,k=a=b"]).unwrap();
        assert_eq!(s.get("default", "cool").unwrap(), "s3cret");
        assert_eq!(
            s.get("", "k").unwrap(),
            "a=b",
            "an unnamed source is named \"\""
        );
        assert_eq!(s.get("default", "nope"), Err(GetError::NoValue));
        assert_eq!(
            s.get("mock", "cool").unwrap_err().to_string(),
            "no secret source with name \"mock\" is configured"
        );
        let s = flags(&["mock=name=other,cool=o", "mock=default,cool=d"]).unwrap();
        assert_eq!(s.get("other", "cool").unwrap(), "o");
        assert_eq!(s.get("default", "cool").unwrap(), "d");
        assert_eq!(s.get("", "cool").unwrap(), "d");
        let s = flags(&["mock=name=a,x=1", "mock=name=b,x=2"]).unwrap();
        assert_eq!(
            s.get("default", "x").unwrap_err().to_string(),
            "no secret source with name \"default\" is configured"
        );
        let none = flags(&[]).unwrap();
        assert_eq!(
            none.get("default", "x").unwrap_err().to_string(),
            "no secret sources are configured"
        );
    }

    #[test]
    fn reads_file_sources() {
        let path = std::env::temp_dir().join(format!("rk6-secrets-{}.txt", std::process::id()));
        std::fs::write(&path, "k1=fromfile\r\nk2=a=b\n").unwrap();
        let p = path.display().to_string();
        let s = flags(&[&format!("file={p}")]).unwrap();
        assert_eq!(s.get("default", "k1").unwrap(), "fromfile");
        assert_eq!(s.get("default", "k2").unwrap(), "a=b");
        let s = flags(&[&format!("file=name=f,filename={p}")]).unwrap();
        assert_eq!(s.get("f", "k1").unwrap(), "fromfile");
        std::fs::write(&path, "k1=x\nbad\n").unwrap();
        assert_eq!(
            flags(&[&format!("file={p}")]).unwrap_err(),
            "parsing \"bad\", needs ="
        );
        let _ = std::fs::remove_file(&path);
        assert_eq!(
            flags(&["file=rk6-no-such-secrets.txt"]).unwrap_err(),
            "open rk6-no-such-secrets.txt: no such file or directory"
        );
    }

    #[test]
    fn bad_flags_fail_with_k6s_messages() {
        for (f, msg) in [
            (
                &["bogus=x"][..],
                "no secret source for type \"bogus\" for configuration \"bogus=x\"",
            ),
            (&["mock=novalue"], "parsing \"novalue\", needs ="),
            (&[""], "couldn't parse secret source configuration \"\""),
            (&["mock"], "couldn't parse secret source configuration \"mock\""),
            (
                &["mock=a=1", "mock=b=2"],
                "secret source for name \"mock\" already registered before configuration \"mock=b=2\"",
            ),
            (
                &["mock=name=x,default,a=1", "mock=name=y,default,b=2"],
                "can't have two secret sources that are default ones, second one was \"b=2\"",
            ),
            (
                &["file=s.txt,foo=bar"],
                "unknown configuration key for file secret source \"foo\"",
            ),
        ] {
            assert_eq!(flags(f).unwrap_err(), msg, "{f:?}");
        }
    }

    #[test]
    fn redacts_values_once_read() {
        let s = flags(&["mock=a=s3cret,b=ab,empty=,c=s3"]).unwrap();
        assert_eq!(s.redact("s3cret here"), None, "nothing read yet");
        s.get("default", "a").unwrap();
        s.get("default", "empty").unwrap();
        assert_eq!(
            s.redact("x s3crets3crets é").as_deref(),
            Some("x ***SECRET_REDACTED******SECRET_REDACTED***s é")
        );
        assert_eq!(s.redact("no"), None, "empty values are not redacted");
        let blank = flags(&["mock=b=  "]).unwrap();
        blank.get("default", "b").unwrap();
        assert_eq!(
            blank.redact("a  b").as_deref(),
            Some("a***SECRET_REDACTED***b")
        );
        s.get("default", "c").unwrap();
        // The first read secret wins where both match.
        assert_eq!(
            s.redact("s3cret s3").as_deref(),
            Some("***SECRET_REDACTED*** ***SECRET_REDACTED***")
        );
    }
}
