//! Where a module lives (a local file or an `https://` URL) and k6's rules for resolving a
//! specifier against the module that names it.

use std::path::{Path, PathBuf};

use url::Url;

/// A script file: on local disk, or remote (fetched over HTTPS).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    /// An absolute, normalized local path.
    File(PathBuf),
    /// An `https://` URL.
    Remote(Url),
}

/// What a specifier names: one of k6's modules, or a script file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// `k6` or `k6/...`.
    Builtin(String),
    /// A script file.
    File(Location),
}

impl Location {
    /// The path Boa knows the module by: the file's path, or the URL as text (stack traces
    /// and syntax errors then name it as k6 does).
    pub(crate) fn boa_path(&self) -> PathBuf {
        match self {
            Location::File(p) => p.clone(),
            Location::Remote(u) => PathBuf::from(u.as_str()),
        }
    }

    /// The inverse of [`Location::boa_path`].
    pub(crate) fn from_boa_path(path: &Path) -> Location {
        let text = path.to_string_lossy();
        if text.starts_with("https://") || text.starts_with("http://") {
            if let Ok(u) = Url::parse(&text) {
                return Location::Remote(u);
            }
        }
        Location::File(path.to_path_buf())
    }

    /// The module's URL as k6 prints it (`file:///…` or `https://…`).
    pub(crate) fn url(&self) -> String {
        match self {
            Location::File(p) => format!("file://{}", p.display()),
            Location::Remote(u) => u.to_string(),
        }
    }

    /// The URL of the directory holding the module, without the trailing slash (k6's
    /// "origin" in its error for a remote module loading a local file).
    fn dir_url(&self) -> String {
        match self {
            Location::File(p) => format!("file://{}", p.parent().unwrap_or(p).display()),
            Location::Remote(u) => {
                let s = u
                    .join("./")
                    .map_or_else(|_| u.to_string(), |d| d.to_string());
                s.trim_end_matches('/').to_string()
            }
        }
    }
}

/// Resolves `spec` as k6 does, relative to `base` (the importing or requiring module).
pub(crate) fn resolve(spec: &str, base: &Location) -> Result<Target, String> {
    if spec == "k6" || spec.starts_with("k6/") {
        return Ok(Target::Builtin(spec.to_string()));
    }
    if spec.starts_with('.') || spec.starts_with('/') {
        return Ok(Target::File(match base {
            Location::File(p) => {
                let dir = p.parent().unwrap_or(Path::new("/"));
                Location::File(normalize(&dir.join(spec)))
            }
            Location::Remote(u) => Location::Remote(u.join(spec).map_err(|e| e.to_string())?),
        }));
    }
    if spec.contains("://") {
        let url = Url::parse(spec).map_err(|e| e.to_string())?;
        return match url.scheme() {
            "https" => Ok(Target::File(Location::Remote(url))),
            "file" => {
                if let Location::Remote(_) = base {
                    return Err(format!(
                        "origin ({}) not allowed to load local file: {spec}",
                        base.dir_url()
                    ));
                }
                let path = url
                    .to_file_path()
                    .map_err(|()| format!("{spec} is not a local file path"))?;
                Ok(Target::File(Location::File(normalize(&path))))
            }
            scheme => Err(format!(
                "only supported schemes for imports are file and https, {spec} has `{scheme}`"
            )),
        };
    }
    Err(format!(
        "The moduleSpecifier \"{spec}\" couldn't be recognised as something k6 supports."
    ))
}

/// Removes `.` and `..` components without touching the file system.
pub(crate) fn normalize(path: &Path) -> PathBuf {
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

    fn file(p: &str) -> Location {
        Location::File(PathBuf::from(p))
    }

    fn remote(u: &str) -> Location {
        Location::Remote(Url::parse(u).unwrap())
    }

    #[test]
    fn resolves_as_k6_does() {
        let main = file("/a/b/main.js");
        assert_eq!(
            resolve("./lib/u.js", &main),
            Ok(Target::File(file("/a/b/lib/u.js")))
        );
        assert_eq!(resolve("../x.js", &main), Ok(Target::File(file("/a/x.js"))));
        assert_eq!(resolve("/abs.js", &main), Ok(Target::File(file("/abs.js"))));
        assert_eq!(
            resolve("file:///c/d.js", &main),
            Ok(Target::File(file("/c/d.js")))
        );
        assert_eq!(
            resolve("k6/http", &main),
            Ok(Target::Builtin("k6/http".into()))
        );
        let r = remote("https://h:1/lib/sub/x.js");
        assert_eq!(
            resolve("./b.js", &r),
            Ok(Target::File(remote("https://h:1/lib/sub/b.js")))
        );
        assert_eq!(
            resolve("/top.js", &r),
            Ok(Target::File(remote("https://h:1/top.js")))
        );
        assert_eq!(
            resolve("file:///etc/x.js", &r).unwrap_err(),
            "origin (https://h:1/lib/sub) not allowed to load local file: file:///etc/x.js"
        );
        assert_eq!(
            resolve("http://h/x.js", &main).unwrap_err(),
            "only supported schemes for imports are file and https, http://h/x.js has `http`"
        );
        assert!(resolve("lodash", &main)
            .unwrap_err()
            .contains("couldn't be recognised as something k6 supports"));
    }

    #[test]
    fn boa_paths_round_trip() {
        for l in [file("/a/b.js"), remote("https://h:8443/a/b.js?x=1")] {
            assert_eq!(Location::from_boa_path(&l.boa_path()), l);
        }
    }
}
