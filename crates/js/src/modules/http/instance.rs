//! k6/http's per-VU state: its response callback (`http.setResponseCallback`) and the last
//! URL it parsed. Its pending `asyncRequest`s are an instance of their own
//! (`async_request::AsyncCalls`).

use std::cell::RefCell;
use std::rc::Rc;

use boa_engine::{Context, JsResult, JsString, JsValue};

use super::callback::{callback_from_js, StatusRanges};
use crate::host::instances::ModuleInstance;
use crate::host::Host;

/// One VU's k6/http.
pub(crate) struct Http {
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
    fn make(_: &Host) -> Rc<Self> {
        Rc::new(Http {
            last_url: RefCell::new(None),
            expected_statuses: RefCell::new(Some(Rc::from([(200u16, 399u16)]))),
        })
    }
}

/// `http.setResponseCallback(cb)`: this VU's callback for every later request.
pub(super) fn set_response_callback(
    http: &Rc<Http>,
    _: &JsValue,
    a: &[JsValue],
    _: &mut Context,
) -> JsResult<JsValue> {
    let cb = callback_from_js(&a.first().cloned().unwrap_or_default())?;
    *http.expected_statuses.borrow_mut() = cb;
    Ok(JsValue::undefined())
}
