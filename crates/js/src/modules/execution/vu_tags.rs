//! `exec.vu.tags` and `exec.vu.metrics.tags`: tags a VU adds to all its later samples.
//!
//! Both are the same live object: a Proxy whose target holds the current tags (global,
//! scenario, `group`, and the VU's own), so reads, `Object.keys` and `JSON.stringify` work on
//! a plain object, while writes and deletes go through traps that validate the value and
//! update the tag list the VU's samples are built from.

use boa_engine::object::builtins::JsProxyBuilder;
use boa_engine::{js_string, Context, JsNativeError, JsObject, JsResult, JsValue, NativeFunction};
use boa_gc::{Finalize, Gc, GcRefCell, Trace};

use crate::host::Host;

/// The VU's tags object: the Proxy and its target, made on first read.
#[derive(Clone, Trace, Finalize)]
pub(super) struct TagsObject(Gc<GcRefCell<Option<(JsObject, JsObject)>>>);

impl TagsObject {
    /// A tags object not made yet.
    pub(super) fn new() -> TagsObject {
        TagsObject(Gc::new(GcRefCell::new(None)))
    }

    /// The getter of `exec.vu.tags` (and of `exec.vu.metrics.tags`, the same object).
    pub(super) fn getter(&self) -> NativeFunction {
        NativeFunction::from_copy_closure_with_captures(
            |_, _, tags: &TagsObject, ctx| tags.refreshed(ctx),
            self.clone(),
        )
    }

    /// The proxy, refreshed with the current scenario and group.
    fn refreshed(&self, ctx: &mut Context) -> JsResult<JsValue> {
        let host = Host::of(ctx);
        let cached = self.0.borrow().clone();
        let (target, proxy) = match cached {
            Some(pair) => pair,
            None => {
                let target = JsObject::with_object_proto(ctx.intrinsics());
                let proxy: JsObject = JsProxyBuilder::new(target.clone())
                    .set(set_trap)
                    .delete_property(delete_trap)
                    .define_property(define_trap)
                    .build(ctx)?
                    .into();
                *self.0.borrow_mut() = Some((target.clone(), proxy.clone()));
                (target, proxy)
            }
        };
        // System-level tags may have changed since the last read (another scenario or group);
        // the VU's own tags win over them, as in the samples.
        let mut current: Vec<(String, String)> = host.shared.tags.clone();
        {
            let scenario = host.scenario.borrow();
            current.extend(scenario.tags.iter().cloned());
            if !scenario.name.is_empty() {
                current.push(("scenario".into(), scenario.name.clone()));
            }
            current.push(("group".into(), host.group.borrow().clone()));
        }
        current.extend(host.vu_tags.borrow().iter().cloned());
        for (k, v) in current {
            target.create_data_property_or_throw(
                js_string!(k.as_str()),
                js_string!(v.as_str()),
                ctx,
            )?;
        }
        Ok(proxy.into())
    }
}

/// k6 accepts strings, numbers and booleans as tag values and stores their string form.
fn tag_value(key: &str, value: &JsValue, ctx: &mut Context) -> JsResult<String> {
    if value.is_string() || value.is_number() || value.is_boolean() {
        Ok(value.to_string(ctx)?.to_std_string_escaped())
    } else {
        Err(JsNativeError::typ()
            .with_message(format!(
                "invalid value for metric tag '{key}': only String, Boolean and Number types are accepted as a metric tag values"
            ))
            .into())
    }
}

fn set_trap(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let target = args.first().and_then(JsValue::as_object);
    let key = args.get(1).cloned().unwrap_or_default();
    let value = args.get(2).cloned().unwrap_or_default();
    let Some(target) = target else {
        return Ok(false.into());
    };
    let key = key.to_string(ctx)?.to_std_string_escaped();
    let text = tag_value(&key, &value, ctx)?;
    let host = Host::of(ctx);
    {
        let mut tags = host.vu_tags.borrow_mut();
        match tags.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = text.clone(),
            None => tags.push((key.clone(), text.clone())),
        }
    }
    target.create_data_property_or_throw(
        js_string!(key.as_str()),
        js_string!(text.as_str()),
        ctx,
    )?;
    Ok(true.into())
}

fn delete_trap(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let target = args.first().and_then(JsValue::as_object);
    let key = args.get(1).cloned().unwrap_or_default();
    let Some(target) = target else {
        return Ok(false.into());
    };
    let key_text = key.to_string(ctx)?.to_std_string_escaped();
    Host::of(ctx)
        .vu_tags
        .borrow_mut()
        .retain(|(k, _)| *k != key_text);
    target.delete_property_or_throw(js_string!(key_text.as_str()), ctx)?;
    Ok(true.into())
}

fn define_trap(_: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Err(JsNativeError::typ()
        .with_message("VU tags can only be set by assignment (exec.vu.tags.name = value)")
        .into())
}

/// `exec.vu.metrics.metadata`: rk6's samples carry no metadata yet, so it fails loudly.
pub(crate) fn metadata(_: &JsValue, _: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
    Err(JsNativeError::typ()
        .with_message(
            "exec.vu.metrics.metadata is not supported by rk6 yet (see docs/compatibility.md)",
        )
        .into())
}
