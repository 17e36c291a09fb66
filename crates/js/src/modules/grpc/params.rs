//! The params objects of `client.connect()` and `client.invoke()`, read with k6's rules and
//! error texts (the caller prefixes them).

use std::time::Duration;

use boa_engine::property::PropertyKey;
use boa_engine::{Context, JsResult, JsValue};

use crate::host::Host;
use crate::modules::args::string_map;

/// `client.connect()` params.
pub(super) struct ConnectParams {
    pub(super) plaintext: bool,
    pub(super) reflect: bool,
    pub(super) reflect_metadata: Vec<(String, String)>,
    pub(super) timeout: Duration,
    pub(super) max_receive: Option<usize>,
    /// `maxSendSize`: the largest request message sent.
    pub(super) max_send: Option<usize>,
    pub(super) ca_pem: Option<Vec<u8>>,
    pub(super) client_cert: Option<(Vec<u8>, Vec<u8>)>,
    /// `tls.password`: the client key is a legacy encrypted PEM key (decrypted at connect).
    pub(super) key_password: Option<String>,
    /// `authority` (k6 1.2+): the calls' `:authority` (an empty string leaves the address).
    pub(super) authority: Option<String>,
}

/// `client.invoke()` params.
pub(super) struct CallParams {
    pub(super) metadata: Vec<(String, String)>,
    pub(super) tags: Vec<(String, String)>,
    pub(super) timeout: Option<Duration>,
    pub(super) discard_response_message: bool,
}

/// A param's value failed k6's rule: the message, without k6's prefix.
type ParamResult<T> = Result<T, String>;

fn keys(obj: &boa_engine::JsObject, ctx: &mut Context) -> JsResult<Vec<String>> {
    Ok(obj
        .own_property_keys(ctx)?
        .into_iter()
        .filter(|k| !matches!(k, PropertyKey::Symbol(_)))
        .map(|k| k.to_string())
        .collect())
}

/// A duration as k6 reads one: milliseconds as a number, or a Go duration string.
fn duration(v: &JsValue, ctx: &mut Context) -> ParamResult<Duration> {
    if v.is_number() {
        let ms = v.as_number().unwrap_or(0.0);
        return Ok(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    let s = v
        .to_string(ctx)
        .map(|s| s.to_std_string_escaped())
        .map_err(|e| e.to_string())?;
    rk6_options::parse_duration(&s).map_err(|e| e.to_string())
}

/// Go's `%#v` of a value k6 exported from JS, for the scalars a param can hold.
fn go_sharp_v(v: &JsValue) -> String {
    if v.is_null_or_undefined() {
        return "<nil>".to_owned();
    }
    if let Some(b) = v.as_boolean() {
        return b.to_string();
    }
    if let Some(n) = v.as_number() {
        // Integers export as int64, others as float64 (`%#v` keeps a `.0` off either).
        return if n.fract() == 0.0 && n.abs() < 1e21 {
            format!("{}", n as i64)
        } else {
            format!("{n}")
        };
    }
    v.display().to_string()
}

fn boolean(v: &JsValue, name: &str) -> ParamResult<bool> {
    v.as_boolean().ok_or_else(|| {
        format!(
            "invalid {name} value: '{}', it needs to be boolean",
            v.display()
        )
    })
}

fn size(v: &JsValue, name: &str) -> ParamResult<usize> {
    match v.as_number() {
        Some(n) if n.fract() == 0.0 && n > 0.0 => Ok(n as usize),
        Some(n) if n.fract() == 0.0 => Err(format!(
            "invalid {name} value: '{n}, it needs to be a positive integer"
        )),
        _ => Err(format!(
            "invalid {name} value: '{}', it needs to be an integer",
            v.display()
        )),
    }
}

impl ConnectParams {
    /// Reads `value` (an object or nothing).
    pub(super) fn from_js(
        value: Option<&JsValue>,
        host: &Host,
        ctx: &mut Context,
    ) -> JsResult<ParamResult<Self>> {
        let mut p = ConnectParams {
            plaintext: false,
            reflect: false,
            reflect_metadata: Vec::new(),
            timeout: Duration::from_secs(60),
            max_receive: None,
            max_send: None,
            ca_pem: None,
            client_cert: None,
            key_password: None,
            authority: None,
        };
        let Some(obj) = value.and_then(JsValue::as_object) else {
            return Ok(Ok(p));
        };
        for k in keys(&obj, ctx)? {
            let v = obj.get(boa_engine::JsString::from(k.as_str()), ctx)?;
            let r: ParamResult<()> = match k.as_str() {
                "plaintext" => boolean(&v, "plaintext").map(|b| p.plaintext = b),
                "reflect" => boolean(&v, "reflect").map(|b| p.reflect = b),
                "timeout" => duration(&v, ctx)
                    .map(|d| p.timeout = d)
                    .map_err(|e| format!("invalid timeout value: {e}")),
                "reflectMetadata" => {
                    p.reflect_metadata = string_map(Some(&v), ctx)?;
                    Ok(())
                }
                "maxReceiveSize" => size(&v, "maxReceiveSize").map(|n| p.max_receive = Some(n)),
                "maxSendSize" => size(&v, "maxSendSize").map(|n| p.max_send = Some(n)),
                "tls" => tls(&v, host, &mut p, ctx)?,
                "authority" => match v.as_string() {
                    Some(a) => {
                        let a = a.to_std_string_escaped();
                        p.authority = (!a.is_empty()).then_some(a);
                        Ok(())
                    }
                    // k6 prints the value with Go's `%#v`.
                    None => Err(format!(
                        "invalid authority value: '{}', it needs to be a string",
                        go_sharp_v(&v)
                    )),
                },
                other => Err(format!("unknown connect param: {other:?}")),
            };
            if let Err(e) = r {
                return Ok(Err(e));
            }
        }
        Ok(Ok(p))
    }
}

/// The `tls` param: `cert`/`key` PEM strings, `cacerts` a PEM string or an array of them.
fn tls(
    v: &JsValue,
    _host: &Host,
    p: &mut ConnectParams,
    ctx: &mut Context,
) -> JsResult<ParamResult<()>> {
    let Some(obj) = v.as_object() else {
        return Ok(Err("invalid tls value: it needs to be an object".to_owned()));
    };
    let text = |name: &str, ctx: &mut Context| -> JsResult<Option<String>> {
        let v = obj.get(boa_engine::JsString::from(name), ctx)?;
        if v.is_undefined() || v.is_null() {
            return Ok(None);
        }
        Ok(Some(v.to_string(ctx)?.to_std_string_escaped()))
    };
    let cert = text("cert", ctx)?;
    let key = text("key", ctx)?;
    let password = obj.get(boa_engine::JsString::from("password"), ctx)?;
    if let Some(pw) = password.as_string() {
        p.key_password = Some(pw.to_std_string_escaped());
    } else if !password.is_undefined() {
        return Ok(Err(format!(
            "invalid tls password value: '{}', it needs to be a string",
            password.display()
        )));
    }
    match (cert, key) {
        (Some(c), Some(k)) => p.client_cert = Some((c.into_bytes(), k.into_bytes())),
        (None, None) => {}
        _ => {
            return Ok(Err(
                "invalid tls value: both cert and key are needed".to_owned()
            ))
        }
    }
    let ca = obj.get(boa_engine::JsString::from("cacerts"), ctx)?;
    if let Some(arr) = ca.as_object().filter(|o| o.is_array()) {
        let mut all = Vec::new();
        let len = arr
            .get(boa_engine::js_string!("length"), ctx)?
            .to_length(ctx)?;
        for i in 0..len {
            let s = arr.get(i, ctx)?.to_string(ctx)?.to_std_string_escaped();
            all.extend_from_slice(s.as_bytes());
            all.push(b'\n');
        }
        p.ca_pem = Some(all);
    } else if !ca.is_undefined() && !ca.is_null() {
        p.ca_pem = Some(ca.to_string(ctx)?.to_std_string_escaped().into_bytes());
    }
    Ok(Ok(()))
}

impl CallParams {
    /// Reads `value` (an object or nothing).
    pub(super) fn from_js(
        value: Option<&JsValue>,
        ctx: &mut Context,
    ) -> JsResult<ParamResult<Self>> {
        let mut p = CallParams {
            metadata: Vec::new(),
            tags: Vec::new(),
            timeout: None,
            discard_response_message: false,
        };
        let Some(obj) = value.and_then(JsValue::as_object) else {
            return Ok(Ok(p));
        };
        for k in keys(&obj, ctx)? {
            let v = obj.get(boa_engine::JsString::from(k.as_str()), ctx)?;
            let r: ParamResult<()> = match k.as_str() {
                "metadata" => {
                    p.metadata = string_map(Some(&v), ctx)?;
                    Ok(())
                }
                "tags" => {
                    p.tags = string_map(Some(&v), ctx)?;
                    Ok(())
                }
                "timeout" => duration(&v, ctx)
                    .map(|d| p.timeout = (!d.is_zero()).then_some(d))
                    .map_err(|e| format!("invalid timeout value: {e}")),
                "discardResponseMessage" => {
                    boolean(&v, "discardResponseMessage").map(|b| p.discard_response_message = b)
                }
                other => Err(format!("unknown param: {other:?}")),
            };
            if let Err(e) = r {
                return Ok(Err(e));
            }
        }
        Ok(Ok(p))
    }
}
