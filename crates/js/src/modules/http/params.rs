//! The request parameters k6 scripts pass as the last argument of a request.

use std::time::Duration;

use boa_engine::property::PropertyKey;
use boa_engine::{Context, JsNativeError, JsResult, JsValue};
use rk6_http::{Auth, SharedJar};

use super::callback::callback_from_js;
use super::callback::StatusRanges;
use super::cookie_jar::{OwnJar, VuJar};
use crate::modules::args::{key_string, prop, string_map};

/// What the response body becomes in JS.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResponseType {
    Text,
    Binary,
    None,
}

/// The request parameters k6 scripts pass as the last argument.
pub(super) struct Params {
    pub(super) headers: Vec<(String, String)>,
    pub(super) tags: Vec<(String, String)>,
    /// The `${}` template of an ``http.url`...` `` URL, which names the request unless a
    /// tag does.
    pub(super) template: Option<String>,
    pub(super) timeout: Option<Duration>,
    pub(super) redirects: Option<u32>,
    pub(super) cookies: Vec<(String, String)>,
    pub(super) response_type: ResponseType,
    /// `responseCallback`: `None` when absent, `Some(None)` when `null` (disabled).
    pub(super) callback: Option<Option<StatusRanges>>,
    /// A `new http.CookieJar()`'s jar to use instead of the VU's.
    pub(super) jar: Option<SharedJar>,
    /// `compression`: comma-separated algorithms applied to the body.
    pub(super) compression: Option<String>,
    /// `auth`: how the URL's credentials are used.
    pub(super) auth: Auth,
    /// rk6's `h2c` param: HTTP/2 with prior knowledge for an `http://` URL.
    pub(super) h2c: Option<bool>,
}

/// The params' values by name, as the script gave them (`undefined` and `null` left out,
/// except `null` for `responseCallback`).
#[derive(Default)]
struct Given {
    headers: Option<JsValue>,
    tags: Option<JsValue>,
    timeout: Option<JsValue>,
    redirects: Option<JsValue>,
    cookies: Option<JsValue>,
    response_type: Option<JsValue>,
    compression: Option<JsValue>,
    jar: Option<JsValue>,
    auth: Option<JsValue>,
    h2c: Option<JsValue>,
    callback: Option<JsValue>,
}

impl Params {
    /// `default_type` applies when the params give no `responseType` (`discardResponseBodies`).
    pub(super) fn from_js(
        value: Option<&JsValue>,
        default_type: ResponseType,
        ctx: &mut Context,
    ) -> JsResult<Params> {
        // k6 reads the params object's own enumerable keys (goja's `Keys()`), not
        // inherited or hidden ones; one pass over them instead of a lookup per name.
        let mut given = Given::default();
        if let Some(obj) = value.and_then(JsValue::as_object) {
            for (key, v) in obj.enumerable_own_entries(ctx)? {
                let PropertyKey::String(name) = &key else {
                    continue;
                };
                let slot = match name.to_std_string_escaped().as_str() {
                    "headers" => &mut given.headers,
                    "tags" => &mut given.tags,
                    "timeout" => &mut given.timeout,
                    "redirects" => &mut given.redirects,
                    "cookies" => &mut given.cookies,
                    "responseType" => &mut given.response_type,
                    "compression" => &mut given.compression,
                    "jar" => &mut given.jar,
                    "auth" => &mut given.auth,
                    "h2c" => &mut given.h2c,
                    "responseCallback" => {
                        // `null` is meaningful here: no callback.
                        if !v.is_undefined() {
                            given.callback = Some(v);
                        }
                        continue;
                    }
                    _ => continue,
                };
                *slot = (!v.is_undefined() && !v.is_null()).then_some(v);
            }
        }
        let headers = string_map(given.headers.as_ref(), ctx)?;
        let tags = string_map(given.tags.as_ref(), ctx)?;
        let timeout = match given.timeout {
            None => None,
            Some(v) if v.is_number() => {
                Some(Duration::from_secs_f64(v.to_number(ctx)?.max(0.0) / 1000.0))
            }
            Some(v) => {
                let s = v.to_string(ctx)?.to_std_string_escaped();
                Some(
                    rk6_options::parse_duration(&s)
                        .map_err(|e| JsNativeError::typ().with_message(e.to_string()))?,
                )
            }
        };
        let redirects = match given.redirects {
            None => None,
            Some(v) => Some(v.to_number(ctx)?.max(0.0) as u32),
        };
        let mut cookies = Vec::new();
        if let Some(c) = given.cookies.as_ref().and_then(JsValue::as_object) {
            for (key, v) in c.enumerable_own_entries(ctx)? {
                let value = match v.as_object() {
                    Some(o) => prop(Some(&o), "value", ctx)?.unwrap_or_default(),
                    None => v,
                };
                cookies.push((
                    key_string(&key),
                    value.to_string(ctx)?.to_std_string_escaped(),
                ));
            }
        }
        let response_type = match given.response_type {
            None => default_type,
            Some(v) => match v.to_string(ctx)?.to_std_string_escaped().as_str() {
                "text" => ResponseType::Text,
                "binary" => ResponseType::Binary,
                "none" => ResponseType::None,
                other => {
                    return Err(JsNativeError::typ()
                        .with_message(format!(
                            "unknown responseType \"{other}\"; use text, binary or none"
                        ))
                        .into())
                }
            },
        };
        let compression = match given.compression {
            Some(c) if !c.is_null() => Some(c.to_string(ctx)?.to_std_string_escaped()),
            _ => None,
        };
        let jar = match given.jar {
            None => None,
            Some(v) => match v.as_object() {
                Some(o) if o.downcast_ref::<OwnJar>().is_some() => {
                    o.downcast_ref::<OwnJar>().map(|j| j.0.clone())
                }
                Some(o) if o.downcast_ref::<VuJar>().is_some() => None,
                _ => {
                    return Err(JsNativeError::typ()
                        .with_message("the jar param must be a cookie jar (http.cookieJar() or new http.CookieJar())")
                        .into())
                }
            },
        };
        let auth = match given.auth {
            None => Auth::Basic,
            Some(v) => match v.to_string(ctx)?.to_std_string_escaped().as_str() {
                "basic" => Auth::Basic,
                "digest" => Auth::Digest,
                // Sending without the asked-for authentication would test something else.
                other => {
                    return Err(JsNativeError::typ()
                        .with_message(format!("auth \"{other}\" is not supported by rk6 (only basic and digest, with credentials in the URL)"))
                        .into())
                }
            },
        };
        let callback = given.callback.map(|v| callback_from_js(&v)).transpose()?;
        let h2c = match given.h2c {
            None => None,
            Some(v) if v.is_boolean() => Some(v.to_boolean()),
            Some(v) => {
                return Err(JsNativeError::typ()
                    .with_message(format!(
                        "the h2c param must be a boolean (true or false), got {}",
                        v.display()
                    ))
                    .into())
            }
        };
        Ok(Params {
            headers,
            tags,
            template: None,
            timeout,
            redirects,
            cookies,
            response_type,
            callback,
            jar,
            compression,
            auth,
            h2c,
        })
    }
}
