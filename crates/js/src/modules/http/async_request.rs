//! `http.asyncRequest`: requests that run while the VU's JS goes on, driven by every wait
//! of the VU and settled by its event loop.

use std::cell::RefCell;
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll};

use boa_engine::builtins::promise::ResolvingFunctions;
use boa_engine::object::builtins::JsPromise;
use boa_engine::{Context, JsResult, JsValue};
use rk6_http::Response;

use super::batch::Call;
use super::instance::Http;
use super::request::{finish, method_arg, prepare, Meta, Prep, Prepared};
use crate::host::event_loop::Pending;
use crate::host::instances::ModuleInstance;
use crate::host::Host;
use crate::modules::args::arg;

/// `http.asyncRequest`: the request as a promise. The request starts at once and runs while
/// the VU's JS goes on; the event loop (and any other wait of the VU) drives it, and settles
/// the promise when the response is complete, so several asyncRequests overlap.
pub(super) fn async_request(
    http: &Rc<Http>,
    _: &JsValue,
    a: &[JsValue],
    ctx: &mut Context,
) -> JsResult<JsValue> {
    let prepared =
        method_arg(a, ctx).and_then(|m| prepare(http, ctx, m, a.get(1), arg(a, 2), arg(a, 3)));
    match prepared {
        Ok(Prep::Done(v)) => Ok(JsPromise::resolve(v, ctx)?.into()),
        Ok(Prep::Send(p)) => {
            let (promise, resolvers) = JsPromise::new_pending(ctx);
            let host = Host::of(ctx);
            let client = host.http.clone();
            let Prepared { req, meta } = p;
            host.instance::<AsyncCalls>().start(
                Box::pin(async move { client.send(req).await }),
                meta,
                resolvers,
            );
            Ok(promise.into())
        }
        // Interruption and test.abort unwind the iteration; they are not promise rejections.
        Err(e) if e.as_engine().is_some() => Err(e),
        Err(e) => Ok(JsPromise::reject(e, ctx)?.into()),
    }
}

/// Settles one finished `asyncRequest`: samples, then its promise.
pub(super) fn settle_async(
    http: &Http,
    meta: Meta,
    resp: Response,
    resolvers: &ResolvingFunctions,
    ctx: &mut Context,
) -> JsResult<()> {
    let host = Host::of(ctx);
    match finish(http, &host, meta, resp, ctx) {
        Ok(v) => resolvers.resolve.call(&JsValue::undefined(), &[v], ctx)?,
        Err(e) => {
            let e = e.into_opaque(ctx)?;
            resolvers.reject.call(&JsValue::undefined(), &[e], ctx)?
        }
    };
    Ok(())
}

/// One `http.asyncRequest` in flight or finished but not settled yet.
pub(super) struct AsyncCall {
    call: Option<Call<'static>>,
    done: Option<Response>,
    meta: Meta,
    resolvers: ResolvingFunctions,
}

/// The VU's pending `http.asyncRequest`s, driven and settled by its event loop.
pub(crate) struct AsyncCalls {
    calls: RefCell<Vec<AsyncCall>>,
    /// The VU's k6/http, whose callback and URL cache the responses use.
    http: Rc<Http>,
}

impl ModuleInstance for AsyncCalls {
    fn make(host: &Host) -> Rc<Self> {
        let calls = Rc::new(AsyncCalls {
            calls: RefCell::new(Vec::new()),
            http: host.instance::<Http>(),
        });
        host.event_loop.register(calls.clone());
        calls
    }
}

impl Pending for AsyncCalls {
    fn what(&self) -> &'static str {
        "http.asyncRequest"
    }

    fn in_flight(&self) -> bool {
        !self.is_empty()
    }

    fn poll(&self, cx: &mut TaskContext<'_>) -> bool {
        AsyncCalls::poll(self, cx)
    }

    fn settle(&self, ctx: &mut Context) -> JsResult<bool> {
        self.settle_done(ctx)
    }

    fn clear(&self) {
        self.calls.borrow_mut().clear();
    }
}

impl AsyncCalls {
    /// Registers a started request whose promise `resolvers` settle.
    pub(super) fn start(&self, call: Call<'static>, meta: Meta, resolvers: ResolvingFunctions) {
        self.calls.borrow_mut().push(AsyncCall {
            call: Some(call),
            done: None,
            meta,
            resolvers,
        });
    }

    /// No request pending.
    fn is_empty(&self) -> bool {
        self.calls.borrow().is_empty()
    }

    /// Polls the requests still running; true when at least one is finished.
    fn poll(&self, cx: &mut TaskContext<'_>) -> bool {
        let mut calls = self.calls.borrow_mut();
        let mut any = false;
        for c in calls.iter_mut() {
            if let Some(call) = &mut c.call {
                if let Poll::Ready(resp) = call.as_mut().poll(cx) {
                    c.done = Some(resp);
                    c.call = None;
                }
            }
            any |= c.done.is_some();
        }
        any
    }

    /// Settles every finished request (samples, then its promise); true if any was.
    fn settle_done(&self, ctx: &mut Context) -> JsResult<bool> {
        let done: Vec<AsyncCall> = {
            let mut calls = self.calls.borrow_mut();
            if !calls.iter().any(|c| c.done.is_some()) {
                return Ok(false);
            }
            let (done, running) = calls.drain(..).partition(|c| c.done.is_some());
            *calls = running;
            done
        };
        for c in done {
            let resp = c.done.expect("partitioned on done");
            settle_async(&self.http, c.meta, resp, &c.resolvers, ctx)?;
        }
        Ok(true)
    }
}
