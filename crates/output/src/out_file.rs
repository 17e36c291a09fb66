//! The files real-time outputs write: buffered, gzipped for a `.gz` name, or stdout.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use flate2::write::GzEncoder;
use flate2::Compression;

/// Where an output writes.
pub(crate) enum Target {
    Stdout,
    File(String),
}

impl Target {
    /// Standard output for an empty argument or `-`, else the file it names.
    pub(crate) fn stdout_or_file(arg: &str) -> Target {
        if arg.is_empty() || arg == "-" {
            Target::Stdout
        } else {
            Target::File(arg.to_owned())
        }
    }

    /// How the banner names it.
    pub(crate) fn name(&self) -> String {
        match self {
            Target::Stdout => "stdout".to_string(),
            Target::File(f) => f.clone(),
        }
    }
}

const BUFFER: usize = 64 * 1024;

/// A buffered output file, gzipped when its name ends in `.gz`.
pub(crate) enum OutFile {
    Plain(BufWriter<File>),
    Gzip(GzEncoder<BufWriter<File>>),
    Stdout(BufWriter<io::Stdout>),
    /// Closed by `close`.
    Closed,
}

impl OutFile {
    /// Opens (truncating) the file or takes stdout.
    pub(crate) fn create(target: &Target) -> io::Result<OutFile> {
        match target {
            Target::Stdout => Ok(OutFile::Stdout(BufWriter::with_capacity(
                BUFFER,
                io::stdout(),
            ))),
            Target::File(name) => {
                let file = BufWriter::with_capacity(BUFFER, File::create(Path::new(name))?);
                if name.ends_with(".gz") {
                    Ok(OutFile::Gzip(GzEncoder::new(file, Compression::fast())))
                } else {
                    Ok(OutFile::Plain(file))
                }
            }
        }
    }

    /// An in-memory-free sink for tests: writes to a plain file at `path`.
    #[cfg(test)]
    pub(crate) fn for_test(path: &Path) -> OutFile {
        OutFile::create(&Target::File(path.to_string_lossy().into_owned())).unwrap()
    }

    /// Flushes everything and ends the gzip stream.
    pub(crate) fn close(&mut self) -> io::Result<()> {
        match std::mem::replace(self, OutFile::Closed) {
            OutFile::Plain(mut w) => w.flush(),
            OutFile::Gzip(g) => g.finish()?.flush(),
            OutFile::Stdout(mut w) => w.flush(),
            OutFile::Closed => Ok(()),
        }
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            OutFile::Plain(w) => w.write(buf),
            OutFile::Gzip(w) => w.write(buf),
            OutFile::Stdout(w) => w.write(buf),
            OutFile::Closed => Err(io::Error::other("output already closed")),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            OutFile::Plain(w) => w.write_all(buf),
            OutFile::Gzip(w) => w.write_all(buf),
            OutFile::Stdout(w) => w.write_all(buf),
            OutFile::Closed => Err(io::Error::other("output already closed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            OutFile::Plain(w) => w.flush(),
            OutFile::Gzip(w) => w.flush(),
            OutFile::Stdout(w) => w.flush(),
            OutFile::Closed => Ok(()),
        }
    }
}
