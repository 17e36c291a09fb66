//! `new grpc.Client()`: `load`/`loadProtoset` (init context), `connect`, `invoke`,
//! `asyncInvoke`, `healthCheck` and `close`. A client holds its descriptors and its one
//! connection.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use boa_engine::object::builtins::{JsArray, JsPromise};
use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, Finalize, JsData, JsNativeError, JsObject, JsResult, JsString, JsValue,
    Trace,
};
use prost_reflect::{DescriptorPool, MethodDescriptor};
use rk6_http::grpc::{GrpcCall, GrpcConn, GrpcConnectOptions, GrpcReply};

use super::convert::{decode_reply, encode_request};
use super::details;
use super::health::health_check;
use super::instance::{count_bytes, Grpc};
use super::params::{CallParams, ConnectParams};
use super::proto::{self, MethodInfo};
use super::reflect;
use super::request::request_text;
use crate::host::instances::bound;
use crate::host::{Host, Phase};
use crate::modules::go_error::{go_error, go_value};

/// gRPC's default limit on a received message (4 MiB), as grpc-go has it.
const DEFAULT_MAX_RECEIVE: usize = 4 * 1024 * 1024;

/// The state behind one `grpc.Client` object.
#[derive(Default)]
pub(super) struct ClientState {
    /// Shared with the module instance, where error details resolve among every client's.
    pool: Rc<RefCell<DescriptorPool>>,
    conn: RefCell<Option<Rc<GrpcConn>>>,
    addr: RefCell<String>,
    max_receive: Cell<usize>,
    /// `maxSendSize` of the last `connect()` (none: no limit).
    max_send: Cell<Option<usize>>,
    /// How the last `connect()` dialed, to dial again when the server ends the connection.
    dial: RefCell<Option<(GrpcConnectOptions, Duration)>>,
}

/// grpc-go's text for a request over `maxSendSize`.
pub(super) fn too_large(len: usize, max: usize) -> String {
    format!("trying to send message larger than max ({len} vs. {max})")
}

/// The JS object's data: its state.
#[derive(Trace, Finalize, JsData)]
struct ClientObject(#[unsafe_ignore_trace] Rc<ClientState>);

/// `new grpc.Client()`.
pub(super) fn new_client(
    grpc: &Rc<Grpc>,
    _: &JsValue,
    _: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let methods: [(&str, usize, super::instance::GrpcFn); 7] = [
        ("load", 2, load),
        ("loadProtoset", 1, load_protoset),
        ("connect", 2, connect),
        ("invoke", 3, invoke),
        ("asyncInvoke", 3, async_invoke),
        ("healthCheck", 1, health_check),
        ("close", 0, close),
    ];
    let realm = ctx.realm().clone();
    let state = Rc::new(ClientState::default());
    state.max_receive.set(DEFAULT_MAX_RECEIVE);
    grpc.add_pool(&state.pool);
    let mut init = ObjectInitializer::with_native_data(ClientObject(state), ctx);
    for (name, len, f) in methods {
        let func = FunctionObjectBuilder::new(&realm, bound(grpc, f))
            .name(JsString::from(name))
            .length(len)
            .build();
        init.property(
            JsString::from(name),
            func,
            Attribute::WRITABLE | Attribute::CONFIGURABLE,
        );
    }
    Ok(init.build().into())
}

pub(super) fn state_of(this: &JsValue) -> JsResult<Rc<ClientState>> {
    this.as_object()
        .and_then(|o| o.downcast_ref::<ClientObject>().map(|c| c.0.clone()))
        .ok_or_else(|| {
            JsNativeError::typ()
                .with_message("this is not a grpc.Client")
                .into()
        })
}

fn string(v: Option<&JsValue>, ctx: &mut Context) -> JsResult<String> {
    Ok(v.cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped())
}

/// `client.load(importPaths, ...protoFiles)`.
fn load(_: &Rc<Grpc>, this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let state = state_of(this)?;
    let host = Host::of(ctx);
    if host.phase.get() != Phase::Init {
        return Err(go_error("load must be called in the init context", ctx));
    }
    let mut import_paths = Vec::new();
    if let Some(arr) = a.first().and_then(JsValue::as_object) {
        let arr = JsArray::from_object(arr.clone())?;
        for i in 0..arr.length(ctx)? {
            let p = string(Some(&arr.get(i, ctx)?), ctx)?;
            let p = p.strip_prefix("file://").unwrap_or(&p).to_owned();
            import_paths.push(host.shared.program.resolve(&p, None));
        }
    }
    if import_paths.is_empty() {
        import_paths.push(host.shared.program.dir().to_path_buf());
    }
    let mut files = Vec::new();
    for v in a.iter().skip(1) {
        files.push(string(Some(v), ctx)?);
    }
    // A file found in no import path fails as Go's stat does on the first one.
    let program = host.shared.program.clone();
    let is_file =
        |p: &std::path::Path| matches!(program.stat(p), Ok(crate::script::files::Entry::File));
    for f in &files {
        if !import_paths.iter().any(|dir| is_file(&dir.join(f))) {
            let path = import_paths[0].join(f);
            return Err(go_error(
                &format!("stat {}: no such file or directory", path.display()),
                ctx,
            ));
        }
    }
    let read: proto::ReadFile =
        std::sync::Arc::new(move |p: &std::path::Path| program.read_file(p));
    let set = proto::compile(&import_paths, &files, read).map_err(|e| go_error(&e, ctx))?;
    let methods = proto::add(&mut state.pool.borrow_mut(), set).map_err(|e| go_error(&e, ctx))?;
    method_infos(&methods, ctx)
}

/// `client.loadProtoset(file)`.
fn load_protoset(
    _: &Rc<Grpc>,
    this: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let state = state_of(this)?;
    let host = Host::of(ctx);
    if host.phase.get() != Phase::Init {
        return Err(go_error("load must be called in the init context", ctx));
    }
    let path = host.shared.program.resolve(&string(a.first(), ctx)?, None);
    let bytes = host.shared.program.read_file(&path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!("stat {}: no such file or directory", path.display())
            }
            _ => format!("open {}: {e}", path.display()),
        };
        go_error(&format!("couldn't open protoset: {why}"), ctx)
    })?;
    let set = proto::decode_protoset(&bytes).map_err(|e| go_error(&e, ctx))?;
    let methods = proto::add(&mut state.pool.borrow_mut(), set).map_err(|e| go_error(&e, ctx))?;
    method_infos(&methods, ctx)
}

fn method_infos(methods: &[MethodInfo], ctx: &mut Context) -> JsResult<JsValue> {
    let arr = JsArray::new(ctx)?;
    for m in methods {
        let obj = ObjectInitializer::new(ctx)
            .property(
                js_string!("package"),
                JsString::from(m.package.as_str()),
                Attribute::all(),
            )
            .property(
                js_string!("service"),
                JsString::from(m.service.as_str()),
                Attribute::all(),
            )
            .property(
                js_string!("full_method"),
                JsString::from(m.full_method.as_str()),
                Attribute::all(),
            )
            .property(
                js_string!("name"),
                JsString::from(m.name.as_str()),
                Attribute::all(),
            )
            .property(
                js_string!("is_client_stream"),
                m.client_streaming,
                Attribute::all(),
            )
            .property(
                js_string!("is_server_stream"),
                m.server_streaming,
                Attribute::all(),
            )
            .build();
        arr.push(obj, ctx)?;
    }
    Ok(arr.into())
}

/// `client.connect(address, params)`.
fn connect(grpc: &Rc<Grpc>, this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let state = state_of(this)?;
    let host = Host::of(ctx);
    if host.phase.get() == Phase::Init {
        return Err(go_error(
            "connecting to a gRPC server in the init context is not supported",
            ctx,
        ));
    }
    host.check_interrupted()?;
    let addr = string(a.first(), ctx)?;
    let params = ConnectParams::from_js(a.get(1), &host, ctx)?
        .map_err(|e| go_error(&format!("invalid grpc.connect() parameters: {e}"), ctx))?;
    let mut client_cert = params.client_cert.clone();
    if let (Some((_, key)), Some(pw)) = (client_cert.as_mut(), &params.key_password) {
        // As k6: an empty password leaves the key as it is.
        if !pw.is_empty() {
            *key = rk6_http::decrypt_legacy_pem_key(key, pw.as_bytes())
                .map_err(|e| go_error(&e, ctx))?;
        }
    }
    let opts = GrpcConnectOptions {
        plaintext: params.plaintext,
        ca_pem: params.ca_pem.clone(),
        client_cert,
        authority: params.authority.clone(),
    };
    let client = host.http.clone();
    let conn = host
        .block_on(
            "connecting to a gRPC server",
            client.grpc_connect(&addr, &opts, params.timeout),
        )?
        .map_err(|e| {
            let why = e.detail.as_deref().unwrap_or(&e.message);
            // grpc-go words a failed TLS handshake apart from a failed dial, and retries
            // what it deems temporary (a failed handshake, a blocked name) until the connect
            // timeout ends, hence k6's prefix; rk6 fails at once.
            let (prefix, stage) = match e.code {
                1300..1400 => (
                    "context deadline exceeded: ",
                    "authentication handshake failed",
                ),
                1110 | 1111 => ("context deadline exceeded: ", "error while dialing"),
                _ => ("", "error while dialing"),
            };
            go_error(
                &format!("{prefix}connection error: desc = \"transport: {stage}: {why}\""),
                ctx,
            )
        })?;
    let conn = Rc::new(conn);
    if params.reflect {
        let mut refused_v1 = None;
        let set = host.block_on(
            "connecting to a gRPC server",
            reflect::file_descriptors(
                &conn,
                &params.reflect_metadata,
                params.timeout,
                &mut refused_v1,
            ),
        )?;
        if let Some(took) = refused_v1 {
            grpc.emit_reflection(&host, took, rk6_http::grpc::code::UNIMPLEMENTED);
        }
        let set = set.map_err(|e| go_error(&e, ctx))?;
        proto::add(&mut state.pool.borrow_mut(), set)
            .map_err(|e| go_error(&format!("can't convert method info: {e}"), ctx))?;
    }
    if let Some(max) = params.max_receive {
        state.max_receive.set(max);
    }
    state.max_send.set(params.max_send);
    count_bytes(&host, &conn);
    *state.addr.borrow_mut() = addr;
    *state.dial.borrow_mut() = Some((opts, params.timeout));
    if let Some(old) = state.conn.borrow_mut().replace(conn) {
        count_bytes(&host, &old);
    }
    Ok(true.into())
}

impl ClientState {
    /// The open connection, if any.
    pub(super) fn connection(&self) -> Option<Rc<GrpcConn>> {
        self.conn.borrow().clone()
    }
    /// The connection for a new call or stream. As grpc-go's client does, a connection the
    /// server ended (a GOAWAY for its maximum connection age, a dropped socket) is dialed
    /// again with `connect()`'s settings, so the VU's next calls go on; if that dial fails
    /// the call fails on the old one with `Unavailable`.
    pub(super) fn live_connection(&self, host: &Host) -> JsResult<Option<Rc<GrpcConn>>> {
        let Some(conn) = self.connection() else {
            return Ok(None);
        };
        if !conn.is_closed() {
            return Ok(Some(conn));
        }
        Ok(Some(self.redial(host)?.unwrap_or(conn)))
    }

    /// Dials the last `connect()`'s address again; `None` when that fails.
    pub(super) fn redial(&self, host: &Host) -> JsResult<Option<Rc<GrpcConn>>> {
        let Some((opts, timeout)) = self.dial.borrow().clone() else {
            return Ok(None);
        };
        let addr = self.address();
        let client = host.http.clone();
        let dialed = host.block_on(
            "connecting to a gRPC server",
            client.grpc_connect(&addr, &opts, timeout),
        )?;
        let Ok(conn) = dialed else {
            return Ok(None);
        };
        let conn = Rc::new(conn);
        if let Some(old) = self.conn.borrow_mut().replace(conn.clone()) {
            count_bytes(host, &old);
        }
        Ok(Some(conn))
    }

    /// The address `connect()` was given.
    pub(super) fn address(&self) -> String {
        self.addr.borrow().clone()
    }
    /// Largest message accepted.
    pub(super) fn max_receive(&self) -> usize {
        self.max_receive.get()
    }

    /// Largest message sent, if limited.
    pub(super) fn max_send(&self) -> Option<usize> {
        self.max_send.get()
    }
}

/// The descriptor of `path`, or k6's error text.
pub(super) fn method_of(state: &ClientState, path: &str) -> Result<MethodDescriptor, String> {
    proto::method(&state.pool.borrow(), path)
        .ok_or_else(|| format!("method {path:?} not found in file descriptors"))
}

/// A call ready to go: everything but the connection's answer.
pub(super) struct Prepared {
    pub(super) conn: Rc<GrpcConn>,
    pub(super) path: String,
    pub(super) message: Vec<u8>,
    pub(super) params: CallParams,
    pub(super) method: MethodDescriptor,
    pub(super) addr: String,
    pub(super) max_receive: usize,
    pub(super) max_send: Option<usize>,
}

fn prepare(this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<Prepared> {
    let state = state_of(this)?;
    let host = Host::of(ctx);
    if host.phase.get() == Phase::Init {
        return Err(go_error(
            "invoking RPC methods in the init context is not supported",
            ctx,
        ));
    }
    host.check_interrupted()?;
    let Some(conn) = state.live_connection(&host)? else {
        return Err(go_error(
            "no gRPC connection, you must call connect first",
            ctx,
        ));
    };
    let mut path = string(a.first(), ctx)?;
    if path.is_empty() {
        return Err(go_error("method to invoke cannot be empty", ctx));
    }
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    let Some(method) = proto::method(&state.pool.borrow(), &path) else {
        return Err(go_error(
            &format!("method {path:?} not found in file descriptors"),
            ctx,
        ));
    };
    let params = CallParams::from_js(a.get(2), ctx)?.map_err(|e| {
        go_error(
            &format!("invalid GRPC's client.invoke() parameters: {e}"),
            ctx,
        )
    })?;
    let req = match a.get(1) {
        Some(v) if !v.is_null() && !v.is_undefined() => v.clone(),
        _ => return Err(go_error("request cannot be nil", ctx)),
    };
    // Since k6 1.2.0 a unary request's NaN and infinities go as protojson's strings.
    let text = request_text(&req, true, ctx)?;
    let message = encode_request(&method.input(), &text).map_err(|e| {
        go_error(
            &format!("unable to serialise request object to protocol buffer: {e}"),
            ctx,
        )
    })?;
    let addr = state.addr.borrow().clone();
    Ok(Prepared {
        conn,
        path,
        message,
        params,
        method,
        addr,
        max_receive: state.max_receive.get(),
        max_send: state.max_send.get(),
    })
}

/// Runs a prepared call to its reply.
pub(super) async fn run(p: &Prepared) -> GrpcReply {
    if let Some(max) = p.max_send.filter(|&m| p.message.len() > m) {
        // grpc-go refuses before the message goes: a failed call, not a thrown error.
        return GrpcReply {
            code: rk6_http::grpc::code::RESOURCE_EXHAUSTED,
            message: too_large(p.message.len(), max),
            started: Some(std::time::Instant::now()),
            ..GrpcReply::default()
        };
    }
    p.conn
        .unary(GrpcCall {
            path: &p.path,
            metadata: &p.params.metadata,
            message: p.message.clone().into(),
            timeout: Some(p.params.timeout.unwrap_or(Duration::from_secs(120))),
            max_receive: p.max_receive,
        })
        .await
}

/// `client.invoke(method, request, params)`.
fn invoke(grpc: &Rc<Grpc>, this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let mut p = prepare(this, a, ctx)?;
    let host = Host::of(ctx);
    let mut reply = host.block_on("invoking RPC methods", run(&p))?;
    if reply.unsent {
        // The connection ended between the check and the call (a GOAWAY racing it):
        // grpc-go sends such a call again on a new connection, as it never reached the server.
        if let Some(conn) = state_of(this)?.redial(&host)? {
            p.conn = conn;
            reply = host.block_on("invoking RPC methods", run(&p))?;
        }
    }
    finish(grpc, &host, &p, reply, ctx)
}

/// `client.asyncInvoke(method, request, params)`: the call as a promise, driven by the
/// VU's event loop while its JS goes on.
fn async_invoke(
    grpc: &Rc<Grpc>,
    this: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    match prepare(this, a, ctx) {
        Ok(p) => {
            let (promise, resolvers) = JsPromise::new_pending(ctx);
            grpc.calls.start(p, resolvers);
            Ok(promise.into())
        }
        Err(e) if e.as_engine().is_some() => Err(e),
        // k6 rejects with the Go error itself, not a GoError exception.
        Err(e) => {
            let message = e
                .try_native(ctx)
                .map(|n| n.message().to_string())
                .unwrap_or_else(|_| e.to_string());
            let value = go_value(&message, false, ctx);
            Ok(JsPromise::reject(value, ctx)?.into())
        }
    }
}

/// The reply as the script sees it, after its samples.
pub(super) fn finish(
    grpc: &Grpc,
    host: &Host,
    p: &Prepared,
    mut reply: GrpcReply,
    ctx: &mut Context,
) -> JsResult<JsValue> {
    // The details trailer can change the status (grpc-go fails a mismatch `Internal`).
    let types = grpc.types_for(&reply);
    let details = details::apply(&mut reply, &types);
    grpc.emit(host, p, &reply);
    let message = if p.params.discard_response_message {
        JsValue::null()
    } else {
        let bytes = reply.body.as_deref().unwrap_or(&[]);
        let json = decode_reply(&p.method.output(), bytes).map_err(|e| go_error(&e, ctx))?;
        JsValue::from_json(&json, ctx)?
    };
    let error = if reply.code == 0 {
        JsValue::null()
    } else {
        let json = details::protojson_error(reply.code, &reply.message, &details, &types);
        JsValue::from_json(&json, ctx)?
    };
    let status = grpc.status(reply.code, ctx)?;
    let headers = metadata_object(&reply.headers, ctx)?;
    let trailers = metadata_object(&reply.trailers, ctx)?;
    let obj = ObjectInitializer::new(ctx)
        .property(js_string!("status"), status, Attribute::all())
        .property(js_string!("message"), message, Attribute::all())
        .property(js_string!("headers"), headers, Attribute::all())
        .property(js_string!("trailers"), trailers, Attribute::all())
        .property(js_string!("error"), error, Attribute::all())
        .build();
    Ok(obj.into())
}

/// Metadata as gRPC's `MD` reaches JS: each name with the array of its values.
fn metadata_object(pairs: &[(String, String)], ctx: &mut Context) -> JsResult<JsObject> {
    let obj = JsObject::with_object_proto(ctx.intrinsics());
    for (k, v) in pairs {
        let key = JsString::from(k.as_str());
        let existing = obj.get(key.clone(), ctx)?;
        let arr = match existing.as_object() {
            Some(a) => JsArray::from_object(a.clone())?,
            None => {
                let a = JsArray::new(ctx)?;
                obj.set(key, a.clone(), false, ctx)?;
                a
            }
        };
        arr.push(JsString::from(v.as_str()), ctx)?;
    }
    Ok(obj)
}

/// `client.close()`.
fn close(_: &Rc<Grpc>, this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let state = state_of(this)?;
    if let Some(conn) = state.conn.borrow_mut().take() {
        count_bytes(&Host::of(ctx), &conn);
    }
    Ok(JsValue::undefined())
}
