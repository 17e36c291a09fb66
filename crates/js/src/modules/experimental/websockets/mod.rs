//! `k6/websockets` (k6 1.6; before, and still with a deprecation warning,
//! `k6/experimental/websockets`): the standard `WebSocket` (and `Blob`) on the VU's event
//! loop. Each VU's open sockets are its [`WebSockets`] instance, a `Pending` source: every
//! wait of the VU drives their I/O, and the event loop dispatches their events, so the
//! iteration lasts until every socket is closed.

mod blob;
mod socket;

use std::cell::RefCell;
use std::rc::Rc;
use std::task::Context as TaskContext;

use boa_engine::{Context, JsNativeError, JsObject, JsResult, JsString, JsValue, Module};

use crate::host::event_loop::Pending;
use crate::host::instances::{native, ModuleInstance};
use crate::host::{Host, Phase};
use crate::modules::synthetic::from_object;
use crate::modules::ws::handshake::{self, Upgrade};
use crate::modules::ws::params::Params;
use blob::BlobKit;
use socket::Socket;

/// A VU's open sockets and its `Blob` class.
pub(crate) struct WebSockets {
    sockets: RefCell<Vec<Rc<Socket>>>,
    blob: RefCell<Option<Rc<BlobKit>>>,
}

impl ModuleInstance for WebSockets {
    fn make(host: &Host) -> Rc<Self> {
        let me = Rc::new(WebSockets {
            sockets: RefCell::default(),
            blob: RefCell::new(None),
        });
        host.event_loop.register(me.clone());
        me
    }
}

impl WebSockets {
    /// The VU's `Blob` class, built on first use.
    fn blob(&self, ctx: &mut Context) -> JsResult<Rc<BlobKit>> {
        if let Some(kit) = &*self.blob.borrow() {
            return Ok(kit.clone());
        }
        let kit = Rc::new(BlobKit::build(ctx)?);
        *self.blob.borrow_mut() = Some(kit.clone());
        Ok(kit)
    }

    fn forget(&self, s: &Socket) {
        // Breaks the socket ↔ object link so both can go.
        s.object.borrow_mut().take();
    }
}

/// The VU's instance.
fn instance(ctx: &Context) -> JsResult<Rc<WebSockets>> {
    Ok(Host::of(ctx).instance::<WebSockets>())
}

impl Pending for WebSockets {
    fn what(&self) -> &'static str {
        "WebSocket"
    }

    fn in_flight(&self) -> bool {
        !self.sockets.borrow().is_empty()
    }

    fn poll(&self, cx: &mut TaskContext<'_>) -> bool {
        let mut any = false;
        for s in self.sockets.borrow().iter() {
            any |= s.poll(cx) || s.has_done();
        }
        any
    }

    fn settle(&self, ctx: &mut Context) -> JsResult<bool> {
        let ready: Vec<Rc<Socket>> = self
            .sockets
            .borrow()
            .iter()
            .filter(|s| s.has_done())
            .cloned()
            .collect();
        for s in &ready {
            s.settle(ctx)?;
            ctx.run_jobs()?;
        }
        let finished: Vec<Rc<Socket>> = {
            let mut sockets = self.sockets.borrow_mut();
            let (gone, open) = sockets.drain(..).partition(|s| s.finished());
            *sockets = open;
            gone
        };
        for s in &finished {
            self.forget(s);
        }
        Ok(!ready.is_empty())
    }

    fn clear(&self) {
        let gone: Vec<Rc<Socket>> = self.sockets.borrow_mut().drain(..).collect();
        for s in &gone {
            self.forget(s);
        }
    }
}

/// The module: `WebSocket` and `Blob`.
pub(crate) fn module(ctx: &mut Context) -> JsResult<Module> {
    let me = instance(ctx)?;
    let blob = me.blob(ctx)?.class.clone();
    let realm = ctx.realm().clone();
    let ws =
        boa_engine::object::FunctionObjectBuilder::new(&realm, native::<WebSockets>(construct))
            .name(JsString::from("WebSocket"))
            .length(1)
            .constructor(true)
            .build();
    for (name, value) in socket::STATES {
        ws.insert_property(
            JsString::from(name),
            boa_engine::property::PropertyDescriptor::builder()
                .value(value)
                .writable(false)
                .enumerable(true)
                .configurable(false),
        );
    }
    let exports = crate::value::plain_object(ctx);
    crate::value::define(&exports, JsString::from("Blob"), blob);
    crate::value::define(&exports, JsString::from("WebSocket"), ws);
    let names = vec![JsString::from("Blob"), JsString::from("WebSocket")];
    Ok(from_object(exports, names, ctx))
}

/// `new WebSocket(url, [protocols], [params])`.
fn construct(
    me: &Rc<WebSockets>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    if host.phase.get() == Phase::Init {
        return Err(JsNativeError::error()
            .with_message("using websockets in the init context is not supported")
            .into());
    }
    let fail = |m: String, ctx: &mut Context| Err(crate::modules::go_error::go_error(&m, ctx));
    let url_value = a.first().cloned().unwrap_or_default();
    if url_value.is_null_or_undefined() {
        return fail("WebSocket requires a url".into(), ctx);
    }
    let text = url_value.to_string(ctx)?.to_std_string_escaped();
    let url = match url::Url::parse(&text) {
        Ok(u) => u,
        Err(e) => {
            return fail(
                format!("WebSocket requires valid url, but got {text:?} which resulted in {e}"),
                ctx,
            )
        }
    };
    if url.scheme() != "ws" && url.scheme() != "wss" {
        return fail(
            format!(
                "WebSocket requires url with scheme ws or wss, but got {:?}",
                url.scheme()
            ),
            ctx,
        );
    }
    if let Some(f) = url.fragment().filter(|f| !f.is_empty()) {
        return fail(
            format!("WebSocket requires no url fragment, but got {f:?}"),
            ctx,
        );
    }
    let params = Params::read(a.get(2), true, ctx)?;
    let mut protocols = Vec::new();
    if let Some(p) = a.get(1).filter(|v| !v.is_null_or_undefined()) {
        if let Some(s) = p.as_string() {
            protocols.push(s.to_std_string_escaped());
        } else if let Some(o) = p.as_object().filter(|o| o.is_array()) {
            let len = o.get(JsString::from("length"), ctx)?.to_length(ctx)?;
            for i in 0..len {
                let v = o.get(i, ctx)?;
                protocols.push(v.to_string(ctx)?.to_std_string_escaped());
            }
        }
    }
    let client = host.http.clone();
    let headers = params.headers;
    let jar = params.jar;
    let deflate = params.deflate;
    let connect_url = url.clone();
    let connect = Box::pin(async move {
        handshake::open(
            &client,
            &connect_url,
            Upgrade {
                headers: &headers,
                protocols: &protocols,
                jar,
                deflate,
            },
        )
        .await
    });
    let socket = Socket::new(text, params.tags, connect);
    let obj: JsObject = socket::object(&socket, ctx);
    me.sockets.borrow_mut().push(socket);
    Ok(obj.into())
}
