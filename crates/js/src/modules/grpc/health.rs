//! `client.healthCheck([service])` (k6 1.2.0+): one `grpc.health.v1.Health/Check` call on
//! the client's connection, as grpc-go's health client makes it, without the script loading
//! the protocol's `.proto`.

use std::rc::Rc;

use boa_engine::object::ObjectInitializer;
use boa_engine::property::{Attribute, PropertyDescriptor};
use boa_engine::{js_string, Context, JsResult, JsValue};
use bytes::Bytes;
use prost::Message;
use rk6_http::grpc::{code, GrpcCall, GrpcConn};

use super::client::state_of;
use super::details;
use super::instance::{count_bytes, Grpc};
use crate::host::Host;
use crate::modules::go_error::go_error;

const CHECK: &str = "/grpc.health.v1.Health/Check";

#[derive(Clone, PartialEq, Message)]
struct HealthCheckRequest {
    #[prost(string, tag = "1")]
    service: String,
}

#[derive(Clone, PartialEq, Message)]
struct HealthCheckResponse {
    #[prost(int32, tag = "1")]
    status: i32,
}

/// `client.healthCheck(service)`: `{status}`, the serving status (`=== grpc.HealthCheckServing`),
/// as k6's code returns it; `message.status` too (not enumerable), as k6's documentation
/// reads it. A failed call throws grpc-go's error (`rpc error: code = NotFound desc = …`).
/// Its `grpc_req_duration` sample has the VU's tags and `status` only: k6 makes the call
/// with the VU's context, as it does reflection's.
pub(super) fn health_check(
    grpc: &Rc<Grpc>,
    this: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let state = state_of(this)?;
    let host = Host::of(ctx);
    host.check_interrupted()?;
    let Some(mut conn) = state.live_connection(&host)? else {
        return Err(go_error(
            "no gRPC connection, you must call connect first",
            ctx,
        ));
    };
    let service = match a.first() {
        Some(v) if !v.is_null_or_undefined() => v.to_string(ctx)?.to_std_string_escaped(),
        _ => String::new(),
    };
    let message = HealthCheckRequest { service }.encode_to_vec();
    let max_receive = state.max_receive();
    let call = |conn: Rc<GrpcConn>| {
        let message = Bytes::from(message.clone());
        async move {
            conn.unary(GrpcCall {
                path: CHECK,
                metadata: &[],
                message,
                // The VU's context: no deadline.
                timeout: None,
                max_receive,
            })
            .await
        }
    };
    let mut reply = host.block_on("invoking RPC methods", call(conn.clone()))?;
    if reply.unsent {
        // As a unary call: sent again on a new connection when the old one had ended.
        if let Some(fresh) = state.redial(&host)? {
            conn = fresh;
            reply = host.block_on("invoking RPC methods", call(conn.clone()))?;
        }
    }
    let types = grpc.types_for(&reply);
    details::apply(&mut reply, &types);
    count_bytes(&host, &conn);
    grpc.emit_reflection(&host, reply.duration, reply.code);
    if reply.code != code::OK {
        return Err(go_error(
            &format!(
                "rpc error: code = {} desc = {}",
                code::name(reply.code),
                reply.message
            ),
            ctx,
        ));
    }
    let body = reply.body.unwrap_or_default();
    let response = HealthCheckResponse::decode(body).map_err(|e| {
        go_error(
            &format!(
                "rpc error: code = Internal desc = grpc: failed to unmarshal the received message: {e}"
            ),
            ctx,
        )
    })?;
    let status = grpc.health_status(response.status, ctx)?;
    let message = ObjectInitializer::new(ctx)
        .property(js_string!("status"), status.clone(), Attribute::all())
        .build();
    let out = ObjectInitializer::new(ctx)
        .property(js_string!("status"), status, Attribute::all())
        .build();
    out.define_property_or_throw(
        js_string!("message"),
        PropertyDescriptor::builder()
            .value(message)
            .writable(true)
            .enumerable(false)
            .configurable(true),
        ctx,
    )?;
    Ok(out.into())
}
