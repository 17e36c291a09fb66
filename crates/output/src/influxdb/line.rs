//! InfluxDB line protocol, as k6's Go client writes it: one line per sample,
//! `measurement,tag=v,… field=v,…,value=1.5 timestamp`, tags and fields sorted by key,
//! empty tag values left out.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use rk6_metrics::{Registry, Sample, TagSet};

use super::config::FieldKind;

/// Tags rk6 has that k6 1.1 keeps as sample metadata, which its InfluxDB output never writes.
const METADATA_TAGS: [&str; 2] = ["vu", "iter"];

/// Appends `s` with `,` and spaces escaped, as measurement names are.
pub(crate) fn escape_measurement(out: &mut Vec<u8>, s: &str) {
    escape(out, s, b", ");
}

/// Appends a tag key or value with `,`, `=` and spaces escaped.
pub(crate) fn escape_tag(out: &mut Vec<u8>, s: &str) {
    escape(out, s, b", =");
}

/// Appends a field key with `,`, `"`, `=` and spaces escaped.
pub(crate) fn escape_field_key(out: &mut Vec<u8>, s: &str) {
    escape(out, s, b",\" =");
}

/// Appends a string field value in quotes, with `"` and `\` escaped.
pub(crate) fn quote_field_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    escape(out, s, b"\"\\");
    out.push(b'"');
}

fn escape(out: &mut Vec<u8>, s: &str, special: &[u8]) {
    for &b in s.as_bytes() {
        if special.contains(&b) {
            out.push(b'\\');
            out.push(b);
        } else if b == b'\n' && !special.contains(&b'\\') {
            // An unquoted newline would end the line and make InfluxDB refuse the whole
            // write; k6's client lets that happen, rk6 writes it as the two characters `\n`.
            out.extend_from_slice(b"\\n");
        } else {
            out.push(b);
        }
    }
}

/// A field value written for a tag by `TAGS_AS_FIELDS`: typed when the tag parses as the
/// configured type, else a string, as k6 does.
fn field_value(out: &mut Vec<u8>, value: &str, kind: FieldKind) {
    match kind {
        FieldKind::Int => {
            if let Ok(n) = rk6_options::text::int(value) {
                let _ = write!(out, "{n}i");
                return;
            }
        }
        FieldKind::Float => {
            if let Some(f) = rk6_options::parse_go_float(value)
                .ok()
                .filter(|f| f.is_finite())
            {
                let _ = write!(out, "{f}");
                return;
            }
        }
        FieldKind::Bool => {
            if let Ok(b) = rk6_options::text::go_bool(value) {
                out.extend_from_slice(if b { b"true" } else { b"false" });
                return;
            }
        }
        FieldKind::String => {}
    }
    quote_field_string(out, value);
}

/// The encoded parts of one tag set: `,k=v,…` and the fields around `value`.
struct Encoded {
    tags: TagSet,
    /// `,k=v…` (empty without tags).
    key: Vec<u8>,
    /// `a="x",` for fields sorting before `value`.
    before: Vec<u8>,
    /// `,vu="1"` for fields sorting after it.
    after: Vec<u8>,
}

/// Turns samples into lines, reusing the encoding of the last tag set (the samples of one
/// request or iteration share theirs).
pub(crate) struct LineEncoder {
    tags_as_fields: Vec<(String, FieldKind)>,
    /// Nanoseconds per timestamp unit.
    unit: u64,
    /// Write nanoseconds rounded to the unit instead of a count of units (the UDP
    /// transport, which has no `precision` parameter).
    rounded: bool,
    /// Escaped measurement names by metric id.
    names: Vec<Option<Box<[u8]>>>,
    last: Option<Encoded>,
}

impl LineEncoder {
    /// Lines with `tags_as_fields` moved to fields and timestamps in units of `unit` ns
    /// (`rounded`: in nanoseconds, rounded to the unit).
    pub(crate) fn new(
        tags_as_fields: Vec<(String, FieldKind)>,
        unit: u64,
        rounded: bool,
    ) -> LineEncoder {
        LineEncoder {
            tags_as_fields,
            unit: unit.max(1),
            rounded,
            names: Vec::new(),
            last: None,
        }
    }

    /// Appends the line of `s` (with its newline); false when its value cannot be written
    /// (NaN and infinities are no valid field values).
    pub(crate) fn encode(&mut self, out: &mut Vec<u8>, registry: &Registry, s: &Sample) -> bool {
        if !s.value.is_finite() {
            return false;
        }
        let i = s.metric.index();
        if i >= self.names.len() {
            self.names.resize(i + 1, None);
        }
        let name = self.names[i].get_or_insert_with(|| {
            let mut v = Vec::new();
            escape_measurement(&mut v, &registry.info(s.metric).name);
            v.into_boxed_slice()
        });
        out.extend_from_slice(name);
        if !self.last.as_ref().is_some_and(|e| e.tags.same(&s.tags)) {
            self.last = Some(encode_tags(&s.tags, &self.tags_as_fields));
        }
        let enc = self.last.as_ref().expect("set above");
        out.extend_from_slice(&enc.key);
        out.push(b' ');
        out.extend_from_slice(&enc.before);
        let _ = write!(out, "value={}", s.value);
        out.extend_from_slice(&enc.after);
        let _ = writeln!(out, " {}", timestamp(s.time, self.unit, self.rounded));
        true
    }
}

/// Nanoseconds since the epoch divided by the unit, truncated (Go's integer division); or,
/// `rounded`, the nanoseconds rounded to the unit, halves up (Go's `Time.Round`).
fn timestamp(t: SystemTime, unit: u64, rounded: bool) -> u128 {
    let ns = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let unit = u128::from(unit);
    if rounded {
        (ns + unit / 2) / unit * unit
    } else {
        ns / unit
    }
}

fn encode_tags(tags: &TagSet, as_fields: &[(String, FieldKind)]) -> Encoded {
    let mut key = Vec::new();
    let mut fields: Vec<(&str, Vec<u8>)> = Vec::new();
    for (k, v) in tags.iter() {
        if METADATA_TAGS.contains(&k) {
            continue;
        }
        if let Some((_, kind)) = as_fields.iter().find(|(n, _)| n == k) {
            // The sample's value wins over a tag named `value`, as in k6's field map.
            if k != "value" {
                let mut f = Vec::new();
                escape_field_key(&mut f, k);
                f.push(b'=');
                field_value(&mut f, v, *kind);
                fields.push((k, f));
            }
            continue;
        }
        if v.is_empty() {
            continue;
        }
        key.push(b',');
        escape_tag(&mut key, k);
        key.push(b'=');
        escape_tag(&mut key, v);
    }
    // Tags come sorted, so the fields are too; split them around `value`.
    let mut before = Vec::new();
    let mut after = Vec::new();
    for (k, f) in fields {
        if k < "value" {
            before.extend_from_slice(&f);
            before.push(b',');
        } else {
            after.push(b',');
            after.extend_from_slice(&f);
        }
    }
    Encoded {
        tags: tags.clone(),
        key,
        before,
        after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rk6_metrics::builtin;
    use std::time::Duration;

    fn esc(f: fn(&mut Vec<u8>, &str), s: &str) -> String {
        let mut v = Vec::new();
        f(&mut v, s);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn escaping_as_the_go_client() {
        assert_eq!(esc(escape_measurement, "a b,c=d\"e"), r#"a\ b\,c=d"e"#);
        assert_eq!(esc(escape_tag, "a b,c=d\"e\\f"), r#"a\ b\,c\=d"e\f"#);
        assert_eq!(esc(escape_field_key, "a b,c=d\"e"), r#"a\ b\,c\=d\"e"#);
        assert_eq!(
            esc(quote_field_string, "say \"hi\" c:\\ a,b=c d"),
            r#""say \"hi\" c:\\ a,b=c d""#
        );
        // A newline would end the line: tags get `\n`, quoted strings keep it.
        assert_eq!(esc(escape_tag, "a\nb"), r"a\nb");
        assert_eq!(esc(quote_field_string, "a\nb"), "\"a\nb\"");
    }

    fn line(
        tags: &[(&str, &str)],
        fields: Vec<(String, FieldKind)>,
        value: f64,
        unit: u64,
    ) -> String {
        let registry = Registry::new();
        let sample = Sample {
            metric: builtin::HTTP_REQ_DURATION,
            tags: TagSet::from_pairs(tags.iter().copied()),
            value,
            time: UNIX_EPOCH + Duration::new(1_796_194_709, 201_165_496),
        };
        let mut enc = LineEncoder::new(fields, unit, false);
        let mut out = Vec::new();
        assert!(enc.encode(&mut out, &registry, &sample));
        // The cached encoding of the same tag set gives the same line.
        let mut again = Vec::new();
        enc.encode(&mut again, &registry, &sample);
        assert_eq!(out, again);
        String::from_utf8(out).unwrap()
    }

    fn default_fields() -> Vec<(String, FieldKind)> {
        ["vu", "iter", "url"]
            .iter()
            .map(|n| (n.to_string(), FieldKind::String))
            .collect()
    }

    #[test]
    fn lines_in_k6s_layout() {
        // As k6 1.1.0 wrote this request (captured): `url` is a string field, an empty
        // `error_code` and `group` are left out, `vu`/`iter` never written.
        let l = line(
            &[
                ("expected_response", "true"),
                ("group", "::g1"),
                ("method", "GET"),
                ("my tag", "a,b=c"),
                ("name", "the page"),
                ("proto", "HTTP/1.0"),
                ("scenario", "default"),
                ("status", "200"),
                ("url", "the page"),
                ("error_code", ""),
                ("vu", "1"),
                ("iter", "0"),
            ],
            default_fields(),
            4.610349,
            1,
        );
        assert_eq!(
            l,
            "http_req_duration,expected_response=true,group=::g1,method=GET,my\\ tag=a\\,b\\=c,name=the\\ page,proto=HTTP/1.0,scenario=default,status=200 url=\"the page\",value=4.610349 1796194709201165496\n"
        );
        // No tags; whole numbers without a fraction; precision truncates.
        assert_eq!(
            line(&[], vec![], 1.0, 1_000_000),
            "http_req_duration value=1 1796194709201\n"
        );
        assert_eq!(
            line(&[], vec![], 0.5, 1_000_000_000),
            "http_req_duration value=0.5 1796194709\n"
        );
        assert_eq!(
            line(&[], vec![], 1e21, 1_000),
            "http_req_duration value=1000000000000000000000 1796194709201165\n"
        );
    }

    #[test]
    fn udp_timestamps_are_nanoseconds_rounded_to_the_precision() {
        let t = UNIX_EPOCH + Duration::new(1_796_194_709, 201_565_496);
        assert_eq!(timestamp(t, 1, true), 1_796_194_709_201_565_496);
        assert_eq!(timestamp(t, 1_000_000, true), 1_796_194_709_202_000_000);
        assert_eq!(timestamp(t, 1_000_000_000, true), 1_796_194_709_000_000_000);
        assert_eq!(timestamp(t, 1_000_000, false), 1_796_194_709_201);
    }

    #[test]
    fn typed_tag_fields_sorted_around_value() {
        let fields = vec![
            ("status".to_string(), FieldKind::Int),
            ("method".to_string(), FieldKind::Int),
            ("a".to_string(), FieldKind::Bool),
            ("zz".to_string(), FieldKind::Float),
            ("value".to_string(), FieldKind::String),
        ];
        let l = line(
            &[
                ("status", "200"),
                ("method", "GET"),
                ("a", "T"),
                ("zz", "1.5"),
                ("value", "7"),
                ("name", "n"),
            ],
            fields,
            2.0,
            1,
        );
        // `method` is no integer, so it stays a string; the tag `value` loses to the sample's.
        assert_eq!(
            l,
            "http_req_duration,name=n a=true,method=\"GET\",status=200i,value=2,zz=1.5 1796194709201165496\n"
        );
    }

    #[test]
    fn nan_and_infinity_are_not_written() {
        let registry = Registry::new();
        let mut enc = LineEncoder::new(vec![], 1, false);
        let mut out = Vec::new();
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let s = Sample {
                metric: builtin::HTTP_REQS,
                tags: TagSet::default(),
                value: v,
                time: UNIX_EPOCH,
            };
            assert!(!enc.encode(&mut out, &registry, &s));
        }
        assert!(out.is_empty());
    }
}
