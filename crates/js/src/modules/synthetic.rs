//! Building a k6 module as a synthetic ES module: a default export object holding the same
//! values as the named exports.

use boa_engine::module::SyntheticModuleInitializer;
use boa_engine::object::{FunctionObjectBuilder, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{js_string, Context, JsObject, JsString, JsValue, Module, NativeFunction};

/// A native function exported by a module.
pub(crate) type Export = (&'static str, usize, NativeFunction);

pub(crate) fn synthetic(exports: Vec<Export>, ctx: &mut Context) -> Module {
    synthetic_with(&[], exports, ctx)
}

/// A module exporting string `constants` first, then the native functions `exports`.
pub(crate) fn synthetic_with(
    constants: &[(&str, &str)],
    exports: Vec<Export>,
    ctx: &mut Context,
) -> Module {
    let (object, names) = exports_object(constants, exports, ctx);
    from_object(object, names, ctx)
}

/// The default export object of a module exporting `constants`, then `exports`, with the
/// export names in order.
pub(crate) fn exports_object(
    constants: &[(&str, &str)],
    exports: Vec<Export>,
    ctx: &mut Context,
) -> (JsObject, Vec<JsString>) {
    let realm = ctx.realm().clone();
    let mut init = ObjectInitializer::new(ctx);
    let mut names = Vec::with_capacity(constants.len() + exports.len());
    for (name, value) in constants {
        let name = JsString::from(*name);
        init.property(name.clone(), JsString::from(*value), Attribute::all());
        names.push(name);
    }
    for (name, len, f) in exports {
        let name = JsString::from(name);
        // Exports named like classes (`http.CookieJar`) are called with `new`.
        let constructor = name
            .to_std_string_escaped()
            .starts_with(|c: char| c.is_ascii_uppercase());
        let func = FunctionObjectBuilder::new(&realm, f)
            .name(name.clone())
            .length(len)
            .constructor(constructor)
            .build();
        // Enumerable, as in k6: `Object.keys(http)` lists the module's functions.
        init.property(name.clone(), func, Attribute::all());
        names.push(name);
    }
    (init.build(), names)
}

/// A module whose default export is `object` and whose named exports are its properties
/// `names`. As in k6, the namespace lists no `default`, and an import of a name the module
/// lacks gives `null` instead of failing to link.
pub(crate) fn from_object(object: JsObject, names: Vec<JsString>, ctx: &mut Context) -> Module {
    Module::open_synthetic(
        &names.clone(),
        SyntheticModuleInitializer::from_copy_closure_with_captures(
            |module, (object, names), ctx| {
                let default = js_string!("default");
                module.set_export(&default, object.clone().into())?;
                for name in module.binding_names() {
                    if name == default {
                        continue;
                    }
                    let value = if names.contains(&name) {
                        object.get(name.clone(), ctx)?
                    } else {
                        JsValue::null()
                    };
                    module.set_export(&name, value)?;
                }
                Ok(())
            },
            (object, names),
        ),
        None,
        None,
        ctx,
    )
}
