//! End-of-test outputs of rk6, built from [`rk6_metrics::SummaryData`].
//!
//! * [`render_text`] prints the k6 1.x text summary (`█ THRESHOLDS`, `█ TOTAL RESULTS`,
//!   metrics by category) byte for byte in k6's layout; in full mode followed by the
//!   `█ GROUP`/`█ SCENARIO` sections of [`rk6_metrics::Sections`], in legacy mode k6's
//!   pre-1.0 layout instead. [`format`] holds its number, duration and byte rules
//!   (truncation, SI units).
//! * [`summary_export`] builds the `--summary-export` JSON (legacy shape: Rates as
//!   `passes/fails/value`, `thresholds` maps are `true` when the threshold failed).
//! * [`handle_summary_data`] builds the argument of a script's `handleSummary(data)`
//!   (`thresholds` maps are `{ok}`; groups and checks are arrays).
//!
//! The summaries only read the snapshot; they never see samples or sinks.
//!
//! Real-time outputs (`-o json=FILE`, `-o csv=FILE`, `.gz` for gzip) are the exception:
//! [`OutputSpec`] parses an `-o` value and opens an [`Output`], which the metrics thread
//! hands every sample batch ([`JsonOutput`] writes k6's JSON lines, [`CsvOutput`] its CSV,
//! [`ReportOutput`] the self-contained HTML report of `K6_WEB_DASHBOARD_EXPORT`,
//! [`prometheus_rw`] pushes to a Prometheus remote-write endpoint).

pub mod category;
mod csv;
mod export;
pub mod format;
mod handle_summary;
mod json;
mod json_lines;
mod outputs;
pub mod prometheus_rw;
mod report;
mod text;
mod text_legacy;
mod text_sections;

pub use csv::{csv_header, CsvOutput, TimeFormat};
pub use export::summary_export;
pub use handle_summary::handle_summary_data;
pub use json_lines::JsonOutput;
pub use outputs::{Output, OutputError, OutputKind, OutputSpec};
pub use report::{ReportConfig, ReportOutput};
pub use text::{render_text, SummaryMode, TextOptions};
