//! Per-VU state of the modules (k6's `ModuleInstance`): a module's state type makes its
//! instance once per VU, on first use, and the VU's [`Host`] owns it. A module's natives find
//! the calling VU's instance through its context ([`native`]), so the functions themselves hold
//! nothing of a VU; a new module adds its own state type, not fields on `Host`.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::rc::{Rc, Weak};

use boa_engine::{Context, JsNativeError, JsResult, JsValue, NativeFunction};
use boa_gc::{Finalize, Trace};

use super::Host;

/// A module's per-VU state.
pub(crate) trait ModuleInstance: 'static {
    /// Makes the instance of the VU `host` belongs to (once per VU). A module with work the
    /// event loop must wait for registers it with `host.event_loop` here.
    fn make(host: &Host) -> Rc<Self>;
}

/// The instances a VU made so far.
#[derive(Default)]
pub(crate) struct Instances(RefCell<Vec<Rc<dyn Any>>>);

impl Instances {
    /// The instance of `T`, made on first use.
    pub(crate) fn get<T: ModuleInstance>(&self, host: &Host) -> Rc<T> {
        let found = self
            .0
            .borrow()
            .iter()
            .find(|i| (***i).type_id() == TypeId::of::<T>())
            .cloned();
        if let Some(any) = found {
            if let Ok(instance) = any.downcast::<T>() {
                return instance;
            }
        }
        // Not borrowed while `make` runs: it may ask for another module's instance.
        let made = T::make(host);
        self.0.borrow_mut().push(made.clone());
        made
    }
}

/// The signature of a native that works on a module instance.
pub(crate) type InstanceFn<T> = fn(&Rc<T>, &JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>;

/// A native function calling `f` with the calling VU's instance of `T`.
///
/// The instance is looked up at each call (a few tens of nanoseconds) rather than captured:
/// a function that captures nothing of a VU can be shared by every VU of its thread, as the
/// exports of k6's modules are (`vu::builtins`).
pub(crate) fn native<T: ModuleInstance>(f: InstanceFn<T>) -> NativeFunction {
    NativeFunction::from_copy_closure(move |this, args, ctx| {
        let instance = Host::of(ctx).instance::<T>();
        f(&instance, this, args, ctx)
    })
}

/// An instance as [`bound`] captures it: weakly, because the instance may hold JS objects
/// (prototypes, pending promises) that lead back to the native, and a strong reference in
/// that loop would be a cycle the collector cannot see. The VU's `Host` keeps the instance
/// alive for as long as the VU's JS can run.
struct Captured<T: 'static>(Weak<T>);

impl<T> Finalize for Captured<T> {}

// SAFETY: the capture holds no `Gc` pointer of its own: the JS objects an instance holds
// are rooted by it, as everything the `Host` holds is.
unsafe impl<T> Trace for Captured<T> {
    boa_gc::empty_trace!();
}

/// A native function calling `f` with `instance`, for functions made per VU (a gRPC client's
/// methods, a WebSocket session's): they hold the one instance they work on.
pub(crate) fn bound<T: 'static>(instance: &Rc<T>, f: InstanceFn<T>) -> NativeFunction {
    NativeFunction::from_copy_closure_with_captures(
        move |this, args, captured: &Captured<T>, ctx| match captured.0.upgrade() {
            Some(instance) => f(&instance, this, args, ctx),
            None => Err(JsNativeError::error()
                .with_message("this function belongs to a VU that has ended")
                .into()),
        },
        Captured(Rc::downgrade(instance)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Counter(std::cell::Cell<u32>);

    impl ModuleInstance for Counter {
        fn make(_: &Host) -> Rc<Self> {
            Rc::new(Counter(std::cell::Cell::new(0)))
        }
    }

    #[test]
    fn one_instance_per_vu_and_type() {
        let shared = crate::test_js::shared();
        let a = Host::new(1, shared.clone());
        let b = Host::new(2, shared);
        let first = a.instance::<Counter>();
        first.0.set(7);
        assert_eq!(
            a.instance::<Counter>().0.get(),
            7,
            "the same instance again"
        );
        assert_eq!(b.instance::<Counter>().0.get(), 0, "another VU has its own");
    }
}
