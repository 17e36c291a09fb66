//! k6's test archive (`k6 archive`, a `.tar`): `metadata.json`, the entry script as `data`,
//! and every file the init context read, local ones under `file/<absolute path>` (home
//! directories anonymised as `/home/nobody`) and remote modules under
//! `https/<host[:port]>/<path>`. Reading and writing the format is here; what goes in is the
//! caller's (a [`Program`](crate::Program) after its init pass).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

use crate::script::location::normalize;

/// The k6 release whose archive format rk6 writes (its `k6version` field).
pub const K6_VERSION: &str = "1.1.0";

/// Why an archive cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The tar stream is broken.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// `metadata.json` is not k6's.
    #[error("invalid metadata.json: {0}")]
    Metadata(serde_json::Error),
    /// There is no `metadata.json`.
    #[error("the archive has no metadata.json")]
    NoMetadata,
    /// A file outside the `file/` and `https/` trees (k6's words).
    #[error("unknown file prefix `{prefix}` for file `{name}`")]
    Prefix {
        /// The first path component.
        prefix: String,
        /// The entry's name.
        name: String,
    },
    /// Not a JavaScript test.
    #[error("expected bundle type 'js', got '{0}'")]
    Type(String),
    /// The entry script is not a local file.
    #[error("rk6 runs archives of local scripts only, this one's is {0}")]
    Filename(String),
}

/// `metadata.json`, field for field and in k6's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    /// The runner, always `js`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The options of the test, every key k6 knows (`null` when unset).
    #[serde(default)]
    pub options: Value,
    /// The entry script's URL (`file:///…`).
    #[serde(default)]
    pub filename: String,
    /// The URL of the entry script's directory.
    #[serde(default)]
    pub pwd: String,
    /// The `__ENV` the test starts with (`null` with `--exclude-env-vars`).
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
    /// `extended` or `base`.
    #[serde(rename = "compatibilityMode", default)]
    pub compatibility_mode: String,
    /// The k6 version that wrote the archive.
    #[serde(rename = "k6version", default)]
    pub k6_version: String,
    /// The operating system that wrote it, in Go's words (`linux`, `darwin`, `windows`).
    #[serde(default)]
    pub goos: String,
}

/// A test archive in memory.
#[derive(Debug, Clone)]
pub struct Archive {
    /// `metadata.json`.
    pub metadata: Metadata,
    /// The entry script's text.
    pub data: Arc<[u8]>,
    /// Local files by absolute, anonymised path (the entry script included).
    pub local: BTreeMap<PathBuf, Arc<[u8]>>,
    /// Remote modules by their place under `https/` ([`remote_key`]).
    pub remote: BTreeMap<String, Arc<[u8]>>,
}

/// Whether `bytes` are a tar archive rather than a script: k6 asks whether a tar header can
/// be read from them; a header's checksum makes that impossible for a script's text.
pub fn is_archive(bytes: &[u8]) -> bool {
    bytes.len() >= 512
        && tar::Archive::new(bytes)
            .entries()
            .ok()
            .and_then(|mut e| e.next())
            .is_some_and(|first| first.is_ok())
}

/// `GOOS` of this machine, as Go names it.
pub fn goos() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    }
}

/// `/home/<user>`, `/Users/<user>` and `/Documents and Settings/<user>` as `…/nobody`, so an
/// archive does not carry its author's user name (k6's rule, case-insensitive).
pub fn anonymize(path: &str) -> String {
    static HOME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^(/[a-zA-Z])?/(Users|home|Documents and Settings)/[^/]+")
            .expect("valid regex")
    });
    HOME.replace(path, "$1/$2/nobody").into_owned()
}

/// A local path as it is kept in an archive: normalised and anonymised.
pub fn archived_path(path: &Path) -> PathBuf {
    PathBuf::from(anonymize(&normalize(path).to_string_lossy()))
}

/// Where a remote module lives under `https/`: the URL without its scheme, cleaned
/// (`https://h:8443/a/./b.js` → `/h:8443/a/b.js`).
pub fn remote_key(url: &Url) -> String {
    let text = url.as_str();
    let rest = text.split_once(":/").map_or(text, |(_, r)| r);
    normalize(Path::new(rest)).to_string_lossy().into_owned()
}

/// The `file:///…` URL k6 writes for a local path (`filename`, `pwd`).
pub fn file_url(path: &Path) -> String {
    Url::from_file_path(path).map_or_else(|()| format!("file://{}", path.display()), String::from)
}

impl Metadata {
    /// The entry script's local path.
    pub fn main_path(&self) -> Result<PathBuf, ArchiveError> {
        let name = &self.filename;
        // Archives of k6 before 0.21 hold a plain path.
        if name.starts_with('/') {
            return Ok(archived_path(Path::new(name)));
        }
        Url::parse(name)
            .ok()
            .filter(|u| u.scheme() == "file")
            .and_then(|u| u.to_file_path().ok())
            .map(|p| archived_path(&p))
            .ok_or_else(|| ArchiveError::Filename(name.clone()))
    }
}

impl Archive {
    /// Reads an archive written by k6 (any version since 0.20) or rk6.
    pub fn read(bytes: &[u8]) -> Result<Archive, ArchiveError> {
        let mut metadata = None;
        let mut data: Option<Arc<[u8]>> = None;
        let mut local = BTreeMap::new();
        let mut remote = BTreeMap::new();
        let mut tar = tar::Archive::new(bytes);
        for entry in tar.entries()? {
            let mut entry = entry?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let name = entry.path()?.to_string_lossy().into_owned();
            let mut body = Vec::with_capacity(entry.size() as usize);
            std::io::Read::read_to_end(&mut entry, &mut body)?;
            match name.as_str() {
                "metadata.json" => {
                    metadata = Some(
                        serde_json::from_slice::<Metadata>(&body)
                            .map_err(ArchiveError::Metadata)?,
                    );
                    continue;
                }
                "data" => {
                    data = Some(body.into());
                    continue;
                }
                _ => {}
            }
            let clean = anonymize(&normalize(Path::new(&name)).to_string_lossy());
            let Some((prefix, rest)) = clean.split_once('/') else {
                continue;
            };
            let rest = format!("/{rest}");
            let (tree, rest) = match prefix {
                // Before k6 0.25 local files were `files/_/…` or `scripts/_/…`, remote ones
                // the same trees without the `_`.
                "files" | "scripts" => match rest.strip_prefix("/_") {
                    Some(path) => ("file", path.to_string()),
                    None => ("https", rest),
                },
                "file" | "https" => (prefix, rest),
                _ => {
                    return Err(ArchiveError::Prefix {
                        prefix: prefix.to_string(),
                        name: clean,
                    })
                }
            };
            if tree == "file" {
                local.insert(PathBuf::from(rest), body.into());
            } else {
                remote.insert(rest, body.into());
            }
        }
        let metadata = metadata.ok_or(ArchiveError::NoMetadata)?;
        if metadata.kind != "js" {
            return Err(ArchiveError::Type(metadata.kind));
        }
        let data = data.unwrap_or_else(|| Arc::from(&b""[..]));
        local.insert(metadata.main_path()?, data.clone());
        Ok(Archive {
            metadata,
            data,
            local,
            remote,
        })
    }

    /// Writes the archive as k6 does: `metadata.json`, `data`, then for `file/` and `https/`
    /// the directories (sorted, 0755) and the files (sorted, 0644), the entry script a hard
    /// link to `data`.
    pub fn write(&self, out: impl Write) -> std::io::Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut tar = tar::Builder::new(out);
        let mut meta = serde_json::to_vec_pretty(&self.metadata).map_err(std::io::Error::other)?;
        meta.push(b'\n');
        append(&mut tar, "metadata.json", &meta, now)?;
        append(&mut tar, "data", &self.data, now)?;
        let main = self
            .metadata
            .main_path()
            .map_err(std::io::Error::other)?
            .to_string_lossy()
            .into_owned();
        let local: Vec<(String, &Arc<[u8]>)> = self
            .local
            .iter()
            .map(|(p, d)| (p.to_string_lossy().into_owned(), d))
            .collect();
        let remote: Vec<(String, &Arc<[u8]>)> =
            self.remote.iter().map(|(k, d)| (k.clone(), d)).collect();
        for (tree, mut files) in [("file", local), ("https", remote)] {
            if files.is_empty() {
                continue;
            }
            files.sort();
            let mut dirs = BTreeSet::new();
            for (name, _) in &files {
                let mut dir = Path::new(name.as_str()).parent();
                while let Some(d) = dir {
                    dirs.insert(entry_name(tree, &d.to_string_lossy()));
                    dir = d.parent();
                }
            }
            for dir in &dirs {
                let mut header = tar::Header::new_ustar();
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o755);
                header.set_mtime(now);
                header.set_size(0);
                tar.append_data(&mut header, dir, std::io::empty())?;
            }
            for (name, body) in &files {
                let full = entry_name(tree, name);
                if tree == "file" && *name == main {
                    let mut header = tar::Header::new_ustar();
                    header.set_entry_type(tar::EntryType::Link);
                    header.set_size(0);
                    header.set_mtime(0);
                    header.set_mode(0);
                    tar.append_link(&mut header, &full, "data")?;
                } else {
                    append(&mut tar, &full, body, now)?;
                }
            }
        }
        tar.into_inner()?.flush()
    }
}

/// `tree` + `path` as an entry name (`file` + `/` is `file`).
fn entry_name(tree: &str, path: &str) -> String {
    let path = path.trim_start_matches('/');
    if path.is_empty() {
        tree.to_string()
    } else {
        format!("{tree}/{path}")
    }
}

fn append<W: Write>(
    tar: &mut tar::Builder<W>,
    name: &str,
    body: &[u8],
    mtime: u64,
) -> std::io::Result<()> {
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_mode(0o644);
    header.set_mtime(mtime);
    header.set_size(body.len() as u64);
    tar.append_data(&mut header, name, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn metadata(filename: &str) -> Metadata {
        Metadata {
            kind: "js".into(),
            options: json!({"vus": 2, "duration": null}),
            filename: filename.into(),
            pwd: "file:///tmp/p".into(),
            env: Some(BTreeMap::from([("A".into(), "1".into())])),
            compatibility_mode: "extended".into(),
            k6_version: K6_VERSION.into(),
            goos: goos().into(),
        }
    }

    fn bytes(s: &str) -> Arc<[u8]> {
        Arc::from(s.as_bytes())
    }

    #[test]
    fn anonymizes_home_directories_as_k6() {
        assert_eq!(anonymize("/home/alice/t/a.js"), "/home/nobody/t/a.js");
        assert_eq!(anonymize("/Users/Bob/a.js"), "/Users/nobody/a.js");
        assert_eq!(anonymize("/HOME/bob"), "/HOME/nobody");
        assert_eq!(anonymize("/C/Users/x/y"), "/C/Users/nobody/y");
        assert_eq!(anonymize("/tmp/home/alice"), "/tmp/home/alice");
        assert_eq!(
            archived_path(Path::new("/home/a/./b/../c.js")),
            PathBuf::from("/home/nobody/c.js")
        );
    }

    #[test]
    fn mangles_remote_urls_as_k6() {
        let key = |u: &str| remote_key(&Url::parse(u).unwrap());
        assert_eq!(
            key("https://127.0.0.1:18443/lib/q.js"),
            "/127.0.0.1:18443/lib/q.js"
        );
        assert_eq!(key("https://h/a/./b/../c.js"), "/h/a/c.js");
        assert_eq!(entry_name("https", "/h/a.js"), "https/h/a.js");
        assert_eq!(entry_name("file", "/"), "file");
    }

    #[test]
    fn main_path_from_filename() {
        let m = metadata("file:///home/al/x%20y/main.js");
        assert_eq!(
            m.main_path().unwrap(),
            PathBuf::from("/home/nobody/x y/main.js")
        );
        assert_eq!(
            metadata("/tmp/old.js").main_path().unwrap(),
            PathBuf::from("/tmp/old.js")
        );
        assert!(metadata("https://h/a.js").main_path().is_err());
    }

    #[test]
    fn metadata_keeps_k6_field_order() {
        let text = serde_json::to_string(&metadata("file:///tmp/p/m.js")).unwrap();
        let keys: Vec<usize> = [
            "\"type\"",
            "\"options\"",
            "\"filename\"",
            "\"pwd\"",
            "\"env\"",
            "\"compatibilityMode\"",
            "\"k6version\"",
            "\"goos\"",
        ]
        .iter()
        .map(|k| text.find(k).unwrap())
        .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{text}");
        let mut excluded = metadata("file:///tmp/p/m.js");
        excluded.env = None;
        let v: Value = serde_json::to_value(&excluded).unwrap();
        assert_eq!(v["env"], Value::Null);
    }

    #[test]
    fn writes_k6_layout_and_reads_it_back() {
        let main = "file:///tmp/p/main.js";
        let archive = Archive {
            metadata: metadata(main),
            data: bytes("export default function () {}"),
            local: BTreeMap::from([
                (
                    PathBuf::from("/tmp/p/main.js"),
                    bytes("export default function () {}"),
                ),
                (
                    PathBuf::from("/tmp/p/lib/u.js"),
                    bytes("export const u = 1;"),
                ),
                (PathBuf::from("/tmp/d.json"), bytes("{}")),
            ]),
            remote: BTreeMap::from([("/h:1/m/r.js".to_string(), bytes("export const r = 2;"))]),
        };
        let mut out = Vec::new();
        archive.write(&mut out).unwrap();
        assert!(is_archive(&out));
        assert!(!is_archive(&[b' '; 600]));
        let mut tar = tar::Archive::new(&out[..]);
        let entries: Vec<(String, char)> = tar
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let kind = match e.header().entry_type() {
                    tar::EntryType::Directory => 'd',
                    tar::EntryType::Link => 'h',
                    _ => '-',
                };
                (e.path().unwrap().to_string_lossy().into_owned(), kind)
            })
            .collect();
        let expected = [
            ("metadata.json", '-'),
            ("data", '-'),
            ("file", 'd'),
            ("file/tmp", 'd'),
            ("file/tmp/p", 'd'),
            ("file/tmp/p/lib", 'd'),
            ("file/tmp/d.json", '-'),
            ("file/tmp/p/lib/u.js", '-'),
            ("file/tmp/p/main.js", 'h'),
            ("https", 'd'),
            ("https/h:1", 'd'),
            ("https/h:1/m", 'd'),
            ("https/h:1/m/r.js", '-'),
        ];
        let expected: Vec<(String, char)> =
            expected.iter().map(|(n, k)| (n.to_string(), *k)).collect();
        assert_eq!(entries, expected);
        let back = Archive::read(&out).unwrap();
        assert_eq!(back.metadata, archive.metadata);
        assert_eq!(back.local, archive.local);
        assert_eq!(back.remote, archive.remote);
    }

    #[test]
    fn reads_old_trees_and_refuses_strangers() {
        let mut out = Vec::new();
        {
            let mut tar = tar::Builder::new(&mut out);
            let meta = serde_json::to_vec(&metadata("/tmp/p/main.js")).unwrap();
            append(&mut tar, "metadata.json", &meta, 0).unwrap();
            append(&mut tar, "data", b"x", 0).unwrap();
            append(&mut tar, "files/_/tmp/p/a.js", b"a", 0).unwrap();
            append(&mut tar, "scripts/h/b.js", b"b", 0).unwrap();
            tar.finish().unwrap();
        }
        let back = Archive::read(&out).unwrap();
        assert_eq!(&back.local[Path::new("/tmp/p/a.js")][..], b"a");
        assert_eq!(&back.local[Path::new("/tmp/p/main.js")][..], b"x");
        assert_eq!(&back.remote["/h/b.js"][..], b"b");
        let mut bad = Vec::new();
        {
            let mut tar = tar::Builder::new(&mut bad);
            let meta = serde_json::to_vec(&metadata("/tmp/p/main.js")).unwrap();
            append(&mut tar, "metadata.json", &meta, 0).unwrap();
            append(&mut tar, "other/x.js", b"x", 0).unwrap();
            tar.finish().unwrap();
        }
        assert_eq!(
            Archive::read(&bad).unwrap_err().to_string(),
            "unknown file prefix `other` for file `other/x.js`"
        );
    }
}
