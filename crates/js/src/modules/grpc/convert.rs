//! Messages between JS and protobuf as k6 converts them: the request object through
//! protojson (names in lowerCamelCase or as declared, enums by name or number, 64-bit
//! integers as strings or numbers), the reply to protojson with every field present
//! (int64 as strings, enums by name, bytes as base64, well-known types in their JSON form).

use prost::Message;
use prost_reflect::ReflectMessage;
use prost_reflect::{
    DeserializeOptions, DynamicMessage, Kind, MessageDescriptor, SerializeOptions,
};

/// A request message from the JSON text of the script's object (`request::request_text`),
/// or why not: Go's words where `request::check` knows them, else prost-reflect's (the
/// caller puts k6's prefix before).
pub(super) fn encode_request(desc: &MessageDescriptor, text: &str) -> Result<Vec<u8>, String> {
    super::request::check(desc, text)?;
    let mut de = serde_json::Deserializer::from_str(text);
    let msg =
        DynamicMessage::deserialize_with_options(desc.clone(), &mut de, &DeserializeOptions::new())
            .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(msg.encode_to_vec())
}

/// A reply message's JSON, every field present as k6 renders it.
pub(super) fn decode_reply(
    desc: &MessageDescriptor,
    bytes: &[u8],
) -> Result<serde_json::Value, String> {
    let msg = DynamicMessage::decode(desc.clone(), bytes)
        .map_err(|e| format!("unable to convert response object to JSON: {e}"))?;
    to_json(&msg)
}

/// A stream message's JSON: k6 renders these without the unpopulated fields (unlike a
/// unary reply).
pub(super) fn decode_stream_message(
    desc: &MessageDescriptor,
    bytes: &[u8],
) -> Result<serde_json::Value, String> {
    let msg = DynamicMessage::decode(desc.clone(), bytes)
        .map_err(|e| format!("unable to convert response object to JSON: {e}"))?;
    msg.serialize_with_options(serde_json::value::Serializer, &SerializeOptions::new())
        .map_err(|e| format!("unable to convert response object to JSON: {e}"))
}

/// `msg` as protojson with unpopulated fields emitted.
pub(super) fn to_json(msg: &DynamicMessage) -> Result<serde_json::Value, String> {
    let opts = SerializeOptions::new().skip_default_fields(false);
    let mut json = msg
        .serialize_with_options(serde_json::value::Serializer, &opts)
        .map_err(|e| format!("unable to convert response object to JSON: {e}"))?;
    emit_null_messages(&msg.descriptor(), &mut json);
    Ok(json)
}

/// protojson's `EmitUnpopulated` also writes an unset singular message field, as `null`;
/// prost-reflect leaves it out. Oneof members (and proto3 `optional`) stay out, as in Go.
fn emit_null_messages(desc: &MessageDescriptor, json: &mut serde_json::Value) {
    // Well-known types have their own JSON forms (strings, numbers, free objects).
    if desc.package_name() == "google.protobuf" {
        return;
    }
    let serde_json::Value::Object(map) = json else {
        return;
    };
    let mut out = serde_json::Map::with_capacity(map.len());
    for field in desc.fields() {
        let name = field.json_name();
        let value = map.remove(name);
        let in_oneof = field.containing_oneof().is_some();
        match (field.kind(), value) {
            (Kind::Message(m), Some(mut v)) => {
                if field.is_map() {
                    let value_kind = m.map_entry_value_field().kind();
                    if let (Some(vm), serde_json::Value::Object(entries)) =
                        (value_kind.as_message(), &mut v)
                    {
                        for e in entries.values_mut() {
                            emit_null_messages(vm, e);
                        }
                    }
                } else if field.is_list() {
                    if let serde_json::Value::Array(items) = &mut v {
                        for i in items {
                            emit_null_messages(&m, i);
                        }
                    }
                } else {
                    emit_null_messages(&m, &mut v);
                }
                out.insert(name.to_owned(), v);
            }
            (Kind::Message(_), None) if !in_oneof && !field.is_list() && !field.is_map() => {
                out.insert(name.to_owned(), serde_json::Value::Null);
            }
            (_, Some(v)) => {
                out.insert(name.to_owned(), v);
            }
            (_, None) => {}
        }
    }
    // Anything left (extensions) keeps its place after the declared fields.
    out.extend(std::mem::take(map));
    *map = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::DescriptorPool;
    use serde_json::json;

    fn pool() -> DescriptorPool {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("rk6-grpc-convert-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("t.proto"),
            "syntax = \"proto3\"; package t; import \"google/protobuf/timestamp.proto\"; \
             enum Kind { KIND_UNSET = 0; KIND_A = 1; } \
             message M { string name = 1; int64 big = 2; Kind kind = 3; bytes raw = 4; \
               repeated int32 nums = 5; google.protobuf.Timestamp at = 6; M child = 7; double ratio = 8; \
               oneof pick { string a = 9; M b = 10; } optional int32 opt = 11; map<string, M> kids = 12; }",
        )
        .unwrap();
        let read: super::super::proto::ReadFile =
            std::sync::Arc::new(|p: &std::path::Path| std::fs::read(p).map(std::sync::Arc::from));
        let set =
            super::super::proto::compile(std::slice::from_ref(&dir), &["t.proto".to_owned()], read)
                .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let mut pool = DescriptorPool::new();
        super::super::proto::add(&mut pool, set).unwrap();
        pool
    }

    #[test]
    fn reply_has_every_field_in_k6_form() {
        let desc = pool().get_message_by_name("t.M").unwrap();
        let req = json!({"name": "x", "big": "9007199254740993", "kind": "KIND_A", "raw": "aGk=",
                         "at": "2024-01-02T03:04:05Z", "ratio": 1.5, "kids": {"k": {"name": "y"}}});
        let bytes = encode_request(&desc, &req.to_string()).unwrap();
        let back = decode_reply(&desc, &bytes).unwrap();
        assert_eq!(
            back,
            json!({"name": "x", "big": "9007199254740993", "kind": "KIND_A", "raw": "aGk=",
                   "nums": [], "at": "2024-01-02T03:04:05Z", "child": null, "ratio": 1.5,
                   "kids": {"k": {"name": "y", "big": "0", "kind": "KIND_UNSET", "raw": "", "nums": [],
                                  "at": null, "child": null, "ratio": 0.0, "kids": {}}}})
        );
        let empty = decode_reply(&desc, &[]).unwrap();
        assert_eq!(
            empty,
            json!({"name": "", "big": "0", "kind": "KIND_UNSET", "raw": "", "nums": [],
                   "at": null, "child": null, "ratio": 0.0, "kids": {}})
        );
    }

    #[test]
    fn stream_messages_leave_unpopulated_fields_out() {
        let desc = pool().get_message_by_name("t.M").unwrap();
        let bytes = encode_request(&desc, r#"{"name":"x","big":"5"}"#).unwrap();
        assert_eq!(
            decode_stream_message(&desc, &bytes).unwrap(),
            json!({"name": "x", "big": "5"})
        );
    }

    #[test]
    fn unknown_request_fields_are_an_error() {
        let desc = pool().get_message_by_name("t.M").unwrap();
        let err = encode_request(&desc, r#"{"nope":1}"#).unwrap_err();
        assert_eq!(err, "proto:\u{a0}(line 1:2): unknown field \"nope\"");
        // NaN and the infinities arrive as protojson's strings (k6 1.2+ sends them so).
        let bytes = encode_request(&desc, r#"{"ratio":"NaN"}"#).unwrap();
        let back = decode_stream_message(&desc, &bytes).unwrap();
        assert_eq!(back, json!({"ratio": "NaN"}));
        let bytes = encode_request(&desc, r#"{"ratio":null}"#).unwrap();
        assert_eq!(decode_stream_message(&desc, &bytes).unwrap(), json!({}));
    }
}
