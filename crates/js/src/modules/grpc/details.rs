//! A failed status's details as k6 1.1.0 gives them. grpc-go reads the
//! `grpc-status-details-bin` trailer as a `google.rpc.Status` (whose code must match
//! `grpc-status`, else the call fails `Internal` with a "mismatch" message); each detail is a
//! `google.protobuf.Any`, resolved by its type URL among the types k6's binary links (the
//! `google.rpc` error details, the health-check messages, the well-known types: [`builtin`])
//! and the types the VU's clients loaded from `.proto` files, protosets or reflection
//! ([`Types`]). A unary reply's `error` is the Status as protojson (each detail with its
//! `@type`, every field present), or `{}` when some detail cannot be rendered; a stream's
//! `error` event gives each detail as the Go value grpc-go decoded it to (fields by their
//! proto names, no `@type`), `{}` for a type k6 only knows from loaded files or not at all.

use std::sync::LazyLock;

use boa_engine::object::builtins::JsArray;
use boa_engine::object::FunctionObjectBuilder;
use boa_engine::property::PropertyDescriptor;
use boa_engine::{Context, JsObject, JsResult, JsString, JsValue, NativeFunction};
use prost::Message;
use prost_reflect::prost_types::Any;
use prost_reflect::{
    DescriptorPool, DynamicMessage, FieldDescriptor, MapKey, MessageDescriptor, ReflectMessage,
    Value,
};
use rk6_http::grpc::{code, GrpcReply};

use super::convert::to_json;

/// `google.rpc.Status`, as grpc-go decodes the trailer.
#[derive(Clone, PartialEq, Message)]
pub(super) struct RpcStatus {
    #[prost(int32, tag = "1")]
    pub(super) code: i32,
    #[prost(string, tag = "2")]
    pub(super) message: String,
    #[prost(message, repeated, tag = "3")]
    pub(super) details: Vec<Any>,
}

/// The embedded `.proto` files of [`builtin`] (rk6's own texts of the public definitions).
const EMBEDDED: [(&str, &str); 3] = [
    (
        "google/rpc/status.proto",
        include_str!("protos/google/rpc/status.proto"),
    ),
    (
        "google/rpc/error_details.proto",
        include_str!("protos/google/rpc/error_details.proto"),
    ),
    (
        "grpc/health/v1/health.proto",
        include_str!("protos/grpc/health/v1/health.proto"),
    ),
];

/// The well-known types compiled in beside them.
const WELL_KNOWN: [&str; 8] = [
    "google/protobuf/any.proto",
    "google/protobuf/duration.proto",
    "google/protobuf/timestamp.proto",
    "google/protobuf/wrappers.proto",
    "google/protobuf/struct.proto",
    "google/protobuf/empty.proto",
    "google/protobuf/field_mask.proto",
    "google/protobuf/descriptor.proto",
];

struct Embedded;

impl protox::file::FileResolver for Embedded {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        match EMBEDDED.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => protox::file::File::from_source(name, text),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// The message types k6's binary knows without loading anything: `google.rpc.Status` and
/// its error details, `grpc.health.v1`, the well-known types. Compiled once per process.
pub(super) fn builtin() -> &'static DescriptorPool {
    static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
        let mut resolver = protox::file::ChainFileResolver::new();
        resolver.add(Embedded);
        resolver.add(protox::file::GoogleFileResolver::new());
        let mut compiler = protox::Compiler::with_file_resolver(resolver);
        compiler.include_imports(true);
        for name in EMBEDDED.iter().map(|(n, _)| *n).chain(WELL_KNOWN) {
            compiler
                .open_file(name)
                .expect("the embedded protos compile");
        }
        compiler.descriptor_pool()
    });
    &POOL
}

/// The types a detail can be resolved among: [`builtin`] first (k6 registers a loaded type
/// only when its name is free), then the VU's clients' descriptors in the order they were
/// made.
#[derive(Clone, Default)]
pub(super) struct Types {
    pub(super) loaded: Vec<DescriptorPool>,
}

impl Types {
    /// The message `type_url` names (its part after the last `/`), and whether it is one of
    /// the binary's own types (a Go struct) rather than a loaded one (a dynamic message).
    fn find(&self, type_url: &str) -> Option<(MessageDescriptor, bool)> {
        let name = type_url.rsplit('/').next().unwrap_or(type_url);
        if let Some(m) = builtin().get_message_by_name(name) {
            return Some((m, true));
        }
        self.loaded
            .iter()
            .find_map(|p| p.get_message_by_name(name))
            .map(|m| (m, false))
    }

    fn decode(&self, any: &Any) -> Option<(DynamicMessage, bool)> {
        let (desc, own) = self.find(&any.type_url)?;
        let msg = DynamicMessage::decode(desc, any.value.as_slice()).ok()?;
        Some((msg, own))
    }
}

/// Reads `reply`'s `grpc-status-details-bin` as grpc-go does and returns the details. With
/// the trailer's code equal to the status, its message replaces `grpc-message`; with
/// another code the call fails `Internal`, without details; a trailer that is no Status is
/// ignored.
pub(super) fn apply(reply: &mut GrpcReply, types: &Types) -> Vec<Any> {
    let Some(bytes) = reply.status_details.take() else {
        return Vec::new();
    };
    let Ok(status) = RpcStatus::decode(bytes) else {
        return Vec::new();
    };
    if status.code as u32 == reply.code {
        reply.message = status.message;
        return status.details;
    }
    reply.message = format!(
        "grpc-status-details-bin mismatch: grpc-status={}, grpc-message={}, \
         grpc-status-details-bin={}",
        code::name(reply.code),
        go_quote(&reply.message),
        text_format(&status_message(&status), types)
    );
    reply.code = code::INTERNAL;
    Vec::new()
}

/// `status` as a dynamic `google.rpc.Status`.
fn status_message(status: &RpcStatus) -> DynamicMessage {
    let desc = builtin()
        .get_message_by_name("google.rpc.Status")
        .expect("google.rpc.Status is built in");
    let bytes = status.encode_to_vec();
    DynamicMessage::decode(desc.clone(), bytes.as_slice())
        .unwrap_or_else(|_| DynamicMessage::new(desc))
}

/// A unary reply's `error`: the Status as protojson with every field, each detail with its
/// `@type`; `{}` when a detail's type cannot be resolved or decoded (protojson fails on the
/// whole Status, and k6 unmarshals nothing).
pub(super) fn protojson_error(
    code: u32,
    message: &str,
    details: &[Any],
    types: &Types,
) -> serde_json::Value {
    let mut out = Vec::with_capacity(details.len());
    for any in details {
        match any_json(any, types) {
            Some(v) => out.push(v),
            None => return serde_json::Value::Object(Default::default()),
        }
    }
    serde_json::json!({"code": code, "message": message, "details": out})
}

/// Well-known types with a JSON form of their own: in an `Any` it goes under `value`.
fn custom_json(full_name: &str) -> bool {
    matches!(
        full_name,
        "google.protobuf.Any"
            | "google.protobuf.Timestamp"
            | "google.protobuf.Duration"
            | "google.protobuf.BoolValue"
            | "google.protobuf.Int32Value"
            | "google.protobuf.Int64Value"
            | "google.protobuf.UInt32Value"
            | "google.protobuf.UInt64Value"
            | "google.protobuf.FloatValue"
            | "google.protobuf.DoubleValue"
            | "google.protobuf.StringValue"
            | "google.protobuf.BytesValue"
            | "google.protobuf.Struct"
            | "google.protobuf.ListValue"
            | "google.protobuf.Value"
            | "google.protobuf.FieldMask"
            | "google.protobuf.Empty"
    )
}

/// One `Any` as protojson: `{"@type": url, ...fields}`.
fn any_json(any: &Any, types: &Types) -> Option<serde_json::Value> {
    if any.type_url.is_empty() {
        // protojson writes an empty Any as `{}` and fails on a value without a type.
        return any
            .value
            .is_empty()
            .then(|| serde_json::Value::Object(Default::default()));
    }
    let (msg, _) = types.decode(any)?;
    let json = to_json(&msg).ok()?;
    let mut out = serde_json::Map::new();
    out.insert("@type".into(), any.type_url.clone().into());
    match json {
        serde_json::Value::Object(fields) if !custom_json(msg.descriptor().full_name()) => {
            out.extend(fields)
        }
        other => {
            out.insert("value".into(), other);
        }
    }
    Some(serde_json::Value::Object(out))
}

/// A stream `error` event's `details`: each as the Go value `status.Details()` gives, a
/// generated message ([`go_view`]) for the binary's own types, else a value without
/// exported fields (a dynamic message, or the error for a type not found); `String()` of
/// each as Go prints it (prototext, or the error's text).
pub(super) fn go_details(details: &[Any], types: &Types, ctx: &mut Context) -> JsResult<JsValue> {
    let arr = JsArray::new(ctx)?;
    for any in details {
        let (value, text) = match types.find(&any.type_url) {
            Some((desc, own)) => match DynamicMessage::decode(desc, any.value.as_slice()) {
                Ok(msg) => {
                    let value = if own {
                        go_view(&msg, ctx)?
                    } else {
                        JsObject::with_object_proto(ctx.intrinsics())
                    };
                    (value, text_format(&msg, types))
                }
                Err(_) => (
                    JsObject::with_object_proto(ctx.intrinsics()),
                    "proto:\u{a0}cannot parse invalid wire-format data".to_owned(),
                ),
            },
            None => (
                JsObject::with_object_proto(ctx.intrinsics()),
                "proto:\u{a0}not found".to_owned(),
            ),
        };
        hidden_method(&value, "toString", JsString::from(text).into(), ctx)?;
        arr.push(value, ctx)?;
    }
    Ok(arr.into())
}

/// Defines a non-enumerable method `name` on `obj` that returns `result`.
fn hidden_method(obj: &JsObject, name: &str, result: JsValue, ctx: &mut Context) -> JsResult<()> {
    let f = FunctionObjectBuilder::new(
        ctx.realm(),
        NativeFunction::from_copy_closure_with_captures(
            |_, _, result: &JsValue, _| Ok(result.clone()),
            result,
        ),
    )
    .name(JsString::from(name))
    .build();
    obj.define_property_or_throw(
        JsString::from(name),
        PropertyDescriptor::builder()
            .value(f)
            .writable(true)
            .enumerable(false)
            .configurable(true),
        ctx,
    )?;
    Ok(())
}

/// A generated Go message as Sobek shows it: its exported fields by their proto names in
/// declaration order, every one present (unset messages and proto3 `optional`s `null`),
/// 64-bit integers and enums as numbers, bytes as arrays of numbers, a oneof as one field
/// holding its set member (or `null`). `Struct`, `Value` and `ListValue` marshal
/// themselves to JSON: `JSON.stringify` gives their protojson (a `toJSON` here).
fn go_view(msg: &DynamicMessage, ctx: &mut Context) -> JsResult<JsObject> {
    let desc = msg.descriptor();
    let obj = JsObject::with_object_proto(ctx.intrinsics());
    if matches!(
        desc.full_name(),
        "google.protobuf.Struct" | "google.protobuf.Value" | "google.protobuf.ListValue"
    ) {
        let json = to_json(msg).unwrap_or(serde_json::Value::Null);
        let json = JsValue::from_json(&json, ctx)?;
        hidden_method(&obj, "toJSON", json, ctx)?;
    }
    let mut oneofs_done = Vec::new();
    for field in desc.fields() {
        let oneof = field.containing_oneof().filter(|o| !o.is_synthetic());
        if let Some(o) = oneof {
            if oneofs_done.contains(&o.name().to_owned()) {
                continue;
            }
            oneofs_done.push(o.name().to_owned());
            let set = o.fields().find(|f| msg.has_field(f));
            let value = match set {
                Some(f) => {
                    let inner = JsObject::with_object_proto(ctx.intrinsics());
                    let v = go_value(&msg.get_field(&f), ctx)?;
                    inner.set(JsString::from(f.name()), v, false, ctx)?;
                    inner.into()
                }
                None => JsValue::null(),
            };
            obj.set(JsString::from(o.name()), value, false, ctx)?;
            continue;
        }
        let value = if field.supports_presence() && !msg.has_field(&field) {
            JsValue::null()
        } else {
            go_value(&msg.get_field(&field), ctx)?
        };
        obj.set(JsString::from(field.name()), value, false, ctx)?;
    }
    Ok(obj)
}

fn go_value(value: &Value, ctx: &mut Context) -> JsResult<JsValue> {
    Ok(match value {
        Value::List(items) => {
            let arr = JsArray::new(ctx)?;
            for item in items {
                arr.push(go_scalar(item, ctx)?, ctx)?;
            }
            arr.into()
        }
        Value::Map(entries) => {
            let obj = JsObject::with_object_proto(ctx.intrinsics());
            let mut keys: Vec<&MapKey> = entries.keys().collect();
            keys.sort();
            for k in keys {
                let key = match k {
                    MapKey::Bool(b) => b.to_string(),
                    MapKey::I32(n) => n.to_string(),
                    MapKey::I64(n) => n.to_string(),
                    MapKey::U32(n) => n.to_string(),
                    MapKey::U64(n) => n.to_string(),
                    MapKey::String(s) => s.clone(),
                };
                let v = go_scalar(&entries[k], ctx)?;
                obj.set(JsString::from(key), v, false, ctx)?;
            }
            obj.into()
        }
        other => go_scalar(other, ctx)?,
    })
}

fn go_scalar(value: &Value, ctx: &mut Context) -> JsResult<JsValue> {
    Ok(match value {
        Value::Bool(b) => (*b).into(),
        Value::I32(n) => (*n).into(),
        Value::I64(n) => (*n as f64).into(),
        Value::U32(n) => (*n).into(),
        Value::U64(n) => (*n as f64).into(),
        Value::F32(n) => f64::from(*n).into(),
        Value::F64(n) => (*n).into(),
        Value::String(s) => JsString::from(s.as_str()).into(),
        Value::Bytes(b) => {
            let arr = JsArray::new(ctx)?;
            for byte in b.iter() {
                arr.push(*byte, ctx)?;
            }
            arr.into()
        }
        Value::EnumNumber(n) => (*n).into(),
        Value::Message(m) => go_view(m, ctx)?.into(),
        Value::List(_) | Value::Map(_) => JsValue::null(),
    })
}

/// A float as prototext writes one.
fn go_float(n: f64) -> String {
    if n.is_nan() {
        "nan".to_owned()
    } else if n.is_infinite() {
        if n > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        n.to_string()
    }
}

/// Go's `%q` of a string (the escapes a gRPC message can need).
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's compact prototext of `msg`, as `%+v` prints a message in k6's binary: set fields in
/// declaration order, two spaces between fields, `Any` expanded when its type resolves.
pub(super) fn text_format(msg: &DynamicMessage, types: &Types) -> String {
    let mut parts = Vec::new();
    let desc = msg.descriptor();
    if desc.full_name() == "google.protobuf.Any" {
        let url = match msg.get_field_by_name("type_url").as_deref() {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        let bytes = match msg.get_field_by_name("value").as_deref() {
            Some(Value::Bytes(b)) => b.to_vec(),
            _ => Vec::new(),
        };
        let any = Any {
            type_url: url.clone(),
            value: bytes,
        };
        if let Some((inner, _)) = types.decode(&any) {
            return format!("[{url}]:{{{}}}", text_format(&inner, types));
        }
    }
    for (field, value) in msg.fields() {
        match value {
            Value::List(items) => {
                for item in items {
                    parts.push(format!(
                        "{}:{}",
                        field.name(),
                        text_value(item, &field, types)
                    ));
                }
            }
            Value::Map(entries) => {
                let mut keys: Vec<&MapKey> = entries.keys().collect();
                keys.sort();
                for k in keys {
                    let key = match k {
                        MapKey::String(s) => go_quote(s),
                        MapKey::Bool(b) => b.to_string(),
                        MapKey::I32(n) => n.to_string(),
                        MapKey::I64(n) => n.to_string(),
                        MapKey::U32(n) => n.to_string(),
                        MapKey::U64(n) => n.to_string(),
                    };
                    let value_field = field.kind().as_message().map(|m| m.map_entry_value_field());
                    let v = match &value_field {
                        Some(vf) => text_value(&entries[k], vf, types),
                        None => String::new(),
                    };
                    parts.push(format!("{}:{{key:{key}  value:{v}}}", field.name()));
                }
            }
            other => parts.push(format!(
                "{}:{}",
                field.name(),
                text_value(other, &field, types)
            )),
        }
    }
    parts.join("  ")
}

fn text_value(value: &Value, field: &FieldDescriptor, types: &Types) -> String {
    match value {
        Value::Bool(b) => b.to_string(),
        Value::I32(n) => n.to_string(),
        Value::I64(n) => n.to_string(),
        Value::U32(n) => n.to_string(),
        Value::U64(n) => n.to_string(),
        Value::F32(n) => go_float(f64::from(*n)),
        Value::F64(n) => go_float(*n),
        Value::String(s) => go_quote(s),
        Value::Bytes(b) => go_quote(&rk6_http::grpc::go_string(b)),
        Value::EnumNumber(n) => field
            .kind()
            .as_enum()
            .and_then(|e| e.get_value(*n))
            .map(|v| v.name().to_owned())
            .unwrap_or_else(|| n.to_string()),
        Value::Message(m) => format!("{{{}}}", text_format(m, types)),
        Value::List(_) | Value::Map(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::prost_types::Duration;

    fn pack<M: Message>(name: &str, m: &M) -> Any {
        Any {
            type_url: format!("type.googleapis.com/{name}"),
            value: m.encode_to_vec(),
        }
    }

    fn error_info(reason: &str) -> Any {
        let desc = builtin()
            .get_message_by_name("google.rpc.ErrorInfo")
            .unwrap();
        let mut m = DynamicMessage::new(desc);
        m.set_field_by_name("reason", Value::String(reason.into()));
        Any {
            type_url: "type.googleapis.com/google.rpc.ErrorInfo".into(),
            value: m.encode_to_vec(),
        }
    }

    fn reply(code: u32, message: &str, status: &RpcStatus) -> GrpcReply {
        GrpcReply {
            code,
            message: message.into(),
            status_details: Some(status.encode_to_vec().into()),
            ..GrpcReply::default()
        }
    }

    #[test]
    fn the_built_in_types_are_k6s() {
        for name in [
            "google.rpc.Status",
            "google.rpc.ErrorInfo",
            "google.rpc.BadRequest",
            "google.rpc.RetryInfo",
            "google.rpc.DebugInfo",
            "google.rpc.QuotaFailure",
            "google.rpc.PreconditionFailure",
            "google.rpc.RequestInfo",
            "google.rpc.ResourceInfo",
            "google.rpc.Help",
            "google.rpc.LocalizedMessage",
            "grpc.health.v1.HealthCheckResponse",
            "google.protobuf.StringValue",
            "google.protobuf.Struct",
        ] {
            assert!(builtin().get_message_by_name(name).is_some(), "{name}");
        }
    }

    #[test]
    fn details_render_as_protojson_with_their_type() {
        let status = RpcStatus {
            code: 3,
            message: "from the trailer".into(),
            details: vec![
                error_info("QUOTA"),
                pack(
                    "google.protobuf.Duration",
                    &Duration {
                        seconds: 3,
                        nanos: 0,
                    },
                ),
            ],
        };
        let mut r = reply(3, "from grpc-message", &status);
        let details = apply(&mut r, &Types::default());
        assert_eq!((r.code, r.message.as_str()), (3, "from the trailer"));
        assert_eq!(
            protojson_error(r.code, &r.message, &details, &Types::default()),
            serde_json::json!({"code": 3, "message": "from the trailer", "details": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "QUOTA", "domain": "", "metadata": {}},
                {"@type": "type.googleapis.com/google.protobuf.Duration", "value": "3s"},
            ]})
        );
        // A type nobody knows fails the whole Status: k6 gives `{}`.
        let mut unknown = details.clone();
        unknown.push(Any {
            type_url: "type.googleapis.com/nope.Thing".into(),
            value: vec![8, 1],
        });
        assert_eq!(
            protojson_error(3, "m", &unknown, &Types::default()),
            serde_json::json!({})
        );
    }

    #[test]
    fn a_code_other_than_the_status_fails_internal() {
        let status = RpcStatus {
            code: 5,
            message: "inner".into(),
            details: vec![error_info("R")],
        };
        let mut r = reply(3, "outer", &status);
        assert!(apply(&mut r, &Types::default()).is_empty());
        assert_eq!(r.code, code::INTERNAL);
        assert_eq!(
            r.message,
            "grpc-status-details-bin mismatch: grpc-status=InvalidArgument, grpc-message=\"outer\", \
             grpc-status-details-bin=code:5  message:\"inner\"  \
             details:{[type.googleapis.com/google.rpc.ErrorInfo]:{reason:\"R\"}}"
        );
        // A trailer that is no Status is ignored.
        let mut r = GrpcReply {
            code: 3,
            message: "outer".into(),
            status_details: Some(vec![0xff, 0xff].into()),
            ..GrpcReply::default()
        };
        assert!(apply(&mut r, &Types::default()).is_empty());
        assert_eq!((r.code, r.message.as_str()), (3, "outer"));
    }

    struct One(&'static str);

    impl protox::file::FileResolver for One {
        fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
            protox::file::File::from_source(name, self.0)
        }
    }

    #[test]
    fn loaded_types_resolve_after_the_built_in_ones() {
        let mut compiler = protox::Compiler::with_file_resolver(One(
            "syntax = \"proto3\"; package grpc.health.v1; \
             message HealthCheckResponse { string mine = 1; } message Mine { int64 n = 1; }",
        ));
        compiler.open_file("mine.proto").unwrap();
        let types = Types {
            loaded: vec![compiler.descriptor_pool()],
        };
        let (m, own) = types.find("x/grpc.health.v1.HealthCheckResponse").unwrap();
        assert!(
            own && m.get_field_by_name("status").is_some(),
            "the binary's own type wins"
        );
        let (_, own) = types
            .find("type.googleapis.com/grpc.health.v1.Mine")
            .unwrap();
        assert!(!own);
        assert!(types.find("type.googleapis.com/nope.Thing").is_none());
        // A loaded type renders in a unary reply; in a stream k6 has only a dynamic message.
        let any = Any {
            type_url: "type.googleapis.com/grpc.health.v1.Mine".into(),
            value: vec![8, 7],
        };
        assert_eq!(
            protojson_error(3, "m", std::slice::from_ref(&any), &types),
            serde_json::json!({"code": 3, "message": "m", "details": [
                {"@type": "type.googleapis.com/grpc.health.v1.Mine", "n": "7"}]})
        );
    }
}
