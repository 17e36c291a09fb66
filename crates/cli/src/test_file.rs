//! The test a command is given: a script, or a k6 archive (told apart by contents, as k6
//! does, unless `--type` says). `run`, `inspect` and `archive` load either the same way: an
//! archive brings its own files, options and `__ENV`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rk6_js::{Archive, Program, ScriptError, ScriptErrorKind};
use serde_json::Value;

/// A script path or a read archive.
pub enum TestFile<'a> {
    /// A script on disk.
    Script(&'a Path),
    /// An archive, read whole.
    Archive(Box<Archive>),
}

impl<'a> TestFile<'a> {
    /// Opens `path`; `forced` is `--type` (`js` or `archive`) when given. A file that cannot
    /// be read is left to the script loader, which reports it in k6's words.
    pub fn open(path: &'a Path, forced: Option<&str>) -> Result<TestFile<'a>, ScriptError> {
        let archive_error = |e: rk6_js::ArchiveError| {
            ScriptError::new(
                ScriptErrorKind::Io,
                format!("{}: invalid archive: {e}", path.display()),
            )
        };
        match forced {
            Some("js") => return Ok(TestFile::Script(path)),
            Some("archive") => {
                let bytes = std::fs::read(path).map_err(|e| {
                    ScriptError::new(ScriptErrorKind::Io, format!("{}: {e}", path.display()))
                })?;
                return Archive::read(&bytes)
                    .map(|a| TestFile::Archive(Box::new(a)))
                    .map_err(archive_error);
            }
            Some(other) => {
                return Err(ScriptError::new(
                    ScriptErrorKind::Io,
                    format!(
                        "unknown or unspecified test type '{other}' for '{}'",
                        path.display()
                    ),
                ))
            }
            None => {}
        }
        match std::fs::read(path) {
            Ok(bytes) if rk6_js::archive::is_archive(&bytes) => Archive::read(&bytes)
                .map(|a| TestFile::Archive(Box::new(a)))
                .map_err(archive_error),
            _ => Ok(TestFile::Script(path)),
        }
    }

    /// The archive, when this is one.
    pub fn archive(&self) -> Option<&Archive> {
        match self {
            TestFile::Archive(a) => Some(a),
            TestFile::Script(_) => None,
        }
    }

    /// The `__ENV` of the test: an archive's own, then the system environment when
    /// `include_system`, then the `-e` flags (k6's order: later wins).
    pub fn env(
        &self,
        include_system: bool,
        flags: &[String],
    ) -> Result<BTreeMap<String, String>, String> {
        let mut env = self
            .archive()
            .and_then(|a| a.metadata.env.clone())
            .unwrap_or_default();
        if include_system {
            env.extend(std::env::vars());
        }
        for kv in flags {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("invalid -e/--env value \"{kv}\": expected KEY=VALUE"))?;
            env.insert(k.to_string(), v.to_string());
        }
        Ok(env)
    }

    /// The test's program with `env` as its `__ENV`.
    pub fn program(&self, env: BTreeMap<String, String>) -> Result<Arc<Program>, ScriptError> {
        match self {
            TestFile::Script(path) => Program::load(path, env),
            TestFile::Archive(a) => Program::from_archive(a, env),
        }
    }

    /// The script layer of the options: an archive's recorded options (its script's export
    /// is not read again, as in k6), else what the script exported.
    pub fn script_options<'v>(&'v self, exported: &'v Value) -> &'v Value {
        match self {
            TestFile::Archive(a) => &a.metadata.options,
            TestFile::Script(_) => exported,
        }
    }
}
