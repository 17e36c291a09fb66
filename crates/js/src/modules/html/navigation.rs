//! The requests `Response.submitForm()` and `Response.clickLink()` make from a page.

use std::rc::Rc;

use boa_engine::object::builtins::JsArray;
use boa_engine::property::PropertyKey;
use boa_engine::{Context, JsNativeError, JsObject, JsResult, JsString, JsValue};
use ego_tree::NodeId;
use http::Method;

use super::document::{self, Doc, Value};
use super::selection::parse;
use crate::modules::args::prop;
use crate::value::{define, plain_object};

/// A request to make: method, absolute URL and, for forms sent in the body, the fields.
pub(crate) struct Navigation {
    pub(crate) method: Method,
    pub(crate) url: String,
    pub(crate) body: Option<JsValue>,
}

fn string_opt(opts: Option<&JsObject>, key: &str, ctx: &mut Context) -> JsResult<Option<String>> {
    prop(opts, key, ctx)?
        .map(|v| v.to_string(ctx).map(|s| s.to_std_string_escaped()))
        .transpose()
}

fn first_match(doc: &Doc, root: NodeId, selector: &str) -> JsResult<Option<NodeId>> {
    let sel = parse(selector)?;
    Ok(doc.find(&[root], &sel).first().copied())
}

/// `target` resolved against the page's URL.
fn resolve(doc: &Doc, target: &str) -> JsResult<String> {
    let base = url::Url::parse(&doc.url).map_err(|e| {
        JsNativeError::error().with_message(format!("invalid response URL \"{}\": {e}", doc.url))
    })?;
    let joined = base.join(target).map_err(|e| {
        JsNativeError::error().with_message(format!("invalid URL \"{target}\": {e}"))
    })?;
    Ok(joined.to_string())
}

/// The request of `submitForm({formSelector, fields, submitSelector})`: the form's own fields, then the submit button's, then
/// `fields` over them; a GET form sends them in the query, others in a urlencoded body.
pub(crate) fn submit_form(
    doc: &Rc<Doc>,
    opts: Option<&JsObject>,
    ctx: &mut Context,
) -> JsResult<Navigation> {
    let form_selector = string_opt(opts, "formSelector", ctx)?.unwrap_or_else(|| "form".into());
    let Some(form) = first_match(doc, doc.root(), &form_selector)? else {
        return Err(JsNativeError::error()
            .with_message(format!(
                "no form found for selector '{form_selector}' in response '{}'",
                doc.url
            ))
            .into());
    };
    let method = doc
        .attr(form, "method")
        .unwrap_or("GET")
        .to_ascii_uppercase();
    let method = Method::from_bytes(method.as_bytes()).map_err(|_| {
        JsNativeError::typ().with_message(format!("invalid form method \"{method}\""))
    })?;
    let url = match doc.attr(form, "action") {
        Some(action) if !action.is_empty() => resolve(doc, action)?,
        _ => doc.url.clone(),
    };
    let mut fields = document::last_per_name(doc.form_fields(&[form]));
    let submit_selector =
        string_opt(opts, "submitSelector", ctx)?.unwrap_or_else(|| "[type=\"submit\"]".into());
    if let Some(button) = first_match(doc, form, &submit_selector)? {
        if let Some(name) = doc.attr(button, "name").filter(|n| !n.is_empty()) {
            // k6 1.1.0 was seen to send the button's `value` even when the script names
            // another attribute in `submitSelectorAttribute`, so that option is not read.
            let value = doc.attr(button, "value").unwrap_or("").to_owned();
            set(&mut fields, name.to_owned(), Value::One(value));
        }
    }
    if let Some(given) = prop(opts, "fields", ctx)?.and_then(|v| v.as_object()) {
        for key in given.own_property_keys(ctx)? {
            if matches!(key, PropertyKey::Symbol(_)) {
                continue;
            }
            let name = key.to_string();
            let v = given.get(key, ctx)?;
            let value = match v.as_object().filter(JsObject::is_array) {
                Some(arr) => {
                    let arr = JsArray::from_object(arr)?;
                    let len = arr.length(ctx)?;
                    let mut items = Vec::with_capacity(len as usize);
                    for i in 0..len {
                        items.push(arr.get(i, ctx)?.to_string(ctx)?.to_std_string_escaped());
                    }
                    Value::Many(items)
                }
                None => Value::One(v.to_string(ctx)?.to_std_string_escaped()),
            };
            set(&mut fields, name, value);
        }
    }
    if method == Method::GET {
        let mut url = url::Url::parse(&url).map_err(|e| {
            JsNativeError::error().with_message(format!("invalid form URL \"{url}\": {e}"))
        })?;
        let query = document::encode_form(&fields);
        url.set_query((!query.is_empty()).then_some(query.as_str()));
        return Ok(Navigation {
            method,
            url: url.to_string(),
            body: None,
        });
    }
    let body = plain_object(ctx);
    for (name, value) in fields {
        let v: JsValue = match value {
            Some(Value::One(s)) => JsString::from(s).into(),
            Some(Value::Many(list)) if !list.is_empty() => JsArray::from_iter(
                list.into_iter().map(|s| JsValue::from(JsString::from(s))),
                ctx,
            )
            .into(),
            _ => continue,
        };
        define(&body, JsString::from(name), v);
    }
    Ok(Navigation {
        method,
        url,
        body: Some(body.into()),
    })
}

fn set(fields: &mut Vec<(String, Option<Value>)>, name: String, value: Value) {
    match fields.iter_mut().find(|(n, _)| *n == name) {
        Some(slot) => slot.1 = Some(value),
        None => fields.push((name, Some(value))),
    }
}

/// The request of `clickLink({selector})`: a GET of the first match's `href`.
pub(crate) fn click_link(
    doc: &Rc<Doc>,
    opts: Option<&JsObject>,
    ctx: &mut Context,
) -> JsResult<Navigation> {
    let selector = string_opt(opts, "selector", ctx)?.unwrap_or_else(|| "a[href]".into());
    let Some(link) = first_match(doc, doc.root(), &selector)? else {
        return Err(JsNativeError::error()
            .with_message(format!(
                "no element found for selector '{selector}' in response '{}'",
                doc.url
            ))
            .into());
    };
    let href = doc.attr(link, "href").ok_or_else(|| {
        JsNativeError::error().with_message(format!(
            "the element found for selector '{selector}' has no href attribute"
        ))
    })?;
    Ok(Navigation {
        method: Method::GET,
        url: resolve(doc, href)?,
        body: None,
    })
}
