//! The `k6/net/grpc` module: `Client` (descriptors from `.proto` files, a protoset or server
//! reflection; one HTTP/2 connection; unary `invoke`/`asyncInvoke`, `healthCheck`), `Stream`,
//! the status and health-check constants, and the `grpc_req_duration`/`grpc_streams*`
//! samples. The transport is `rk6_http::grpc`.

mod client;
mod convert;
mod details;
mod health;
mod instance;
mod params;
mod proto;
mod reflect;
mod request;
mod stream;

use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{Context, JsString, JsValue, Module};
use rk6_http::grpc::code;

use crate::host::instances::native;
use crate::host::Host;
use crate::modules::synthetic::from_object;
use instance::Grpc;

/// The health-check constants k6 (1.2+) exports, by serving status.
const HEALTH_CHECKS: [&str; 4] = [
    "HealthCheckUnknown",
    "HealthCheckServing",
    "HealthCheckNotServing",
    // k6's spelling.
    "HealthCheckServiceUnkown",
];

/// The `k6/net/grpc` module of the VU `ctx` belongs to.
pub(super) fn module(ctx: &mut Context) -> Module {
    let grpc = Host::of(ctx).instance::<Grpc>();
    let realm = ctx.realm().clone();
    let client = FunctionObjectBuilder::new(&realm, native::<Grpc>(client::new_client))
        .name(JsString::from("Client"))
        .length(0)
        .constructor(true)
        .build();
    let stream = FunctionObjectBuilder::new(&realm, native::<Grpc>(stream::new_stream))
        .name(JsString::from("Stream"))
        .length(3)
        .constructor(true)
        .build();
    // Status codes are the objects replies carry (`StatusOK`…), health-check states those
    // `healthCheck()` gives; both named as gRPC's table names them.
    let mut constants = Vec::with_capacity(code::NAMES.len() + HEALTH_CHECKS.len());
    for (n, name) in code::NAMES.iter().enumerate() {
        let value = grpc
            .status(n as u32, ctx)
            .unwrap_or_else(|_| JsValue::from(n as u32));
        constants.push((format!("Status{name}"), value));
    }
    for (n, name) in HEALTH_CHECKS.iter().enumerate() {
        let value = grpc
            .health_status(n as i32, ctx)
            .unwrap_or_else(|_| JsValue::from(n as i32));
        constants.push(((*name).to_owned(), value));
    }
    let mut init = ObjectInitializer::new(ctx);
    let mut names = Vec::new();
    init.property(JsString::from("Client"), client, Attribute::all());
    names.push(JsString::from("Client"));
    for (name, value) in constants {
        init.property(JsString::from(name.as_str()), value, Attribute::all());
        names.push(JsString::from(name.as_str()));
    }
    init.property(JsString::from("Stream"), stream, Attribute::all());
    names.push(JsString::from("Stream"));
    let object = init.build();
    from_object(object, names, ctx)
}
