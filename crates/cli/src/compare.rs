//! `rk6 compare BASE NEW` and the `--compare-to` gate of `rk6 run`: the flags, the
//! files and the exit code; the comparison itself is rk6-output's `compare`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use rk6_output::compare::diff::{compare, Comparison};
use rk6_output::compare::error::CompareError;
use rk6_output::compare::limit::Limit;
use rk6_output::compare::render::{render_comparison_markdown, render_comparison_text, Labels};
use rk6_output::compare::summary_file::RunStats;
use serde_json::Value;

use crate::args::{CompareArgs, CompareFormat};
use crate::exit::ExitCode;

/// What NEW is called when it is the run that just ended.
const THIS_RUN: &str = "this run";

/// Colours only on a terminal, and never under `NO_COLOR` or `--no-color`.
pub fn color(no_color: bool) -> bool {
    !no_color && std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}

/// `rk6 compare`: the table on stdout; 99 when a limit is exceeded, 104 (with the reason
/// on stderr) when a limit or a file is unusable.
pub fn run(args: &CompareArgs) -> ExitCode {
    let judged = parse_limits(&args.max_regression).and_then(|limits| {
        let base = RunStats::read(&args.base)?;
        let new = RunStats::read(&args.new)?;
        compare(&base, &new, &limits, (&args.base, &args.new))
    });
    let comparison = match judged {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rk6 compare: {e}");
            return ExitCode::InvalidConfig;
        }
    };
    let (base, new) = (
        args.base.display().to_string(),
        args.new.display().to_string(),
    );
    let labels = Labels {
        base: &base,
        new: &new,
    };
    let text = match args.format {
        CompareFormat::Text => render_comparison_text(&comparison, labels, color(args.no_color)),
        CompareFormat::Markdown => render_comparison_markdown(&comparison, labels),
    };
    let _ = std::io::stdout().write_all(text.as_bytes());
    if comparison.failed() {
        ExitCode::ThresholdsFailed
    } else {
        ExitCode::Success
    }
}

fn parse_limits(texts: &[String]) -> Result<Vec<Limit>, CompareError> {
    texts.iter().map(|t| Limit::parse(t)).collect()
}

/// `rk6 run --compare-to BASE [--max-regression …]`, read before the test starts so that
/// a bad limit or file costs no test run.
pub struct Gate {
    base_path: PathBuf,
    base: RunStats,
    limits: Vec<Limit>,
}

impl Gate {
    /// The gate the flags ask for; `None` without `--compare-to`.
    pub fn from_flags(
        compare_to: Option<&Path>,
        max_regression: &[String],
    ) -> Result<Option<Gate>, String> {
        let Some(path) = compare_to else {
            return match max_regression.first() {
                Some(l) => Err(format!(
                    "--max-regression {l:?} needs --compare-to BASE, the run to compare with"
                )),
                None => Ok(None),
            };
        };
        let limits = parse_limits(max_regression).map_err(|e| e.to_string())?;
        let base = RunStats::read(path).map_err(|e| e.to_string())?;
        Ok(Some(Gate {
            base_path: path.to_owned(),
            base,
            limits,
        }))
    }

    /// Compares the run's export document (what `--summary-export` would write) with BASE.
    pub fn judge(&self, export: &Value) -> Result<Comparison, String> {
        let new = RunStats::from_export(export)?;
        compare(
            &self.base,
            &new,
            &self.limits,
            (&self.base_path, Path::new(THIS_RUN)),
        )
        .map_err(|e| e.to_string())
    }

    /// The comparison as it is printed under the summary.
    pub fn render(&self, comparison: &Comparison, color: bool) -> String {
        let base = self.base_path.display().to_string();
        let labels = Labels {
            base: &base,
            new: THIS_RUN,
        };
        render_comparison_text(comparison, labels, color)
    }
}
