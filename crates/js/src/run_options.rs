//! Options that change how a VU runs its script and builds its samples.

use std::time::Duration;

use rk6_metrics::tags::{DEFAULT_SYSTEM_TAGS, OPT_IN_SYSTEM_TAGS};
use rk6_options::Options;

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

impl RunOptions {
    /// Takes what VUs need from the consolidated options; the error names the bad value.
    pub fn from_options(options: &Options) -> Result<RunOptions, String> {
        let system_tags = match &options.system_tags {
            None => None,
            Some(items) => {
                let mut enabled = Vec::new();
                for name in items {
                    let name = name.as_str();
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
        };
        let count = |n: Option<u64>, default: usize| {
            n.map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        Ok(RunOptions {
            throw: options.throw.unwrap_or(false),
            discard_response_bodies: options.discard_response_bodies.unwrap_or(false),
            // k6 sleeps for no time on a zero or negative minimum.
            min_iteration_duration: options
                .min_iteration_duration
                .and_then(|d| d.to_std())
                .filter(|d| !d.is_zero()),
            system_tags,
            max_redirects_set: options.max_redirects.is_some(),
            batch: count(options.batch, DEFAULT_BATCH),
            batch_per_host: count(options.batch_per_host, DEFAULT_BATCH_PER_HOST),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: serde_json::Value) -> Result<RunOptions, String> {
        RunOptions::from_options(&Options::from_json(&v).unwrap().options)
    }

    #[test]
    fn reads_and_validates() {
        let o = read(
            json!({"throw": true, "minIterationDuration": "1s", "systemTags": ["status", "vu"]}),
        )
        .unwrap();
        assert!(o.throw);
        assert_eq!(o.min_iteration_duration, Some(Duration::from_secs(1)));
        let st = o.system_tags.unwrap();
        assert!(st.vu && !st.iter);
        assert!(st.disabled.contains(&"url") && !st.disabled.contains(&"status"));
        let e = read(json!({"systemTags": ["nope"]})).unwrap_err();
        assert!(e.contains("unknown system tag"), "{e}");
        let e = read(json!({"systemTags": ["ip"]})).unwrap_err();
        assert!(e.contains("not supported by rk6 yet"), "{e}");
        let o = read(json!({"minIterationDuration": "-1s", "maxRedirects": 0})).unwrap();
        assert_eq!(o.min_iteration_duration, None);
        assert!(o.max_redirects_set);
    }

    #[test]
    fn batch_limits_default_like_k6() {
        let o = read(json!({})).unwrap();
        assert_eq!((o.batch, o.batch_per_host), (20, 6));
        assert!(!o.max_redirects_set);
        let o = read(json!({"batch": 2, "batchPerHost": 0, "h2c": true})).unwrap();
        assert_eq!((o.batch, o.batch_per_host), (2, 0));
    }
}
