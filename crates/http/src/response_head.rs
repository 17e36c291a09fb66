//! A response head as received: its status line and header fields, with the fields kept as
//! one copy of their bytes and an index instead of a header map.
//!
//! Most scripts never read a response's headers, and the client itself looks at five at
//! most (framing, `Connection`, `Set-Cookie`, `Location`, `Content-Encoding`). Building
//! `http::HeaderMap` for every HTTP/1 response (a name lookup, a value check and a hashed
//! insert per field) cost ~3.5 k instructions of a ~65 k instruction request; finding a
//! field by a scan of ~10 names costs a few hundred, and the map is made only for the rare
//! readers that want one (digest challenges, `httpDebug`).

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue};

/// The response header fields in the order received; names compare case-insensitively.
#[derive(Clone, Debug, Default)]
pub struct HeaderFields {
    /// Every name and value, at the offsets in `fields`.
    bytes: Bytes,
    fields: Vec<Field>,
}

/// Where one field's name and value are in [`HeaderFields::bytes`].
#[derive(Clone, Copy, Debug)]
struct Field {
    name: (u32, u32),
    value: (u32, u32),
}

impl HeaderFields {
    /// Fields whose names and values are slices of `bytes`: each span is a part's
    /// `(start, end)` in it, name first.
    pub(crate) fn from_parts(bytes: Bytes, spans: Vec<((u32, u32), (u32, u32))>) -> Self {
        debug_assert!(spans
            .iter()
            .all(|&(n, v)| n.1 as usize <= bytes.len() && v.1 as usize <= bytes.len()));
        let fields = spans
            .into_iter()
            .map(|(name, value)| Field { name, value })
            .collect();
        HeaderFields { bytes, fields }
    }

    /// The fields of a decoded map (HTTP/2), grouped by name as the map holds them.
    pub(crate) fn from_map(map: &HeaderMap) -> Self {
        let total: usize = map.iter().map(|(k, v)| k.as_str().len() + v.len()).sum();
        let mut buf = BytesMut::with_capacity(total);
        let mut fields = Vec::with_capacity(map.len());
        for (k, v) in map {
            let name = push(&mut buf, k.as_str().as_bytes());
            let value = push(&mut buf, v.as_bytes());
            fields.push(Field { name, value });
        }
        HeaderFields {
            bytes: buf.freeze(),
            fields,
        }
    }

    /// The number of fields (a repeated name counts each time).
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// True when there are no fields (also the case for a failed request).
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The bytes all fields take, names and values.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    fn part(&self, (start, end): (u32, u32)) -> &[u8] {
        &self.bytes[start as usize..end as usize]
    }

    /// Every field as (name as received, value), in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> + '_ {
        self.raw().map(|(name, value)| {
            // Names were checked as tokens (httparse) or came from a `HeaderName`.
            (std::str::from_utf8(name).unwrap_or_default(), value)
        })
    }

    /// Every field's name and value bytes: lookups compare bytes, so they need no UTF-8
    /// check of every name they pass (that was ~3 k instructions a request).
    fn raw(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.fields
            .iter()
            .map(|f| (self.part(f.name), self.part(f.value)))
    }

    /// The values of every field called `name` (case-insensitive), in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.raw()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v)
    }

    /// The first value of `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.raw()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v)
    }

    /// The first value of `name` as text; `None` if absent or not text (see [`text`]).
    pub fn get_str(&self, name: &str) -> Option<&str> {
        text(self.get(name)?)
    }

    /// The values of `name` that are text (see [`text`]), in order.
    pub fn get_all_str<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.get_all(name).filter_map(text)
    }

    /// Each name once, in order of its first field, with all of its values: the grouping
    /// `http::HeaderMap` iterates in.
    pub fn grouped(&self) -> impl Iterator<Item = (&str, Vec<&[u8]>)> + '_ {
        self.iter().enumerate().filter_map(move |(i, (name, _))| {
            let seen = self
                .iter()
                .take(i)
                .any(|(n, _)| n.eq_ignore_ascii_case(name));
            (!seen).then(|| {
                let values = self
                    .iter()
                    .skip(i)
                    .filter(|(n, _)| n.eq_ignore_ascii_case(name));
                (name, values.map(|(_, v)| v).collect())
            })
        })
    }

    /// The fields as a header map, for the few readers that need one.
    pub fn to_map(&self) -> HeaderMap {
        let mut map = HeaderMap::with_capacity(self.fields.len());
        for (name, value) in self.iter() {
            let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_bytes(value),
            ) else {
                continue;
            };
            map.append(name, value);
        }
        map
    }
}

/// A value as text when it is visible ASCII, spaces and tabs: what `HeaderValue::to_str`
/// accepts, so lookups treat values as the header map did.
pub fn text(v: &[u8]) -> Option<&str> {
    v.iter()
        .all(|&b| b == b'\t' || (0x20..0x7f).contains(&b))
        .then(|| std::str::from_utf8(v).ok())
        .flatten()
}

/// Appends `part` to `buf`; returns where it went.
fn push(buf: &mut BytesMut, part: &[u8]) -> (u32, u32) {
    let start = buf.len() as u32;
    buf.extend_from_slice(part);
    (start, buf.len() as u32)
}

/// What the client keeps of a response head, from either protocol.
#[derive(Debug)]
pub(crate) struct ResponseHead {
    pub(crate) status: u16,
    pub(crate) version: http::Version,
    pub(crate) headers: HeaderFields,
    /// The reason phrase when it is not the status code's canonical one (HTTP/1 only).
    pub(crate) reason: Option<hyper::ext::ReasonPhrase>,
}

impl ResponseHead {
    /// An HTTP/2 head as hyper hands it over.
    pub(crate) fn from_h2(parts: &http::response::Parts) -> Self {
        ResponseHead {
            status: parts.status.as_u16(),
            version: parts.version,
            headers: HeaderFields::from_map(&parts.headers),
            reason: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(head: &str) -> HeaderFields {
        let bytes = Bytes::copy_from_slice(head.as_bytes());
        let mut spans = Vec::new();
        let mut at = 0u32;
        for line in head.split_inclusive('\n') {
            let (name, value) = line.trim_end().split_once(": ").unwrap();
            let n = (at, at + name.len() as u32);
            let v0 = n.1 + 2;
            spans.push((n, (v0, v0 + value.len() as u32)));
            at += line.len() as u32;
        }
        HeaderFields::from_parts(bytes, spans)
    }

    #[test]
    fn looks_up_names_in_any_case() {
        let h = fields("Content-Type: text/html\nSet-Cookie: a=1\nset-cookie: b=2\n");
        assert_eq!(h.len(), 3);
        assert_eq!(h.get("content-type"), Some(&b"text/html"[..]));
        assert_eq!(h.get_str("CONTENT-TYPE"), Some("text/html"));
        let cookies: Vec<_> = h.get_all("Set-Cookie").collect();
        assert_eq!(cookies, [&b"a=1"[..], &b"b=2"[..]]);
        assert_eq!(h.get("location"), None);
    }

    #[test]
    fn text_is_visible_ascii_only() {
        let h = fields("X-A: caf\u{e9}\nX-B: tab\there\n");
        assert_eq!(h.get_str("x-a"), None);
        assert!(h.get("x-a").is_some());
        assert_eq!(h.get_str("x-b"), Some("tab\there"));
    }

    #[test]
    fn groups_like_a_header_map() {
        let h = fields("B: 1\nA: 2\nb: 3\nC: 4\nA: 5\n");
        let grouped: Vec<_> = h.grouped().collect();
        assert_eq!(
            grouped,
            [
                ("B", vec![&b"1"[..], &b"3"[..]]),
                ("A", vec![&b"2"[..], &b"5"[..]]),
                ("C", vec![&b"4"[..]]),
            ]
        );
        let map = h.to_map();
        let from_map: Vec<_> = map
            .keys()
            .map(|k| {
                (
                    k.as_str(),
                    map.get_all(k)
                        .iter()
                        .map(|v| v.as_bytes())
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        assert_eq!(
            from_map,
            [
                ("b", vec![&b"1"[..], &b"3"[..]]),
                ("a", vec![&b"2"[..], &b"5"[..]]),
                ("c", vec![&b"4"[..]]),
            ]
        );
    }

    #[test]
    fn a_map_round_trips() {
        let mut map = HeaderMap::new();
        map.append("x-a", HeaderValue::from_static("1"));
        map.append("x-b", HeaderValue::from_static("2"));
        map.append("x-a", HeaderValue::from_static("3"));
        let h = HeaderFields::from_map(&map);
        assert_eq!(h.len(), 3);
        assert_eq!(h.get_all("X-A").collect::<Vec<_>>(), [&b"1"[..], &b"3"[..]]);
        assert_eq!(h.to_map(), map);
    }

    #[test]
    fn fields_of_a_map_do_not_hold_its_read_buffer() {
        // A head as hyper leaves it: every value a slice of one big read buffer, which a
        // response waiting for the JS collector must not keep alive.
        let buffer = Bytes::from([&b"text/html|a=1"[..], &[b' '; 8192]].concat());
        let value = |a, b| HeaderValue::from_maybe_shared(buffer.slice(a..b)).unwrap();
        let mut map = HeaderMap::new();
        map.insert("content-type", value(0, 9));
        map.append("set-cookie", value(10, 13));
        let h = HeaderFields::from_map(&map);
        drop(map);
        assert!(
            buffer.is_unique(),
            "a field still points into the read buffer"
        );
        assert_eq!(h.get_str("content-type"), Some("text/html"));
        assert_eq!(h.byte_len(), "content-typetext/htmlset-cookiea=1".len());
    }
}
