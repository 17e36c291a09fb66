//! A request object on its way to protobuf, as k6 sends it: `JSON.stringify`'s text read by
//! Go's protojson. Since k6 1.2.0 a unary call's `NaN`, `Infinity` and `-Infinity` numbers
//! become the strings protojson reads as those floats (k6 1.1.0 and every stream write send
//! `null`, which leaves the field at 0). Before prost-reflect reads the text, [`check`] walks
//! it as protojson does and words the first mistake as Go does, with its position in the
//! text: an unknown or repeated key, a second member of a oneof, a value a scalar field
//! refuses, a non-object for a message; nested messages, lists and maps of them included.

use std::collections::HashSet;

use boa_engine::object::FunctionObjectBuilder;
use boa_engine::{js_string, Context, JsNativeError, JsResult, JsValue, NativeFunction};
use prost_reflect::{DeserializeOptions, DynamicMessage, FieldDescriptor, Kind, MessageDescriptor};

/// `JSON.stringify(value)`; with `floats_as_strings`, non-finite numbers become
/// `"NaN"`/`"Infinity"`/`"-Infinity"` first (k6's unary calls since 1.2.0).
pub(super) fn request_text(
    value: &JsValue,
    floats_as_strings: bool,
    ctx: &mut Context,
) -> JsResult<String> {
    let json = ctx.intrinsics().objects().json();
    let stringify = json.get(js_string!("stringify"), ctx)?;
    let Some(stringify) = stringify.as_callable() else {
        return Err(JsNativeError::typ()
            .with_message("JSON.stringify is not a function")
            .into());
    };
    let mut args = vec![value.clone()];
    if floats_as_strings {
        let replacer = FunctionObjectBuilder::new(
            ctx.realm(),
            NativeFunction::from_fn_ptr(|_, a, _| {
                let v = a.get(1).cloned().unwrap_or_default();
                Ok(match v.as_number() {
                    Some(n) if n.is_nan() => js_string!("NaN").into(),
                    Some(n) if n == f64::INFINITY => js_string!("Infinity").into(),
                    Some(n) if n == f64::NEG_INFINITY => js_string!("-Infinity").into(),
                    _ => v,
                })
            }),
        )
        .length(2)
        .build();
        args.push(replacer.into());
    }
    let out = stringify.call(&json.into(), &args, ctx)?;
    if out.is_undefined() {
        return Ok("null".to_owned());
    }
    Ok(out.to_string(ctx)?.to_std_string_escaped())
}

/// Go protojson's error for the first mistake in `text` (a request for `desc`) that rk6
/// words as Go does: `proto: (line 1:13): unknown field "nope"` (the space after `proto:`
/// is the no-break space k6's binary prints). `Ok` when there is none, or when the text is
/// beyond this walk (prost-reflect then judges it).
pub(super) fn check(desc: &MessageDescriptor, text: &str) -> Result<(), String> {
    if own_json(desc) {
        return Ok(());
    }
    let mut scan = Scan { text, i: 0 };
    scan.ws();
    if scan.peek() != Some(b'{') {
        return Ok(());
    }
    match scan.message(desc) {
        Err(Stop::Error(e)) => Err(format!("proto:\u{a0}{e}")),
        _ => Ok(()),
    }
}

/// Well-known types read from JSON forms of their own: protojson (and prost-reflect)
/// judge those.
fn own_json(desc: &MessageDescriptor) -> bool {
    desc.package_name() == "google.protobuf"
}

enum Stop {
    /// Go's error, without its `proto:` prefix.
    Error(String),
    /// Not JSON this walk reads: leave it to prost-reflect.
    GiveUp,
}

type Walk = Result<(), Stop>;

struct Scan<'a> {
    text: &'a str,
    i: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Walk {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(Stop::GiveUp)
        }
    }

    /// Go's position of byte `pos`: line and column in runes, from 1.
    fn at(&self, pos: usize) -> String {
        let before = &self.text[..pos];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        format!("(line {line}:{col})")
    }

    /// The string at the cursor: its raw text (quotes included) and its value.
    fn string(&mut self) -> Result<(&'a str, String), Stop> {
        let start = self.i;
        let bytes = self.text.as_bytes();
        if bytes.get(start) != Some(&b'"') {
            return Err(Stop::GiveUp);
        }
        let mut j = start + 1;
        while j < bytes.len() {
            match bytes[j] {
                b'\\' => j += 2,
                b'"' => {
                    let raw = &self.text[start..=j];
                    self.i = j + 1;
                    let value = serde_json::from_str(raw).map_err(|_| Stop::GiveUp)?;
                    return Ok((raw, value));
                }
                _ => j += 1,
            }
        }
        Err(Stop::GiveUp)
    }

    /// Skips one value; returns its raw text.
    fn skip(&mut self) -> Result<&'a str, Stop> {
        self.ws();
        let start = self.i;
        match self.peek() {
            Some(b'"') => {
                self.string()?;
            }
            Some(open @ (b'{' | b'[')) => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.i += 1;
                loop {
                    self.ws();
                    if self.peek() == Some(close) {
                        self.i += 1;
                        break;
                    }
                    if open == b'{' {
                        self.string()?;
                        self.eat(b':')?;
                    }
                    self.skip()?;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(c) if c == close => {}
                        _ => return Err(Stop::GiveUp),
                    }
                }
            }
            Some(_) => {
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    self.i += 1;
                }
                if self.i == start {
                    return Err(Stop::GiveUp);
                }
            }
            None => return Err(Stop::GiveUp),
        }
        Ok(&self.text[start..self.i])
    }

    /// The raw text of the token at the cursor, as Go's error quotes it (`{` or `[` for an
    /// object or array).
    fn token(&mut self) -> Result<(usize, &'a str), Stop> {
        self.ws();
        let start = self.i;
        match self.peek() {
            Some(b'{') => Ok((start, "{")),
            Some(b'[') => Ok((start, "[")),
            _ => {
                let raw = self.skip()?;
                self.i = start;
                Ok((start, raw))
            }
        }
    }

    fn unexpected(&mut self) -> Walk {
        let (pos, raw) = self.token()?;
        Err(Stop::Error(format!(
            "syntax error {}: unexpected token {raw}",
            self.at(pos)
        )))
    }

    /// A message's object, the cursor on its `{`.
    fn message(&mut self, desc: &MessageDescriptor) -> Walk {
        self.eat(b'{')?;
        let mut numbers = HashSet::new();
        let mut oneofs = HashSet::new();
        loop {
            self.ws();
            if self.peek() == Some(b'}') {
                self.i += 1;
                return Ok(());
            }
            let pos = self.i;
            let (raw, name) = self.string()?;
            self.eat(b':')?;
            self.ws();
            if name.starts_with('[') && name.ends_with(']') {
                // An extension: prost-reflect resolves those.
                self.skip()?;
            } else {
                let field = desc
                    .fields()
                    .find(|f| f.json_name() == name)
                    .or_else(|| desc.get_field_by_name(&name));
                let Some(field) = field else {
                    return Err(Stop::Error(format!(
                        "{}: unknown field {raw}",
                        self.at(pos)
                    )));
                };
                if !numbers.insert(field.number()) {
                    return Err(Stop::Error(format!(
                        "{}: duplicate field {raw}",
                        self.at(pos)
                    )));
                }
                let value_kind = field.kind();
                let keeps_null = matches!(&value_kind, Kind::Message(m) if m.full_name() == "google.protobuf.Value")
                    || matches!(&value_kind, Kind::Enum(e) if e.full_name() == "google.protobuf.NullValue");
                if self.text[self.i..].starts_with("null") && !keeps_null {
                    self.skip()?;
                } else if field.is_list() {
                    self.list(desc, &field)?;
                } else if field.is_map() {
                    self.map(desc, &field)?;
                } else {
                    if let Some(oneof) = field.containing_oneof() {
                        if !oneofs.insert(oneof.full_name().to_owned()) {
                            return Err(Stop::Error(format!(
                                "{}: error parsing {raw}, oneof {} is already set",
                                self.at(pos),
                                oneof.full_name()
                            )));
                        }
                    }
                    self.singular(desc, &field)?;
                }
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                _ => return Err(Stop::GiveUp),
            }
        }
    }

    fn singular(&mut self, desc: &MessageDescriptor, field: &FieldDescriptor) -> Walk {
        match field.kind() {
            Kind::Message(m) if own_json(&m) => self.skip().map(drop),
            Kind::Message(m) => {
                if self.peek() == Some(b'{') {
                    self.message(&m)
                } else {
                    self.unexpected()
                }
            }
            kind => {
                let json_name = field.json_name();
                self.scalar(desc, &kind, json_name, |raw| {
                    format!("{{\"{json_name}\":{raw}}}")
                })
            }
        }
    }

    /// A scalar value: what prost-reflect refuses is Go's `invalid value` error.
    fn scalar(
        &mut self,
        desc: &MessageDescriptor,
        kind: &Kind,
        name: &str,
        wrap: impl Fn(&str) -> String,
    ) -> Walk {
        let (pos, raw) = self.token()?;
        let fits = !matches!(raw, "{" | "[") && {
            let probe = wrap(raw);
            let mut de = serde_json::Deserializer::from_str(&probe);
            DynamicMessage::deserialize_with_options(
                desc.clone(),
                &mut de,
                &DeserializeOptions::new(),
            )
            .is_ok()
        };
        if !fits {
            return Err(Stop::Error(format!(
                "{}: invalid value for {} field {name}: {raw}",
                self.at(pos),
                kind_name(kind)
            )));
        }
        self.skip().map(drop)
    }

    fn list(&mut self, desc: &MessageDescriptor, field: &FieldDescriptor) -> Walk {
        if self.peek() != Some(b'[') {
            return self.unexpected();
        }
        self.i += 1;
        loop {
            self.ws();
            if self.peek() == Some(b']') {
                self.i += 1;
                return Ok(());
            }
            match field.kind() {
                Kind::Message(m) if own_json(&m) => {
                    self.skip()?;
                }
                Kind::Message(m) => {
                    if self.peek() == Some(b'{') {
                        self.message(&m)?;
                    } else {
                        return self.unexpected();
                    }
                }
                kind => {
                    let json_name = field.json_name();
                    self.scalar(desc, &kind, json_name, |raw| {
                        format!("{{\"{json_name}\":[{raw}]}}")
                    })?;
                }
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {}
                _ => return Err(Stop::GiveUp),
            }
        }
    }

    fn map(&mut self, desc: &MessageDescriptor, field: &FieldDescriptor) -> Walk {
        if self.peek() != Some(b'{') {
            return self.unexpected();
        }
        let Some(entry) = field.kind().as_message().cloned() else {
            return Err(Stop::GiveUp);
        };
        let key = match entry.map_entry_key_field().kind() {
            Kind::String => "k",
            Kind::Bool => "true",
            _ => "0",
        };
        let value_field = entry.map_entry_value_field();
        self.i += 1;
        loop {
            self.ws();
            if self.peek() == Some(b'}') {
                self.i += 1;
                return Ok(());
            }
            self.string()?;
            self.eat(b':')?;
            self.ws();
            match value_field.kind() {
                Kind::Message(m) if own_json(&m) => {
                    self.skip()?;
                }
                Kind::Message(m) => {
                    if self.peek() == Some(b'{') {
                        self.message(&m)?;
                    } else {
                        return self.unexpected();
                    }
                }
                kind => {
                    let json_name = field.json_name();
                    self.scalar(desc, &kind, "value", |raw| {
                        format!("{{\"{json_name}\":{{\"{key}\":{raw}}}}}")
                    })?;
                }
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                _ => return Err(Stop::GiveUp),
            }
        }
    }
}

/// A field kind as Go's `protoreflect.Kind` prints it.
fn kind_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::Double => "double",
        Kind::Float => "float",
        Kind::Int32 => "int32",
        Kind::Int64 => "int64",
        Kind::Uint32 => "uint32",
        Kind::Uint64 => "uint64",
        Kind::Sint32 => "sint32",
        Kind::Sint64 => "sint64",
        Kind::Fixed32 => "fixed32",
        Kind::Fixed64 => "fixed64",
        Kind::Sfixed32 => "sfixed32",
        Kind::Sfixed64 => "sfixed64",
        Kind::Bool => "bool",
        Kind::String => "string",
        Kind::Bytes => "bytes",
        Kind::Message(_) => "message",
        Kind::Enum(_) => "enum",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::DescriptorPool;

    struct One(&'static str);

    impl protox::file::FileResolver for One {
        fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
            if name == "t.proto" {
                protox::file::File::from_source(name, self.0)
            } else {
                protox::file::GoogleFileResolver::new().open_file(name)
            }
        }
    }

    fn message() -> MessageDescriptor {
        let mut c = protox::Compiler::with_file_resolver(One(
            "syntax = \"proto3\"; package t; import \"google/protobuf/struct.proto\"; \
             enum Kind { KIND_UNSET = 0; KIND_A = 1; } \
             message Inner { int32 n = 1; string note = 2; } \
             message M { string text = 1; int64 count = 2; Kind kind = 3; Inner inner = 4; \
               repeated Inner items = 5; map<string, Inner> kids = 6; repeated int32 nums = 7; \
               map<string, int32> sizes = 8; double ratio = 9; string some_field = 10; \
               oneof pick { string a = 11; Inner b = 12; } google.protobuf.Struct free = 13; }",
        ));
        c.include_imports(true);
        c.open_file("t.proto").unwrap();
        let pool: DescriptorPool = c.descriptor_pool();
        pool.get_message_by_name("t.M").unwrap()
    }

    fn err(text: &str) -> String {
        check(&message(), text).unwrap_err()
    }

    #[test]
    fn unknown_keys_are_worded_as_go_with_their_position() {
        // The texts k6 1.1.0 gives (tests/parity/grpc.rs runs them side by side).
        assert_eq!(
            err(r#"{"text":"x","nope":1}"#),
            "proto:\u{a0}(line 1:13): unknown field \"nope\""
        );
        assert_eq!(
            err(r#"{"inner":{"n":1,"bad":2}}"#),
            "proto:\u{a0}(line 1:17): unknown field \"bad\""
        );
        assert_eq!(
            err(r#"{"items":[{"n":1},{"zz":null}]}"#),
            "proto:\u{a0}(line 1:20): unknown field \"zz\""
        );
        assert_eq!(
            err(r#"{"kids":{"a":{"n":1,"x":2}}}"#),
            "proto:\u{a0}(line 1:21): unknown field \"x\""
        );
        // Columns count characters, not bytes.
        assert_eq!(
            err(r#"{"text":"é","nope":1}"#),
            "proto:\u{a0}(line 1:13): unknown field \"nope\""
        );
        // JSON and proto names both name a field; the same field twice is refused.
        assert!(check(&message(), r#"{"someField":"a","inner":{"note":"b"}}"#).is_ok());
        assert_eq!(
            err(r#"{"someField":"a","some_field":"b"}"#),
            "proto:\u{a0}(line 1:18): duplicate field \"some_field\""
        );
        assert_eq!(
            err(r#"{"a":"x","b":{}}"#),
            "proto:\u{a0}(line 1:10): error parsing \"b\", oneof t.M.pick is already set"
        );
        // Well-known types take any JSON of their own form.
        assert!(check(&message(), r#"{"free":{"anything":[1,{"x":2}]}}"#).is_ok());
    }

    #[test]
    fn values_a_field_refuses_are_worded_as_go() {
        assert_eq!(
            err(r#"{"text":5}"#),
            "proto:\u{a0}(line 1:9): invalid value for string field text: 5"
        );
        assert_eq!(
            err(r#"{"kind":"NOPE"}"#),
            "proto:\u{a0}(line 1:9): invalid value for enum field kind: \"NOPE\""
        );
        assert_eq!(
            err(r#"{"count":"abc"}"#),
            "proto:\u{a0}(line 1:10): invalid value for int64 field count: \"abc\""
        );
        assert_eq!(
            err(r#"{"nums":[1,"x"]}"#),
            "proto:\u{a0}(line 1:12): invalid value for int32 field nums: \"x\""
        );
        assert_eq!(
            err(r#"{"sizes":{"a":true}}"#),
            "proto:\u{a0}(line 1:15): invalid value for int32 field value: true"
        );
        assert_eq!(
            err(r#"{"inner":5}"#),
            "proto:\u{a0}syntax error (line 1:10): unexpected token 5"
        );
        assert_eq!(
            err(r#"{"text":["a"]}"#),
            "proto:\u{a0}(line 1:9): invalid value for string field text: ["
        );
        for ok in [
            r#"{"count":"5","kind":1,"ratio":"NaN","nums":[1,"2"],"inner":null,"text":null}"#,
            r#"{"ratio":"-Infinity","sizes":{"a":3},"kids":{"b":{"n":1}}}"#,
        ] {
            assert!(check(&message(), ok).is_ok(), "{ok}");
        }
    }
}
