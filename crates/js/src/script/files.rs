//! Where a test's files come from: the file system, or the file tree of an archive. Every
//! read of a module, an `open()`ed file or a remote module goes through here, so a test run
//! from an archive sees exactly the archive's files (as k6's in-memory file systems do).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use url::Url;

use crate::script::archive::{archived_path, remote_key, Archive};

/// What a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// A file.
    File,
    /// A directory.
    Dir,
}

/// The source of a test's files.
#[derive(Debug, Default)]
pub(crate) enum FileSource {
    /// The local file system; remote modules are downloaded.
    #[default]
    Disk,
    /// An archive's files only; remote modules it lacks are downloaded, as k6 does.
    Archive {
        /// Local files by anonymised absolute path.
        local: BTreeMap<PathBuf, Arc<[u8]>>,
        /// Remote modules by [`remote_key`].
        remote: BTreeMap<String, Arc<[u8]>>,
    },
}

impl FileSource {
    /// The tree of `archive`.
    pub(crate) fn of_archive(archive: &Archive) -> FileSource {
        FileSource::Archive {
            local: archive.local.clone(),
            remote: archive.remote.clone(),
        }
    }

    /// The contents of the local file `path`.
    pub(crate) fn read(&self, path: &Path) -> io::Result<Arc<[u8]>> {
        match self {
            FileSource::Disk => std::fs::read(path).map(Arc::from),
            FileSource::Archive { local, .. } => local
                .get(&archived_path(path))
                .cloned()
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "file does not exist")),
        }
    }

    /// Whether `path` is a file or a directory.
    pub(crate) fn stat(&self, path: &Path) -> io::Result<Entry> {
        match self {
            FileSource::Disk => {
                std::fs::metadata(path).map(|m| if m.is_dir() { Entry::Dir } else { Entry::File })
            }
            FileSource::Archive { local, .. } => {
                let path = archived_path(path);
                if local.contains_key(&path) {
                    return Ok(Entry::File);
                }
                let is_dir = local
                    .range(path.clone()..)
                    .next()
                    .is_some_and(|(p, _)| p.starts_with(&path));
                if is_dir {
                    Ok(Entry::Dir)
                } else {
                    Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        "file does not exist",
                    ))
                }
            }
        }
    }

    /// The remote module `url` when the source holds it.
    pub(crate) fn remote(&self, url: &Url) -> Option<Arc<[u8]>> {
        match self {
            FileSource::Disk => None,
            FileSource::Archive { remote, .. } => remote.get(&remote_key(url)).cloned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive() -> FileSource {
        FileSource::Archive {
            local: BTreeMap::from([
                (PathBuf::from("/home/nobody/p/a.js"), Arc::from(&b"a"[..])),
                (PathBuf::from("/tmp/p/d/x.txt"), Arc::from(&b"x"[..])),
            ]),
            remote: BTreeMap::from([("/h:1/m.js".to_string(), Arc::from(&b"m"[..]))]),
        }
    }

    #[test]
    fn archive_reads_its_tree_only() {
        let src = archive();
        // A path under any home directory is looked up anonymised, as it was stored.
        assert_eq!(
            &src.read(Path::new("/home/alice/p/a.js")).unwrap()[..],
            b"a"
        );
        assert_eq!(
            src.read(Path::new("/etc/hostname")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert_eq!(src.stat(Path::new("/tmp/p/d")).unwrap(), Entry::Dir);
        assert_eq!(src.stat(Path::new("/tmp/p/d/x.txt")).unwrap(), Entry::File);
        assert!(src.stat(Path::new("/tmp/p/dd")).is_err());
        let url = Url::parse("https://h:1/m.js").unwrap();
        assert_eq!(&src.remote(&url).unwrap()[..], b"m");
        assert!(FileSource::Disk.remote(&url).is_none());
    }
}
