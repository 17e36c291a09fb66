//! A leaner global `JSON.parse`. Boa's own one checks the text with serde_json, then parses
//! it again as a script and runs it, so a 50 MB document costs an AST, bytecode and an object
//! with a shape of its own per JSON object (~3 GiB peak). This one streams serde_json's
//! tokens straight into JS values, building objects whose equal key sequences share a shape.
//! Whatever it does not handle exactly like Boa (a reviver, a non-string argument, any text
//! serde_json rejects) goes to Boa's original function, kept as the closure's capture, so
//! results and error messages stay Boa's.

use std::fmt;

use boa_engine::object::builtins::JsArray;
use boa_engine::object::{FunctionObjectBuilder, JsObject};
use boa_engine::property::PropertyDescriptor;
use boa_engine::{js_string, Context, JsResult, JsString, JsValue, NativeFunction};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::value::{define, plain_object};

/// Replaces `JSON.parse` in `ctx` with the fast parser, falling back to the original, which
/// it returns: only the new function can reach it.
pub(crate) fn install(ctx: &mut Context) -> JsResult<Option<JsObject>> {
    let json = ctx.intrinsics().objects().json();
    let original = json.get(js_string!("parse"), ctx)?;
    let Some(original) = original.as_object() else {
        return Ok(None);
    };
    let realm = ctx.realm().clone();
    let parse = FunctionObjectBuilder::new(
        &realm,
        NativeFunction::from_copy_closure_with_captures(parse, original.clone()),
    )
    .name(js_string!("parse"))
    .length(2)
    .build();
    json.define_property_or_throw(
        js_string!("parse"),
        PropertyDescriptor::builder()
            .value(parse)
            .writable(true)
            .enumerable(false)
            .configurable(true),
        ctx,
    )?;
    Ok(Some(original))
}

fn parse(
    this: &JsValue,
    args: &[JsValue],
    original: &JsObject,
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let reviver = args.get(1).is_some_and(|r| !r.is_undefined());
    if !reviver {
        if let Some(text) = args.first().and_then(JsValue::as_string) {
            if let Some(value) = fast(&text, ctx) {
                return Ok(value);
            }
        }
    }
    original.call(this, args, ctx)
}

/// `text` parsed into JS values, or `None` where Boa's parser must decide.
fn fast(text: &JsString, ctx: &mut Context) -> Option<JsValue> {
    let text = text.to_std_string().ok()?;
    let mut de = serde_json::Deserializer::from_str(&text);
    let value = Seed(ctx).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// A whole JSON document parsed from bytes into JS values, or serde_json's error.
pub(crate) fn from_slice(bytes: &[u8], ctx: &mut Context) -> Result<JsValue, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Seed(ctx).deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Builds one JSON value as a JS value.
pub(crate) struct Seed<'c>(pub(crate) &'c mut Context);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = JsValue;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<JsValue, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = JsValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<JsValue, E> {
        Ok(JsValue::null())
    }

    fn visit_bool<E>(self, v: bool) -> Result<JsValue, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<JsValue, E> {
        Ok(match i32::try_from(v) {
            Ok(i) => i.into(),
            Err(_) => (v as f64).into(),
        })
    }

    fn visit_u64<E>(self, v: u64) -> Result<JsValue, E> {
        Ok(match i32::try_from(v) {
            Ok(i) => i.into(),
            // u64 → f64 rounds to nearest, as reading the decimal digits would.
            Err(_) => (v as f64).into(),
        })
    }

    fn visit_f64<E>(self, v: f64) -> Result<JsValue, E> {
        Ok(v.into())
    }

    fn visit_str<E>(self, v: &str) -> Result<JsValue, E> {
        Ok(JsString::from(v).into())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Seed(&mut *self.0))? {
            items.push(item);
        }
        Ok(JsArray::from_iter(items, self.0).into())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsValue, A::Error> {
        // An initializer's object starts from the realm's shared root shape, so objects with
        // the same keys in the same order end up on one shape; `define` keeps a repeated
        // key's first position and takes its last value, and makes `__proto__` an own
        // property, as JSON.parse does.
        let obj = plain_object(self.0);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value = map.next_value_seed(Seed(&mut *self.0))?;
            define(&obj, key, value);
        }
        Ok(obj.into())
    }
}

/// Reads an object key.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = JsString;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<JsString, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = JsString;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object key")
    }

    fn visit_str<E>(self, v: &str) -> Result<JsString, E> {
        Ok(JsString::from(v))
    }
}

#[cfg(test)]
mod tests {
    use boa_engine::{Context, JsString, Source};

    /// Describes a value exactly: type, `-0`, prototype, own keys in order with their
    /// attributes, and extensibility, so any difference between two parses shows.
    const HELPERS: &str = r#"
        globalThis.original = JSON.parse;
        globalThis.describe = function describe(v) {
            if (typeof v === 'string') return 'string:' + JSON.stringify(v);
            if (v === null || typeof v !== 'object')
                return typeof v + ':' + (Object.is(v, -0) ? '-0' : String(v));
            const p = Object.getPrototypeOf(v);
            const kind = p === Array.prototype ? 'A' : p === Object.prototype ? 'O' : '?';
            const props = Reflect.ownKeys(v).map((k) => {
                const d = Object.getOwnPropertyDescriptor(v, k);
                const attrs = (d.writable ? 'w' : '') + (d.enumerable ? 'e' : '')
                    + (d.configurable ? 'c' : '');
                return JSON.stringify(k) + attrs + ':' + describe(d.value);
            });
            return kind + '{' + props.join(',') + '}' + (Object.isExtensible(v) ? '' : 'X');
        };
        globalThis.outcome = function (f, args) {
            try { return 'ok ' + describe(f(...args)); }
            catch (e) { return 'err ' + e.constructor.name + ': ' + e.message; }
        };
    "#;

    fn context() -> Context {
        let mut ctx = Context::default();
        ctx.eval(Source::from_bytes(HELPERS)).expect("helpers");
        super::install(&mut ctx).expect("install");
        ctx
    }

    fn eval(ctx: &mut Context, src: &str) -> String {
        let v = ctx.eval(Source::from_bytes(src)).expect("eval");
        v.to_string(ctx).expect("string").to_std_string_escaped()
    }

    /// Asserts the fast parse and Boa's give the same outcome for `text`, and whether the
    /// fast path (rather than the fallback) decided it.
    fn check(ctx: &mut Context, text: &str, fast: bool) {
        let s = JsString::from(text);
        assert_eq!(
            super::fast(&s, ctx).is_some(),
            fast,
            "fast path for {text:?}"
        );
        ctx.global_object()
            .set(boa_engine::js_string!("T"), s, false, ctx)
            .expect("set T");
        let ours = eval(ctx, "outcome(JSON.parse, [T])");
        let boa = eval(ctx, "outcome(original, [T])");
        assert_eq!(ours, boa, "outcome for {text:?}");
    }

    #[test]
    fn matches_boa_on_valid_json() {
        let mut ctx = context();
        let cases = [
            "null",
            "true",
            "false",
            "0",
            "-0",
            "-0.0",
            "0.1",
            "1e21",
            "1E+2",
            "1e-7",
            "0.30000000000000004",
            "2.2250738585072011e-308",
            "1.7976931348623157e308",
            "5e-324",
            "1e-400",
            "123456789012345678901234567890",
            "9007199254740993",
            "-9007199254740993",
            "2147483647",
            "2147483648",
            "-2147483648",
            "-2147483649",
            "18446744073709551615",
            "18446744073709551616",
            "3.0",
            r#""""#,
            r#""h\u00e9llo \ud83d\ude00 \n\t\"\\\/\b\f\r""#,
            "\"日本語 é 😀\"",
            "[]",
            "{}",
            " \t\r\n [1, 2 ,3] \n",
            r#"{"b":1,"a":2,"b":3}"#,
            r#"{"a":{"x":1},"a":[2]}"#,
            r#"{"__proto__":{"x":1},"y":2}"#,
            r#"{"__proto__":null}"#,
            r#"{"2":1,"b":2,"1":3,"a":4,"4294967295":5,"4294967294":8,"01":6,"-1":7,"1.5":9}"#,
            r#"{"":1,"constructor":2,"toString":3,"hasOwnProperty":4}"#,
            r#"[{"a":1,"b":[{"c":null}]},{"a":2,"b":[]},{"b":1,"a":2},{"a":3}]"#,
            r#"[[[[[[[[[[["deep"]]]]]]]]]]]"#,
            r#"[1,"a",true,null,{},[],-1.5e-3]"#,
        ];
        for text in cases {
            check(&mut ctx, text, true);
        }
    }

    #[test]
    fn falls_back_to_boa_on_what_serde_json_rejects() {
        let mut ctx = context();
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        let cases = [
            "",
            "   ",
            r#""\ud800""#,
            r#""\udc00x""#,
            "1e400",
            "-1e400",
            "[1,]",
            r#"{"a":1,}"#,
            "01",
            "+1",
            ".5",
            "NaN",
            "nul",
            "[1] x",
            "{'a':1}",
            "\"\u{1}\"",
            "\u{feff}1",
            "\u{a0}1",
            "[1,2",
            deep.as_str(),
        ];
        for text in cases {
            check(&mut ctx, text, false);
        }
    }

    #[test]
    fn non_string_arguments_and_revivers_use_boa() {
        let mut ctx = context();
        let cases = [
            "[]",
            "[123]",
            "[null]",
            "[undefined]",
            "[true]",
            "[{ toString() { return '[1,{\"a\":2}]'; } }]",
            "[{ toString() { throw new RangeError('nope'); } }]",
            "[new String('{\"s\":1}')]",
            "['{\"a\":[1,2],\"b\":{\"c\":3}}', (k, v) => typeof v === 'number' ? v * 2 : v]",
            "['{\"a\":1,\"b\":2}', function (k, v) { return k === 'a' ? undefined : v; }]",
            "['[1]', 42]",
            "['[1]', undefined]",
            "['[1,]', (k, v) => v]",
        ];
        for args in cases {
            let ours = eval(&mut ctx, &format!("outcome(JSON.parse, {args})"));
            let boa = eval(&mut ctx, &format!("outcome(original, {args})"));
            assert_eq!(ours, boa, "outcome for JSON.parse(...{args})");
        }
    }

    #[test]
    fn is_installed_as_a_builtin_method() {
        let mut ctx = context();
        let got = eval(
            &mut ctx,
            "const d = Object.getOwnPropertyDescriptor(JSON, 'parse');
             [JSON.parse !== original, d.writable, d.enumerable, d.configurable,
              JSON.parse.name, JSON.parse.length].join()",
        );
        assert_eq!(got, "true,true,false,true,parse,2");
    }

    #[test]
    fn matches_boa_on_a_large_document() {
        let mut ctx = context();
        let mut text = String::from("[");
        for i in 0..20_000 {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format!(
                r#"{{"id":{i},"name":"user\u00e9{i}","score":{},"tags":["a","b{}"],"nested":{{"x":{},"y":null,"ok":{}}}{}}}"#,
                i as f64 * 0.37 - 100.0,
                i % 7,
                i as f64 / 3.0,
                i % 2 == 0,
                if i % 5 == 0 { r#","extra":"\ud83d\ude00""# } else { "" }
            ));
        }
        text.push(']');
        let s = JsString::from(text.as_str());
        assert!(super::fast(&s, &mut ctx).is_some());
        ctx.global_object()
            .set(boa_engine::js_string!("T"), s, false, &mut ctx)
            .expect("set T");
        let got = eval(
            &mut ctx,
            "const a = JSON.stringify(JSON.parse(T)), b = JSON.stringify(original(T));
             [a === b, a.length > 1000000].join()",
        );
        assert_eq!(got, "true,true");
    }
}
