//! k6/net/grpc's per-VU state: the metric ids, pending `asyncInvoke`s, and the samples a
//! finished call emits.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context as TaskContext, Poll};
use std::time::SystemTime;

use boa_engine::builtins::promise::ResolvingFunctions;
use boa_engine::object::FunctionObjectBuilder;
use boa_engine::property::PropertyDescriptor;
use boa_engine::{js_string, Context, JsObject, JsResult, JsString, JsValue, NativeFunction};
use prost_reflect::DescriptorPool;
use rk6_http::grpc::{code, GrpcConn, GrpcReply};
use rk6_metrics::metric::{MetricId, MetricType, ValueType};

use super::client::{finish, run, Prepared};
use super::details::Types;
use super::stream::{poll_streams, settle_stream, StreamState};
use crate::host::event_loop::Pending;
use crate::host::instances::ModuleInstance;
use crate::host::tags::Pairs;
use crate::host::Host;

/// The signature of the client methods.
pub(super) type GrpcFn = crate::host::instances::InstanceFn<Grpc>;

/// One VU's k6/net/grpc.
pub(crate) struct Grpc {
    /// `grpc_req_duration`, registered when a VU first imports the module (k6 has it always).
    req_duration: Option<MetricId>,
    /// `grpc_streams`, `grpc_streams_msgs_sent`, `grpc_streams_msgs_received`.
    stream_ids: [Option<MetricId>; 3],
    /// Streams open, or ended with events not delivered yet.
    pub(super) streams: RefCell<Vec<Rc<StreamState>>>,
    /// `asyncInvoke` calls not settled yet.
    pub(super) calls: AsyncCalls,
    /// The status code objects, made with the module (see [`Grpc::status`]).
    statuses: RefCell<Vec<JsObject>>,
    /// The health-check serving status objects (see [`Grpc::health_status`]).
    health_statuses: RefCell<Vec<JsObject>>,
    /// The descriptors of the VU's clients, which error details resolve among as k6 1.1.0
    /// resolves them among every type its clients loaded.
    pools: RefCell<Vec<Weak<RefCell<DescriptorPool>>>>,
}

impl ModuleInstance for Grpc {
    fn make(host: &Host) -> Rc<Self> {
        let registry = &host.shared.registry;
        let req_duration = registry
            .register("grpc_req_duration", MetricType::Trend, ValueType::Time)
            .ok();
        // Registered with the module, as k6 does, so thresholds on them are valid.
        let stream_ids = [
            "grpc_streams",
            "grpc_streams_msgs_sent",
            "grpc_streams_msgs_received",
        ]
        .map(|name| {
            registry
                .register(name, MetricType::Counter, ValueType::Default)
                .ok()
        });
        let grpc = Rc::new(Grpc {
            req_duration,
            stream_ids,
            streams: RefCell::new(Vec::new()),
            calls: AsyncCalls::default(),
            statuses: RefCell::new(Vec::new()),
            health_statuses: RefCell::new(Vec::new()),
            pools: RefCell::new(Vec::new()),
        });
        host.event_loop.register(grpc.clone());
        grpc
    }
}

/// The health-check serving statuses, as Go prints `HealthCheckResponse_ServingStatus`.
pub(super) const HEALTH_NAMES: [&str; 4] = ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"];

impl Grpc {
    /// The object standing for status `code`. In k6 a status is a Go `codes.Code`: an
    /// object equal (`==`) to its number, printing as its name, identical (`===`) only to
    /// the module's constant of the same code; a `Number` object with its own `toString`
    /// behaves so, and one object per code and VU keeps `===` true.
    pub(super) fn status(&self, code: u32, ctx: &mut Context) -> JsResult<JsValue> {
        if self.statuses.borrow().is_empty() {
            let mut made = Vec::with_capacity(code::NAMES.len());
            for (n, name) in code::NAMES.iter().enumerate() {
                made.push(code_object(n as u32, name, ctx)?);
            }
            *self.statuses.borrow_mut() = made;
        }
        match self.statuses.borrow().get(code as usize) {
            Some(o) => Ok(o.clone().into()),
            None => Ok(code_object(code, &code::name(code), ctx)?.into()),
        }
    }

    /// The object standing for health-check serving status `n` (k6 1.2+): as a status code,
    /// a Go enum value, `==` its number, printing as its name (`SERVING`), `===` the
    /// module's `HealthCheck*` constant of the same value.
    pub(super) fn health_status(&self, n: i32, ctx: &mut Context) -> JsResult<JsValue> {
        if self.health_statuses.borrow().is_empty() {
            let mut made = Vec::with_capacity(HEALTH_NAMES.len());
            for (i, name) in HEALTH_NAMES.iter().enumerate() {
                made.push(code_object(i as u32, name, ctx)?);
            }
            *self.health_statuses.borrow_mut() = made;
        }
        let known = usize::try_from(n)
            .ok()
            .and_then(|i| self.health_statuses.borrow().get(i).cloned());
        match known {
            Some(o) => Ok(o.into()),
            None => {
                let number = ctx.intrinsics().constructors().number().constructor();
                Ok(number.construct(&[JsValue::from(n)], None, ctx)?.into())
            }
        }
    }

    /// Counts `pool` (a new client's descriptors) among the types error details resolve in.
    pub(super) fn add_pool(&self, pool: &Rc<RefCell<DescriptorPool>>) {
        let mut pools = self.pools.borrow_mut();
        pools.retain(|p| p.strong_count() > 0);
        pools.push(Rc::downgrade(pool));
    }

    /// The types `reply`'s error details resolve among: none to gather when it has none
    /// (every successful call).
    pub(super) fn types_for(&self, reply: &GrpcReply) -> Types {
        if reply.status_details.is_none() {
            return Types::default();
        }
        self.types()
    }

    /// The types error details resolve among now.
    pub(super) fn types(&self) -> Types {
        Types {
            loaded: self
                .pools
                .borrow()
                .iter()
                .filter_map(Weak::upgrade)
                .map(|p| p.borrow().clone())
                .collect(),
        }
    }

    /// `grpc_req_duration` for a finished call, tagged as k6 tags it, and its bytes.
    pub(super) fn emit(&self, host: &Host, p: &Prepared, reply: &GrpcReply) {
        count_bytes(host, &p.conn);
        let Some(id) = self.req_duration else {
            return;
        };
        // k6 pushes the sample with the call's context, which is done once its deadline
        // passed: a call that timed out on the client side leaves no sample.
        if reply.timed_out {
            return;
        }
        let url = format!("{}{}", p.addr, p.path);
        let (service, method) = p.path[1..].split_once('/').unwrap_or((&p.path[1..], ""));
        let status = reply.code.to_string();
        let context = host.tags.borrow();
        let named = p.params.tags.iter().any(|(k, _)| k == "name") || context.get("name").is_some();
        let mut system: Pairs<'_> = Pairs::new();
        system.push(("url", url.as_str()));
        system.push(("service", service));
        system.push(("method", method));
        if !named {
            system.push(("name", p.path.as_str()));
        }
        system.push(("status", status.as_str()));
        let mut pairs = Pairs::new();
        context.pairs(&p.params.tags, &system, &mut pairs);
        let mut samples = host.samples.borrow_mut();
        let tags = samples.tags(&pairs);
        samples.push(
            id,
            tags,
            reply.duration.as_secs_f64() * 1000.0,
            SystemTime::now(),
        );
    }
}

/// The tags of a stream: its `tags` param and its system tags.
pub(super) type StreamTags = (Vec<(String, String)>, Vec<(&'static str, String)>);

impl Grpc {
    pub(super) fn streams_id(&self) -> Option<MetricId> {
        self.stream_ids[0]
    }
    pub(super) fn sent_id(&self) -> Option<MetricId> {
        self.stream_ids[1]
    }
    pub(super) fn received_id(&self) -> Option<MetricId> {
        self.stream_ids[2]
    }

    /// Adds 1 to one of the `grpc_streams*` counters with the stream's tags.
    pub(super) fn count_stream(&self, host: &Host, tags: &StreamTags, id: Option<MetricId>) {
        let Some(id) = id else {
            return;
        };
        let system: Vec<(&str, &str)> = tags.1.iter().map(|(k, v)| (*k, v.as_str())).collect();
        host.sample(id, 1.0, &tags.0, &system);
    }

    /// The `grpc_req_duration` sample k6's stats handler gives a stream when it ends (none
    /// when its own deadline ended it, as for a unary call).
    pub(super) fn emit_stream_end(&self, host: &Host, tags: &StreamTags, reply: &GrpcReply) {
        let Some(id) = self.req_duration else {
            return;
        };
        if reply.timed_out {
            return;
        }
        let status = reply.code.to_string();
        let mut system: Vec<(&str, &str)> = tags.1.iter().map(|(k, v)| (*k, v.as_str())).collect();
        system.push(("status", status.as_str()));
        host.sample(id, reply.duration.as_secs_f64() * 1000.0, &tags.0, &system);
    }
}

impl Grpc {
    /// The sample k6 emits for a call it makes with the VU's context rather than a call's
    /// (a reflection stream, `healthCheck()`): the VU's tags and `status` only.
    pub(super) fn emit_reflection(&self, host: &Host, took: std::time::Duration, code: u32) {
        let Some(id) = self.req_duration else {
            return;
        };
        let status = code.to_string();
        host.sample(
            id,
            took.as_secs_f64() * 1000.0,
            &[],
            &[("status", status.as_str())],
        );
    }
}

/// Adds what `conn` transferred since its last claim to the VU's `data_sent`/`data_received`.
pub(super) fn count_bytes(host: &Host, conn: &GrpcConn) {
    let (sent, received) = conn.claim_bytes();
    host.data_sent.set(host.data_sent.get() + sent);
    host.data_received.set(host.data_received.get() + received);
}

fn code_object(code: u32, name: &str, ctx: &mut Context) -> JsResult<JsObject> {
    let number = ctx.intrinsics().constructors().number().constructor();
    let obj = number.construct(&[JsValue::from(code)], None, ctx)?;
    let text = JsString::from(name);
    let to_string = FunctionObjectBuilder::new(
        ctx.realm(),
        NativeFunction::from_copy_closure_with_captures(
            |_, _, text: &JsString, _| Ok(text.clone().into()),
            text,
        ),
    )
    .name(js_string!("toString"))
    .build();
    obj.define_property_or_throw(
        js_string!("toString"),
        PropertyDescriptor::builder()
            .value(to_string)
            .writable(true)
            .enumerable(false)
            .configurable(true),
        ctx,
    )?;
    Ok(obj)
}

type Call = Pin<Box<dyn Future<Output = GrpcReply>>>;

/// One `asyncInvoke` in flight or finished but not settled yet.
struct AsyncCall {
    call: Option<Call>,
    done: Option<GrpcReply>,
    prepared: Rc<Prepared>,
    resolvers: ResolvingFunctions,
}

/// The VU's pending `asyncInvoke`s.
#[derive(Default)]
pub(super) struct AsyncCalls {
    calls: RefCell<Vec<AsyncCall>>,
}

impl AsyncCalls {
    /// Starts `prepared`; `resolvers` settle its promise.
    pub(super) fn start(&self, prepared: Prepared, resolvers: ResolvingFunctions) {
        let prepared = Rc::new(prepared);
        let p = prepared.clone();
        self.calls.borrow_mut().push(AsyncCall {
            call: Some(Box::pin(async move { run(&p).await })),
            done: None,
            prepared,
            resolvers,
        });
    }
}

impl Pending for Grpc {
    fn what(&self) -> &'static str {
        "grpc asyncInvoke or stream"
    }

    fn in_flight(&self) -> bool {
        !self.calls.calls.borrow().is_empty() || !self.streams.borrow().is_empty()
    }

    fn poll(&self, cx: &mut TaskContext<'_>) -> bool {
        let streams: Vec<Rc<StreamState>> = self.streams.borrow().clone();
        let mut any = poll_streams(&streams, cx);
        let mut calls = self.calls.calls.borrow_mut();
        for c in calls.iter_mut() {
            if let Some(call) = &mut c.call {
                if let Poll::Ready(reply) = call.as_mut().poll(cx) {
                    c.done = Some(reply);
                    c.call = None;
                }
            }
            any |= c.done.is_some();
        }
        any
    }

    fn settle(&self, ctx: &mut Context) -> JsResult<bool> {
        // Handlers may open streams or write: no borrow is held while they run.
        let streams: Vec<Rc<StreamState>> = self.streams.borrow().clone();
        let mut settled = false;
        for s in &streams {
            settled |= settle_stream(self, s, ctx)?;
        }
        if settled {
            self.streams.borrow_mut().retain(|s| !s.is_ended());
        }
        let done: Vec<AsyncCall> = {
            let mut calls = self.calls.calls.borrow_mut();
            if !calls.iter().any(|c| c.done.is_some()) {
                return Ok(settled);
            }
            let (done, running) = calls.drain(..).partition(|c| c.done.is_some());
            *calls = running;
            done
        };
        let host = Host::of(ctx);
        for c in done {
            let reply = c.done.expect("partitioned on done");
            match finish(self, &host, &c.prepared, reply, ctx) {
                Ok(v) => c.resolvers.resolve.call(&JsValue::undefined(), &[v], ctx)?,
                Err(e) => {
                    let e = e.into_opaque(ctx)?;
                    c.resolvers.reject.call(&JsValue::undefined(), &[e], ctx)?
                }
            };
        }
        Ok(true)
    }

    fn clear(&self) {
        self.streams.borrow_mut().clear();
        self.calls.calls.borrow_mut().clear();
    }
}
