//! One `WebSocket` of the WebSocket API: its connection, driven by every wait of the VU
//! (the module's `Pending` source polls it), and its events, dispatched on the VU's event
//! loop in the order the I/O finished.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, SystemTime};

use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, JsNativeError, JsObject, JsResult, JsString, JsValue};
use futures_util::{Sink, Stream as _};
use rk6_http::Traffic;
use rk6_metrics::builtin;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::host::Host;
use crate::modules::ws::handshake::{Answer, Attempt, Stream};
use crate::modules::ws::samples::{close_text, ms, SessionSamples};
use crate::value::{array_buffer, define, plain_object};

/// `readyState` values.
pub(super) const CONNECTING: u8 = 0;
pub(super) const OPEN: u8 = 1;
pub(super) const CLOSING: u8 = 2;
pub(super) const CLOSED: u8 = 3;

/// The `readyState` constants of the standard, on the constructor and on every socket.
pub(super) const STATES: [(&str, u8); 4] = [
    ("CONNECTING", CONNECTING),
    ("OPEN", OPEN),
    ("CLOSING", CLOSING),
    ("CLOSED", CLOSED),
];

/// The event types, in the order of the listener slots.
const TYPES: [&str; 6] = ["open", "message", "error", "close", "ping", "pong"];

/// The connection as the I/O side sees it.
pub(super) enum Conn {
    Connecting(Pin<Box<dyn Future<Output = Attempt>>>),
    Open(Box<Stream>),
    Done,
}

/// I/O that finished and waits for the event loop.
enum Done {
    Connected(Answer, Duration, Option<Traffic>),
    Failed(Option<Answer>, String, Duration),
    Sent(usize),
    Frame(Message),
    WriteFailed(String),
    /// The stream ended (with the error that ended it, if any).
    Ended,
}

/// One socket.
pub(super) struct Socket {
    pub(super) url: String,
    pub(super) object: RefCell<Option<JsObject>>,
    pub(super) state: Cell<u8>,
    pub(super) conn: RefCell<Conn>,
    pub(super) tags: Vec<(String, String)>,
    pub(super) started: Instant,
    pub(super) started_at: SystemTime,
    outbox: RefCell<VecDeque<Message>>,
    done: RefCell<Vec<Done>>,
    buffered: Cell<usize>,
    binary_type: Cell<&'static str>,
    protocol: RefCell<String>,
    /// The answer's `Sec-WebSocket-Extensions` values (`extensions`).
    extensions: RefCell<Vec<String>>,
    /// Per event type: the `on…` handler, then the added listeners.
    listeners: RefCell<[(Option<JsObject>, Vec<JsObject>); 6]>,
    samples: RefCell<Option<SessionSamples>>,
    traffic: RefCell<Option<Traffic>>,
    pings: RefCell<Vec<(String, Instant)>>,
    ping_counter: Cell<u64>,
    /// The close code known so far (0: none): the one `close()` sent, then the one of the
    /// server's close frame. The close event carries it as `code` (k6 1.5).
    close_code: Cell<u16>,
    /// The reason of the server's close frame (the close event's `reason`).
    close_reason: RefCell<String>,
}

impl Socket {
    /// A socket connecting with `connect`.
    pub(super) fn new(
        url: String,
        tags: Vec<(String, String)>,
        connect: Pin<Box<dyn Future<Output = Attempt>>>,
    ) -> Rc<Socket> {
        Rc::new(Socket {
            url,
            object: RefCell::new(None),
            state: Cell::new(CONNECTING),
            conn: RefCell::new(Conn::Connecting(connect)),
            tags,
            started: Instant::now(),
            started_at: SystemTime::now(),
            outbox: RefCell::default(),
            done: RefCell::default(),
            buffered: Cell::new(0),
            binary_type: Cell::new("blob"),
            protocol: RefCell::default(),
            extensions: RefCell::default(),
            listeners: RefCell::default(),
            samples: RefCell::new(None),
            traffic: RefCell::new(None),
            pings: RefCell::default(),
            ping_counter: Cell::new(0),
            close_code: Cell::new(0),
            close_reason: RefCell::default(),
        })
    }

    /// Nothing left to do or to dispatch: the module forgets it.
    pub(super) fn finished(&self) -> bool {
        self.state.get() == CLOSED
            && matches!(*self.conn.borrow(), Conn::Done)
            && self.done.borrow().is_empty()
    }

    /// Some finished I/O waits for the event loop.
    pub(super) fn has_done(&self) -> bool {
        !self.done.borrow().is_empty()
    }

    /// Drives the connection: the handshake, queued writes, reads. True once something
    /// finished.
    pub(super) fn poll(&self, cx: &mut TaskContext<'_>) -> bool {
        let mut conn = self.conn.borrow_mut();
        let mut done = self.done.borrow_mut();
        let before = done.len();
        if let Conn::Connecting(fut) = &mut *conn {
            match fut.as_mut().poll(cx) {
                Poll::Pending => return false,
                Poll::Ready(attempt) => match attempt.stream {
                    Some(stream) => {
                        done.push(Done::Connected(
                            attempt.answer.unwrap_or_default(),
                            attempt.connecting,
                            attempt.traffic,
                        ));
                        *conn = Conn::Open(Box::new(stream));
                    }
                    None => {
                        if let Some(t) = &attempt.traffic {
                            *self.traffic.borrow_mut() = Some(t.clone());
                        }
                        done.push(Done::Failed(
                            attempt.answer,
                            attempt.error.unwrap_or_default(),
                            attempt.connecting,
                        ));
                        *conn = Conn::Done;
                    }
                },
            }
        }
        let mut ended = false;
        if let Conn::Open(stream) = &mut *conn {
            let mut outbox = self.outbox.borrow_mut();
            let mut pinned = Pin::new(&mut **stream);
            while !outbox.is_empty() {
                match pinned.as_mut().poll_ready(cx) {
                    Poll::Ready(Ok(())) => {
                        let msg = outbox.pop_front().expect("not empty");
                        let size = msg.len();
                        match pinned.as_mut().start_send(msg) {
                            Ok(()) => done.push(Done::Sent(size)),
                            Err(e) => {
                                done.push(Done::WriteFailed(write_text(&e)));
                                ended = true;
                                break;
                            }
                        }
                    }
                    Poll::Ready(Err(e)) => {
                        done.push(Done::WriteFailed(write_text(&e)));
                        ended = true;
                        break;
                    }
                    Poll::Pending => break,
                }
            }
            if !ended {
                let _ = pinned.as_mut().poll_flush(cx);
                loop {
                    match pinned.as_mut().poll_next(cx) {
                        Poll::Ready(Some(Ok(msg))) => done.push(Done::Frame(msg)),
                        Poll::Ready(_) => {
                            done.push(Done::Ended);
                            ended = true;
                            break;
                        }
                        Poll::Pending => break,
                    }
                }
            }
        }
        if ended {
            *conn = Conn::Done;
        }
        done.len() > before
    }

    /// Dispatches the finished I/O.
    pub(super) fn settle(&self, ctx: &mut Context) -> JsResult<()> {
        let done: Vec<Done> = std::mem::take(&mut *self.done.borrow_mut());
        let host = Host::of(ctx);
        for d in done {
            match d {
                Done::Connected(answer, connecting, traffic) => {
                    self.begin_samples(&host, Some(&answer), connecting);
                    *self.traffic.borrow_mut() = traffic;
                    *self.protocol.borrow_mut() = answer.subprotocol.clone();
                    *self.extensions.borrow_mut() = answer.extensions.clone();
                    if self.state.get() == CONNECTING {
                        self.state.set(OPEN);
                        self.fire("open", None, ctx)?;
                    }
                }
                Done::Failed(answer, error, connecting) => {
                    self.begin_samples(&host, answer.as_ref(), connecting);
                    self.count_traffic(&host);
                    self.closed_with(Some(&error), ctx)?;
                }
                Done::Sent(size) => {
                    self.buffered.set(self.buffered.get().saturating_sub(size));
                    self.sample(&host, builtin::WS_MSGS_SENT, 1.0);
                }
                Done::Frame(msg) => self.on_frame(&host, msg, ctx)?,
                Done::WriteFailed(error) => {
                    self.end_session(&host);
                    self.closed_with(Some(&error), ctx)?;
                }
                Done::Ended => {
                    if self.state.get() != CLOSED {
                        self.end_session(&host);
                        self.closed_with(Some(&close_text(1006, "unexpected EOF")), ctx)?;
                    } else {
                        self.count_traffic(&host);
                    }
                }
            }
        }
        Ok(())
    }

    fn on_frame(&self, host: &Host, msg: Message, ctx: &mut Context) -> JsResult<()> {
        match msg {
            Message::Text(_) | Message::Binary(_) => {
                if self.state.get() != OPEN {
                    return Ok(());
                }
                self.sample(host, builtin::WS_MSGS_RECEIVED, 1.0);
                let data: JsValue = match msg {
                    Message::Text(t) => JsString::from(t.as_str()).into(),
                    Message::Binary(b) if self.binary_type.get() == "arraybuffer" => {
                        array_buffer(&b, ctx)?
                    }
                    Message::Binary(b) => super::blob::from_bytes(&b, ctx)?,
                    _ => unreachable!("matched above"),
                };
                let ev = self.event("message", ctx);
                define(&ev, js_string!("data"), data);
                define(&ev, js_string!("origin"), JsString::from(self.url.as_str()));
                self.dispatch("message", ev, ctx)
            }
            Message::Ping(_) => self.fire("ping", None, ctx),
            Message::Pong(data) => {
                let id = String::from_utf8_lossy(&data).into_owned();
                let sent = {
                    let mut pings = self.pings.borrow_mut();
                    pings
                        .iter()
                        .position(|(p, _)| *p == id)
                        .map(|i| pings.remove(i).1)
                };
                if let Some(at) = sent {
                    self.sample(host, builtin::WS_PING, ms(at.elapsed()));
                }
                self.fire("pong", None, ctx)
            }
            Message::Close(frame) => {
                if self.state.get() == CLOSED {
                    return Ok(());
                }
                let (code, reason) = match &frame {
                    Some(f) => (u16::from(f.code), f.reason.to_string()),
                    None => (1005, String::new()),
                };
                self.close_code.set(code);
                *self.close_reason.borrow_mut() = reason.clone();
                self.end_session(host);
                // As Go: 1000 and 1001 are expected closes, anything else is an error.
                let error = (code != 1000 && code != 1001).then(|| close_text(code, &reason));
                self.closed_with(error.as_deref(), ctx)
            }
            Message::Frame(_) => Ok(()),
        }
    }

    /// The session's samples start: `ws_sessions` and `ws_connecting`, tagged with the
    /// answer's status and subprotocol.
    fn begin_samples(&self, host: &Host, answer: Option<&Answer>, connecting: Duration) {
        let samples = SessionSamples::new(host, &self.tags, &self.url, answer, true);
        samples.push(host, builtin::WS_SESSIONS, 1.0, self.started_at);
        samples.push(
            host,
            builtin::WS_CONNECTING,
            ms(connecting),
            self.started_at,
        );
        *self.samples.borrow_mut() = Some(samples);
    }

    fn sample(&self, host: &Host, metric: rk6_metrics::MetricId, value: f64) {
        if let Some(s) = &*self.samples.borrow() {
            s.push(host, metric, value, SystemTime::now());
        }
    }

    /// An opened session ends: its duration, and the bytes it moved so far.
    fn end_session(&self, host: &Host) {
        self.sample(
            host,
            builtin::WS_SESSION_DURATION,
            ms(self.started.elapsed()),
        );
        self.count_traffic(host);
    }

    fn count_traffic(&self, host: &Host) {
        if let Some(t) = &*self.traffic.borrow() {
            let (sent, received) = t.take();
            host.data_sent.set(host.data_sent.get() + sent);
            host.data_received.set(host.data_received.get() + received);
        }
    }

    /// CLOSED: `error` (if any), then `close`.
    fn closed_with(&self, error: Option<&str>, ctx: &mut Context) -> JsResult<()> {
        if self.state.replace(CLOSED) == CLOSED {
            return Ok(());
        }
        self.outbox.borrow_mut().clear();
        if let Some(text) = error {
            let ev = self.event("error", ctx);
            define(&ev, js_string!("error"), JsString::from(text));
            self.dispatch("error", ev, ctx)?;
        }
        // Since k6 1.5 (release notes v1.5.0, #5376) the close event carries the close
        // `code` when one is known and the `reason` always (k6 1.1's had neither).
        let ev = self.event("close", ctx);
        let code = self.close_code.get();
        if code != 0 {
            define_constant(&ev, js_string!("code"), code);
        }
        let reason = JsString::from(self.close_reason.borrow().as_str());
        define_constant(&ev, js_string!("reason"), reason);
        self.dispatch("close", ev, ctx)
    }

    /// An event object: `type`, `target`, `timestamp` (ms since the epoch).
    fn event(&self, kind: &str, ctx: &mut Context) -> JsObject {
        let ev = plain_object(ctx);
        define(&ev, js_string!("type"), JsString::from(kind));
        if let Some(o) = &*self.object.borrow() {
            define(&ev, js_string!("target"), o.clone());
        }
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        define(&ev, js_string!("timestamp"), now.as_secs_f64() * 1000.0);
        ev
    }

    fn fire(&self, kind: &str, _: Option<()>, ctx: &mut Context) -> JsResult<()> {
        let ev = self.event(kind, ctx);
        self.dispatch(kind, ev, ctx)
    }

    /// Calls the listeners of `kind` (the `on…` handler first) with `ev`; the promise jobs
    /// each queues run before the next event.
    fn dispatch(&self, kind: &str, ev: JsObject, ctx: &mut Context) -> JsResult<()> {
        let Some(slot) = TYPES.iter().position(|t| *t == kind) else {
            return Ok(());
        };
        let all: Vec<JsObject> = {
            let l = self.listeners.borrow();
            l[slot].0.iter().chain(l[slot].1.iter()).cloned().collect()
        };
        for f in all {
            f.call(&JsValue::undefined(), &[ev.clone().into()], ctx)?;
        }
        Ok(())
    }

    /// Queues `msg` for the I/O side (`send`, `ping`, `close`).
    fn queue(&self, msg: Message, counted: usize) {
        self.buffered.set(self.buffered.get() + counted);
        self.outbox.borrow_mut().push_back(msg);
    }
}

/// The bytes a `DataView` shows, if `v` is one.
fn data_view_bytes(v: &JsValue, ctx: &mut Context) -> JsResult<Option<Vec<u8>>> {
    use boa_engine::object::builtins::{JsArrayBuffer, JsDataView};
    let Some(view) = v
        .as_object()
        .and_then(|o| JsDataView::from_object(o.clone()).ok())
    else {
        return Ok(None);
    };
    let Some(buf) = view
        .buffer(ctx)?
        .as_object()
        .and_then(|o| JsArrayBuffer::from_object(o.clone()).ok())
    else {
        return Ok(None);
    };
    let (offset, len) = (
        view.byte_offset(ctx)? as usize,
        view.byte_length(ctx)? as usize,
    );
    let data = buf.data();
    Ok(Some(
        data.as_deref()
            .and_then(|d| d.get(offset..offset + len))
            .unwrap_or_default()
            .to_vec(),
    ))
}

/// A read-only enumerable property, as k6 defines the close event's.
fn define_constant(obj: &JsObject, key: JsString, value: impl Into<JsValue>) {
    obj.insert_property(
        key,
        boa_engine::property::PropertyDescriptor::builder()
            .value(value)
            .writable(false)
            .enumerable(true)
            .configurable(false),
    );
}

/// Go's text for a failed write.
fn write_text(e: &WsError) -> String {
    match e {
        WsError::ConnectionClosed | WsError::AlreadyClosed => "websocket: close sent".into(),
        WsError::Io(io) => format!("write: {io}"),
        other => format!("websocket: {other}"),
    }
}

/// The socket a method was called on.
fn this_socket(this: &JsValue) -> JsResult<Rc<Socket>> {
    this.as_object()
        .and_then(|o| o.downcast_ref::<Handle>().map(|h| h.0.clone()))
        .ok_or_else(|| JsNativeError::typ().with_message("not a WebSocket").into())
}

/// What the JS object holds: its socket. The socket refers back to the object only until
/// it is finished (the module then drops that reference), so there is no lasting cycle.
#[derive(boa_gc::Finalize, boa_engine::JsData)]
struct Handle(Rc<Socket>);

// SAFETY: no `Gc` pointers inside; the socket's JS values are rooted by the socket.
unsafe impl boa_gc::Trace for Handle {
    boa_gc::empty_trace!();
}

/// Builds the JS object of `socket`.
pub(super) fn object(socket: &Rc<Socket>, ctx: &mut Context) -> JsObject {
    let realm = ctx.realm().clone();
    let f = |name: &str, len: usize, p: boa_engine::native_function::NativeFunctionPointer| {
        FunctionObjectBuilder::new(&realm, boa_engine::NativeFunction::from_fn_ptr(p))
            .name(JsString::from(name))
            .length(len)
            .build()
    };
    let methods = [
        (
            "addEventListener",
            2,
            add_event_listener as boa_engine::native_function::NativeFunctionPointer,
        ),
        ("send", 1, send),
        ("ping", 0, ping),
        ("close", 2, close),
    ];
    let getters = [
        (
            "readyState",
            get_ready_state as boa_engine::native_function::NativeFunctionPointer,
        ),
        ("bufferedAmount", get_buffered),
        ("extensions", get_extensions),
        ("protocol", get_protocol),
    ];
    let built_methods: Vec<_> = methods.iter().map(|(n, l, p)| (*n, f(n, *l, *p))).collect();
    let built_getters: Vec<_> = getters.iter().map(|(n, p)| (*n, f(n, 0, *p))).collect();
    let binary_get = f("binaryType", 0, get_binary_type);
    let binary_set = f("binaryType", 1, set_binary_type);
    let on_fns: Vec<_> = ON_GETTERS
        .iter()
        .zip(ON_SETTERS.iter())
        .zip(TYPES.iter())
        .map(|((g, s), t)| (format!("on{t}"), f(t, 0, *g), f(t, 1, *s)))
        .collect();
    let mut init = ObjectInitializer::with_native_data(Handle(socket.clone()), ctx);
    for (name, func) in built_methods {
        init.property(JsString::from(name), func, Attribute::CONFIGURABLE);
    }
    init.property(
        js_string!("url"),
        JsString::from(socket.url.as_str()),
        Attribute::CONFIGURABLE,
    );
    for (name, getter) in built_getters {
        init.accessor(
            JsString::from(name),
            Some(getter),
            None,
            Attribute::CONFIGURABLE,
        );
    }
    init.accessor(
        js_string!("binaryType"),
        Some(binary_get),
        Some(binary_set),
        Attribute::CONFIGURABLE,
    );
    for (name, g, s) in on_fns {
        init.accessor(
            JsString::from(name),
            Some(g),
            Some(s),
            Attribute::CONFIGURABLE,
        );
    }
    for (name, value) in STATES {
        init.property(JsString::from(name), value, Attribute::ENUMERABLE);
    }
    let obj = init.build();
    *socket.object.borrow_mut() = Some(obj.clone());
    obj
}

fn get_ready_state(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Ok(this_socket(this)?.state.get().into())
}

fn get_buffered(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Ok((this_socket(this)?.buffered.get() as f64).into())
}

fn get_extensions(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let values: Vec<JsValue> = this_socket(this)?
        .extensions
        .borrow()
        .iter()
        .map(|v| JsString::from(v.as_str()).into())
        .collect();
    Ok(boa_engine::object::builtins::JsArray::from_iter(values, ctx).into())
}

fn get_protocol(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Ok(JsString::from(this_socket(this)?.protocol.borrow().as_str()).into())
}

fn get_binary_type(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Ok(JsString::from(this_socket(this)?.binary_type.get()).into())
}

fn set_binary_type(this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_socket(this)?;
    let v = a
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    match v.as_str() {
        "blob" => s.binary_type.set("blob"),
        "arraybuffer" => s.binary_type.set("arraybuffer"),
        other => {
            return Err(crate::modules::go_error::go_error(
                &format!(
                "unknown binaryType {other}, the supported ones are \"blob\" and \"arraybuffer\""
            ),
                ctx,
            ))
        }
    }
    Ok(JsValue::undefined())
}

/// The `on…` accessors, one getter and one setter per event type (in `TYPES` order).
macro_rules! on_accessors {
    ($($i:literal => $get:ident, $set:ident;)*) => {
        $(
            fn $get(this: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
                let s = this_socket(this)?;
                let l = s.listeners.borrow();
                Ok(l[$i].0.clone().map_or(JsValue::null(), Into::into))
            }
            fn $set(this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
                set_on(this, $i, a, ctx)
            }
        )*
        const ON_GETTERS: [boa_engine::native_function::NativeFunctionPointer; 6] = [$($get),*];
        const ON_SETTERS: [boa_engine::native_function::NativeFunctionPointer; 6] = [$($set),*];
    };
}

on_accessors! {
    0 => get_onopen, set_onopen;
    1 => get_onmessage, set_onmessage;
    2 => get_onerror, set_onerror;
    3 => get_onclose, set_onclose;
    4 => get_onping, set_onping;
    5 => get_onpong, set_onpong;
}

fn set_on(this: &JsValue, slot: usize, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_socket(this)?;
    let v = a.first().cloned().unwrap_or_default();
    if v.is_null_or_undefined() {
        s.listeners.borrow_mut()[slot].0 = None;
        return Ok(JsValue::undefined());
    }
    let Some(f) = v.as_callable() else {
        return Err(crate::modules::go_error::go_error(
            &format!("a value for 'on{}' should be callable", TYPES[slot]),
            ctx,
        ));
    };
    s.listeners.borrow_mut()[slot].0 = Some(f);
    Ok(JsValue::undefined())
}

fn add_event_listener(this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_socket(this)?;
    let kind = a
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    let Some(f) = a.get(1).and_then(JsValue::as_callable) else {
        return Err(crate::modules::go_error::go_error(
            &format!("handler for event type {kind:?} isn't a callable function"),
            ctx,
        ));
    };
    match TYPES.iter().position(|t| *t == kind) {
        Some(slot) => s.listeners.borrow_mut()[slot].1.push(f),
        None => Host::of(ctx).shared.logger.log(
            crate::log::Level::Warning,
            &format!("can't add event handler: unknown event type {kind:?}"),
            &[],
        ),
    }
    Ok(JsValue::undefined())
}

/// Throws k6's error for a call on a socket that is not OPEN.
fn assert_open(s: &Socket, ctx: &mut Context) -> JsResult<()> {
    if s.state.get() == OPEN {
        Ok(())
    } else {
        Err(crate::modules::go_error::go_error("InvalidStateError", ctx))
    }
}

fn send(this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_socket(this)?;
    assert_open(&s, ctx)?;
    let v = a.first().cloned().unwrap_or_default();
    let msg = if let Some(text) = v.as_string() {
        Message::text(text.to_std_string_escaped())
    } else if let Some(bytes) = super::blob::bytes_of_blob(&v, ctx)? {
        Message::binary(bytes)
    } else if let Some(bytes) = data_view_bytes(&v, ctx)? {
        // Only the view's bytes, as k6 1.5 sends any ArrayBufferView (#5358).
        Message::binary(bytes)
    } else {
        match crate::modules::encoding::bytes_of(&v, ctx)? {
            Some(bytes) => Message::binary(bytes),
            None => {
                return Err(crate::modules::go_error::go_error(
                    &format!("unsupported send type {}", v.type_of()),
                    ctx,
                ))
            }
        }
    };
    let size = msg.len();
    s.queue(msg, size);
    Ok(JsValue::undefined())
}

fn ping(this: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_socket(this)?;
    assert_open(&s, ctx)?;
    let id = s.ping_counter.get().to_string();
    s.queue(Message::Ping(id.clone().into_bytes().into()), 0);
    s.pings.borrow_mut().push((id, Instant::now()));
    s.ping_counter.set(s.ping_counter.get() + 1);
    Ok(JsValue::undefined())
}

fn close(this: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let s = this_socket(this)?;
    if matches!(s.state.get(), CLOSING | CLOSED) {
        return Ok(JsValue::undefined());
    }
    let code = match a.first().filter(|v| !v.is_undefined()) {
        Some(v) => v.to_number(ctx)? as i64,
        None => 0,
    };
    let reason = match a.get(1).filter(|v| !v.is_undefined()) {
        Some(v) => v.to_string(ctx)?.to_std_string_escaped(),
        None => String::new(),
    };
    if code != 0 && !(code == 1000 || (3000..=4999).contains(&code)) {
        return Err(crate::modules::go_error::go_error(
            &format!("InvalidAccessError: Failed to execute 'close' on 'WebSocket': The close code must be either 1000, or between 3000 and 4999. {code} is neither"),
            ctx,
        ));
    }
    if reason.len() > 123 {
        return Err(crate::modules::go_error::go_error(
            "SyntaxError: Failed to execute 'close' on 'WebSocket': The message must not be greater than 123 bytes",
            ctx,
        ));
    }
    let code = if code == 0 { 1000 } else { code as u16 };
    s.state.set(CLOSING);
    s.close_code.set(code);
    s.queue(
        Message::Close(Some(CloseFrame {
            code: CloseCode::from(code),
            reason: reason.into(),
        })),
        0,
    );
    Ok(JsValue::undefined())
}
