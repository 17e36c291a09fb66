//! What the VUs of one worker thread share: the JavaScript built-ins, k6's globals and the
//! exports of k6's modules.
//!
//! Each VU has its own Boa context, global object and global environment, but the built-ins
//! (`Object`, `Array`, `JSON`, `Map`, …: some 600 objects), the objects k6's globals hold
//! (`console`, `__ENV`, `crypto`, the timer functions, `open`, `require`) and the exports
//! objects of the k6 modules `modules::shareable_exports` lists are built once per thread and
//! frozen (vendor/README.md, patches 9 and 10): a change a script makes to any of them lands
//! in a copy private to its VU, so VUs stay as isolated as in k6. The thread's first VU of a
//! test builds them, the first VU to import a module builds its exports; they are dropped
//! with the thread's last VU.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::{Rc, Weak};
use std::sync::Arc;

use boa_engine::shared_intrinsics::SharedIntrinsics;
use boa_engine::{Context, JsObject, JsResult, JsString};

use crate::host::thread_objects::ThreadObjects;
use crate::shared::Shared;
use crate::vu::globals::Globals;

/// The objects the VUs of a thread share, for one test.
pub(crate) struct Builtins {
    /// The built-ins and the modules' shared state, as modules reach them.
    pub(crate) objects: Rc<ThreadObjects>,
    pub(crate) globals: Globals,
    /// The test these are for (`__ENV` is the test's).
    test: std::sync::Weak<Shared>,
    /// Exports objects (and their names) of the shareable modules imported so far.
    modules: RefCell<HashMap<String, (JsObject, Vec<JsString>)>>,
}

thread_local! {
    static BUILTINS: RefCell<Weak<Builtins>> = const { RefCell::new(Weak::new()) };
}

/// This thread's shared objects for the test `shared`, built now if no VU of the thread
/// holds them.
pub(crate) fn for_this_thread(shared: &Arc<Shared>) -> JsResult<Rc<Builtins>> {
    let current = BUILTINS.with(|b| b.borrow().upgrade());
    if let Some(b) = current.filter(|b| std::ptr::eq(b.test.as_ptr(), Arc::as_ptr(shared))) {
        return Ok(b);
    }
    let built = Rc::new(build(shared)?);
    BUILTINS.with(|b| *b.borrow_mut() = Rc::downgrade(&built));
    Ok(built)
}

/// Boa's built-ins with rk6's changes to them (the leaner `JSON.parse`) and k6's globals,
/// made in a template context and frozen.
fn build(shared: &Arc<Shared>) -> JsResult<Builtins> {
    let mut template = Context::builder().build()?;
    let mut roots: Vec<_> = crate::json::parse::install(&mut template)?
        .into_iter()
        .collect();
    crate::vu::es_additions::install(&mut template)?;
    let globals = Globals::make(&mut template, &shared.program.env)?;
    roots.extend(globals.objects());
    let intrinsics = SharedIntrinsics::freeze(&mut template, &roots)?;
    Ok(Builtins {
        objects: Rc::new(ThreadObjects::new(intrinsics)),
        globals,
        test: Arc::downgrade(shared),
        modules: RefCell::default(),
    })
}

impl Builtins {
    /// The shared exports of module `spec`, made by `make` in `ctx` (and shared) if no VU of
    /// the thread imported it yet; `None` for a module `make` does not share.
    pub(crate) fn module_exports(
        &self,
        spec: &str,
        ctx: &mut Context,
        make: impl FnOnce(&str, &mut Context) -> Option<(JsObject, Vec<JsString>)>,
    ) -> JsResult<Option<(JsObject, Vec<JsString>)>> {
        if let Some(found) = self.modules.borrow().get(spec) {
            return Ok(Some(found.clone()));
        }
        let Some((exports, names)) = make(spec, ctx) else {
            return Ok(None);
        };
        self.objects
            .intrinsics
            .share(std::slice::from_ref(&exports))?;
        self.modules
            .borrow_mut()
            .insert(spec.to_string(), (exports.clone(), names.clone()));
        Ok(Some((exports, names)))
    }
}

#[cfg(test)]
mod tests {
    use super::for_this_thread;
    use std::rc::Rc;

    #[test]
    fn the_vus_of_a_thread_share_one_set_per_test_until_the_last_lets_go() {
        let test = crate::test_js::shared();
        let a = for_this_thread(&test).expect("built");
        let b = for_this_thread(&test).expect("shared");
        assert!(Rc::ptr_eq(&a, &b));
        assert!(
            a.objects.intrinsics.object_count() > 500,
            "{}",
            a.objects.intrinsics.object_count()
        );
        // Another test on the same thread gets its own (its `__ENV` may differ).
        let other_test = crate::test_js::shared();
        let c = for_this_thread(&other_test).expect("another test's");
        assert!(!Rc::ptr_eq(&a, &c));
        drop((a, b, c));
        let d = for_this_thread(&test).expect("rebuilt");
        // A new set: the old one was dropped with its last holder.
        assert_eq!(Rc::strong_count(&d), 1);
        let other = std::thread::spawn(move || {
            let e = for_this_thread(&test).expect("another thread's own");
            Rc::as_ptr(&e) as usize
        })
        .join()
        .expect("thread");
        assert_ne!(other, Rc::as_ptr(&d) as usize);
    }
}
