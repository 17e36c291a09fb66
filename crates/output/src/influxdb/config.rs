//! Settings of the `influxdb` output, read as k6 1.1 reads them: k6's defaults, then the
//! `K6_INFLUXDB_*` variables, then the `-o influxdb=URL` argument (its host, path, user and
//! query parameters), each layer replacing only what it sets.

use std::time::Duration;

use rk6_options::text;
use url::Url;

use crate::outputs::OutputError;

/// Where k6 writes when neither the argument nor `K6_INFLUXDB_ADDR` names a server.
pub const DEFAULT_ADDR: &str = "http://localhost:8086";

/// The UDP datagram size when `K6_INFLUXDB_PAYLOAD_SIZE` is unset (the Go client's).
pub const DEFAULT_PAYLOAD_SIZE: usize = 512;

/// The database when none is named.
pub const DEFAULT_DB: &str = "k6";

/// k6's default `K6_INFLUXDB_TAGS_AS_FIELDS`. (`vu` and `iter` are sample metadata in k6 1.1,
/// not tags, so in practice only `url` moves.)
const DEFAULT_TAGS_AS_FIELDS: [&str; 3] = ["vu", "iter", "url"];

/// The type a tag's value is written as when `TAGS_AS_FIELDS` makes it a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A string field (the default).
    String,
    /// An integer field (`1i`); a value that is no integer stays a string.
    Int,
    /// A float field; a value that is no number stays a string.
    Float,
    /// A boolean field (Go's `ParseBool` spellings); anything else stays a string.
    Bool,
}

/// How timestamps are written (`K6_INFLUXDB_PRECISION`), and the `precision` parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Precision {
    /// The parameter as given (`ns` when unset).
    pub name: String,
    /// Nanoseconds per unit of the written timestamps, or why k6 cannot build a batch with
    /// this precision (Go's duration parser refuses `1<precision>`), so that every write fails.
    pub nanos: Result<u64, String>,
    /// What the UDP transport rounds its nanosecond timestamps to: the Go duration
    /// `1<precision>` (so `us` rounds to microseconds there).
    pub round_nanos: u64,
}

impl Precision {
    /// k6 accepts any text here; it is checked when a batch is built.
    fn parse(name: &str) -> Precision {
        let name = if name.is_empty() { "ns" } else { name };
        // As k6's client: the batch needs `1<precision>` to be a Go duration, and the
        // timestamps are divided by the unit only for `ms`, `s`, `m` and `h`, else written in
        // nanoseconds, `us` included (InfluxDB 1.x reads `us` as nanoseconds too: its
        // microsecond unit is `u`, which Go's parser refuses).
        let parsed = rk6_options::duration::parse_time_duration(&format!("1{name}"));
        let round_nanos = parsed.as_ref().map_or(1, |d| d.as_nanos().max(1) as u64);
        let nanos = parsed
            .map(|_| match name {
                "ms" => 1_000_000,
                "s" => 1_000_000_000,
                "m" => 60_000_000_000,
                "h" => 3_600_000_000_000,
                _ => 1,
            })
            .map_err(|e| format!("couldn't make a batch: {e}"));
        Precision {
            name: name.to_string(),
            nanos,
            round_nanos,
        }
    }
}

/// Everything the output needs to know before the test starts.
#[derive(Debug, Clone)]
pub struct InfluxConfig {
    /// The server: scheme, host, port and an optional path prefix (no credentials).
    pub addr: Url,
    /// The database written to (and created when missing).
    pub db: String,
    /// Basic-auth user; no `Authorization` header when empty.
    pub username: String,
    /// Basic-auth password.
    pub password: String,
    /// Accept any server certificate.
    pub insecure: bool,
    /// Time between writes.
    pub push_interval: Duration,
    /// Writes in flight at once.
    pub concurrent_writes: usize,
    /// Timestamp precision.
    pub precision: Precision,
    /// The `rp` parameter (empty: the database's default retention policy).
    pub retention: String,
    /// The `consistency` parameter (empty: the server's default).
    pub consistency: String,
    /// Tags written as fields instead, with their field types, in configuration order.
    pub tags_as_fields: Vec<(String, FieldKind)>,
    /// The largest datagram of the UDP transport (`udp://host:port` addresses).
    pub payload_size: usize,
}

/// One layer of settings: what it sets, nothing for what it leaves.
#[derive(Debug, Default)]
struct Layer {
    addr: Option<String>,
    db: Option<String>,
    username: Option<String>,
    password: Option<String>,
    insecure: Option<bool>,
    push_interval: Option<i64>,
    concurrent_writes: Option<i64>,
    precision: Option<String>,
    retention: Option<String>,
    consistency: Option<String>,
    tags_as_fields: Option<Vec<String>>,
    payload_size: Option<i64>,
}

impl Layer {
    /// Applies `over` on top of `self`, as k6's `Config.Apply`.
    fn apply(mut self, over: Layer) -> Layer {
        macro_rules! take {
            ($($f:ident),*) => { $( if over.$f.is_some() { self.$f = over.$f; } )* };
        }
        take!(
            addr,
            db,
            username,
            password,
            insecure,
            push_interval,
            concurrent_writes,
            precision,
            retention,
            consistency
        );
        if over.tags_as_fields.as_ref().is_some_and(|t| !t.is_empty()) {
            self.tags_as_fields = over.tags_as_fields;
        }
        if over.payload_size.is_some_and(|n| n > 0) {
            self.payload_size = over.payload_size;
        }
        self
    }
}

fn invalid(message: String) -> OutputError {
    OutputError::InvalidArgument(format!("could not create the 'influxdb' output: {message}"))
}

impl InfluxConfig {
    /// Reads the settings from the `-o influxdb=ARG` argument and the environment.
    pub fn parse(
        arg: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<InfluxConfig, OutputError> {
        let layer = env_layer(env)?;
        let layer = if arg.is_empty() {
            layer
        } else {
            layer.apply(url_layer(arg)?)
        };
        InfluxConfig::from_layer(layer)
    }

    fn from_layer(l: Layer) -> Result<InfluxConfig, OutputError> {
        let raw_addr = l
            .addr
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| DEFAULT_ADDR.to_string());
        let addr = parse_addr(&raw_addr)?;
        let push_interval = l.push_interval.unwrap_or(1_000_000_000);
        if push_interval <= 0 {
            return Err(invalid(format!(
                "metric flush period should be positive but was {}",
                rk6_options::GoDuration(push_interval)
            )));
        }
        let concurrent_writes = l.concurrent_writes.unwrap_or(4);
        if concurrent_writes <= 0 {
            return Err(invalid(
                "influxdb's ConcurrentWrites must be a positive number".into(),
            ));
        }
        let tags = l.tags_as_fields.unwrap_or_else(|| {
            DEFAULT_TAGS_AS_FIELDS
                .iter()
                .map(|s| s.to_string())
                .collect()
        });
        Ok(InfluxConfig {
            addr,
            db: l
                .db
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| DEFAULT_DB.into()),
            username: l.username.unwrap_or_default(),
            password: l.password.unwrap_or_default(),
            insecure: l.insecure.unwrap_or(false),
            push_interval: Duration::from_nanos(push_interval as u64),
            concurrent_writes: usize::try_from(concurrent_writes).unwrap_or(usize::MAX),
            precision: Precision::parse(l.precision.as_deref().unwrap_or("")),
            retention: l.retention.unwrap_or_default(),
            consistency: l.consistency.unwrap_or_default(),
            tags_as_fields: field_kinds(&tags)?,
            payload_size: l
                .payload_size
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(DEFAULT_PAYLOAD_SIZE),
        })
    }
}

/// `K6_INFLUXDB_ADDR` (or the argument's `scheme://host`), checked as the Go client checks
/// it: `http://` or `https://`, or `udp://host:port` for InfluxDB's UDP listener.
fn parse_addr(raw: &str) -> Result<Url, OutputError> {
    let url = Url::parse(raw).map_err(|e| invalid(format!("parse \"{raw}\": {e}")))?;
    if url.scheme() == "udp" {
        if url.port().is_none() {
            return Err(invalid(format!(
                "address {}: missing port in address",
                &raw["udp://".len()..]
            )));
        }
        return Ok(url);
    }
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "Unsupported protocol scheme: {}, your address must start with http:// or https://",
            url.scheme()
        )));
    }
    if url.host().is_none() {
        return Err(invalid(format!("parse \"{raw}\": the address has no host")));
    }
    Ok(url)
}

/// The `K6_INFLUXDB_*` layer. Empty values leave a setting unset, as k6's envconfig does.
fn env_layer(env: &dyn Fn(&str) -> Option<String>) -> Result<Layer, OutputError> {
    let get = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(proxy) = get("K6_INFLUXDB_PROXY") {
        return Err(invalid(format!(
            "K6_INFLUXDB_PROXY ({proxy}) is not supported by rk6 yet (see docs/compatibility.md)"
        )));
    }
    let bad = |key: &str, v: &str, why: String| invalid(format!("invalid {key} \"{v}\": {why}"));
    let int = |key: &str| -> Result<Option<i64>, OutputError> {
        get(key)
            .map(|v| text::go_int(&v).map_err(|e| bad(key, &v, e)))
            .transpose()
    };
    let insecure = match get("K6_INFLUXDB_INSECURE") {
        None => None,
        Some(v) => text::boolean(&v)
            .map_err(|_| bad("K6_INFLUXDB_INSECURE", &v, "use true or false".to_string()))?,
    };
    let push_interval = match get("K6_INFLUXDB_PUSH_INTERVAL") {
        None => None,
        Some(v) => Some(duration(&v).map_err(|e| bad("K6_INFLUXDB_PUSH_INTERVAL", &v, e))?),
    };
    Ok(Layer {
        payload_size: int("K6_INFLUXDB_PAYLOAD_SIZE")?,
        addr: get("K6_INFLUXDB_ADDR"),
        db: get("K6_INFLUXDB_DB"),
        username: get("K6_INFLUXDB_USERNAME"),
        password: get("K6_INFLUXDB_PASSWORD"),
        insecure,
        push_interval,
        concurrent_writes: int("K6_INFLUXDB_CONCURRENT_WRITES")?,
        precision: get("K6_INFLUXDB_PRECISION"),
        retention: get("K6_INFLUXDB_RETENTION"),
        consistency: get("K6_INFLUXDB_CONSISTENCY"),
        // envconfig splits on commas and trims nothing: ` url` is no tag's name.
        tags_as_fields: get("K6_INFLUXDB_TAGS_AS_FIELDS")
            .map(|v| v.split(',').map(str::to_string).collect()),
    })
}

/// A k6 duration (a bare number is milliseconds), as nanoseconds; may be negative.
fn duration(v: &str) -> Result<i64, String> {
    rk6_options::parse_go_duration(v)
        .map(|d| d.as_nanos())
        .map_err(|_| format!("time: invalid duration \"{v}\""))
}

/// The `-o influxdb=ARG` layer: `http://user:pass@host:port/db?param=…`, or just `db`.
fn url_layer(arg: &str) -> Result<Layer, OutputError> {
    let mut l = Layer::default();
    let (path, query) = match Url::parse(arg) {
        Ok(u) if u.has_host() && !u.host_str().unwrap_or_default().is_empty() => {
            let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
            l.addr = Some(format!(
                "{}://{}{port}",
                u.scheme(),
                u.host_str().unwrap_or_default()
            ));
            if !u.username().is_empty() || u.password().is_some() {
                let decode = |s: &str| {
                    percent_encoding::percent_decode_str(s)
                        .decode_utf8_lossy()
                        .into_owned()
                };
                l.username = Some(decode(u.username()));
                l.password = Some(u.password().map(decode).unwrap_or_default());
            }
            let path = percent_encoding::percent_decode_str(u.path())
                .decode_utf8_lossy()
                .into_owned();
            (path, u.query().unwrap_or_default().to_string())
        }
        Ok(u) if u.cannot_be_a_base() || !u.has_host() => {
            // `scheme:opaque` (Go keeps no host and no path for it).
            (String::new(), u.query().unwrap_or_default().to_string())
        }
        Ok(u) => (
            u.path().to_string(),
            u.query().unwrap_or_default().to_string(),
        ),
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            if arg.starts_with(':') {
                return Err(invalid(format!("parse \"{arg}\": missing protocol scheme")));
            }
            match arg.split_once('?') {
                Some((p, q)) => (p.to_string(), q.to_string()),
                None => (arg.to_string(), String::new()),
            }
        }
        Err(e) => return Err(invalid(format!("parse \"{arg}\": {e}"))),
    };
    if let Some(db) = path.strip_prefix('/').or(Some(path.as_str())) {
        if !db.is_empty() {
            l.db = Some(db.to_string());
        }
    }
    let mut tags: Vec<String> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        let (k, v) = (k.into_owned(), v.into_owned());
        // Go's `Query()` groups repeated keys and k6 reads the first value (all for tags).
        let first = !seen.contains(&k);
        seen.push(k.clone());
        let bad_int = |v: &str| invalid(format!("strconv.Atoi: parsing {v:?}: invalid syntax"));
        match k.as_str() {
            "tagsAsFields" => tags.push(v),
            _ if !first => {}
            "insecure" => match v.as_str() {
                "" => {}
                "false" => l.insecure = Some(false),
                "true" => l.insecure = Some(true),
                _ => return Err(invalid(format!("insecure must be true or false, not {v}"))),
            },
            "payload_size" => {
                l.payload_size = Some(text::go_int(&v).map_err(|_| bad_int(&v))?);
            }
            "precision" => l.precision = Some(v),
            "retention" => l.retention = Some(v),
            "consistency" => l.consistency = Some(v),
            "pushInterval" => {
                if !v.is_empty() {
                    l.push_interval = Some(duration(&v).map_err(invalid)?);
                }
            }
            "concurrentWrites" => {
                l.concurrent_writes = Some(text::go_int(&v).map_err(|_| bad_int(&v))?);
            }
            _ => return Err(invalid(format!("unknown query parameter: {k}"))),
        }
    }
    if !tags.is_empty() {
        l.tags_as_fields = Some(tags);
    }
    Ok(l)
}

/// `name[:type]` entries as k6 reads them: a name given twice and an unknown type are errors.
fn field_kinds(entries: &[String]) -> Result<Vec<(String, FieldKind)>, OutputError> {
    let mut out: Vec<(String, FieldKind)> = Vec::new();
    for entry in entries {
        let (name, kind) = entry.split_once(':').unwrap_or((entry, ""));
        if out.iter().any(|(n, _)| n == name) {
            return Err(invalid(format!(
                "a tag name ({name}) shows up more than once in InfluxDB field type configurations"
            )));
        }
        let kind = match kind {
            "" | "string" => FieldKind::String,
            "int" => FieldKind::Int,
            "float" => FieldKind::Float,
            "bool" => FieldKind::Bool,
            other => {
                return Err(invalid(format!(
                    "an invalid type ({other}) is specified for an InfluxDB field ({name})"
                )))
            }
        };
        out.push((name.to_string(), kind));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(arg: &str, pairs: &[(&str, &str)]) -> Result<InfluxConfig, OutputError> {
        let vars: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let lookup = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        InfluxConfig::parse(arg, &lookup)
    }

    fn err(arg: &str, pairs: &[(&str, &str)]) -> String {
        parse(arg, pairs).unwrap_err().to_string()
    }

    #[test]
    fn defaults_match_k6() {
        let c = parse("", &[]).unwrap();
        assert_eq!(c.addr.as_str(), "http://localhost:8086/");
        assert_eq!(c.db, "k6");
        assert_eq!(c.push_interval, Duration::from_secs(1));
        assert_eq!(c.concurrent_writes, 4);
        assert_eq!(c.precision.name, "ns");
        assert_eq!(c.precision.nanos, Ok(1));
        assert!(!c.insecure && c.username.is_empty() && c.retention.is_empty());
        let names: Vec<&str> = c.tags_as_fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["vu", "iter", "url"]);
        assert!(c
            .tags_as_fields
            .iter()
            .all(|(_, k)| *k == FieldKind::String));
    }

    #[test]
    fn argument_forms() {
        let c = parse("http://127.0.0.1:8086/mydb", &[]).unwrap();
        assert_eq!(
            (c.addr.as_str(), c.db.as_str()),
            ("http://127.0.0.1:8086/", "mydb")
        );
        // No path, or just `/`: the default database.
        assert_eq!(parse("http://h:1", &[]).unwrap().db, "k6");
        assert_eq!(parse("http://h:1/", &[]).unwrap().db, "k6");
        // k6 1.1 takes the whole path as the database name.
        assert_eq!(parse("http://h:1/a/b", &[]).unwrap().db, "a/b");
        // A bare name (with or without `/`) is the database; the address comes from the env.
        let env = [("K6_INFLUXDB_ADDR", "http://10.0.0.1:9999")];
        let c = parse("mydb", &env).unwrap();
        assert_eq!(
            (c.addr.as_str(), c.db.as_str()),
            ("http://10.0.0.1:9999/", "mydb")
        );
        assert_eq!(parse("/other", &env).unwrap().db, "other");
        // The argument's host and database win over the environment's.
        let env = [("K6_INFLUXDB_ADDR", "ftp://x"), ("K6_INFLUXDB_DB", "envdb")];
        let c = parse("https://h:2/argdb", &env).unwrap();
        assert_eq!((c.addr.as_str(), c.db.as_str()), ("https://h:2/", "argdb"));
        // Credentials, percent-decoded, override the environment's.
        let env = [("K6_INFLUXDB_USERNAME", "x"), ("K6_INFLUXDB_PASSWORD", "y")];
        let c = parse("http://al%40ice:p%3Aw@h:1/db", &env).unwrap();
        assert_eq!(
            (c.username.as_str(), c.password.as_str()),
            ("al@ice", "p:w")
        );
        assert_eq!(c.addr.as_str(), "http://h:1/");
    }

    #[test]
    fn query_parameters() {
        let c = parse(
            "http://h:1/q?precision=ms&tagsAsFields=name&tagsAsFields=status:int&consistency=all&retention=rp1&pushInterval=2s&concurrentWrites=2&insecure=true&payload_size=10",
            &[],
        )
        .unwrap();
        assert_eq!(c.precision.name, "ms");
        assert_eq!(c.precision.nanos, Ok(1_000_000));
        assert_eq!(
            c.tags_as_fields,
            [
                ("name".to_string(), FieldKind::String),
                ("status".to_string(), FieldKind::Int)
            ]
        );
        assert_eq!(
            (c.consistency.as_str(), c.retention.as_str()),
            ("all", "rp1")
        );
        assert_eq!(c.push_interval, Duration::from_secs(2));
        assert_eq!(c.concurrent_writes, 2);
        assert!(c.insecure);
        // `tagsAsFields=` moves nothing (a field for a tag named "").
        let c = parse("http://h:1/q?tagsAsFields=", &[]).unwrap();
        assert_eq!(c.tags_as_fields, [(String::new(), FieldKind::String)]);
        assert!(err("http://h:1/q?foo=1", &[]).ends_with("unknown query parameter: foo"));
        assert!(err("http://h:1/q?insecure=maybe", &[])
            .ends_with("insecure must be true or false, not maybe"));
        assert!(
            err("http://h:1/q?pushInterval=abc", &[]).ends_with("time: invalid duration \"abc\"")
        );
        assert!(err("http://h:1/q?concurrentWrites=x", &[]).contains("invalid syntax"));
    }

    #[test]
    fn environment_variables() {
        let c = parse(
            "",
            &[
                ("K6_INFLUXDB_ADDR", "https://influx.example:8443/prefix"),
                ("K6_INFLUXDB_DB", "envdb"),
                ("K6_INFLUXDB_USERNAME", "u"),
                ("K6_INFLUXDB_PASSWORD", "p"),
                ("K6_INFLUXDB_INSECURE", "true"),
                ("K6_INFLUXDB_PUSH_INTERVAL", "500"),
                ("K6_INFLUXDB_CONCURRENT_WRITES", "8"),
                ("K6_INFLUXDB_PRECISION", "s"),
                ("K6_INFLUXDB_RETENTION", "autogen"),
                ("K6_INFLUXDB_CONSISTENCY", "one"),
                ("K6_INFLUXDB_TAGS_AS_FIELDS", "name, url,check:bool"),
                ("K6_INFLUXDB_PAYLOAD_SIZE", "1024"),
            ],
        )
        .unwrap();
        assert_eq!(c.addr.as_str(), "https://influx.example:8443/prefix");
        assert_eq!(c.db, "envdb");
        assert_eq!((c.username.as_str(), c.password.as_str()), ("u", "p"));
        assert!(c.insecure);
        // A bare number is milliseconds, as for every k6 duration.
        assert_eq!(c.push_interval, Duration::from_millis(500));
        assert_eq!(c.concurrent_writes, 8);
        assert_eq!(c.precision.nanos, Ok(1_000_000_000));
        assert_eq!(
            (c.retention.as_str(), c.consistency.as_str()),
            ("autogen", "one")
        );
        // Not trimmed: ` url` names no tag.
        assert_eq!(
            c.tags_as_fields,
            [
                ("name".to_string(), FieldKind::String),
                (" url".to_string(), FieldKind::String),
                ("check".to_string(), FieldKind::Bool)
            ]
        );
        // Empty values leave the defaults.
        let c = parse(
            "",
            &[
                ("K6_INFLUXDB_INSECURE", ""),
                ("K6_INFLUXDB_PUSH_INTERVAL", ""),
                ("K6_INFLUXDB_CONCURRENT_WRITES", ""),
                ("K6_INFLUXDB_TAGS_AS_FIELDS", ""),
            ],
        )
        .unwrap();
        assert_eq!(c.push_interval, Duration::from_secs(1));
        assert_eq!(c.concurrent_writes, 4);
        assert_eq!(c.tags_as_fields.len(), 3);
    }

    #[test]
    fn refuses_what_k6_refuses() {
        let e = |k: &str, v: &str| err("http://h:1/db", &[(k, v)]);
        assert!(e("K6_INFLUXDB_PUSH_INTERVAL", "abc").contains("time: invalid duration \"abc\""));
        assert!(e("K6_INFLUXDB_PUSH_INTERVAL", "0")
            .ends_with("metric flush period should be positive but was 0s"));
        assert!(e("K6_INFLUXDB_PUSH_INTERVAL", "-1s")
            .ends_with("metric flush period should be positive but was -1s"));
        for v in ["0", "-2"] {
            assert!(e("K6_INFLUXDB_CONCURRENT_WRITES", v)
                .ends_with("influxdb's ConcurrentWrites must be a positive number"));
        }
        assert!(e("K6_INFLUXDB_CONCURRENT_WRITES", "abc")
            .contains("strconv.ParseInt: parsing \"abc\": invalid syntax"));
        assert!(e("K6_INFLUXDB_PAYLOAD_SIZE", "abc").contains("invalid syntax"));
        for v in ["maybe", "1", "True"] {
            assert!(
                e("K6_INFLUXDB_INSECURE", v).contains("use true or false"),
                "{v}"
            );
        }
        assert!(e("K6_INFLUXDB_TAGS_AS_FIELDS", "vu:bad")
            .ends_with("an invalid type (bad) is specified for an InfluxDB field (vu)"));
        assert!(e("K6_INFLUXDB_TAGS_AS_FIELDS", "vu,vu:int").ends_with(
            "a tag name (vu) shows up more than once in InfluxDB field type configurations"
        ));
        assert!(err("ftp://h:1/db", &[]).ends_with(
            "Unsupported protocol scheme: ftp, your address must start with http:// or https://"
        ));
        assert!(err("", &[("K6_INFLUXDB_ADDR", "ftp://x")]).contains("Unsupported protocol"));
        assert!(err(":bad", &[]).ends_with("parse \":bad\": missing protocol scheme"));
        assert!(err("udp://127.0.0.1", &[]).ends_with("address 127.0.0.1: missing port in address"));
        let c = parse("udp://127.0.0.1:8089?payload_size=1400", &[]).unwrap();
        assert_eq!(
            (c.addr.as_str(), c.payload_size),
            ("udp://127.0.0.1:8089", 1400)
        );
        assert_eq!(
            parse("", &[("K6_INFLUXDB_ADDR", "udp://[::1]:9")])
                .unwrap()
                .payload_size,
            512
        );
        // A size of 0 or less leaves the default, as k6's `Apply`.
        let c = parse(
            "udp://127.0.0.1:8089?payload_size=0",
            &[("K6_INFLUXDB_PAYLOAD_SIZE", "-5")],
        )
        .unwrap();
        assert_eq!(c.payload_size, 512);
        assert!(e("K6_INFLUXDB_PROXY", "http://p:3128").contains("not supported by rk6 yet"));
        // Every message carries k6's prefix.
        assert!(
            err("http://h:1/q?foo=1", &[]).starts_with("could not create the 'influxdb' output: ")
        );
        // k6 accepts any precision; one it cannot use fails each write instead.
        let p = |v: &str| {
            parse(&format!("http://h:1/db?precision={v}"), &[])
                .unwrap()
                .precision
        };
        assert_eq!(p("xx").name, "xx");
        assert_eq!(
            p("xx").nanos.unwrap_err(),
            "couldn't make a batch: time: unknown unit \"xx\" in duration \"1xx\""
        );
        assert_eq!(
            p("u").nanos.unwrap_err(),
            "couldn't make a batch: time: unknown unit \"u\" in duration \"1u\""
        );
        // k6 writes nanoseconds for `us` (and for anything but ms, s, m, h).
        assert_eq!((p("us").nanos, p("us").round_nanos), (Ok(1), 1_000));
        assert_eq!(p("m").nanos, Ok(60_000_000_000));
    }
}
