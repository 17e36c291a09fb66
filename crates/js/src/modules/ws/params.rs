//! The params of `ws.connect` and of the WebSocket API's constructor: `headers`, `tags`,
//! `jar`, `compression`.

use boa_engine::{Context, JsResult, JsValue};
use rk6_http::SharedJar;

use crate::modules::args::{prop, string_map};
use crate::modules::http::script_jar;

/// Connection params read from a script's object.
#[derive(Default)]
pub(crate) struct Params {
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) tags: Vec<(String, String)>,
    /// A `new http.CookieJar()` given as `jar`; `None` uses the VU's.
    pub(crate) jar: Option<SharedJar>,
    /// `compression: 'deflate'`: offer permessage-deflate.
    pub(crate) deflate: bool,
}

impl Params {
    /// Reads `value` (nullish: no params). `strict` (the WebSocket API) refuses keys it does
    /// not know, as k6 does there.
    pub(crate) fn read(value: Option<&JsValue>, strict: bool, ctx: &mut Context) -> JsResult<Self> {
        let mut out = Params::default();
        let Some(obj) = value.filter(|v| !v.is_null_or_undefined()) else {
            return Ok(out);
        };
        let obj = obj.to_object(ctx)?;
        let what = if strict { "WebSocket" } else { "ws.connect()" };
        for key in obj.own_property_keys(ctx)? {
            let name = key.to_string();
            match name.as_str() {
                "headers" => {
                    out.headers = string_map(prop(Some(&obj), "headers", ctx)?.as_ref(), ctx)?;
                }
                "tags" => {
                    let tags = prop(Some(&obj), "tags", ctx)?;
                    if let Some(t) = &tags {
                        if !t.is_object() {
                            return Err(crate::modules::go_error::go_error(&
                                format!(
                                    "invalid {} tags: invalid metric tags: expected an object, got {}",
                                    if strict { "WebSocket" } else { "ws.connect() metric" },
                                    t.type_of()
                                ),
                                ctx,
                            ));
                        }
                    }
                    out.tags = string_map(tags.as_ref(), ctx)?;
                }
                "jar" => {
                    if let Some(j) = prop(Some(&obj), "jar", ctx)? {
                        out.jar = script_jar(&j);
                    }
                }
                "compression" => {
                    let v = obj.get(key.clone(), ctx)?;
                    let algo = v.to_string(ctx)?.to_std_string_escaped();
                    let algo = algo.trim();
                    if algo.is_empty() && !strict {
                        continue;
                    }
                    if algo != "deflate" {
                        return Err(crate::modules::go_error::go_error(&
                            format!("unsupported compression algorithm '{algo}', supported algorithm is 'deflate'"),
                            ctx,
                        ));
                    }
                    out.deflate = true;
                }
                other if strict => {
                    return Err(crate::modules::go_error::go_error(
                        &format!("unknown {what}'s option {other}"),
                        ctx,
                    ));
                }
                _ => {}
            }
        }
        Ok(out)
    }
}
