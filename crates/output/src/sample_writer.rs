//! The writer the line-per-sample outputs (`json`, `csv`) share: it owns the file, the
//! metric names and the first write error, and leaves each line's text to a
//! [`SampleFormat`].

use std::io::{self, Write};

use rk6_metrics::{MetricId, Registry, Sample};

use crate::out_file::OutFile;
use crate::outputs::Output;

/// How one output turns samples into text.
pub(crate) trait SampleFormat: Send {
    /// The output's name in the banner (`json`, `csv`).
    const NAME: &'static str;

    /// Written once before the first sample, and at the end when no sample came.
    fn header(&self) -> &[u8] {
        &[]
    }

    /// Writes sample `s` of metric `name` (`first`: no sample of it was written before).
    fn write(
        &mut self,
        out: &mut OutFile,
        registry: &Registry,
        name: &str,
        first: bool,
        s: &Sample,
    ) -> io::Result<()>;
}

/// An [`Output`] that streams every sample through its format into a file.
pub(crate) struct SampleWriter<F> {
    out: OutFile,
    file: String,
    format: F,
    names: Names,
    header_written: bool,
    /// The first write error; nothing is written after it and `finish` returns it.
    error: Option<io::Error>,
}

impl<F: SampleFormat> SampleWriter<F> {
    /// Writes `format`'s lines to `out`; `file` is what the banner shows.
    pub(crate) fn new(out: OutFile, file: String, format: F) -> SampleWriter<F> {
        SampleWriter {
            out,
            file,
            format,
            names: Names::default(),
            header_written: false,
            error: None,
        }
    }

    fn write_header(&mut self) -> io::Result<()> {
        if !self.header_written {
            self.header_written = true;
            self.out.write_all(self.format.header())?;
        }
        Ok(())
    }

    fn write_batch(&mut self, registry: &Registry, batch: &[Sample]) -> io::Result<()> {
        self.write_header()?;
        for s in batch {
            let (name, first) = self.names.get(registry, s.metric);
            self.format.write(&mut self.out, registry, name, first, s)?;
        }
        Ok(())
    }

    /// Keeps the first error.
    fn check(&mut self, result: io::Result<()>) {
        if let Err(e) = result {
            self.error.get_or_insert(e);
        }
    }
}

impl<F: SampleFormat> Output for SampleWriter<F> {
    fn description(&self) -> String {
        format!("{} ({})", F::NAME, self.file)
    }

    fn add(&mut self, registry: &Registry, batch: &[Sample]) {
        if self.error.is_none() {
            let result = self.write_batch(registry, batch);
            self.check(result);
        }
    }

    fn flush(&mut self) {
        if self.error.is_none() {
            let result = self.out.flush();
            self.check(result);
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.error.is_none() {
            let result = self.write_header();
            self.check(result);
        }
        let closed = self.out.close();
        match self.error.take() {
            Some(e) => Err(e),
            None => closed,
        }
    }
}

/// Metric names by id, read from the registry once per metric.
#[derive(Default)]
struct Names(Vec<Option<Box<str>>>);

impl Names {
    /// The name of `id`, and whether this is the first time it is asked for.
    fn get(&mut self, registry: &Registry, id: MetricId) -> (&str, bool) {
        let i = id.index();
        if i >= self.0.len() {
            self.0.resize(i + 1, None);
        }
        let first = self.0[i].is_none();
        if first {
            self.0[i] = Some(registry.info(id).name.into_boxed_str());
        }
        (self.0[i].as_deref().unwrap_or_default(), first)
    }
}
