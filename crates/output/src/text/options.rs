//! What the text summary shows: the summary mode and the rendering options.

/// Which metrics the summary lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummaryMode {
    /// k6's default: hides the HTTP timing phases besides `http_req_duration`.
    Compact,
    /// Lists every metric, then a section per top-level group and per named scenario.
    Full,
    /// k6's pre-1.0 layout: the group tree with its checks, then one flat sorted list.
    Legacy,
}

/// How to render the text summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextOptions {
    /// Compact, full or legacy.
    pub mode: SummaryMode,
    /// Emit ANSI colours (stdout is a TTY and `--no-color` is off).
    pub color: bool,
    /// `summaryTimeUnit`: `s`, `ms`, `us`, or `None` for automatic units.
    pub time_unit: Option<String>,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions {
            mode: SummaryMode::Compact,
            color: false,
            time_unit: None,
        }
    }
}
