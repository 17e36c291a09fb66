//! The JS objects the VUs of one worker thread share, as modules reach them: the frozen
//! built-ins (vendor/README.md, patches 9 and 10) and the state modules keep for every VU
//! of the thread. `vu::builtins` builds them; this is the part a module's code may use.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use boa_engine::shared_intrinsics::SharedIntrinsics;
use boa_engine::{Context, JsObject, JsResult};

/// The objects the VUs of a thread share.
pub(crate) struct ThreadObjects {
    pub(crate) intrinsics: SharedIntrinsics,
    /// Modules' thread-wide state holding shared objects ([`ThreadObjects::state`]), by type.
    states: RefCell<Vec<Rc<dyn Any>>>,
}

impl ThreadObjects {
    pub(crate) fn new(intrinsics: SharedIntrinsics) -> Self {
        ThreadObjects {
            intrinsics,
            states: RefCell::default(),
        }
    }

    /// The shared objects of the VU `ctx` belongs to.
    pub(crate) fn of(ctx: &Context) -> Rc<ThreadObjects> {
        ctx.get_data::<Rc<ThreadObjects>>()
            .expect("every rk6 context has its thread's objects")
            .clone()
    }

    /// A module's state for every VU of the thread (objects such as a prototype that its
    /// JS values share), made by `make` in `ctx` on first use; the objects `make` returns
    /// with it are shared.
    pub(crate) fn state<T: 'static>(
        &self,
        ctx: &mut Context,
        make: impl FnOnce(&mut Context) -> (T, Vec<JsObject>),
    ) -> JsResult<Rc<T>> {
        let found = self
            .states
            .borrow()
            .iter()
            .find_map(|s| s.clone().downcast::<T>().ok());
        if let Some(state) = found {
            return Ok(state);
        }
        let (state, objects) = make(ctx);
        self.intrinsics.share(&objects)?;
        let state = Rc::new(state);
        self.states.borrow_mut().push(state.clone());
        Ok(state)
    }
}
