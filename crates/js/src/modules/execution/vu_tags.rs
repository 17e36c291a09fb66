//! `exec.vu.tags` and `exec.vu.metrics.tags`: the VU's tags, which all its later samples
//! carry.
//!
//! Both are the same live object: a Proxy over the VU's tag context (as k6's dynamic
//! object over its VU state's tags), so reads, `in`, `Object.keys` and `JSON.stringify`
//! see the tags as they are now (the run's, the scenario's, `group`, `scenario` and the
//! VU's own), while writes and deletes change them after checking the value.

use boa_engine::object::builtins::{JsArray, JsProxyBuilder};
use boa_engine::object::ObjectInitializer;
use boa_engine::property::{Attribute, PropertyKey};
use boa_engine::{
    js_string, Context, JsNativeError, JsObject, JsResult, JsString, JsValue, NativeFunction,
};
use boa_gc::{Finalize, Gc, GcRefCell, Trace};

use crate::host::Host;

/// The VU's tags object, made on first read.
#[derive(Clone, Trace, Finalize)]
pub(super) struct TagsObject(Gc<GcRefCell<Option<JsObject>>>);

impl TagsObject {
    /// A tags object not made yet.
    pub(super) fn new() -> TagsObject {
        TagsObject(Gc::new(GcRefCell::new(None)))
    }

    /// The getter of `exec.vu.tags` (and of `exec.vu.metrics.tags`, the same object).
    pub(super) fn getter(&self) -> NativeFunction {
        NativeFunction::from_copy_closure_with_captures(
            |_, _, tags: &TagsObject, ctx| tags.get(ctx),
            self.clone(),
        )
    }

    fn get(&self, ctx: &mut Context) -> JsResult<JsValue> {
        if let Some(proxy) = &*self.0.borrow() {
            return Ok(proxy.clone().into());
        }
        // The target stays empty: the traps answer from the tag context, and fall back to
        // the target (its prototype) for what is not a tag, such as `toString`.
        let target = JsObject::with_object_proto(ctx.intrinsics());
        let proxy: JsObject = JsProxyBuilder::new(target)
            .get(get_trap)
            .has(has_trap)
            .own_keys(own_keys_trap)
            .get_own_property_descriptor(descriptor_trap)
            .set(set_trap)
            .delete_property(delete_trap)
            .define_property(define_trap)
            .build(ctx)?
            .into();
        *self.0.borrow_mut() = Some(proxy.clone());
        Ok(proxy.into())
    }
}

/// The trap's target and property key, the key as a tag name when it is a string.
fn target_and_key(
    args: &[JsValue],
    ctx: &mut Context,
) -> JsResult<(JsObject, PropertyKey, Option<String>)> {
    let target = args
        .first()
        .and_then(JsValue::as_object)
        .ok_or_else(|| JsNativeError::typ().with_message("VU tags: no proxy target"))?;
    let key = args
        .get(1)
        .cloned()
        .unwrap_or_default()
        .to_property_key(ctx)?;
    let name = match &key {
        PropertyKey::Symbol(_) => None,
        k => Some(k.to_string()),
    };
    Ok((target, key, name))
}

/// The current value of tag `name`.
fn tag(name: &str, ctx: &Context) -> Option<JsValue> {
    let host = Host::of(ctx);
    let tags = host.tags.borrow();
    tags.get(name).map(|v| JsString::from(v).into())
}

fn get_trap(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (target, key, name) = target_and_key(args, ctx)?;
    if let Some(v) = name.and_then(|n| tag(&n, ctx)) {
        return Ok(v);
    }
    target.get(key, ctx)
}

fn has_trap(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (target, key, name) = target_and_key(args, ctx)?;
    if name.is_some_and(|n| tag(&n, ctx).is_some()) {
        return Ok(true.into());
    }
    Ok(target.has_property(key, ctx)?.into())
}

fn own_keys_trap(_: &JsValue, _: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let keys: Vec<JsValue> = {
        let host = Host::of(ctx);
        let tags = host.tags.borrow();
        tags.iter().map(|(k, _)| JsString::from(k).into()).collect()
    };
    Ok(JsArray::from_iter(keys, ctx).into())
}

fn descriptor_trap(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (_, _, name) = target_and_key(args, ctx)?;
    let Some(value) = name.and_then(|n| tag(&n, ctx)) else {
        return Ok(JsValue::undefined());
    };
    Ok(ObjectInitializer::new(ctx)
        .property(js_string!("value"), value, Attribute::all())
        .property(js_string!("writable"), true, Attribute::all())
        .property(js_string!("enumerable"), true, Attribute::all())
        .property(js_string!("configurable"), true, Attribute::all())
        .build()
        .into())
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
    let (_, _, name) = target_and_key(args, ctx)?;
    let Some(name) = name else {
        return Ok(false.into());
    };
    let value = args.get(2).cloned().unwrap_or_default();
    let text = tag_value(&name, &value, ctx)?;
    Host::of(ctx).tags.borrow_mut().set(&name, &text);
    Ok(true.into())
}

fn delete_trap(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let (_, _, name) = target_and_key(args, ctx)?;
    if let Some(name) = name {
        Host::of(ctx).tags.borrow_mut().delete(&name);
    }
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
