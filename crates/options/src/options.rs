//! The typed options of a test (k6's `lib.Options`), read from JSON and written back in
//! k6's JSON shape.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::duration::GoDuration;
use crate::error::OptionsError;
use crate::json::{self, de, ser};

/// Every option k6 1.1 (and rk6) knows; `None` is "not set by any layer", which matters for
/// layering, for `k6 inspect`'s `null`s and for options whose being set changes behaviour
/// (`maxRedirects`). Fields are in the order `k6 inspect` prints them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Options {
    #[serde(default, deserialize_with = "de::boolean")]
    pub paused: Option<bool>,
    #[serde(default, deserialize_with = "de::int")]
    pub vus: Option<i64>,
    #[serde(
        default,
        deserialize_with = "de::duration",
        serialize_with = "ser::duration"
    )]
    pub duration: Option<GoDuration>,
    #[serde(default, deserialize_with = "de::int")]
    pub iterations: Option<i64>,
    #[serde(default, deserialize_with = "stages")]
    pub stages: Option<Vec<Stage>>,
    /// Each scenario's configuration as given; the scheduler reads them per executor.
    #[serde(default, deserialize_with = "de::object")]
    pub scenarios: Option<Map<String, Value>>,
    #[serde(default, deserialize_with = "de::string")]
    pub execution_segment: Option<String>,
    #[serde(default, deserialize_with = "de::string")]
    pub execution_segment_sequence: Option<String>,
    #[serde(default, deserialize_with = "de::boolean")]
    pub no_setup: Option<bool>,
    #[serde(
        default,
        deserialize_with = "de::duration",
        serialize_with = "ser::duration"
    )]
    pub setup_timeout: Option<GoDuration>,
    #[serde(default, deserialize_with = "de::boolean")]
    pub no_teardown: Option<bool>,
    #[serde(
        default,
        deserialize_with = "de::duration",
        serialize_with = "ser::duration"
    )]
    pub teardown_timeout: Option<GoDuration>,
    #[serde(default, deserialize_with = "de::int")]
    pub rps: Option<i64>,
    #[serde(default, deserialize_with = "dns")]
    pub dns: Dns,
    #[serde(default, deserialize_with = "de::int")]
    pub max_redirects: Option<i64>,
    #[serde(default, deserialize_with = "de::string")]
    pub user_agent: Option<String>,
    #[serde(default, deserialize_with = "count")]
    pub batch: Option<u64>,
    #[serde(default, deserialize_with = "count")]
    pub batch_per_host: Option<u64>,
    #[serde(default, deserialize_with = "de::string")]
    pub http_debug: Option<String>,
    #[serde(
        default,
        rename = "insecureSkipTLSVerify",
        deserialize_with = "de::boolean"
    )]
    pub insecure_skip_tls_verify: Option<bool>,
    #[serde(default, deserialize_with = "de::strings")]
    pub tls_cipher_suites: Option<Vec<String>>,
    #[serde(default, deserialize_with = "tls_versions")]
    pub tls_version: Option<TlsVersions>,
    #[serde(default, deserialize_with = "tls_auth")]
    pub tls_auth: Option<Vec<TlsAuth>>,
    #[serde(default, deserialize_with = "de::boolean")]
    pub throw: Option<bool>,
    /// The thresholds as given; rk6-metrics parses their expressions.
    #[serde(default, deserialize_with = "de::object")]
    pub thresholds: Option<Map<String, Value>>,
    #[serde(default, rename = "blacklistIPs", deserialize_with = "de::strings")]
    pub blacklist_ips: Option<Vec<String>>,
    #[serde(default, deserialize_with = "de::strings")]
    pub block_hostnames: Option<Vec<String>>,
    #[serde(default, deserialize_with = "de::string_map")]
    pub hosts: Option<BTreeMap<String, String>>,
    #[serde(default, deserialize_with = "de::boolean")]
    pub no_connection_reuse: Option<bool>,
    #[serde(
        default,
        rename = "noVUConnectionReuse",
        deserialize_with = "de::boolean"
    )]
    pub no_vu_connection_reuse: Option<bool>,
    #[serde(
        default,
        deserialize_with = "de::duration",
        serialize_with = "ser::duration"
    )]
    pub min_iteration_duration: Option<GoDuration>,
    /// Grafana Cloud settings: accepted and kept, not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud: Option<Value>,
    #[serde(default, deserialize_with = "de::object")]
    pub ext: Option<Map<String, Value>>,
    #[serde(default, deserialize_with = "de::strings")]
    pub summary_trend_stats: Option<Vec<String>>,
    #[serde(default, deserialize_with = "de::string")]
    pub summary_time_unit: Option<String>,
    #[serde(default, deserialize_with = "de::strings")]
    pub system_tags: Option<Vec<String>>,
    #[serde(default, deserialize_with = "de::string_map")]
    pub tags: Option<BTreeMap<String, String>>,
    #[serde(default, deserialize_with = "de::int")]
    pub metric_samples_buffer_size: Option<i64>,
    #[serde(default, deserialize_with = "de::boolean")]
    pub no_cookies_reset: Option<bool>,
    #[serde(default, deserialize_with = "de::boolean")]
    pub discard_response_bodies: Option<bool>,

    // Not printed by `k6 inspect`.
    /// Where `console.*` output goes (`--console-output`, `K6_CONSOLE_OUTPUT`).
    #[serde(default, skip_serializing, deserialize_with = "de::string")]
    pub console_output: Option<String>,
    /// Source addresses for the VUs; only `--local-ips`/`K6_LOCAL_IPS` set it.
    #[serde(
        default,
        rename = "localIPs",
        skip_serializing,
        deserialize_with = "de::string"
    )]
    pub local_ips: Option<String>,
    /// The summary's layout (`compact`, `full`, `legacy`).
    #[serde(default, skip_serializing, deserialize_with = "de::string")]
    pub summary_mode: Option<String>,
    /// rk6's own: HTTP/2 with prior knowledge for every `http://` request.
    #[serde(default, skip_serializing, deserialize_with = "de::boolean")]
    pub h2c: Option<bool>,
    /// How long `handleSummary()` may run (k6 2.2: `handleSummaryTimeout`, default 120s).
    #[serde(
        default,
        skip_serializing,
        deserialize_with = "de::duration",
        serialize_with = "ser::duration"
    )]
    pub handle_summary_timeout: Option<GoDuration>,
    /// Feature flags (k6 2.1: `--features`, `K6_FEATURES`, the config file's `features`);
    /// one layer's list replaces the lower ones', as k6 does not merge them.
    #[serde(default, skip_serializing, deserialize_with = "de::strings")]
    pub features: Option<Vec<String>>,
    /// Fetch a server's missing intermediate certificates from the AIA URLs of its chain
    /// (k6 2.3: `tlsAIAFetch`, `K6_TLS_AIA_FETCH`, no flag).
    #[serde(
        default,
        rename = "tlsAIAFetch",
        skip_serializing,
        deserialize_with = "de::boolean"
    )]
    pub tls_aia_fetch: Option<bool>,
}

/// The option keys k6 1.1 accepts in a script's `options`, in the order `k6 inspect` prints
/// them (`cloud`, printed only when set, aside).
pub const INSPECT_KEYS: &[&str] = &[
    "paused",
    "vus",
    "duration",
    "iterations",
    "stages",
    "scenarios",
    "executionSegment",
    "executionSegmentSequence",
    "noSetup",
    "setupTimeout",
    "noTeardown",
    "teardownTimeout",
    "rps",
    "dns",
    "maxRedirects",
    "userAgent",
    "batch",
    "batchPerHost",
    "httpDebug",
    "insecureSkipTLSVerify",
    "tlsCipherSuites",
    "tlsVersion",
    "tlsAuth",
    "throw",
    "thresholds",
    "blacklistIPs",
    "blockHostnames",
    "hosts",
    "noConnectionReuse",
    "noVUConnectionReuse",
    "minIterationDuration",
    "ext",
    "summaryTrendStats",
    "summaryTimeUnit",
    "systemTags",
    "tags",
    "metricSamplesBufferSize",
    "noCookiesReset",
    "discardResponseBodies",
];

/// Option keys known besides [`INSPECT_KEYS`]; `h2c` is rk6's own (k6 warns about it and
/// ignores it).
pub const OTHER_KEYS: &[&str] = &[
    "cloud",
    "consoleOutput",
    "localIPs",
    "summaryMode",
    "h2c",
    "handleSummaryTimeout",
    "features",
    "tlsAIAFetch",
];

/// Whether rk6 knows the option key.
pub fn is_known(key: &str) -> bool {
    INSPECT_KEYS.contains(&key) || OTHER_KEYS.contains(&key)
}

/// One stage of the `stages` shortcut.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct Stage {
    /// How long the ramp takes.
    #[serde(
        default,
        deserialize_with = "de::duration",
        serialize_with = "ser::duration"
    )]
    pub duration: Option<GoDuration>,
    /// VUs at the end of the stage.
    #[serde(default, deserialize_with = "de::int")]
    pub target: Option<i64>,
}

/// `dns`: each field set on its own (layers merge field by field); the values are checked
/// where the resolver is configured.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct Dns {
    /// `inf`, `0` or a duration.
    #[serde(default, deserialize_with = "de::string")]
    pub ttl: Option<String>,
    /// `first`, `random` or `roundRobin`.
    #[serde(default, deserialize_with = "de::string")]
    pub select: Option<String>,
    /// `preferIPv4`, `preferIPv6`, `onlyIPv4`, `onlyIPv6` or `any`.
    #[serde(default, deserialize_with = "de::string")]
    pub policy: Option<String>,
}

impl Dns {
    /// Whether no field is set.
    pub fn is_empty(&self) -> bool {
        self.ttl.is_none() && self.select.is_none() && self.policy.is_none()
    }

    /// The `--dns`/`K6_DNS` form `ttl=1m,select=first,policy=any` (its values are checked
    /// with the object form's, where the resolver is configured).
    pub fn from_text(text: &str) -> Result<Dns, String> {
        let mut dns = Dns::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("no value for key {part}"))?;
            let v = Some(v.trim().to_string());
            match k.trim() {
                "ttl" => dns.ttl = v,
                "select" => dns.select = v,
                "policy" => dns.policy = v,
                k => return Err(format!("unknown DNS configuration field: {k}")),
            }
        }
        Ok(dns)
    }

    /// `higher`'s fields over these.
    fn apply(&mut self, higher: Dns) {
        if higher.ttl.is_some() {
            self.ttl = higher.ttl;
        }
        if higher.select.is_some() {
            self.select = higher.select;
        }
        if higher.policy.is_some() {
            self.policy = higher.policy;
        }
    }
}

/// `tlsVersion`: a string sets both ends, an object `{min, max}` either.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TlsVersions {
    /// Oldest version allowed (`tls1.2`), `None` or empty for any.
    pub min: Option<String>,
    /// Newest version allowed.
    pub max: Option<String>,
}

/// One `tlsAuth` client certificate, PEM texts as given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TlsAuth {
    /// Host names the certificate is for (all when empty).
    #[serde(default, deserialize_with = "de::strings")]
    pub domains: Option<Vec<String>>,
    /// The certificate chain.
    #[serde(default, deserialize_with = "de::string")]
    pub cert: Option<String>,
    /// The private key.
    #[serde(default, deserialize_with = "de::string")]
    pub key: Option<String>,
    /// The key's password.
    #[serde(default, deserialize_with = "de::string")]
    pub password: Option<String>,
}

fn stages<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Stage>>, D::Error> {
    Option::<Vec<Stage>>::deserialize(d)
}

fn dns<'de, D: Deserializer<'de>>(d: D) -> Result<Dns, D::Error> {
    Ok(Option::<Dns>::deserialize(d)?.unwrap_or_default())
}

fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error;
    let v = Value::deserialize(d)?;
    json::count(&v).map_err(|e| D::Error::custom(e.0))
}

fn tls_auth<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<TlsAuth>>, D::Error> {
    Option::<Vec<TlsAuth>>::deserialize(d)
}

fn tls_versions<'de, D: Deserializer<'de>>(d: D) -> Result<Option<TlsVersions>, D::Error> {
    use serde::de::Error;
    let v = Value::deserialize(d)?;
    let version = |v: &Value, end: &str| {
        json::string(v).map_err(|e| D::Error::custom(e.naming(&format!("{{option}}.{end}"))))
    };
    match &v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(TlsVersions {
            min: Some(s.clone()),
            max: Some(s.clone()),
        })),
        Value::Object(m) => {
            if let Some(k) = m.keys().find(|k| *k != "min" && *k != "max") {
                return Err(D::Error::custom(format!("unknown field `{k}`")));
            }
            Ok(Some(TlsVersions {
                min: version(m.get("min").unwrap_or(&Value::Null), "min")?,
                max: version(m.get("max").unwrap_or(&Value::Null), "max")?,
            }))
        }
        other => Err(D::Error::custom(format!(
            "{{option}} must be a version string or {{min, max}}, got {other}"
        ))),
    }
}

/// Options read from one JSON layer, and the keys in it rk6 does not know.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsonLayer {
    /// The options the layer sets.
    pub options: Options,
    /// Keys that are no option, in the order given.
    pub unknown: Vec<String>,
}

impl Options {
    /// Reads options from a JSON object with k6's rules for each option's type; the error
    /// names the option (`stages[0].target`) and the value.
    pub fn from_json(value: &Value) -> Result<JsonLayer, OptionsError> {
        let Value::Object(map) = value else {
            return Err(OptionsError::invalid(format!(
                "the options must be an object, got {value}"
            )));
        };
        let unknown = map.keys().filter(|k| !is_known(k)).cloned().collect();
        let options = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            OptionsError::invalid(json::describe(&path, &e.inner().to_string()))
        })?;
        Ok(JsonLayer { options, unknown })
    }

    /// The options in k6's JSON shape: every key of [`INSPECT_KEYS`] in its order, `null`
    /// where unset, durations as Go prints them.
    pub fn to_k6_json(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        }
    }

    /// Sets every option `higher` sets (for `dns`, field by field). The execution shortcuts
    /// and `scenarios` replace each other (see [`crate::consolidate`]) before this.
    pub fn apply(&mut self, higher: Options) {
        macro_rules! take {
            ($($field:ident),* $(,)?) => {
                $(if higher.$field.is_some() {
                    self.$field = higher.$field;
                })*
            };
        }
        take!(
            paused,
            vus,
            duration,
            iterations,
            scenarios,
            execution_segment,
            execution_segment_sequence,
            no_setup,
            setup_timeout,
            no_teardown,
            teardown_timeout,
            rps,
            max_redirects,
            user_agent,
            batch,
            batch_per_host,
            http_debug,
            insecure_skip_tls_verify,
            tls_cipher_suites,
            tls_version,
            tls_auth,
            throw,
            thresholds,
            blacklist_ips,
            block_hostnames,
            hosts,
            no_connection_reuse,
            no_vu_connection_reuse,
            min_iteration_duration,
            cloud,
            ext,
            summary_trend_stats,
            summary_time_unit,
            system_tags,
            metric_samples_buffer_size,
            no_cookies_reset,
            discard_response_bodies,
            console_output,
            local_ips,
            summary_mode,
            h2c,
            handle_summary_timeout,
            features,
            tls_aia_fetch,
        );
        // As k6: stages without a duration are dropped.
        if let Some(stages) = higher.stages {
            self.stages = Some(
                stages
                    .into_iter()
                    .filter(|s| s.duration.is_some())
                    .collect(),
            );
        }
        // As k6: a layer's tags replace the lower ones only when it has some.
        if higher.tags.as_ref().is_some_and(|t| !t.is_empty()) {
            self.tags = higher.tags;
        }
        self.dns.apply(higher.dns);
    }

    /// Whether an execution shortcut (`duration`, `iterations`, `stages`) is set.
    pub fn sets_shortcut(&self) -> bool {
        self.duration.is_some() || self.iterations.is_some() || self.stages.is_some()
    }

    /// Whether this layer says how the test executes: a shortcut or `scenarios`.
    pub fn sets_execution(&self) -> bool {
        self.sets_shortcut() || self.scenarios.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: Value) -> Result<Options, String> {
        Options::from_json(&v)
            .map(|l| l.options)
            .map_err(|e| e.message)
    }

    #[test]
    fn typed_fields_from_json() {
        let o = read(json!({
            "vus": "2", "duration": 1500, "stages": [{"duration": "1m", "target": 2}, {"duration": 1000}],
            "setupTimeout": "1d", "maxRedirects": "", "userAgent": "", "tags": {"b": "c"},
            "dns": {"ttl": "1m", "x": 1}, "tlsVersion": "tls1.2", "batch": 3, "h2c": true
        }))
        .unwrap();
        assert_eq!(o.vus, Some(2));
        assert_eq!(o.duration, Some(GoDuration(1_500_000_000)));
        assert_eq!(o.stages.as_ref().unwrap()[1].target, None);
        assert_eq!(o.setup_timeout, Some(GoDuration::from_secs(86_400)));
        assert_eq!(
            o.max_redirects, None,
            "an empty string leaves an integer unset"
        );
        assert_eq!(o.user_agent.as_deref(), Some(""));
        assert_eq!(o.dns.ttl.as_deref(), Some("1m"));
        assert_eq!(
            o.tls_version.as_ref().unwrap().max.as_deref(),
            Some("tls1.2")
        );
        assert_eq!((o.batch, o.h2c), (Some(3), Some(true)));
    }

    #[test]
    fn wrong_types_name_the_option() {
        for (v, msg) in [
            (
                json!({"noConnectionReuse": "x"}),
                "noConnectionReuse must be a boolean (true or false), got \"x\"",
            ),
            (json!({"userAgent": 1}), "userAgent must be a string, got 1"),
            (
                json!({"maxRedirects": true}),
                "maxRedirects must be an integer, got true",
            ),
            (
                json!({"tags": {"a": 1}}),
                "tags must be an object of strings, got 1 for \"a\"",
            ),
            (
                json!({"stages": [{"duration": "1s", "target": 1e20}]}),
                "stages[0].target: json: cannot unmarshal number 100000000000000000000 into an integer (int64)",
            ),
            (json!({"setupTimeout": "soon"}), "invalid setupTimeout \"soon\""),
            (
                json!({"batch": "x"}),
                "batch must be a non-negative integer, got \"x\"",
            ),
            (
                json!({"h2c": "yes"}),
                "h2c must be a boolean (true or false), got \"yes\"",
            ),
            (
                json!({"dns": {"select": 1}}),
                "dns.select must be a string, got 1",
            ),
            (
                json!({"tlsVersion": 12}),
                "tlsVersion must be a version string or {min, max}, got 12",
            ),
            (json!({"scenarios": "x"}), "scenarios must be an object, got \"x\""),
            (
                json!({"summaryTrendStats": "avg"}),
                "summaryTrendStats must be an array of strings, got \"avg\"",
            ),
        ] {
            assert_eq!(read(v.clone()).unwrap_err(), msg, "{v}");
        }
        let e = read(json!({"tlsAuth": [{"cert": "c", "nope": 1}]})).unwrap_err();
        assert!(
            e.starts_with("tlsAuth[0].nope: unknown field `nope`"),
            "{e}"
        );
    }

    #[test]
    fn unknown_keys_are_listed_and_k6_shape_has_every_key() {
        let l = Options::from_json(&json!({"vus": 1, "vuss": 2, "localIPs": "x"})).unwrap();
        assert_eq!(l.unknown, ["vuss"]);
        let shape = l.options.to_k6_json();
        let keys: Vec<&str> = shape.keys().map(String::as_str).collect();
        assert_eq!(keys, INSPECT_KEYS);
        assert_eq!(shape["vus"], json!(1));
        assert_eq!(
            shape["dns"],
            json!({"ttl": null, "select": null, "policy": null})
        );
        let o = read(json!({"duration": "90s", "cloud": {"a": 1}})).unwrap();
        let shape = o.to_k6_json();
        assert_eq!(shape["duration"], json!("1m30s"));
        let keys: Vec<&str> = shape.keys().map(String::as_str).collect();
        assert_eq!(keys[31], "cloud", "after minIterationDuration, as k6");
    }

    #[test]
    fn dns_text_form() {
        let d = Dns::from_text("ttl=inf, select=roundRobin,policy=onlyIPv6").unwrap();
        assert_eq!(
            (d.ttl.as_deref(), d.select.as_deref(), d.policy.as_deref()),
            (Some("inf"), Some("roundRobin"), Some("onlyIPv6"))
        );
        assert!(Dns::from_text("").unwrap().is_empty());
        assert_eq!(
            Dns::from_text("foo=1").unwrap_err(),
            "unknown DNS configuration field: foo"
        );
        assert_eq!(Dns::from_text("ttl").unwrap_err(), "no value for key ttl");
    }

    #[test]
    fn apply_takes_what_the_higher_layer_sets() {
        let mut o =
            read(json!({"vus": 2, "userAgent": "a", "dns": {"ttl": "1m"}, "tags": {"a": "1"}}))
                .unwrap();
        o.apply(read(json!({"userAgent": "b", "dns": {"select": "first"}, "tags": {}})).unwrap());
        assert_eq!(o.vus, Some(2));
        assert_eq!(o.user_agent.as_deref(), Some("b"));
        assert_eq!(o.dns.ttl.as_deref(), Some("1m"));
        assert_eq!(o.dns.select.as_deref(), Some("first"));
        assert_eq!(o.tags.unwrap()["a"], "1");
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::exit::ExitCode;
    use proptest::prelude::*;
    use serde_json::json;

    /// Any JSON value: numbers (whole, fractional, huge), texts that look like the kinds'
    /// own forms, and nested arrays and objects.
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            (-1e3f64..1e3).prop_map(|f| json!(f)),
            prop_oneof![Just(1e300), Just(-1e19), Just(9.3e18), Just(0.5)].prop_map(|f| json!(f)),
            "[-+]?[0-9]{0,20}".prop_map(Value::String),
            "[0-9]{1,3}(ms|s|m|h|d)".prop_map(Value::String),
            "\\PC{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 12, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// k6's integer options (Go `null.Int`): a whole number in int64's range, or a decimal
    /// string of one (k6 1.1.0 takes `"10"` and `"+10"`, refuses `" 10"` and `1.5`), or an
    /// object read as Go's `NullInt64` struct (`{}` is 0; its `Int64` an integer, `Valid` a
    /// boolean, other keys ignored, names matched case-insensitively).
    fn k6_int_accepts(v: &Value) -> bool {
        match v {
            Value::Null => true,
            Value::Object(o) => o
                .iter()
                .all(|(k, v)| match k.to_ascii_lowercase().as_str() {
                    "int64" => v.is_null() || v.as_i64().is_some(),
                    "valid" => v.is_null() || v.is_boolean(),
                    _ => true,
                }),
            Value::Number(n) => {
                n.as_i64().is_some()
                    || n.as_f64().is_some_and(|f| {
                        f.fract() == 0.0 && f >= -(2f64.powi(63)) && f < 2f64.powi(63)
                    })
            }
            Value::String(s) => {
                let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
                s.is_empty()
                    || (!digits.is_empty()
                        && digits.bytes().all(|b| b.is_ascii_digit())
                        && s.parse::<i64>().is_ok())
            }
            _ => false,
        }
    }

    fn decides(key: &str, v: &Value) -> Result<(), OptionsError> {
        let mut map = Map::new();
        map.insert(key.to_string(), v.clone());
        Options::from_json(&Value::Object(map)).map(|_| ())
    }

    proptest! {
        #![proptest_config(crate::prop_config(2000))]

        /// Every known option, any JSON value: accepted, or refused with exit 104, never a
        /// panic; whatever is accepted validates without a panic and its k6 JSON form reads
        /// back to the same options.
        #[test]
        fn any_value_of_any_option(key in prop::sample::select(INSPECT_KEYS), v in json_value()) {
            match decides(key, &v) {
                Err(e) => prop_assert_eq!(e.code, ExitCode::InvalidConfig),
                Ok(()) => {
                    let o = Options::from_json(&json!({ key: v.clone() })).unwrap().options;
                    let _ = o.validate();
                    let shown = Value::Object(o.to_k6_json());
                    let again = Options::from_json(&shown).unwrap().options;
                    prop_assert_eq!(Value::Object(again.to_k6_json()), shown);
                }
            }
        }

        /// Boolean options take `true`, `false` and `null` only (k6 refuses `"true"` and `1`).
        #[test]
        fn booleans_take_booleans(
            key in prop::sample::select(&["paused", "noSetup", "noTeardown", "throw", "insecureSkipTLSVerify", "noConnectionReuse", "noVUConnectionReuse", "noCookiesReset", "discardResponseBodies"][..]),
            v in json_value(),
        ) {
            let want = matches!(v, Value::Null | Value::Bool(_));
            prop_assert_eq!(decides(key, &v).is_ok(), want, "{} = {}", key, v);
        }

        /// Integer options follow k6's int64 rule.
        #[test]
        fn integers_take_integers(key in prop::sample::select(&["vus", "iterations", "rps", "maxRedirects"][..]), v in json_value()) {
            prop_assert_eq!(decides(key, &v).is_ok(), k6_int_accepts(&v), "{} = {}", key, v);
        }

        /// String options take strings and `null` (k6 refuses a number for `userAgent`).
        #[test]
        fn strings_take_strings(key in prop::sample::select(&["userAgent", "summaryTimeUnit"][..]), v in json_value()) {
            let want = matches!(v, Value::Null | Value::String(_));
            prop_assert_eq!(decides(key, &v).is_ok(), want, "{} = {}", key, v);
        }

        /// Duration options: a number of milliseconds, a duration text, or `null`; a boolean,
        /// an array or an object is refused (k6: "'true' is not a valid duration value").
        #[test]
        fn durations_take_durations(key in prop::sample::select(&["duration", "setupTimeout", "teardownTimeout", "minIterationDuration"][..]), v in json_value()) {
            let want = match &v {
                Value::Null | Value::Number(_) => true,
                Value::String(s) => crate::parse_go_duration(s).is_ok(),
                _ => false,
            };
            prop_assert_eq!(decides(key, &v).is_ok(), want, "{} = {}", key, v);
        }

        /// The `K6_*` environment, any text in any variable: a decision, never a panic.
        #[test]
        fn any_environment_is_decided(
            var in prop::sample::select(&["K6_VUS", "K6_DURATION", "K6_STAGES", "K6_DNS", "K6_TAGS", "K6_TLSAUTH", "K6_PAUSED", "K6_BATCH", "K6_SYSTEM_TAGS", "K6_SETUP_TIMEOUT"][..]),
            text in prop_oneof!["\\PC{0,16}", "[0-9a-z:,=.]{0,16}"],
        ) {
            let env = |name: &str| (name == var).then(|| text.clone());
            if let Err(e) = crate::env_layer(&env) {
                prop_assert_eq!(e.code, ExitCode::InvalidConfig);
            }
        }
    }
}
