//! The script being run: its entry file, the files it reads, and its environment.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use url::Url;

use crate::run_scoped::RunScoped;
use crate::script::archive::{remote_key, Archive};
use crate::script::classify::{classify, Kind};
use crate::script::fetch::Fetcher;
use crate::script::files::{Entry, FileSource};
use crate::script::location::{normalize, Location};
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
    /// The script cannot be made into a test at all (a CommonJS entry or module whose
    /// `module.exports` is `null`); k6 exits with 255 and no hint.
    Load,
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
    /// A failure of `kind` saying `message`.
    pub fn new(kind: ScriptErrorKind, message: impl Into<String>) -> Self {
        ScriptError {
            kind,
            message: message.into(),
        }
    }
}

/// The script and what every VU shares about it; files are read once from their source (the
/// disk or an archive). One per run: the options-reading init pass and the run's VUs share it.
#[derive(Debug)]
pub struct Program {
    /// Absolute path of the entry script.
    pub main: PathBuf,
    /// The `__ENV` every VU starts with.
    pub env: BTreeMap<String, String>,
    /// Where files come from.
    source: FileSource,
    files: Mutex<HashMap<PathBuf, Arc<[u8]>>>,
    sources: Mutex<HashMap<Location, Arc<Source>>>,
    /// Remote modules' text, downloaded (or read from the module cache) once per test.
    remote: Mutex<HashMap<Url, Arc<[u8]>>>,
    /// The names a CommonJS file's namespace lists: `Object.keys(module.exports)` after its
    /// first evaluation in the test (k6 takes them from VU 0).
    cjs_keys: Mutex<HashMap<Location, Arc<[String]>>>,
    module_cache: Option<PathBuf>,
    fetcher: Fetcher,
    /// What modules keep once per run (`SharedArray` data, once-per-run warnings).
    run_scoped: RunScoped,
}

/// The files a test read ([`Program::files_read`]).
#[derive(Debug, Default)]
pub struct FilesRead {
    /// Local files by path.
    pub local: BTreeMap<PathBuf, Arc<[u8]>>,
    /// Remote modules by their place in an archive's `https/` tree.
    pub remote: BTreeMap<String, Arc<[u8]>>,
}

/// A module's JavaScript, checked and (for TypeScript) transpiled once per test.
#[derive(Debug)]
pub(crate) struct Source {
    /// The code Boa parses.
    pub(crate) code: Arc<[u8]>,
    /// For TypeScript: where generated positions came from.
    pub(crate) map: Option<PositionMap>,
    /// ES module or CommonJS, decided once per test.
    pub(crate) kind: Kind,
}

/// The environment variable naming the directory remote modules are read from.
pub const MODULE_CACHE_ENV: &str = "RK6_MODULE_CACHE";

/// Whether the run turned on the feature flag `name` (k6 2.1+): the run writes the flags
/// on into the script's environment as `K6_FEATURES`, which is what the VUs read.
pub(crate) fn feature_on(env: &BTreeMap<String, String>, name: &str) -> bool {
    env.get("K6_FEATURES")
        .is_some_and(|f| f.split(',').any(|n| n == name))
}

impl Program {
    /// Reads the entry script at `path`.
    pub fn load(path: &Path, env: BTreeMap<String, String>) -> Result<Arc<Program>, ScriptError> {
        let main = std::path::absolute(path).map_err(|e| {
            ScriptError::new(ScriptErrorKind::Io, format!("{}: {e}", path.display()))
        })?;
        Program::new(normalize(&main), env, FileSource::Disk)
    }

    /// The test of `archive`: its entry script, and its files instead of the disk's.
    pub fn from_archive(
        archive: &Archive,
        env: BTreeMap<String, String>,
    ) -> Result<Arc<Program>, ScriptError> {
        let main = archive
            .metadata
            .main_path()
            .map_err(|e| ScriptError::new(ScriptErrorKind::Io, e.to_string()))?;
        Program::new(main, env, FileSource::of_archive(archive))
    }

    fn new(
        main: PathBuf,
        env: BTreeMap<String, String>,
        source: FileSource,
    ) -> Result<Arc<Program>, ScriptError> {
        let program = Program {
            main,
            env,
            source,
            files: Mutex::default(),
            sources: Mutex::default(),
            remote: Mutex::default(),
            cjs_keys: Mutex::default(),
            module_cache: std::env::var_os(MODULE_CACHE_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            fetcher: Fetcher::default(),
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
        self.read_file(path).map_err(|e| {
            ScriptError::new(
                ScriptErrorKind::Io,
                format!("{} ({e})", not_on_disk(&path.display().to_string())),
            )
        })
    }

    /// [`Program::read`] with the source's own error.
    pub fn read_file(&self, path: &Path) -> std::io::Result<Arc<[u8]>> {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(data) = files.get(path) {
            return Ok(data.clone());
        }
        let data = self.source.read(path)?;
        files.insert(path.to_path_buf(), data.clone());
        Ok(data)
    }

    /// Whether `path` is a file or a directory of the test's file source.
    pub fn stat(&self, path: &Path) -> std::io::Result<Entry> {
        self.source.stat(path)
    }

    /// The files this test read so far (the entry script, imported modules, `open()`ed
    /// files, remote modules): after the init pass, what an archive of it holds.
    pub fn files_read(&self) -> FilesRead {
        let local = self
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(p, d)| (p.clone(), d.clone()))
            .collect();
        let remote = self
            .remote
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(u, d)| (remote_key(u), d.clone()))
            .collect();
        FilesRead { local, remote }
    }

    /// The entry script's location.
    pub(crate) fn main_location(&self) -> Location {
        Location::File(self.main.clone())
    }

    /// The module at `loc`: nesting-checked, transpiled when TypeScript, and classified as
    /// an ES module or CommonJS; once per test. `spec` is the specifier as written, for
    /// k6's load errors.
    pub(crate) fn source(&self, loc: &Location, spec: &str) -> Result<Arc<Source>, ScriptError> {
        if let Some(s) = self.lock_sources().get(loc) {
            return Ok(s.clone());
        }
        let data = match loc {
            Location::File(path) => self
                .read(path)
                .map_err(|_| ScriptError::new(ScriptErrorKind::Io, not_on_disk(spec)))?,
            Location::Remote(url) => self.remote_text(url, spec)?,
        };
        let path = loc.boa_path();
        let text = String::from_utf8_lossy(&data);
        crate::script::nesting::check(&path, &text, is_typescript(&path))?;
        let (code, map): (Arc<[u8]>, _) = if is_typescript(&path) {
            let out = crate::script::typescript::transpile(&path, &text)?;
            (out.code.into_bytes().into(), Some(out.map))
        } else {
            (data.clone(), None)
        };
        let kind = match classify(&code) {
            Ok(kind) => kind,
            Err(message) => {
                return Err(ScriptError::new(
                    ScriptErrorKind::Syntax,
                    self.syntax_message(loc, map.as_ref(), &message),
                ))
            }
        };
        let source = Arc::new(Source { code, map, kind });
        Ok(self
            .lock_sources()
            .entry(loc.clone())
            .or_insert(source)
            .clone())
    }

    /// A parser message `text at line L, col C` as `file:///path:L:C: text` (for TypeScript,
    /// the position in the `.ts` file).
    pub(crate) fn syntax_message(
        &self,
        loc: &Location,
        map: Option<&PositionMap>,
        message: &str,
    ) -> String {
        let (text, location) = match message.rsplit_once(" at line ") {
            Some((text, pos)) => {
                let pos = pos.trim_end_matches(" (native)");
                let loc = pos
                    .split_once(", col ")
                    .and_then(|(l, c)| l.trim().parse::<u32>().ok().zip(c.trim().parse().ok()))
                    .map(|(l, c)| {
                        let (l, c) = map.and_then(|m| m.lookup(l, c)).unwrap_or((l, c));
                        format!(":{l}:{c}")
                    })
                    .unwrap_or_default();
                (text, loc)
            }
            None => (message, String::new()),
        };
        format!("{}{location}: {text}", loc.url())
    }

    /// The keys a CommonJS file's namespace lists, once its first evaluation recorded them.
    pub(crate) fn cjs_keys(&self, loc: &Location) -> Option<Arc<[String]>> {
        self.lock_keys().get(loc).cloned()
    }

    /// Records `keys` for `loc` unless a VU did first; returns the recorded ones.
    pub(crate) fn record_cjs_keys(&self, loc: &Location, keys: Vec<String>) -> Arc<[String]> {
        self.lock_keys()
            .entry(loc.clone())
            .or_insert_with(|| keys.into())
            .clone()
    }

    fn lock_keys(&self) -> std::sync::MutexGuard<'_, HashMap<Location, Arc<[String]>>> {
        self.cjs_keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The text of the remote module `url`, once per test: from the module cache directory
    /// when it holds the file, else downloaded (and then saved there when it is writable).
    fn remote_text(&self, url: &Url, spec: &str) -> Result<Arc<[u8]>, ScriptError> {
        // Held while downloading, so VUs initialising together download a URL once.
        let mut remote = self.remote.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(data) = remote.get(url) {
            return Ok(data.clone());
        }
        if let Some(data) = self.source.remote(url) {
            remote.insert(url.clone(), data.clone());
            return Ok(data);
        }
        let cached = self.cache_path(url.as_str());
        let data: Arc<[u8]> = match cached.as_ref().and_then(|p| std::fs::read(p).ok()) {
            Some(data) => data.into(),
            None => {
                let data = self.fetcher.get(url).map_err(|why| {
                    ScriptError::new(
                        ScriptErrorKind::Io,
                        format!("The moduleSpecifier \"{spec}\" couldn't be retrieved from the resolved url \"{url}\". Error : \"{why}\""),
                    )
                })?;
                if let Some(path) = &cached {
                    // Best effort: a read-only cache still serves what it holds.
                    let _ = path
                        .parent()
                        .map(std::fs::create_dir_all)
                        .transpose()
                        .and_then(|_| std::fs::write(path, &data));
                }
                data.into()
            }
        };
        remote.insert(url.clone(), data.clone());
        Ok(data)
    }

    /// Where [`MODULE_CACHE_ENV`] keeps the remote module `url`: `$DIR/host[:port]/path`.
    fn cache_path(&self, url: &str) -> Option<PathBuf> {
        let dir = self.module_cache.as_ref()?;
        let path = normalize(&dir.join(remote_relative_path(url)?));
        path.starts_with(dir).then_some(path)
    }

    fn lock_sources(&self) -> std::sync::MutexGuard<'_, HashMap<Location, Arc<Source>>> {
        self.sources.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The `.ts` line and column a generated position of a transpiled module came from.
    pub(crate) fn original_position(&self, path: &Path, line: u32, col: u32) -> Option<(u32, u32)> {
        let source = self
            .lock_sources()
            .get(&Location::from_boa_path(path))?
            .clone();
        source.map.as_ref()?.lookup(line, col)
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

/// k6's error for a local module that is not there.
pub(crate) fn not_on_disk(spec: &str) -> String {
    format!("The moduleSpecifier \"{spec}\" couldn't be found on local disk. Make sure that you've specified the right path to the file. If you're running k6 using the Docker image make sure you have mounted the local directory (-v /local/path/:/inside/docker/path) containing your script and modules so that they're accessible by k6 from inside of the container, see https://grafana.com/docs/k6/latest/using-k6/modules/#use-modules-with-docker.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(main: &str, module_cache: Option<PathBuf>) -> Program {
        Program {
            main: PathBuf::from(main),
            env: BTreeMap::new(),
            source: FileSource::Disk,
            files: Mutex::default(),
            sources: Mutex::default(),
            remote: Mutex::default(),
            cjs_keys: Mutex::default(),
            module_cache,
            fetcher: Fetcher::default(),
            run_scoped: RunScoped::default(),
        }
    }

    #[test]
    fn resolves_relative_to_the_referrer() {
        let p = program("/a/b/main.js", None);
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
        let p = program("/a/main.js", Some(dir.clone()));
        assert_eq!(
            p.cache_path("https://ex.com/a/m.js"),
            Some(dir.join("ex.com/a/m.js"))
        );
        assert_eq!(p.cache_path("https://ex.com/../../etc/passwd"), None);
        // A file in the cache is read without any download.
        let loc = Location::Remote(Url::parse("https://ex.com/a/m.js").unwrap());
        let source = p.source(&loc, "https://ex.com/a/m.js").unwrap();
        assert_eq!(&source.code[..], b"export default 1");
        assert_eq!(source.kind, Kind::Esm { requests: vec![] });
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn keeps_the_first_cjs_key_list() {
        let p = program("/a/main.js", None);
        let loc = Location::File(PathBuf::from("/a/c.js"));
        assert!(p.cjs_keys(&loc).is_none());
        p.record_cjs_keys(&loc, vec!["a".into()]);
        p.record_cjs_keys(&loc, vec!["b".into()]);
        assert_eq!(&p.cjs_keys(&loc).unwrap()[..], &["a".to_string()]);
    }

    #[test]
    fn an_archive_is_the_whole_file_source() {
        let bytes = |t: &str| Arc::<[u8]>::from(t.as_bytes());
        let main = "export default function () {}";
        let archive = Archive {
            metadata: crate::script::archive::Metadata {
                kind: "js".into(),
                options: serde_json::Value::Null,
                filename: "file:///home/alice/t/main.js".into(),
                pwd: "file:///home/alice/t".into(),
                env: None,
                compatibility_mode: "extended".into(),
                k6_version: "1.1.0".into(),
                goos: "linux".into(),
            },
            data: bytes(main),
            local: BTreeMap::from([
                (PathBuf::from("/home/nobody/t/main.js"), bytes(main)),
                (PathBuf::from("/home/nobody/t/d/x.txt"), bytes("x")),
            ]),
            remote: BTreeMap::from([("/h:1/r.js".to_string(), bytes("export const r = 1;"))]),
        };
        let p = Program::from_archive(&archive, BTreeMap::new()).unwrap();
        // The entry script's anonymised path is where the test lives.
        assert_eq!(p.main, PathBuf::from("/home/nobody/t/main.js"));
        assert_eq!(&p.read(&p.dir().join("d/x.txt")).unwrap()[..], b"x");
        assert_eq!(p.stat(&p.dir().join("d")).unwrap(), Entry::Dir);
        assert!(p.read(Path::new("/etc/hostname")).is_err());
        let url = Url::parse("https://h:1/r.js").unwrap();
        let loc = Location::Remote(url);
        assert_eq!(
            &p.source(&loc, "https://h:1/r.js").unwrap().code[..],
            b"export const r = 1;"
        );
        // What was read is what an archive of this run would hold.
        let read = p.files_read();
        assert_eq!(
            read.local.keys().collect::<Vec<_>>(),
            [
                Path::new("/home/nobody/t/d/x.txt"),
                Path::new("/home/nobody/t/main.js")
            ]
        );
        assert_eq!(read.remote.keys().collect::<Vec<_>>(), ["/h:1/r.js"]);
    }
}
