//! `ws.connect`: k6's callback WebSocket API. The call blocks the VU (not its thread) until
//! the socket closes: it runs the script's callback with the socket, fires `open`, then
//! waits for the next frame or socket timer and fires the matching handlers, until
//! `close()` or the server ends the session.

use std::cell::{Cell, RefCell};
use std::future::{poll_fn, Future};
use std::rc::Rc;
use std::task::Poll;
use std::time::{Duration, SystemTime};

use boa_engine::object::ObjectInitializer;
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, JsNativeError, JsObject, JsResult, JsString, JsValue};
use futures_util::{SinkExt, StreamExt};
use rk6_metrics::builtin;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use super::handshake::{self, Answer, Stream, Upgrade};
use super::params::Params;
use super::samples::{close_text, ms, SessionSamples};
use crate::host::instances::{bound, InstanceFn};
use crate::host::{Host, Phase};
use crate::modules::go_error::{message_object, with_message};
use crate::value::{array_buffer, define, plain_object};

/// A socket timer (`socket.setTimeout`/`setInterval`).
struct Timer {
    due: Instant,
    every: Option<Duration>,
    callback: JsObject,
}

/// One `ws.connect` session.
pub(super) struct Session {
    stream: RefCell<Option<Stream>>,
    handlers: RefCell<Vec<(String, JsObject)>>,
    timers: RefCell<Vec<Timer>>,
    /// Pings sent and not answered yet: (id, when).
    pings: RefCell<Vec<(String, Instant)>>,
    ping_counter: Cell<u64>,
    closed: Cell<bool>,
    samples: SessionSamples,
}

/// What woke the session up.
enum Event {
    Frame(Option<Result<Message, WsError>>),
    Timer,
}

impl Session {
    fn next_due(&self) -> Option<Instant> {
        self.timers.borrow().iter().map(|t| t.due).min()
    }

    /// The handlers of `event`, copied out so that they may add handlers while they run
    /// (on the stack for the usual one or two).
    fn handlers_of(&self, event: &str) -> smallvec::SmallVec<[JsObject; 2]> {
        self.handlers
            .borrow()
            .iter()
            .filter(|(name, _)| name == event)
            .map(|(_, f)| f.clone())
            .collect()
    }

    /// Calls `event`'s handlers with `args`; a handler that throws ends the session.
    fn fire(&self, event: &str, args: &[JsValue], ctx: &mut Context) -> JsResult<()> {
        for f in self.handlers_of(event) {
            f.call(&JsValue::undefined(), args, ctx)?;
        }
        Ok(())
    }

    /// Fires `error` with a Go error value whose `error()` is `text`.
    fn fire_error(&self, text: &str, ctx: &mut Context) -> JsResult<()> {
        if self.handlers_of("error").is_empty() {
            return Ok(());
        }
        let e = message_object(text, ctx);
        self.fire("error", &[e.into()], ctx)
    }

    /// Writes one message, suspending the VU until it is on the wire (k6's writes block
    /// too). A failed write fires `error`.
    fn write(&self, msg: Message, ctx: &mut Context) -> JsResult<()> {
        let host = Host::of(ctx);
        let result = {
            let mut stream = self.stream.borrow_mut();
            match stream.as_mut() {
                Some(s) => host
                    .block_on("ws", s.send(msg))?
                    .map_err(|e| write_text(&e)),
                None => Err("websocket: close sent".to_string()),
            }
        };
        match result {
            Ok(()) => Ok(()),
            Err(text) => self.fire_error(&text, ctx),
        }
    }

    /// Ends the session from this side: a close frame with `code`, then `close`.
    fn close_with(&self, code: u16, ctx: &mut Context) -> JsResult<()> {
        if self.closed.replace(true) {
            return Ok(());
        }
        let frame = CloseFrame {
            code: CloseCode::from(code),
            reason: "".into(),
        };
        let host = Host::of(ctx);
        let sent = {
            let mut stream = self.stream.borrow_mut();
            match stream.as_mut() {
                Some(s) => host
                    .block_on("ws", s.send(Message::Close(Some(frame))))?
                    .map_err(|e| write_text(&e)),
                None => Ok(()),
            }
        };
        if let Err(text) = sent {
            self.fire_error(&text, ctx)?;
        }
        self.fire("close", &[JsValue::from(code)], ctx)
    }

    /// The server closed with `code`: Go reports codes other than 1000/1001 as an error
    /// before the close; the closing handshake is answered, then `close` fires.
    fn closed_by_server(&self, code: u16, reason: &str, ctx: &mut Context) -> JsResult<()> {
        if code != 1000 && code != 1001 && !self.handlers_of("error").is_empty() {
            // Go's CloseError: its fields, then its `error()`.
            let e = plain_object(ctx);
            define(&e, js_string!("code"), code);
            define(&e, js_string!("text"), JsString::from(reason));
            with_message(&e, &close_text(code, reason), ctx);
            self.fire("error", &[e.into()], ctx)?;
        }
        self.closed.set(true);
        if let Some(mut s) = self.stream.borrow_mut().take() {
            // Sends the close reply tungstenite queued; a peer that went away is no error.
            let host = Host::of(ctx);
            let _ = host.block_on(
                "ws",
                tokio::time::timeout(Duration::from_secs(1), SinkExt::close(&mut s)),
            )?;
        }
        self.fire("close", &[JsValue::from(code)], ctx)
    }

    /// Runs the socket timers that are due.
    fn run_timers(&self, ctx: &mut Context) -> JsResult<()> {
        let now = Instant::now();
        loop {
            let due = {
                let mut timers = self.timers.borrow_mut();
                let Some(i) = timers.iter().position(|t| t.due <= now) else {
                    return Ok(());
                };
                match timers[i].every {
                    Some(every) => {
                        timers[i].due = now + every;
                        timers[i].callback.clone()
                    }
                    None => timers.remove(i).callback,
                }
            };
            due.call(&JsValue::undefined(), &[], ctx)?;
            if self.closed.get() {
                return Ok(());
            }
        }
    }

    /// Handles one frame (or the end of the stream).
    fn on_frame(&self, frame: Option<Result<Message, WsError>>, ctx: &mut Context) -> JsResult<()> {
        let host = Host::of(ctx);
        match frame {
            Some(Ok(Message::Text(text))) => {
                self.samples
                    .push(&host, builtin::WS_MSGS_RECEIVED, 1.0, SystemTime::now());
                let s = JsString::from(text.as_str());
                self.fire("message", &[s.into()], ctx)
            }
            Some(Ok(Message::Binary(bytes))) => {
                self.samples
                    .push(&host, builtin::WS_MSGS_RECEIVED, 1.0, SystemTime::now());
                let ab = array_buffer(&bytes, ctx)?;
                self.fire("binaryMessage", &[ab], ctx)
            }
            Some(Ok(Message::Ping(_))) => self.fire("ping", &[], ctx),
            Some(Ok(Message::Pong(data))) => {
                let id = String::from_utf8_lossy(&data).into_owned();
                let sent = {
                    let mut pings = self.pings.borrow_mut();
                    pings
                        .iter()
                        .position(|(p, _)| *p == id)
                        .map(|i| pings.remove(i).1)
                };
                if let Some(at) = sent {
                    self.samples
                        .push(&host, builtin::WS_PING, ms(at.elapsed()), SystemTime::now());
                }
                self.fire("pong", &[], ctx)
            }
            Some(Ok(Message::Close(frame))) => {
                let (code, reason) = match &frame {
                    Some(f) => (u16::from(f.code), f.reason.to_string()),
                    None => (1005, String::new()),
                };
                self.closed_by_server(code, &reason, ctx)
            }
            Some(Ok(Message::Frame(_))) => Ok(()),
            // The connection ended without a close frame: Go's abnormal closure.
            None
            | Some(Err(WsError::ConnectionClosed | WsError::AlreadyClosed))
            | Some(Err(WsError::Protocol(
                tokio_tungstenite::tungstenite::error::ProtocolError::ResetWithoutClosingHandshake,
            ))) => self.closed_by_server(1006, "unexpected EOF", ctx),
            // Not a close: Go goes away with 1001, and the failed write of that close frame
            // says why.
            Some(Err(_)) => self.close_with(1001, ctx),
        }
    }
}

/// Go's text for a failed write.
fn write_text(e: &WsError) -> String {
    match e {
        WsError::ConnectionClosed | WsError::AlreadyClosed => "websocket: close sent".into(),
        WsError::Io(io) => format!("write: {io}"),
        other => format!("websocket: {other}"),
    }
}

/// The response object `ws.connect` returns (`url`, `status`, `headers`, `body`, `error`).
fn response(url: &str, answer: Option<&Answer>, error: &str, ctx: &mut Context) -> JsValue {
    let headers = plain_object(ctx);
    if let Some(a) = answer {
        for (k, v) in &a.headers {
            define(
                &headers,
                JsString::from(k.as_str()),
                JsString::from(v.as_str()),
            );
        }
    }
    let obj = plain_object(ctx);
    define(&obj, js_string!("url"), JsString::from(url));
    define(&obj, js_string!("status"), answer.map_or(0, |a| a.status));
    define(&obj, js_string!("headers"), headers);
    define(
        &obj,
        js_string!("body"),
        JsString::from(answer.map_or("", |a| a.body.as_str())),
    );
    define(&obj, js_string!("error"), JsString::from(error));
    obj.into()
}

/// `ws.connect(url, [params], callback)`.
pub(super) fn connect(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    if host.phase.get() == Phase::Init {
        return Err(JsNativeError::error()
            .with_message("using websockets in the init context is not supported")
            .into());
    }
    let url_text = args
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    let (params, callback) = match args.len() {
        3 => (args.get(1), &args[2]),
        2 => (None, &args[1]),
        _ => {
            return Err(crate::modules::go_error::go_error(
                "invalid number of arguments to ws.connect",
                ctx,
            ))
        }
    };
    let Some(callback) = callback.as_callable() else {
        return Err(crate::modules::go_error::go_error(
            "last argument to ws.connect must be a function",
            ctx,
        ));
    };
    let params = Params::read(params, false, ctx)?;

    let started = SystemTime::now();
    let began = Instant::now();
    let attempt = match url::Url::parse(&url_text) {
        Ok(url) => host.block_on(
            "ws.connect",
            handshake::open(
                &host.http,
                &url,
                Upgrade {
                    headers: &params.headers,
                    protocols: &[],
                    jar: params.jar.clone(),
                    deflate: params.deflate,
                },
            ),
        )?,
        Err(e) => handshake::Attempt {
            stream: None,
            answer: None,
            error: Some(format!("parse {url_text:?}: {e}")),
            connecting: Duration::ZERO,
            traffic: None,
        },
    };
    let samples = SessionSamples::new(
        &host,
        &params.tags,
        &url_text,
        attempt.answer.as_ref(),
        false,
    );
    samples.push(&host, builtin::WS_SESSIONS, 1.0, started);
    samples.push(
        &host,
        builtin::WS_CONNECTING,
        ms(attempt.connecting),
        started,
    );

    let traffic = attempt.traffic.clone();
    let count = |host: &Host| {
        if let Some(t) = &traffic {
            let (sent, received) = t.take();
            host.data_sent.set(host.data_sent.get() + sent);
            host.data_received.set(host.data_received.get() + received);
        }
    };
    let Some(stream) = attempt.stream else {
        count(&host);
        samples.push(
            &host,
            builtin::WS_SESSION_DURATION,
            ms(began.elapsed()),
            started,
        );
        let error = attempt.error.unwrap_or_default();
        if host.shared.run.throw {
            return Err(crate::modules::go_error::go_error(&error, ctx));
        }
        // As k6: an HTTP answer other than 101 comes back as it is, without `url` or
        // `error`; a connection that failed before any answer has only the error.
        return Ok(match &attempt.answer {
            Some(a) => response("", Some(a), "", ctx),
            None => response("", None, &error, ctx),
        });
    };
    let answer = attempt.answer.unwrap_or_default();
    let session = Rc::new(Session {
        stream: RefCell::new(Some(stream)),
        handlers: RefCell::default(),
        timers: RefCell::default(),
        pings: RefCell::default(),
        ping_counter: Cell::new(0),
        closed: Cell::new(false),
        samples,
    });
    let result = run(&session, &callback, ctx);
    session.stream.borrow_mut().take();
    count(&host);
    // k6 drops the samples of a VU whose test context is done: an interrupted session has
    // no duration.
    if !matches!(&result, Err(e) if crate::value::is_interrupted(e)) {
        session.samples.push(
            &host,
            builtin::WS_SESSION_DURATION,
            ms(began.elapsed()),
            started,
        );
    }
    result?;
    Ok(response(&url_text, Some(&answer), "", ctx))
}

/// The session after the upgrade: the callback, `open`, then events until closed.
fn run(session: &Rc<Session>, callback: &JsObject, ctx: &mut Context) -> JsResult<()> {
    let host = Host::of(ctx);
    let socket = socket_object(session, ctx);
    let outcome = (|| {
        callback.call(&JsValue::undefined(), &[socket.into()], ctx)?;
        session.fire("open", &[], ctx)?;
        while !session.closed.get() {
            let due = session.next_due();
            let event = {
                let mut sleep = due.map(|t| Box::pin(tokio::time::sleep_until(t)));
                let stream = &session.stream;
                host.block_on(
                    "ws.connect",
                    poll_fn(|cx| {
                        if let Some(s) = stream.borrow_mut().as_mut() {
                            if let Poll::Ready(frame) = s.poll_next_unpin(cx) {
                                return Poll::Ready(Event::Frame(frame));
                            }
                        }
                        match &mut sleep {
                            Some(t) => t.as_mut().poll(cx).map(|()| Event::Timer),
                            None => Poll::Pending,
                        }
                    }),
                )?
            };
            match event {
                Event::Timer => session.run_timers(ctx)?,
                Event::Frame(frame) => session.on_frame(frame, ctx)?,
            }
        }
        Ok(())
    })();
    if outcome.is_err() && !session.closed.get() {
        // A handler threw or the iteration was interrupted: the socket goes away (1001)
        // without firing more handlers.
        session.closed.set(true);
        session.stream.borrow_mut().take();
    }
    outcome
}

/// The socket object the callback gets.
fn socket_object(session: &Rc<Session>, ctx: &mut Context) -> JsObject {
    let methods: [(&str, usize, InstanceFn<Session>); 7] = [
        ("on", 2, on),
        ("send", 1, send),
        ("sendBinary", 1, send_binary),
        ("ping", 0, ping),
        ("setTimeout", 2, set_timeout),
        ("setInterval", 2, set_interval),
        ("close", 1, close),
    ];
    let realm = ctx.realm().clone();
    let mut init = ObjectInitializer::new(ctx);
    for (name, len, f) in methods {
        let func = boa_engine::object::FunctionObjectBuilder::new(&realm, bound(session, f))
            .name(JsString::from(name))
            .length(len)
            .build();
        init.property(JsString::from(name), func, Attribute::all());
    }
    init.build()
}

fn on(s: &Rc<Session>, _: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let event = a
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    if let Some(f) = a.get(1).and_then(JsValue::as_callable) {
        s.handlers.borrow_mut().push((event, f));
    }
    Ok(JsValue::undefined())
}

fn send(s: &Rc<Session>, _: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let text = a
        .first()
        .cloned()
        .unwrap_or_default()
        .to_string(ctx)?
        .to_std_string_escaped();
    send_counted(s, Message::text(text), ctx)
}

/// Writes a `send`/`sendBinary` message and counts it in `ws_msgs_sent`, as k6 counts
/// those calls.
fn send_counted(s: &Rc<Session>, message: Message, ctx: &mut Context) -> JsResult<JsValue> {
    s.write(message, ctx)?;
    s.samples.push(
        &Host::of(ctx),
        builtin::WS_MSGS_SENT,
        1.0,
        SystemTime::now(),
    );
    Ok(JsValue::undefined())
}

fn send_binary(
    s: &Rc<Session>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let value = a.first().cloned().unwrap_or_default();
    let buffer = value
        .as_object()
        .and_then(|o| boa_engine::object::builtins::JsArrayBuffer::from_object(o.clone()).ok());
    let Some(buffer) = buffer else {
        let kind = if value.is_null() || value.is_undefined() {
            value.to_string(ctx)?.to_std_string_escaped()
        } else {
            let obj = value.to_object(ctx)?;
            let ctor = obj.get(js_string!("constructor"), ctx)?;
            match ctor.as_object() {
                Some(c) => c
                    .get(js_string!("name"), ctx)?
                    .to_string(ctx)?
                    .to_std_string_escaped(),
                None => "undefined".into(),
            }
        };
        return Err(crate::modules::go_error::go_error(
            &format!("expected ArrayBuffer as argument, received: {kind}"),
            ctx,
        ));
    };
    let bytes = buffer.to_vec().unwrap_or_default();
    send_counted(s, Message::binary(bytes), ctx)
}

fn ping(s: &Rc<Session>, _: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let id = s.ping_counter.get().to_string();
    let before = s.closed.get();
    s.write(Message::Ping(id.clone().into_bytes().into()), ctx)?;
    if !before {
        s.pings.borrow_mut().push((id, Instant::now()));
        s.ping_counter.set(s.ping_counter.get() + 1);
    }
    Ok(JsValue::undefined())
}

fn schedule(s: &Session, a: &[JsValue], every: bool, ctx: &mut Context) -> JsResult<JsValue> {
    let name = if every { "setInterval" } else { "setTimeout" };
    let callback = a.first().and_then(JsValue::as_callable).ok_or_else(|| {
        JsNativeError::typ().with_message(format!("{name}'s callback isn't a function"))
    })?;
    let ms = a.get(1).cloned().unwrap_or_default().to_number(ctx)?;
    if ms.is_nan() || ms <= 0.0 || !ms.is_finite() {
        return Err(crate::modules::go_error::go_error(
            &format!("{name} requires a >0 timeout parameter, received {ms:.2}"),
            ctx,
        ));
    }
    let delay = Duration::from_secs_f64(ms / 1000.0);
    s.timers.borrow_mut().push(Timer {
        due: Instant::now() + delay,
        every: every.then_some(delay),
        callback,
    });
    Ok(JsValue::undefined())
}

fn set_timeout(
    s: &Rc<Session>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    schedule(s, a, false, ctx)
}

fn set_interval(
    s: &Rc<Session>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    schedule(s, a, true, ctx)
}

fn close(s: &Rc<Session>, _: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let code = match a.first() {
        Some(v) => v.to_number(ctx)? as i64 as u16,
        None => 1001,
    };
    s.close_with(code, ctx)?;
    Ok(JsValue::undefined())
}
