//! The subset of gjson path syntax that `Response.json(selector)` accepts: dot-separated keys,
//! numeric array indexes, `#` for an array's length, and `\.` to escape a dot in a key.
//!
//! The selection runs while the document is read: everything off the path is skipped without
//! being built, and only the selected value becomes a JS value. The whole document is still
//! read, so a syntax error anywhere fails the call as a full parse would.

use std::fmt;

use boa_engine::{Context, JsValue};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::json::parse::{Seed, Templates};

/// Selects `path` in the JSON document `bytes`: `Ok(None)` when nothing matches (k6 returns
/// `undefined`), serde_json's error when the document is not JSON.
pub(crate) fn select(
    bytes: &[u8],
    path: &str,
    ctx: &mut Context,
) -> Result<Option<JsValue>, serde_json::Error> {
    let parts = split(path);
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    Select {
        path: &parts,
        ctx,
        found: &mut found,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(found)
}

fn split(path: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    parts.last_mut().expect("non-empty").push(n);
                }
            }
            '.' => parts.push(String::new()),
            c => parts.last_mut().expect("non-empty").push(c),
        }
    }
    parts
}

/// Reads one JSON value, building the part at `path` (relative to it) into `found`.
struct Select<'a, 'c> {
    path: &'a [String],
    ctx: &'c mut Context,
    found: &'a mut Option<JsValue>,
}

impl<'de> DeserializeSeed<'de> for Select<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.path.is_empty() {
            let templates = Templates::of(self.ctx);
            *self.found = Some(Seed::new(self.ctx, &templates).deserialize(d)?);
            Ok(())
        } else {
            d.deserialize_any(self)
        }
    }
}

impl<'de> Visitor<'de> for Select<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let (part, rest) = self.path.split_first().expect("a non-empty path");
        if part == "#" && rest.is_empty() {
            let mut len = 0u32;
            while seq.next_element::<IgnoredAny>()?.is_some() {
                len += 1;
            }
            *self.found = Some(len.into());
            return Ok(());
        }
        let wanted = part.parse::<usize>().ok();
        let mut i = 0;
        loop {
            let more = if Some(i) == wanted {
                seq.next_element_seed(Select {
                    path: rest,
                    ctx: &mut *self.ctx,
                    found: &mut *self.found,
                })?
                .is_some()
            } else {
                seq.next_element::<IgnoredAny>()?.is_some()
            };
            if !more {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (part, rest) = self.path.split_first().expect("a non-empty path");
        while let Some(matches) = map.next_key_seed(KeyIs(part))? {
            if matches {
                // A repeated key: the last one wins, as in the parsed document.
                *self.found = None;
                map.next_value_seed(Select {
                    path: rest,
                    ctx: &mut *self.ctx,
                    found: &mut *self.found,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// Reads an object key and tells whether it is the wanted one, without keeping it.
struct KeyIs<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeyIs<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object key")
    }

    fn visit_str<E>(self, v: &str) -> Result<bool, E> {
        Ok(v == self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boa_engine::Source;

    /// The selection as JSON text (`undefined` when nothing matches).
    fn sel(doc: &str, path: &str) -> String {
        let mut ctx = Context::default();
        match select(doc.as_bytes(), path, &mut ctx).expect("valid JSON") {
            None => "undefined".into(),
            Some(v) => {
                let stringify = ctx
                    .eval(Source::from_bytes("(v) => JSON.stringify(v)"))
                    .unwrap();
                let f = stringify.as_callable().unwrap().clone();
                f.call(&JsValue::undefined(), &[v], &mut ctx)
                    .unwrap()
                    .to_string(&mut ctx)
                    .unwrap()
                    .to_std_string_escaped()
            }
        }
    }

    const DOC: &str = r#"{"hello": "world", "a": {"items": [1, 2, {"x": true}]},
        "dot.key": 5, "dup": 1, "z": null, "dup": 2, "n": [[0, [7]]]}"#;

    #[test]
    fn selects_like_gjson() {
        assert_eq!(sel(DOC, "hello"), r#""world""#);
        assert_eq!(sel(DOC, "a.items.1"), "2");
        assert_eq!(sel(DOC, "a.items.2.x"), "true");
        assert_eq!(sel(DOC, "a.items.2"), r#"{"x":true}"#);
        assert_eq!(sel(DOC, "a.items.#"), "3");
        assert_eq!(sel(DOC, "dot\\.key"), "5");
        assert_eq!(sel(DOC, "n.0.1.0"), "7");
        assert_eq!(sel(DOC, "z"), "null");
        assert_eq!(sel(DOC, "a"), r#"{"items":[1,2,{"x":true}]}"#);
    }

    #[test]
    fn misses_are_undefined() {
        assert_eq!(sel(DOC, "nope"), "undefined");
        assert_eq!(sel(DOC, "a.items.9"), "undefined");
        assert_eq!(sel(DOC, "a.items.x"), "undefined");
        assert_eq!(sel(DOC, "hello.x"), "undefined");
        assert_eq!(sel(DOC, "a.#"), "undefined");
        assert_eq!(sel(DOC, "z.y"), "undefined");
    }

    #[test]
    fn a_repeated_key_takes_the_last_value() {
        assert_eq!(sel(DOC, "dup"), "2");
        assert_eq!(sel(r#"{"k": {"v": 1}, "k": 3}"#, "k.v"), "undefined");
    }

    #[test]
    fn the_whole_document_must_be_json() {
        let mut ctx = Context::default();
        let err = select(br#"{"a": 1, "b": }"#, "a", &mut ctx).unwrap_err();
        assert_eq!((err.line(), err.column()), (1, 15));
        assert!(select(br#"{"a": 1} x"#, "a", &mut ctx).is_err());
    }
}
