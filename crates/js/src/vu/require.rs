//! k6's global `require()`: init context only, resolving against the file that calls it
//! (there is no per-file `require`), sharing the VU's module instances with `import`.

use boa_engine::{Context, JsNativeError, JsResult, JsValue};

use crate::host::{Host, Phase};
use crate::modules::args::string_arg;
use crate::value::go_error;
use crate::vu::loader::{caller, Loader};

/// The global `require(spec)` (made into a function by `vu::globals`).
pub(crate) fn require(_: &JsValue, args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let host = Host::of(ctx);
    if host.phase.get() != Phase::Init {
        return Err(go_error("the \"require\" function is only available in the init stage (i.e. the global scope), see https://grafana.com/docs/k6/latest/using-k6/test-lifecycle/ for more information", ctx));
    }
    let spec = string_arg(args, 0, ctx)?;
    if spec.is_empty() {
        return Err(go_error(
            "require() can't be used with an empty specifier",
            ctx,
        ));
    }
    let loader = ctx
        .downcast_module_loader::<Loader>()
        .ok_or_else(|| JsNativeError::error().with_message("rk6's module loader is missing"))?;
    let base = caller(ctx, loader.program());
    loader.require(&spec, &base, ctx)
}
