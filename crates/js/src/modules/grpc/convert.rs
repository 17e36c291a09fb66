//! Messages between JS and protobuf as k6 converts them: the request object through
//! protojson (names in lowerCamelCase or as declared, enums by name or number, 64-bit
//! integers as strings or numbers), the reply to protojson with every field present
//! (int64 as strings, enums by name, bytes as base64, well-known types in their JSON form).

use prost::Message;
use prost_reflect::{DeserializeOptions, DynamicMessage, MessageDescriptor, SerializeOptions};

/// A request message from the JSON of the script's object.
pub(super) fn encode_request(desc: &MessageDescriptor, json: &serde_json::Value) -> Result<Vec<u8>, String> {
    let msg = DynamicMessage::deserialize_with_options(desc.clone(), json, &DeserializeOptions::new())
        .map_err(|e| format!("unable to serialise request object to protocol buffer: {e}"))?;
    Ok(msg.encode_to_vec())
}

/// A reply message's JSON, every field present as k6 renders it.
pub(super) fn decode_reply(desc: &MessageDescriptor, bytes: &[u8]) -> Result<serde_json::Value, String> {
    let msg = DynamicMessage::decode(desc.clone(), bytes)
        .map_err(|e| format!("unable to convert response object to JSON: {e}"))?;
    to_json(&msg)
}

/// `msg` as protojson with unpopulated fields emitted.
pub(super) fn to_json(msg: &DynamicMessage) -> Result<serde_json::Value, String> {
    let opts = SerializeOptions::new().skip_default_fields(false);
    msg.serialize_with_options(serde_json::value::Serializer, &opts)
        .map_err(|e| format!("unable to convert response object to JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::DescriptorPool;
    use serde_json::json;

    fn pool() -> DescriptorPool {
        let dir = std::env::temp_dir().join(format!("rk6-grpc-convert-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("t.proto"),
            "syntax = \"proto3\"; package t; import \"google/protobuf/timestamp.proto\"; \
             enum Kind { KIND_UNSET = 0; KIND_A = 1; } \
             message M { string name = 1; int64 big = 2; Kind kind = 3; bytes raw = 4; \
               repeated int32 nums = 5; google.protobuf.Timestamp at = 6; M child = 7; double ratio = 8; }",
        )
        .unwrap();
        let set = super::super::proto::compile(std::slice::from_ref(&dir), &["t.proto".to_owned()]).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let mut pool = DescriptorPool::new();
        super::super::proto::add(&mut pool, set).unwrap();
        pool
    }

    #[test]
    fn reply_has_every_field_in_k6_form() {
        let desc = pool().get_message_by_name("t.M").unwrap();
        let req = json!({"name": "x", "big": "9007199254740993", "kind": "KIND_A", "raw": "aGk=",
                         "at": "2024-01-02T03:04:05Z", "ratio": 1.5});
        let bytes = encode_request(&desc, &req).unwrap();
        let back = decode_reply(&desc, &bytes).unwrap();
        assert_eq!(
            back,
            json!({"name": "x", "big": "9007199254740993", "kind": "KIND_A", "raw": "aGk=",
                   "nums": [], "at": "2024-01-02T03:04:05Z", "child": null, "ratio": 1.5})
        );
        let empty = decode_reply(&desc, &[]).unwrap();
        assert_eq!(
            empty,
            json!({"name": "", "big": "0", "kind": "KIND_UNSET", "raw": "", "nums": [],
                   "at": null, "child": null, "ratio": 0.0})
        );
    }

    #[test]
    fn unknown_request_fields_are_an_error() {
        let desc = pool().get_message_by_name("t.M").unwrap();
        let err = encode_request(&desc, &json!({"nope": 1})).unwrap_err();
        assert!(err.starts_with("unable to serialise request object to protocol buffer"), "{err}");
    }
}
