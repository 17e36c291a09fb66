//! `new grpc.Stream(client, method, params)`: client-, server- and bidirectional streams on
//! the VU's event loop, with k6's `data`/`error`/`end` events and `grpc_streams*` samples.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll};
use std::time::{SystemTime, UNIX_EPOCH};

use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, Finalize, JsData, JsNativeError, JsObject, JsResult, JsString, JsValue,
    Trace,
};
use prost_reflect::MethodDescriptor;
use rk6_http::grpc::{code, GrpcReply, GrpcStreamCall, GrpcStreamWriter, StreamEvent};

use super::client::{method_of, state_of, too_large};
use super::convert::{decode_stream_message, encode_request};
use super::details;
use super::instance::{count_bytes, Grpc, StreamTags};
use super::params::CallParams;
use super::request::request_text;
use crate::host::instances::bound;
use crate::host::Host;
use crate::modules::go_error::go_error;

type Run = Pin<Box<dyn Future<Output = ()>>>;

/// One open stream.
pub(super) struct StreamState {
    run: RefCell<Option<Run>>,
    events: Rc<RefCell<VecDeque<StreamEvent>>>,
    writer: RefCell<GrpcStreamWriter>,
    writing: Cell<bool>,
    listeners: RefCell<Vec<(String, JsObject)>>,
    method: MethodDescriptor,
    conn: Rc<rk6_http::grpc::GrpcConn>,
    discard: bool,
    /// The stream's tags without `status`: the `tags` param, then the system tags.
    pub(super) tags: StreamTags,
    ended: Cell<bool>,
    /// `maxSendSize` of the client's connection.
    max_send: Option<usize>,
    /// When the stream was opened (the duration of a stream cut short here).
    opened: std::time::Instant,
    /// A write ended the stream (see [`Failure`]).
    failure: Cell<Option<Failure>>,
}

/// How a write can end a stream in k6.
#[derive(Clone, Copy, PartialEq)]
enum Failure {
    /// Over `maxSendSize`: grpc-go ends the call `ResourceExhausted`, and k6 reports that
    /// error twice, from its writer and its reader, around `end`.
    TooLarge,
    /// A message protojson refuses: k6's writer reports `Unknown` with the error once,
    /// then `end` (k6 then leaves the call open and the iteration waiting forever; rk6
    /// cancels it, with no `grpc_req_duration` sample, as k6 gives none).
    Unserialisable,
}

#[derive(Trace, Finalize, JsData)]
struct StreamObject(#[unsafe_ignore_trace] Rc<StreamState>);

/// `new grpc.Stream(client, method, params)`.
pub(super) fn new_stream(
    grpc: &Rc<Grpc>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    host.check_interrupted()?;
    let client = match a.first() {
        Some(v) if !v.is_null_or_undefined() => state_of(v)
            .map_err(|_| go_error("invalid GRPC Stream's client: not a gRPC client", ctx))?,
        _ => {
            return Err(go_error(
                "invalid GRPC Stream's client: empty gRPC client",
                ctx,
            ))
        }
    };
    let Some(conn) = client.live_connection(&host)? else {
        return Err(go_error(
            "invalid GRPC Stream's client: no gRPC connection, you must call connect first",
            ctx,
        ));
    };
    let mut path = a
        .get(1)
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    let method = method_of(&client, &path)
        .map_err(|e| go_error(&format!("invalid GRPC Stream's method: {e}"), ctx))?;
    let params = CallParams::from_js(a.get(2), ctx)?
        .map_err(|e| go_error(&format!("invalid GRPC Stream's parameters: {e}"), ctx))?;
    let tags = (
        params.tags.clone(),
        system_tags(&host, &params.tags, &client.address(), &path),
    );
    let events = Rc::new(RefCell::new(VecDeque::new()));
    let sink = events.clone();
    let (writer, run) = conn.open_stream(
        GrpcStreamCall {
            path: &path,
            metadata: &params.metadata,
            timeout: params.timeout,
            max_receive: client.max_receive(),
        },
        move |e| sink.borrow_mut().push_back(e),
    );
    let state = Rc::new(StreamState {
        run: RefCell::new(Some(Box::pin(run))),
        events,
        writer: RefCell::new(writer),
        writing: Cell::new(true),
        listeners: RefCell::new(Vec::new()),
        method,
        conn,
        discard: params.discard_response_message,
        tags,
        ended: Cell::new(false),
        max_send: client.max_send(),
        opened: std::time::Instant::now(),
        failure: Cell::new(None),
    });
    grpc.count_stream(&host, &state.tags, grpc.streams_id());
    grpc.streams.borrow_mut().push(state.clone());

    let realm = ctx.realm().clone();
    let mut init = ObjectInitializer::with_native_data(StreamObject(state), ctx);
    let methods: [(&str, usize, super::instance::GrpcFn); 3] =
        [("on", 2, on), ("write", 1, write), ("end", 0, end)];
    for (name, len, f) in methods {
        let func = FunctionObjectBuilder::new(&realm, bound(grpc, f))
            .name(JsString::from(name))
            .length(len)
            .build();
        init.property(JsString::from(name), func, Attribute::CONFIGURABLE);
    }
    Ok(init.build().into())
}

/// The system tags k6 gives a stream (a unary call's, `status` aside).
fn system_tags(
    host: &Host,
    user: &[(String, String)],
    addr: &str,
    path: &str,
) -> Vec<(&'static str, String)> {
    let (service, method) = path[1..].split_once('/').unwrap_or((&path[1..], ""));
    let named = user.iter().any(|(k, _)| k == "name") || host.tags.borrow().get("name").is_some();
    let mut out = vec![
        ("url", format!("{addr}{path}")),
        ("service", service.to_owned()),
        ("method", method.to_owned()),
    ];
    if !named {
        out.push(("name", path.to_owned()));
    }
    out
}

fn stream_of(this: &JsValue) -> JsResult<Rc<StreamState>> {
    this.as_object()
        .and_then(|o| o.downcast_ref::<StreamObject>().map(|s| s.0.clone()))
        .ok_or_else(|| {
            JsNativeError::typ()
                .with_message("this is not a grpc.Stream")
                .into()
        })
}

/// `stream.on(event, handler)`.
fn on(_: &Rc<Grpc>, this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = stream_of(this)?;
    let event = a
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    let Some(handler) = a.get(1).and_then(JsValue::as_callable) else {
        return Err(go_error(
            &format!("handler for {event:?} event isn't a callable function"),
            ctx,
        ));
    };
    if matches!(event.as_str(), "data" | "error" | "end") {
        s.listeners.borrow_mut().push((event, handler));
    } else {
        warn(
            &Host::of(ctx),
            &format!(
                "can't register {event} event handler: unknown GRPC stream's event type: {event}"
            ),
        );
    }
    Ok(JsValue::undefined())
}

/// `stream.write(message)`.
fn write(grpc: &Rc<Grpc>, this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = stream_of(this)?;
    if !s.writing.get() {
        return Ok(JsValue::undefined());
    }
    let host = Host::of(ctx);
    let msg = match a.first() {
        Some(v) if !v.is_null_or_undefined() => v.clone(),
        _ => {
            warn(&host, "can't send empty message");
            return Ok(JsValue::undefined());
        }
    };
    // Unlike a unary call's, a write's NaN and infinities go as `null` (k6 1.2+ too).
    let text = request_text(&msg, false, ctx)?;
    let bytes = match encode_request(&s.method.input(), &text) {
        Ok(b) => b,
        Err(e) => {
            let message = format!("can't serialise request object to protocol buffer: {e}");
            fail(&s, code::UNKNOWN, message, Failure::Unserialisable);
            return Ok(JsValue::undefined());
        }
    };
    if let Some(max) = s.max_send.filter(|&m| bytes.len() > m) {
        let message = too_large(bytes.len(), max);
        fail(&s, code::RESOURCE_EXHAUSTED, message, Failure::TooLarge);
        return Ok(JsValue::undefined());
    }
    if s.writer.borrow_mut().send(&bytes) {
        grpc.count_stream(&host, &s.tags, grpc.sent_id());
    }
    Ok(JsValue::undefined())
}

/// A write that ends the stream with `code` (the request is cancelled; messages already
/// received are still delivered).
fn fail(s: &StreamState, code: u32, message: String, failure: Failure) {
    if s.failure.get().is_some() {
        return;
    }
    s.writing.set(false);
    s.writer.borrow_mut().close();
    s.run.borrow_mut().take();
    s.failure.set(Some(failure));
    let mut events = s.events.borrow_mut();
    events.retain(|e| !matches!(e, StreamEvent::End(_)));
    events.push_back(StreamEvent::End(GrpcReply {
        code,
        message,
        started: Some(s.opened),
        duration: s.opened.elapsed(),
        ..GrpcReply::default()
    }));
}

/// `stream.end()`: ends the client's half.
fn end(_: &Rc<Grpc>, this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    let s = stream_of(this)?;
    s.writing.set(false);
    s.writer.borrow_mut().close();
    Ok(JsValue::undefined())
}

/// Drives `streams`; true once some has events to deliver.
pub(super) fn poll_streams(streams: &[Rc<StreamState>], cx: &mut TaskContext<'_>) -> bool {
    let mut any = false;
    for s in streams {
        let mut run = s.run.borrow_mut();
        if let Some(r) = run.as_mut() {
            if let Poll::Ready(()) = r.as_mut().poll(cx) {
                *run = None;
            }
        }
        any |= !s.events.borrow().is_empty();
    }
    any
}

fn ts_object(ctx: &mut Context) -> JsObject {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    ObjectInitializer::new(ctx)
        .property(js_string!("ts"), secs as f64, Attribute::all())
        .build()
}

fn call_listeners(s: &StreamState, event: &str, arg: JsValue, ctx: &mut Context) -> JsResult<()> {
    let handlers: Vec<JsObject> = s
        .listeners
        .borrow()
        .iter()
        .filter(|(e, _)| e == event)
        .map(|(_, h)| h.clone())
        .collect();
    for h in handlers {
        let meta = ts_object(ctx);
        h.call(&JsValue::undefined(), &[arg.clone(), meta.into()], ctx)?;
    }
    Ok(())
}

/// Delivers a stream's events to its handlers, as k6 does: each message to `data`; at the
/// end a failed status to `error` (`{code, details, message}`) and then `end`.
pub(super) fn settle_stream(grpc: &Grpc, s: &StreamState, ctx: &mut Context) -> JsResult<bool> {
    let mut any = false;
    loop {
        let Some(event) = s.events.borrow_mut().pop_front() else {
            return Ok(any);
        };
        any = true;
        let host = Host::of(ctx);
        match event {
            StreamEvent::Message(bytes) => {
                grpc.count_stream(&host, &s.tags, grpc.received_id());
                let value = if s.discard {
                    JsValue::from(JsObject::with_object_proto(ctx.intrinsics()))
                } else {
                    let json = decode_stream_message(&s.method.output(), &bytes)
                        .map_err(|e| go_error(&e, ctx))?;
                    JsValue::from_json(&json, ctx)?
                };
                call_listeners(s, "data", value, ctx)?;
            }
            StreamEvent::End(mut reply) => {
                s.ended.set(true);
                s.writer.borrow_mut().close();
                count_bytes(&host, &s.conn);
                // The details trailer can change the status, as for a unary call.
                let types = grpc.types_for(&reply);
                let details = details::apply(&mut reply, &types);
                if s.failure.get() != Some(Failure::Unserialisable) {
                    grpc.emit_stream_end(&host, &s.tags, &reply);
                }
                if reply.code != 0 {
                    let err = error_object(grpc, &reply, &details, &types, ctx)?;
                    call_listeners(s, "error", err, ctx)?;
                }
                let empty = JsObject::with_object_proto(ctx.intrinsics());
                call_listeners(s, "end", empty.into(), ctx)?;
                if s.failure.get() == Some(Failure::TooLarge) {
                    let err = error_object(grpc, &reply, &details, &types, ctx)?;
                    call_listeners(s, "error", err, ctx)?;
                }
            }
        }
    }
}

/// The `{code, details, message}` a stream's `error` handlers get: `details` as grpc-go's
/// `status.Details()` gives them ([`details::go_details`]), `message` the error's own text
/// when the status has none.
fn error_object(
    grpc: &Grpc,
    reply: &GrpcReply,
    found: &[prost_reflect::prost_types::Any],
    types: &details::Types,
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let details = details::go_details(found, types, ctx)?;
    // k6's code here is a Go `codes.Code`, as a reply's status.
    let code = grpc.status(reply.code, ctx)?;
    let message = if reply.message.is_empty() {
        format!("rpc error: code = {} desc = ", code::name(reply.code))
    } else {
        reply.message.clone()
    };
    // Go's `String()` of k6's error, kept out of `JSON.stringify`.
    let text = JsString::from(format!("code: {}, message: {message}", reply.code));
    let to_string = boa_engine::NativeFunction::from_copy_closure_with_captures(
        |_, _, text: &JsString, _| Ok(text.clone().into()),
        text,
    );
    Ok(ObjectInitializer::new(ctx)
        .property(js_string!("code"), code, Attribute::all())
        .property(js_string!("details"), details, Attribute::all())
        .property(
            js_string!("message"),
            JsString::from(message.as_str()),
            Attribute::all(),
        )
        .function(to_string, js_string!("toString"), 0)
        .build()
        .into())
}

fn warn(host: &Host, msg: &str) {
    host.shared.logger.log(crate::log::Level::Warning, msg, &[]);
}

impl StreamState {
    /// The stream delivered its end.
    pub(super) fn is_ended(&self) -> bool {
        self.ended.get()
    }
}
