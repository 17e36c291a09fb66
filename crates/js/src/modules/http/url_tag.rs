//! ``http.url`...` ``: a URL that names its request by its template.

use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    js_string, Context, JsData, JsNativeError, JsResult, JsString, JsValue, NativeFunction,
};
use boa_gc::{Finalize, Trace};

/// What ``http.url`...` `` returns: the interpolated URL and its `${}` template.
#[derive(Trace, Finalize, JsData)]
pub(super) struct UrlTag {
    #[unsafe_ignore_trace]
    pub(super) url: String,
    #[unsafe_ignore_trace]
    pub(super) name: String,
}

/// ``http.url`...` ``: a URL whose `name` and `url` tags are the template with `${}`
/// in place of each interpolated value.
pub(super) fn url_tag(_: &JsValue, a: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let strings = a.first().and_then(JsValue::as_object).ok_or_else(|| {
        JsNativeError::typ().with_message("http.url must be used as a tagged template")
    })?;
    let len = strings.get(js_string!("length"), ctx)?.to_number(ctx)? as u32;
    let mut url = String::new();
    let mut name = String::new();
    for i in 0..len {
        let part = strings.get(i, ctx)?.to_string(ctx)?.to_std_string_escaped();
        url.push_str(&part);
        name.push_str(&part);
        if i + 1 < len {
            let v = a.get(i as usize + 1).cloned().unwrap_or_default();
            url.push_str(&v.to_string(ctx)?.to_std_string_escaped());
            name.push_str("${}");
        }
    }
    let get_url = FunctionObjectBuilder::new(
        ctx.realm(),
        NativeFunction::from_fn_ptr(|this, _, _| {
            let url = this
                .as_object()
                .and_then(|o| o.downcast_ref::<UrlTag>().map(|t| t.url.clone()))
                .unwrap_or_default();
            Ok(JsString::from(url).into())
        }),
    )
    .name(js_string!("getURL"))
    .build();
    let obj = ObjectInitializer::with_native_data(
        UrlTag {
            url: url.clone(),
            name: name.clone(),
        },
        ctx,
    )
    .property(js_string!("name"), JsString::from(name), Attribute::all())
    .property(
        js_string!("url"),
        JsString::from(url.as_str()),
        Attribute::all(),
    )
    .property(
        js_string!("clean_url"),
        JsString::from(url),
        Attribute::all(),
    )
    .property(js_string!("clean"), get_url.clone(), Attribute::all())
    .property(js_string!("getURL"), get_url, Attribute::all())
    .build();
    Ok(obj.into())
}
