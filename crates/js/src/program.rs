//! The script being run: its entry file, the files it reads, and its environment.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What kind of script failure this is; decides the exit code at the edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptErrorKind {
    /// The script or a module cannot be read.
    Io,
    /// A syntax error in the script or an imported module.
    Syntax,
    /// An exception thrown while evaluating the init context or setup/teardown.
    Exception,
    /// The script asks for something rk6 does not support.
    Unsupported,
    /// `exec.test.abort()` was called.
    Aborted,
}

/// A script failure, with a message that names file, line and column where known.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ScriptError {
    /// The failure's kind.
    pub kind: ScriptErrorKind,
    /// Human-readable description.
    pub message: String,
}

impl ScriptError {
    pub(crate) fn new(kind: ScriptErrorKind, message: impl Into<String>) -> Self {
        ScriptError {
            kind,
            message: message.into(),
        }
    }
}

/// The script and what every VU shares about it; files are read from disk once.
#[derive(Debug)]
pub struct Program {
    /// Absolute path of the entry script.
    pub main: PathBuf,
    /// The `__ENV` every VU starts with.
    pub env: BTreeMap<String, String>,
    files: Mutex<HashMap<PathBuf, Arc<[u8]>>>,
}

impl Program {
    /// Reads the entry script at `path`.
    pub fn load(path: &Path, env: BTreeMap<String, String>) -> Result<Arc<Program>, ScriptError> {
        let main = std::path::absolute(path).map_err(|e| {
            ScriptError::new(ScriptErrorKind::Io, format!("{}: {e}", path.display()))
        })?;
        let program = Program {
            main: normalize(&main),
            env,
            files: Mutex::default(),
        };
        program.read(&program.main)?;
        Ok(Arc::new(program))
    }

    /// The directory relative paths of the entry script resolve against.
    pub fn dir(&self) -> &Path {
        self.main.parent().unwrap_or(Path::new("/"))
    }

    /// The contents of `path`, read once per test.
    pub fn read(&self, path: &Path) -> Result<Arc<[u8]>, ScriptError> {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(data) = files.get(path) {
            return Ok(data.clone());
        }
        let data: Arc<[u8]> = std::fs::read(path)
            .map_err(|e| {
                ScriptError::new(ScriptErrorKind::Io, format!("The moduleSpecifier \"{}\" couldn't be found on local disk. Make sure that you've specified the right path to the file. ({e})", path.display()))
            })?
            .into();
        files.insert(path.to_path_buf(), data.clone());
        Ok(data)
    }

    /// `spec` resolved against the directory of `referrer` (or of the entry script).
    pub fn resolve(&self, spec: &str, referrer: Option<&Path>) -> PathBuf {
        let base = referrer
            .and_then(Path::parent)
            .unwrap_or_else(|| self.dir());
        let spec = spec.strip_prefix("file://").unwrap_or(spec);
        normalize(&base.join(spec))
    }
}

/// Removes `.` and `..` components without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_to_the_referrer() {
        let p = Program {
            main: PathBuf::from("/a/b/main.js"),
            env: BTreeMap::new(),
            files: Mutex::default(),
        };
        assert_eq!(
            p.resolve("./lib/u.js", None),
            PathBuf::from("/a/b/lib/u.js")
        );
        assert_eq!(
            p.resolve("../x.js", Some(Path::new("/a/b/lib/u.js"))),
            PathBuf::from("/a/b/x.js")
        );
        assert_eq!(p.resolve("/abs.js", None), PathBuf::from("/abs.js"));
    }
}
