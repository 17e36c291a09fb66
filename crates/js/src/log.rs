//! Log lines in k6's logfmt-like format:
//! `time="2026-11-30T01:48:26Z" level=info msg="hello" source=console`.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

use crate::secrets::Secrets;

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Shown only with `-v`.
    Debug,
    /// `console.log` / `console.info`.
    Info,
    /// `console.warn`, failed requests.
    Warning,
    /// `console.error`, exceptions.
    Error,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }
}

/// Where log lines go; shared by all VUs of a test.
#[derive(Debug, Clone, Copy)]
pub struct Logger {
    /// Whether debug lines are printed (`-v`).
    pub verbose: bool,
    /// `--console-output`: the file console messages are appended to instead of stderr.
    pub console: Option<&'static ConsoleFile>,
    /// `--secret-source`: the run's secrets, redacted from every line once read.
    pub secrets: Option<&'static Secrets>,
}

/// A file receiving console output, shared by every VU.
#[derive(Debug)]
pub struct ConsoleFile(Mutex<std::fs::File>);

impl ConsoleFile {
    /// Opens `path` for appending (created if missing), as k6 does. It lives for the rest of
    /// the process so the `Copy` logger every VU holds can point at it.
    pub fn open(path: &Path) -> std::io::Result<&'static ConsoleFile> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Box::leak(Box::new(ConsoleFile(Mutex::new(file)))))
    }
}

impl Logger {
    /// A logger writing everything to stderr.
    pub fn new(verbose: bool) -> Logger {
        Logger {
            verbose,
            console: None,
            secrets: None,
        }
    }

    /// Logs a `console.*` message: to the console file when there is one (without the
    /// `source` field, like k6), else to stderr.
    pub fn console(&self, level: Level, msg: &str) {
        let Some(file) = self.console else {
            return self.log(level, msg, &[("source", "console")]);
        };
        if level == Level::Debug && !self.verbose {
            return;
        }
        let redacted = self.redact(msg);
        let msg = redacted.as_deref().unwrap_or(msg);
        let line = format_line(SystemTime::now(), level, msg, &[]);
        let mut f = file.0.lock().unwrap_or_else(|e| e.into_inner());
        let _ = f.write_all(line.as_bytes());
    }

    /// Writes one line to stderr with extra `key=value` fields after `msg`.
    pub fn log(&self, level: Level, msg: &str, fields: &[(&str, &str)]) {
        self.log_bytes(level, msg.as_bytes(), fields);
    }

    /// Like [`Logger::log`] for a message that may not be UTF-8 (bytes escaped as Go does).
    pub fn log_bytes(&self, level: Level, msg: &[u8], fields: &[(&str, &str)]) {
        if level == Level::Debug && !self.verbose {
            return;
        }
        let line = match self.secrets.filter(|s| !s.is_empty()) {
            None => format_line_bytes(SystemTime::now(), level, msg, fields),
            Some(_) => {
                // As k6's log hook: the message and every field, keys included.
                let text = String::from_utf8_lossy(msg);
                let msg = self.redact(&text).unwrap_or_else(|| text.into_owned());
                let fields: Vec<(String, String)> = fields
                    .iter()
                    .map(|(k, v)| {
                        let k = self.redact(k).unwrap_or_else(|| k.to_string());
                        (k, self.redact(v).unwrap_or_else(|| v.to_string()))
                    })
                    .collect();
                let fields: Vec<(&str, &str)> = fields
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                format_line_bytes(SystemTime::now(), level, msg.as_bytes(), &fields)
            }
        };
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    /// `text` with the secrets read so far replaced, `None` when nothing changes.
    fn redact(&self, text: &str) -> Option<String> {
        self.secrets.and_then(|s| s.redact(text))
    }
}

/// Formats one log line (with its trailing newline).
pub fn format_line(time: SystemTime, level: Level, msg: &str, fields: &[(&str, &str)]) -> String {
    format_line_bytes(time, level, msg.as_bytes(), fields)
}

/// [`format_line`] for a message that may hold invalid UTF-8.
fn format_line_bytes(
    time: SystemTime,
    level: Level,
    msg: &[u8],
    fields: &[(&str, &str)],
) -> String {
    let mut line = format!("time=\"{}\" level={}", log_time(time), level.as_str());
    // logrus leaves the msg field out entirely when the message is empty.
    if !msg.is_empty() {
        line.push_str(" msg=");
        line.push_str(&quote_bytes(msg));
    }
    for (k, v) in fields {
        line.push(' ');
        line.push_str(k);
        line.push('=');
        // logrus leaves an empty value bare (`group=`), as k6's http-debug lines show.
        if !v.is_empty() {
            line.push_str(&quote(v));
        }
    }
    line.push('\n');
    line
}

/// Quotes a logfmt value when it holds anything but plain word characters, escaping like
/// Go's `strconv.Quote`.
fn quote(v: &str) -> String {
    quote_bytes(v.as_bytes())
}

/// [`quote`] for bytes: invalid UTF-8 becomes `\xNN`, as in Go.
fn quote_bytes(v: &[u8]) -> String {
    let plain = !v.is_empty()
        && v.iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"-._/@^+".contains(&b));
    if plain {
        return String::from_utf8_lossy(v).into_owned();
    }
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for chunk in v.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\u{7}' => out.push_str("\\a"),
                '\u{8}' => out.push_str("\\b"),
                '\u{b}' => out.push_str("\\v"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    out.push_str(&format!("\\x{:02x}", c as u32))
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('"');
    out
}

/// UTC time as `2026-11-30T01:48:26Z`.
/// `--log-ns-timestamps` / `K6_LOG_NS_TIMESTAMPS` (k6 2.3): log times to the nanosecond.
static NANOSECOND_TIMES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns nanosecond log timestamps on for the rest of the process.
pub fn set_nanosecond_timestamps(on: bool) {
    NANOSECOND_TIMES.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// A log line's time: whole seconds as k6's logs, or to the nanosecond with
/// `--log-ns-timestamps` in Go's RFC3339Nano form (trailing zeros of the fraction dropped).
fn log_time(time: SystemTime) -> String {
    if !NANOSECOND_TIMES.load(std::sync::atomic::Ordering::Relaxed) {
        return rfc3339(time);
    }
    rfc3339_nano(time)
}

/// Go's `time.RFC3339Nano` of `time` in UTC.
pub fn rfc3339_nano(time: SystemTime) -> String {
    let text = humantime::format_rfc3339_nanos(time).to_string();
    // `…T01:49:29.120000000Z` → `…T01:49:29.12Z`; no fraction at all when it is zero.
    let Some((whole, fraction)) = text.trim_end_matches('Z').split_once('.') else {
        return text;
    };
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        format!("{whole}Z")
    } else {
        format!("{whole}.{fraction}Z")
    }
}

/// RFC 3339 to the second, in UTC.
pub fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    /// k6 2.3's `--log-ns-timestamps` (release notes v2.3.0, #6310): RFC3339Nano.
    #[test]
    fn nanosecond_times_as_go_prints_them() {
        let t = UNIX_EPOCH + Duration::new(1_796_003_369, 120_000_000);
        assert_eq!(rfc3339_nano(t), "2026-11-30T01:49:29.12Z");
        let t = UNIX_EPOCH + Duration::new(1_796_003_369, 5);
        assert_eq!(rfc3339_nano(t), "2026-11-30T01:49:29.000000005Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_796_003_369);
        assert_eq!(rfc3339_nano(t), "2026-11-30T01:49:29Z");
    }

    #[test]
    fn formats_like_k6() {
        let t = UNIX_EPOCH + Duration::from_secs(1_796_003_369);
        assert_eq!(rfc3339(t), "2026-11-30T01:49:29Z");
        let line = format_line(t, Level::Info, "hello world", &[("source", "console")]);
        assert_eq!(
            line,
            "time=\"2026-11-30T01:49:29Z\" level=info msg=\"hello world\" source=console\n"
        );
        let line = format_line(t, Level::Error, "Error: a \"b\"\n\tat x", &[]);
        assert!(line.contains(r#"msg="Error: a \"b\"\n\tat x""#), "{line}");
        assert_eq!(quote("plain"), "plain");
        let path = std::env::temp_dir().join(format!("rk6-console-{}.log", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let quiet = Logger {
            verbose: false,
            console: Some(ConsoleFile::open(&path).unwrap()),
            secrets: None,
        };
        quiet.console(Level::Info, "to the file");
        quiet.console(Level::Debug, "hidden");
        Logger {
            verbose: true,
            ..quiet
        }
        .console(Level::Debug, "shown");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].ends_with("level=info msg=\"to the file\""),
            "{text}"
        );
        assert!(lines[1].ends_with("level=debug msg=shown"), "{text}");
        std::fs::remove_file(path).unwrap();
        assert_eq!(quote(""), "\"\"");
        assert_eq!(
            quote_bytes(b"\x1f\x8b\x08\x00\x7f \xce\x89\x8d"),
            "\"\\x1f\\x8b\\b\\x00\\x7f \u{389}\\x8d\""
        );
        let line = format_line(
            SystemTime::UNIX_EPOCH,
            Level::Info,
            "m",
            &[("group", ""), ("vu", "1")],
        );
        assert!(line.ends_with("msg=m group= vu=1\n"), "{line}");
        let empty = format_line(
            SystemTime::UNIX_EPOCH,
            Level::Info,
            "",
            &[("source", "console")],
        );
        assert!(empty.ends_with("level=info source=console\n"), "{empty}");
    }
}
