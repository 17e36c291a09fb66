//! Requests of one VU that run at the same time: `http.batch` (bounded by k6's `batch` and
//! `batchPerHost`) and pending `http.asyncRequest`s (driven by every wait of the VU and
//! settled by its event loop).

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use boa_engine::builtins::promise::ResolvingFunctions;
use boa_engine::{Context, JsResult};
use rk6_http::{Client, Request, Response};

use super::{settle_async, Meta};

/// A request future of the VU's client.
type Call<'a> = Pin<Box<dyn Future<Output = Response> + 'a>>;

/// `http.batch` parallelism (k6 options `batch` and `batchPerHost`; 0 means no limit).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) total: usize,
    pub(crate) per_host: usize,
}

/// The origin a request counts against for `batchPerHost`.
fn host_of(req: &Request) -> (String, u16) {
    (
        req.url.host_str().unwrap_or_default().to_owned(),
        req.url.port_or_known_default().unwrap_or(0),
    )
}

/// Sends `reqs` concurrently within `limits` and returns their responses in request order.
/// Requests start in order; one waiting for its host's slot does not hold a global one.
pub(crate) async fn run_batch(
    client: &Client,
    reqs: Vec<Request>,
    limits: Limits,
) -> Vec<Response> {
    let total = if limits.total == 0 {
        usize::MAX
    } else {
        limits.total
    };
    let per_host = if limits.per_host == 0 {
        usize::MAX
    } else {
        limits.per_host
    };
    let hosts: Vec<(String, u16)> = reqs.iter().map(host_of).collect();
    let mut waiting: Vec<Option<Request>> = reqs.into_iter().map(Some).collect();
    let mut out: Vec<Option<Response>> = waiting.iter().map(|_| None).collect();
    let mut running: Vec<(usize, Call<'_>)> = Vec::new();
    let mut busy: HashMap<&(String, u16), usize> = HashMap::new();
    let mut next = 0;
    poll_fn(|cx| loop {
        for i in next..waiting.len() {
            if running.len() >= total {
                break;
            }
            let slot = busy.entry(&hosts[i]).or_default();
            if *slot >= per_host {
                continue;
            }
            if let Some(req) = waiting[i].take() {
                *slot += 1;
                running.push((i, Box::pin(client.send(req))));
            }
        }
        while next < waiting.len() && waiting[next].is_none() {
            next += 1;
        }
        let mut finished = false;
        running.retain_mut(|(i, call)| match call.as_mut().poll(cx) {
            Poll::Ready(resp) => {
                out[*i] = Some(resp);
                if let Some(n) = busy.get_mut(&hosts[*i]) {
                    *n -= 1;
                }
                finished = true;
                false
            }
            Poll::Pending => true,
        });
        if running.is_empty() && next == waiting.len() {
            return Poll::Ready(());
        }
        if !finished {
            return Poll::Pending;
        }
    })
    .await;
    out.into_iter()
        .map(|r| r.expect("every batch request ran"))
        .collect()
}

/// One `http.asyncRequest` in flight or finished but not settled yet.
struct AsyncCall {
    call: Option<Call<'static>>,
    done: Option<Response>,
    meta: Meta,
    resolvers: ResolvingFunctions,
}

/// The VU's pending `http.asyncRequest`s.
#[derive(Default)]
pub(crate) struct AsyncCalls {
    calls: RefCell<Vec<AsyncCall>>,
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
    pub(crate) fn is_empty(&self) -> bool {
        self.calls.borrow().is_empty()
    }

    /// Polls the requests still running; true when at least one is finished.
    pub(crate) fn poll(&self, cx: &mut TaskContext<'_>) -> bool {
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

    /// Waits until a request finishes, or until `until` if given.
    pub(crate) async fn wait(&self, until: Option<tokio::time::Instant>) {
        let mut sleep = until.map(|t| Box::pin(tokio::time::sleep_until(t)));
        poll_fn(|cx| {
            if self.poll(cx) {
                return Poll::Ready(());
            }
            match &mut sleep {
                Some(s) => s.as_mut().poll(cx),
                None => Poll::Pending,
            }
        })
        .await
    }

    /// Settles every finished request (samples, then its promise); true if any was.
    pub(crate) fn settle(&self, ctx: &mut Context) -> JsResult<bool> {
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
            settle_async(c.meta, resp, &c.resolvers, ctx)?;
        }
        Ok(true)
    }

    /// Drops every pending request (the call they belong to ended with an error).
    pub(crate) fn clear(&self) {
        self.calls.borrow_mut().clear();
    }
}
