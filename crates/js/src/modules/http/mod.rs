//! The `k6/http` module: its exports. A request goes from JS arguments (`params`, `body`,
//! `url_tag`) to an `rk6_http::Request` and back to a JS response (`request`, `response`),
//! with `http_req*` samples for every hop (`samples`); `batch` and `async_request` run
//! several at once.

mod async_request;
mod batch;
mod body;
mod callback;
mod compression;
mod cookie_jar;
mod debug;
mod instance;
mod multipart;
mod params;
mod request;
pub(crate) mod response;
mod samples;
mod url_tag;

use boa_engine::{Context, JsObject, JsString, Module, NativeFunction};

use crate::host::instances::native;
use instance::{set_response_callback, Http};

use crate::modules::synthetic::{synthetic_with, Export};
use async_request::async_request;
use batch::batch;
use callback::expected_statuses;
use cookie_jar::{cookie_jar, new_cookie_jar};
use multipart::file;
use request::{del, get, head, options, patch, post, put, request};
use url_tag::url_tag;

pub(crate) use cookie_jar::script_jar;
pub(crate) use params::ResponseType;

/// k6/http's string constants, in k6's export order.
const CONSTANTS: &[(&str, &str)] = &[
    ("TLS_1_0", "tls1.0"),
    ("TLS_1_1", "tls1.1"),
    ("TLS_1_2", "tls1.2"),
    ("TLS_1_3", "tls1.3"),
    ("OCSP_STATUS_GOOD", "good"),
    ("OCSP_STATUS_REVOKED", "revoked"),
    ("OCSP_STATUS_SERVER_FAILED", "server_failed"),
    ("OCSP_STATUS_UNKNOWN", "unknown"),
    ("OCSP_REASON_UNSPECIFIED", "unspecified"),
    ("OCSP_REASON_KEY_COMPROMISE", "key_compromise"),
    ("OCSP_REASON_CA_COMPROMISE", "ca_compromise"),
    ("OCSP_REASON_AFFILIATION_CHANGED", "affiliation_changed"),
    ("OCSP_REASON_SUPERSEDED", "superseded"),
    (
        "OCSP_REASON_CESSATION_OF_OPERATION",
        "cessation_of_operation",
    ),
    ("OCSP_REASON_CERTIFICATE_HOLD", "certificate_hold"),
    ("OCSP_REASON_REMOVE_FROM_CRL", "remove_from_crl"),
    ("OCSP_REASON_PRIVILEGE_WITHDRAWN", "privilege_withdrawn"),
    ("OCSP_REASON_AA_COMPROMISE", "aa_compromise"),
];

/// The `k6/http` module of the VU `ctx` belongs to: constants first, then the functions
/// (as k6 lists them).
pub(super) fn module(ctx: &mut Context) -> Module {
    synthetic_with(CONSTANTS, functions(), ctx)
}

/// The module's default export object and export names.
pub(super) fn exports(ctx: &mut Context) -> (JsObject, Vec<JsString>) {
    super::synthetic::exports_object(CONSTANTS, functions(), ctx)
}

fn functions() -> Vec<Export> {
    vec![
        ("url", 1, NativeFunction::from_fn_ptr(url_tag)),
        ("cookieJar", 0, NativeFunction::from_fn_ptr(cookie_jar)),
        ("CookieJar", 0, NativeFunction::from_fn_ptr(new_cookie_jar)),
        ("file", 3, NativeFunction::from_fn_ptr(file)),
        ("get", 2, native::<Http>(get)),
        ("head", 2, native::<Http>(head)),
        ("post", 3, native::<Http>(post)),
        ("put", 3, native::<Http>(put)),
        ("patch", 3, native::<Http>(patch)),
        ("del", 3, native::<Http>(del)),
        ("options", 3, native::<Http>(options)),
        ("request", 4, native::<Http>(request)),
        ("asyncRequest", 4, native::<Http>(async_request)),
        ("batch", 1, native::<Http>(batch)),
        (
            "setResponseCallback",
            1,
            native::<Http>(set_response_callback),
        ),
        (
            "expectedStatuses",
            1,
            NativeFunction::from_fn_ptr(expected_statuses),
        ),
    ]
}
