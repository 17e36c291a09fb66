//! The script being run: its entry file, the files it reads, and its environment.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::run_scoped::RunScoped;
use crate::script::typescript::{is_typescript, PositionMap};

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

/// The script and what every VU shares about it; files are read from disk once. One per
/// run: the options-reading init pass and the run's VUs share it.
#[derive(Debug)]
pub struct Program {
    /// Absolute path of the entry script.
    pub main: PathBuf,
    /// The `__ENV` every VU starts with.
    pub env: BTreeMap<String, String>,
    files: Mutex<HashMap<PathBuf, Arc<[u8]>>>,
    sources: Mutex<HashMap<PathBuf, Arc<Source>>>,
    module_cache: Option<PathBuf>,
    /// What modules keep once per run (`SharedArray` data, once-per-run warnings).
    run_scoped: RunScoped,
}

/// A module's JavaScript, checked and (for TypeScript) transpiled once per test.
#[derive(Debug)]
pub(crate) struct Source {
    /// The code Boa parses.
    pub(crate) code: Arc<[u8]>,
    /// For TypeScript: where generated positions came from.
    pub(crate) map: Option<PositionMap>,
}

/// The environment variable naming the directory remote modules are read from.
pub const MODULE_CACHE_ENV: &str = "RK6_MODULE_CACHE";

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
            sources: Mutex::default(),
            module_cache: std::env::var_os(MODULE_CACHE_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            run_scoped: RunScoped::default(),
        };
        program.read(&program.main)?;
        Ok(Arc::new(program))
    }

    /// What modules keep once per run.
    pub(crate) fn run_scoped(&self) -> &RunScoped {
        &self.run_scoped
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

    /// The code of the module at `path`: nesting-checked, and transpiled when TypeScript.
    pub(crate) fn source(&self, path: &Path) -> Result<Arc<Source>, ScriptError> {
        if let Some(s) = self.lock_sources().get(path) {
            return Ok(s.clone());
        }
        let data = self.read(path)?;
        let text = String::from_utf8_lossy(&data);
        crate::script::nesting::check(path, &text, is_typescript(path))?;
        let source = if is_typescript(path) {
            let out = crate::script::typescript::transpile(path, &text)?;
            Source {
                code: out.code.into_bytes().into(),
                map: Some(out.map),
            }
        } else {
            Source {
                code: data.clone(),
                map: None,
            }
        };
        let source = Arc::new(source);
        self.lock_sources()
            .insert(path.to_path_buf(), source.clone());
        Ok(source)
    }

    fn lock_sources(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<Source>>> {
        self.sources.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The `.ts` line and column a generated position of a transpiled module came from.
    pub(crate) fn original_position(&self, path: &Path, line: u32, col: u32) -> Option<(u32, u32)> {
        let source = self.lock_sources().get(path)?.clone();
        source.map.as_ref()?.lookup(line, col)
    }

    /// The local file standing in for the remote module `url` (see [`MODULE_CACHE_ENV`]):
    /// `https://host/a/b.js` is read from `$RK6_MODULE_CACHE/host/a/b.js`.
    pub(crate) fn remote(&self, url: &str) -> Result<PathBuf, ScriptError> {
        let unavailable = |why: String| {
            ScriptError::new(
                ScriptErrorKind::Io,
                format!(
                    "remote module \"{url}\" is not available: {why}. rk6 never downloads modules; save the file as $RK6_MODULE_CACHE/<host>/<path> (here: {}) and set {MODULE_CACHE_ENV} to that directory, or import a local copy by a relative path",
                    remote_relative_path(url).map_or_else(|| "?".into(), |p| p.display().to_string())
                ),
            )
        };
        let Some(rel) = remote_relative_path(url) else {
            return Err(unavailable("the URL has no host".into()));
        };
        let Some(dir) = &self.module_cache else {
            return Err(unavailable(format!("{MODULE_CACHE_ENV} is not set")));
        };
        let path = normalize(&dir.join(rel));
        if !path.starts_with(dir) {
            return Err(unavailable("the URL path leaves the module cache".into()));
        }
        if !path.is_file() {
            return Err(unavailable(format!("{} does not exist", path.display())));
        }
        Ok(path)
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

/// `https://host:port/a/b.js?x#y` → `host:port/a/b.js` (a trailing `/` reads `index.js`).
fn remote_relative_path(url: &str) -> Option<PathBuf> {
    let rest = url.split_once("://")?.1;
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    if host.is_empty() || host.contains("..") {
        return None;
    }
    let mut rel = PathBuf::from(host);
    rel.push(path);
    if path.is_empty() || path.ends_with('/') {
        rel.push("index.js");
    }
    Some(rel)
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
            sources: Mutex::default(),
            module_cache: None,
            run_scoped: RunScoped::default(),
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

    #[test]
    fn maps_remote_urls_into_the_cache() {
        assert_eq!(
            remote_relative_path("https://jslib.k6.io/k6-utils/1.4.0/index.js?v=1"),
            Some(PathBuf::from("jslib.k6.io/k6-utils/1.4.0/index.js"))
        );
        assert_eq!(
            remote_relative_path("http://h:8080/lib/"),
            Some(PathBuf::from("h:8080/lib/index.js"))
        );
        assert_eq!(remote_relative_path("https:///x.js"), None);
        let dir = std::env::temp_dir().join(format!("rk6-remote-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("ex.com/a")).unwrap();
        std::fs::write(dir.join("ex.com/a/m.js"), "export default 1").unwrap();
        let p = Program {
            main: PathBuf::from("/a/main.js"),
            env: BTreeMap::new(),
            files: Mutex::default(),
            sources: Mutex::default(),
            module_cache: Some(dir.clone()),
            run_scoped: RunScoped::default(),
        };
        assert_eq!(
            p.remote("https://ex.com/a/m.js").unwrap(),
            dir.join("ex.com/a/m.js")
        );
        let missing = p.remote("https://ex.com/a/other.js").unwrap_err().message;
        assert!(
            missing.contains("https://ex.com/a/other.js") && missing.contains("RK6_MODULE_CACHE"),
            "{missing}"
        );
        assert!(p.remote("https://ex.com/../../etc/passwd").is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
