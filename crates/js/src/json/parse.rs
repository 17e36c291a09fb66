//! A leaner global `JSON.parse`. Boa's own one checks the text with serde_json, then parses
//! it again as a script and runs it, so a 50 MB document costs an AST, bytecode and an object
//! with a shape of its own per JSON object (~3 GiB peak). This one streams serde_json's
//! tokens straight into JS values. An object is made from a template kept per key sequence
//! (one allocation with its values, not a shape transition per key: docs/design/002), so
//! objects with equal keys share a shape, across documents on a worker thread.
//! Whatever it does not handle exactly like Boa (a reviver, a non-string argument, any text
//! serde_json rejects) goes to Boa's original function, kept as the closure's capture, so
//! results and error messages stay Boa's.

use std::cell::RefCell;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use boa_engine::builtins::object::OrdinaryObject;
use boa_engine::object::builtins::JsArray;
use boa_engine::object::{FunctionObjectBuilder, JsObject, ObjectTemplate};
use boa_engine::property::{Attribute, PropertyDescriptor, PropertyKey};
use boa_engine::{js_string, Context, JsResult, JsString, JsValue, NativeFunction};
use rustc_hash::{FxHashMap, FxHasher};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use smallvec::SmallVec;

use crate::host::thread_objects::ThreadObjects;
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
    let templates = Templates::of(ctx);
    let value = Seed::new(ctx, &templates).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// A whole JSON document parsed from bytes into JS values, or serde_json's error.
pub(crate) fn from_slice(bytes: &[u8], ctx: &mut Context) -> Result<JsValue, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let templates = Templates::of(ctx);
    let value = Seed::new(ctx, &templates).deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Objects with more keys are built property by property (a template per such key set
/// would keep a large key list for what is likely a one-off map).
const MAX_TEMPLATE_KEYS: usize = 64;
/// Bound on the templates kept: documents with ever-new key sets must not grow it forever.
const MAX_TEMPLATES: usize = 256;

/// The templates of JSON objects by key sequence: per worker thread when the context has
/// one, else per document.
#[derive(Default)]
pub(crate) struct Templates {
    /// The `Object.prototype` the templates were made for.
    proto: Option<JsObject>,
    /// By the hash of the key sequence.
    entries: FxHashMap<u64, Vec<Entry>>,
    count: usize,
}

struct Entry {
    /// The keys, each preceded by its length in bytes as 4 bytes.
    keys: Box<[u8]>,
    /// `None` for a key set no template can make (remembered so it is not examined again).
    template: Option<ObjectTemplate>,
}

impl Templates {
    /// The templates `ctx`'s parses use, emptied if they were made for another realm's
    /// `Object.prototype`.
    pub(crate) fn of(ctx: &mut Context) -> Rc<RefCell<Templates>> {
        let templates = match ctx.get_data::<Rc<ThreadObjects>>().cloned() {
            Some(thread) => thread
                .state(ctx, |_| (ThreadTemplates::default(), Vec::new()))
                .map(|t| t.0.clone())
                .unwrap_or_default(),
            None => Rc::default(),
        };
        let proto = ctx.intrinsics().constructors().object().prototype();
        {
            let mut t = templates.borrow_mut();
            if !t
                .proto
                .as_ref()
                .is_some_and(|p| JsObject::equals(p, &proto))
            {
                *t = Templates {
                    proto: Some(proto),
                    ..Templates::default()
                };
            }
        }
        templates
    }
}

/// The thread's [`Templates`] (a type of its own for `ThreadObjects::state`).
#[derive(Default)]
struct ThreadTemplates(Rc<RefCell<Templates>>);

/// Builds one JSON value as a JS value.
pub(crate) struct Seed<'c> {
    ctx: &'c mut Context,
    templates: &'c RefCell<Templates>,
}

impl<'c> Seed<'c> {
    /// A seed building objects from (and into) `templates`.
    pub(crate) fn new(ctx: &'c mut Context, templates: &'c RefCell<Templates>) -> Self {
        Seed { ctx, templates }
    }

    fn nested(&mut self) -> Seed<'_> {
        Seed {
            ctx: self.ctx,
            templates: self.templates,
        }
    }
}

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

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<JsValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self.nested())? {
            items.push(item);
        }
        Ok(JsArray::from_iter(items, self.ctx).into())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<JsValue, A::Error> {
        // The keys as length-prefixed bytes (the template's lookup key) and the values in
        // order: on a hit they become the object's storage as they are.
        let mut keys = SmallVec::<[u8; 256]>::new();
        let mut values = Vec::new();
        while map.next_key_seed(KeySeed(&mut keys))?.is_some() {
            values.push(map.next_value_seed(self.nested())?);
        }
        let mut hasher = FxHasher::default();
        keys.hash(&mut hasher);
        let hash = hasher.finish();
        let mut templates = self.templates.borrow_mut();
        let found = templates
            .entries
            .get(&hash)
            .and_then(|list| list.iter().find(|e| *e.keys == *keys));
        if let Some(Entry {
            template: Some(template),
            ..
        }) = found
        {
            return Ok(template.create(OrdinaryObject, values).into());
        }
        let names: SmallVec<[JsString; 16]> = key_names(&keys).map(JsString::from).collect();
        if found.is_none() {
            let template = template_for(&names, self.ctx);
            let object = template
                .as_ref()
                .map(|t| t.create(OrdinaryObject, std::mem::take(&mut values)));
            if templates.count >= MAX_TEMPLATES {
                templates.entries.clear();
                templates.count = 0;
            }
            templates.count += 1;
            templates.entries.entry(hash).or_default().push(Entry {
                keys: keys.as_slice().into(),
                template,
            });
            if let Some(object) = object {
                return Ok(object.into());
            }
        }
        drop(templates);
        // Index keys, a repeated key, or many keys: property by property. `define` keeps a
        // repeated key's first position and takes its last value, and makes `__proto__` an
        // own property, as JSON.parse does; an initializer's object starts from the realm's
        // shared root shape, so equal key sequences still share a shape.
        let obj = plain_object(self.ctx);
        for (key, value) in names.into_iter().zip(values) {
            define(&obj, key, value);
        }
        Ok(obj.into())
    }
}

/// The keys `KeySeed` appended to a buffer.
fn key_names(mut keys: &[u8]) -> impl Iterator<Item = &str> {
    std::iter::from_fn(move || {
        let (len, rest) = keys.split_first_chunk::<4>()?;
        let (name, rest) = rest.split_at(u32::from_le_bytes(*len) as usize);
        keys = rest;
        // The bytes were a `&str`.
        Some(std::str::from_utf8(name).unwrap_or_default())
    })
}

/// A template for objects with `names` as their own data properties, in this order, as
/// JSON.parse makes them (writable, enumerable, configurable); `None` when a template cannot
/// make them: an array-index key (such keys are ordered apart), a repeated key, too many.
fn template_for(names: &[JsString], ctx: &Context) -> Option<ObjectTemplate> {
    let keys: SmallVec<[PropertyKey; 16]> =
        names.iter().map(|n| PropertyKey::from(n.clone())).collect();
    let makeable = names.len() <= MAX_TEMPLATE_KEYS
        && !keys.iter().any(|k| matches!(k, PropertyKey::Index(_)))
        && names
            .iter()
            .enumerate()
            .all(|(i, n)| !names[..i].contains(n));
    if !makeable {
        return None;
    }
    let proto = ctx.intrinsics().constructors().object().prototype();
    let mut template = ObjectTemplate::for_prototype(ctx, Some(proto));
    for key in keys {
        template.property(key, Attribute::all());
    }
    Some(template)
}

/// Reads an object key, appending its length (4 bytes) and bytes to a buffer.
struct KeySeed<'b>(&'b mut SmallVec<[u8; 256]>);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object key")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        let len = u32::try_from(v.len()).map_err(|_| E::custom("key too long"))?;
        self.0.extend_from_slice(&len.to_le_bytes());
        self.0.extend_from_slice(v.as_bytes());
        Ok(())
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
    fn objects_made_from_one_template_stay_independent() {
        let mut ctx = context();
        let got = eval(
            &mut ctx,
            r#"const [a, b, c] = JSON.parse('[{"x":1,"y":2},{"x":3,"y":4},{"y":5,"x":6}]');
               a.z = 1; delete b.x; b.x = 9; Object.defineProperty(a, 'y', { enumerable: false });
               [JSON.stringify(a), JSON.stringify(b), JSON.stringify(c), Object.keys(a).join(),
                JSON.stringify(JSON.parse('{"x":7,"y":8}')), 'z' in b].join(' ')"#,
        );
        assert_eq!(
            got,
            r#"{"x":1,"z":1} {"y":4,"x":9} {"y":5,"x":6} x,z {"x":7,"y":8} false"#
        );
    }

    #[test]
    fn key_sets_a_template_cannot_make_are_built_key_by_key() {
        let mut ctx = context();
        // More keys than a template takes, index keys, a repeated key: as Boa's parse.
        let wide = format!(
            "[{{{0}}},{{{0}}}]",
            (0..100)
                .map(|i| format!(r#""k{i}":{i}"#))
                .collect::<Vec<_>>()
                .join(",")
        );
        check(&mut ctx, &wide, true);
        check(&mut ctx, r#"[{"b":1,"0":2},{"b":1,"0":2}]"#, true);
        check(&mut ctx, r#"[{"a":1,"a":2},{"a":1,"a":2,"b":3}]"#, true);
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
