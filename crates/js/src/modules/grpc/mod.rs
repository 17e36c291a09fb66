//! The `k6/net/grpc` module: `Client` (descriptors from `.proto` files, a protoset or server
//! reflection; one HTTP/2 connection; unary `invoke`/`asyncInvoke`), `Stream`,
//! the status constants, and the `grpc_req_duration`/`grpc_streams*` samples. The transport
//! is `rk6_http::grpc`.

mod client;
mod convert;
mod instance;
mod params;
mod proto;
mod reflect;
mod stream;

use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{Context, JsString, JsValue, Module};

use crate::host::instances::native;
use crate::host::Host;
use crate::modules::synthetic::from_object;
use instance::Grpc;

/// gRPC's status codes, as k6 exports them.
const STATUSES: &[(&str, u32)] = &[
    ("StatusOK", 0),
    ("StatusCanceled", 1),
    ("StatusUnknown", 2),
    ("StatusInvalidArgument", 3),
    ("StatusDeadlineExceeded", 4),
    ("StatusNotFound", 5),
    ("StatusAlreadyExists", 6),
    ("StatusPermissionDenied", 7),
    ("StatusResourceExhausted", 8),
    ("StatusFailedPrecondition", 9),
    ("StatusAborted", 10),
    ("StatusOutOfRange", 11),
    ("StatusUnimplemented", 12),
    ("StatusInternal", 13),
    ("StatusUnavailable", 14),
    ("StatusDataLoss", 15),
    ("StatusUnauthenticated", 16),
    ("HealthCheckUnknown", 0),
    ("HealthCheckServing", 1),
    ("HealthCheckNotServing", 2),
    ("HealthCheckServiceUnkown", 3),
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
    // Status codes are the objects replies carry, health-check states plain numbers.
    let mut values = Vec::with_capacity(STATUSES.len());
    for (i, (_, code)) in STATUSES.iter().enumerate() {
        values.push(if i < 17 {
            grpc.status(*code, ctx)
                .unwrap_or_else(|_| JsValue::from(*code))
        } else {
            JsValue::from(*code)
        });
    }
    let mut init = ObjectInitializer::new(ctx);
    let mut names = Vec::new();
    init.property(JsString::from("Client"), client, Attribute::all());
    names.push(JsString::from("Client"));
    for ((name, _), value) in STATUSES.iter().zip(values) {
        init.property(JsString::from(*name), value, Attribute::all());
        names.push(JsString::from(*name));
    }
    init.property(JsString::from("Stream"), stream, Attribute::all());
    names.push(JsString::from("Stream"));
    let object = init.build();
    from_object(object, names, ctx)
}
