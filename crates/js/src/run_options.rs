//! Options that change how a VU runs its script and builds its samples.

use std::time::Duration;

use rk6_metrics::tags::{DEFAULT_SYSTEM_TAGS, OPT_IN_SYSTEM_TAGS};
use serde_json::{Map, Value};

fn is_system_tag(name: &str) -> bool {
    DEFAULT_SYSTEM_TAGS.contains(&name) || OPT_IN_SYSTEM_TAGS.contains(&name)
}

/// System tags k6 can add that rk6 does not produce yet.
const NOT_PRODUCED: &[&str] = &["ip", "ocsp_status"];

/// Which system tags samples carry (`systemTags`); `None` in [`RunOptions`] keeps k6's
/// default set.
#[derive(Debug, Clone, Default)]
pub struct SystemTags {
    /// System tags left out of samples.
    pub(crate) disabled: Vec<&'static str>,
    /// Tag samples with the VU id (`vu`).
    pub(crate) vu: bool,
    /// Tag samples with the VU's iteration number (`iter`).
    pub(crate) iter: bool,
}

/// Per-VU behaviour set by options.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// A failed request throws instead of returning an error response (`throw`).
    pub throw: bool,
    /// Responses are read and dropped unless a request asks for its body
    /// (`discardResponseBodies`).
    pub discard_response_bodies: bool,
    /// Iterations shorter than this sleep for the rest (`minIterationDuration`).
    pub min_iteration_duration: Option<Duration>,
    /// `systemTags`, when given.
    pub system_tags: Option<SystemTags>,
    /// `maxRedirects` was given (by script, config, env or flag); without it k6 warns when a
    /// request without its own `redirects` stops at the default limit.
    pub max_redirects_set: bool,
    /// Most requests of one `http.batch` call in flight at once (`batch`; 0 = no limit).
    pub batch: usize,
    /// Most requests of one `http.batch` call to one host at once (`batchPerHost`; 0 = no
    /// limit).
    pub batch_per_host: usize,
}

/// k6's defaults for `batch` and `batchPerHost`.
pub const DEFAULT_BATCH: usize = 20;
/// See [`DEFAULT_BATCH`].
pub const DEFAULT_BATCH_PER_HOST: usize = 6;

/// An integer option such as `batch`: absent or null gives `default`; anything but a
/// non-negative integer is an error naming the option, as k6 refuses such values.
pub fn count_option(
    options: &Map<String, Value>,
    key: &str,
    default: usize,
) -> Result<usize, String> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("{key} must be a non-negative integer, got {n}")),
        Some(v) => Err(format!("{key} must be a non-negative integer, got {v}")),
    }
}

/// rk6's `h2c` option (HTTP/2 with prior knowledge for every plain `http://` request):
/// absent or null is false; anything but a boolean is an error.
pub fn h2c_option(options: &Map<String, Value>) -> Result<bool, String> {
    match options.get("h2c") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(format!("h2c must be a boolean (true or false), got {v}")),
    }
}

impl RunOptions {
    /// Reads the options; the error names the bad value.
    pub fn from_options(options: &Map<String, Value>) -> Result<RunOptions, String> {
        let flag = |k: &str| options.get(k).and_then(Value::as_bool).unwrap_or(false);
        let min_iteration_duration = match options.get("minIterationDuration") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                rk6_scheduler::duration_from_json(v)
                    .map_err(|e| format!("minIterationDuration: {e}"))?,
            )
            .filter(|d| !d.is_zero()),
        };
        let system_tags = match options.get("systemTags") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => {
                let mut enabled = Vec::new();
                for item in items {
                    let name = item
                        .as_str()
                        .ok_or_else(|| format!("systemTags: {item} is not a string"))?;
                    if !is_system_tag(name) {
                        return Err(format!("systemTags: unknown system tag \"{name}\""));
                    }
                    if NOT_PRODUCED.contains(&name) {
                        return Err(format!(
                            "systemTags: the \"{name}\" tag is not supported by rk6 yet (see docs/compatibility.md)"
                        ));
                    }
                    enabled.push(name);
                }
                Some(SystemTags {
                    disabled: DEFAULT_SYSTEM_TAGS
                        .iter()
                        .chain(OPT_IN_SYSTEM_TAGS.iter())
                        .copied()
                        .filter(|t| !enabled.contains(t))
                        .collect(),
                    vu: enabled.contains(&"vu"),
                    iter: enabled.contains(&"iter"),
                })
            }
            Some(v) => return Err(format!("systemTags must be an array of tag names, got {v}")),
        };
        h2c_option(options)?;
        Ok(RunOptions {
            throw: flag("throw"),
            discard_response_bodies: flag("discardResponseBodies"),
            min_iteration_duration,
            system_tags,
            max_redirects_set: !matches!(options.get("maxRedirects"), None | Some(Value::Null)),
            batch: count_option(options, "batch", DEFAULT_BATCH)?,
            batch_per_host: count_option(options, "batchPerHost", DEFAULT_BATCH_PER_HOST)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_and_validates() {
        let o = RunOptions::from_options(
            json!({"throw": true, "minIterationDuration": "1s", "systemTags": ["status", "vu"]})
                .as_object()
                .unwrap(),
        )
        .unwrap();
        assert!(o.throw);
        assert_eq!(o.min_iteration_duration, Some(Duration::from_secs(1)));
        let st = o.system_tags.unwrap();
        assert!(st.vu && !st.iter);
        assert!(st.disabled.contains(&"url") && !st.disabled.contains(&"status"));
        let e = RunOptions::from_options(json!({"systemTags": ["nope"]}).as_object().unwrap())
            .unwrap_err();
        assert!(e.contains("unknown system tag"), "{e}");
        let e = RunOptions::from_options(json!({"systemTags": ["ip"]}).as_object().unwrap())
            .unwrap_err();
        assert!(e.contains("not supported by rk6 yet"), "{e}");
    }

    #[test]
    fn batch_limits_and_h2c_are_validated() {
        let o = RunOptions::from_options(json!({}).as_object().unwrap()).unwrap();
        assert_eq!((o.batch, o.batch_per_host), (20, 6));
        let o = RunOptions::from_options(
            json!({"batch": 2, "batchPerHost": 0, "h2c": true})
                .as_object()
                .unwrap(),
        )
        .unwrap();
        assert_eq!((o.batch, o.batch_per_host), (2, 0));
        for bad in [
            json!({"batch": "x"}),
            json!({"batchPerHost": 2.5}),
            json!({"batch": -1}),
        ] {
            let e = RunOptions::from_options(bad.as_object().unwrap()).unwrap_err();
            assert!(e.contains("must be a non-negative integer"), "{e}");
        }
        let e = RunOptions::from_options(json!({"h2c": "yes"}).as_object().unwrap()).unwrap_err();
        assert_eq!(e, "h2c must be a boolean (true or false), got \"yes\"");
    }
}
