//! k6/http's per-VU state: its response callback, pending `asyncRequest`s, the objects its
//! responses share, and the last URL it parsed.

use std::cell::RefCell;
use std::rc::Rc;
use std::task::Context as TaskContext;

use boa_engine::{Context, JsResult, JsString};

use super::async_request::AsyncCalls;
use super::callback::StatusRanges;
use crate::host::event_loop::Pending;
use crate::host::instances::ModuleInstance;
use crate::host::Host;

/// One VU's k6/http.
pub(crate) struct Http {
    /// `http.asyncRequest` calls not settled yet.
    pub(super) async_calls: AsyncCalls,
    /// Prototype and getters shared by this VU's response objects, made on first use.
    /// The last URL string requested, as given and parsed (a script's URLs repeat).
    pub(super) last_url: RefCell<Option<(JsString, String, url::Url)>>,
    /// The VU's response callback as inclusive status ranges (`http.setResponseCallback`);
    /// `None` once a script disables it with `null`.
    pub(super) expected_statuses: RefCell<Option<StatusRanges>>,
}

impl Http {
    /// The callback a request uses: its own `responseCallback` param if given, else the VU's.
    pub(super) fn callback(&self, given: &Option<Option<StatusRanges>>) -> Option<StatusRanges> {
        match given {
            Some(cb) => cb.clone(),
            None => self.expected_statuses.borrow().clone(),
        }
    }
}

impl ModuleInstance for Http {
    fn make(host: &Host) -> Rc<Self> {
        let http = Rc::new(Http {
            async_calls: AsyncCalls::default(),
            last_url: RefCell::new(None),
            expected_statuses: RefCell::new(Some(Rc::from([(200u16, 399u16)]))),
        });
        host.event_loop.register(http.clone());
        http
    }
}

impl Pending for Http {
    fn what(&self) -> &'static str {
        "http.asyncRequest"
    }

    fn in_flight(&self) -> bool {
        !self.async_calls.is_empty()
    }

    fn poll(&self, cx: &mut TaskContext<'_>) -> bool {
        self.async_calls.poll(cx)
    }

    fn settle(&self, ctx: &mut Context) -> JsResult<bool> {
        self.async_calls.settle(self, ctx)
    }

    fn clear(&self) {
        self.async_calls.clear();
    }
}
