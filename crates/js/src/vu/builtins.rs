//! The JavaScript built-ins the VUs of one worker thread share.
//!
//! Each VU has its own Boa context, global object and global environment, but the built-ins
//! (`Object`, `Array`, `JSON`, `Map`, …: some 600 objects) are built once per thread, in a
//! template context, and frozen (vendor/README.md, patch 9): a change a script makes to a
//! built-in lands in a copy private to its VU, so VUs stay as isolated as in k6. The thread's
//! first VU builds them; they are dropped with its last.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use boa_engine::shared_intrinsics::SharedIntrinsics;
use boa_engine::{Context, JsResult};

thread_local! {
    static BUILTINS: RefCell<Weak<SharedIntrinsics>> = const { RefCell::new(Weak::new()) };
}

/// This thread's shared built-ins, built now if no VU of the thread holds them.
pub(crate) fn for_this_thread() -> JsResult<Rc<SharedIntrinsics>> {
    if let Some(shared) = BUILTINS.with(|b| b.borrow().upgrade()) {
        return Ok(shared);
    }
    let shared = Rc::new(build()?);
    BUILTINS.with(|b| *b.borrow_mut() = Rc::downgrade(&shared));
    Ok(shared)
}

/// Boa's built-ins with rk6's changes to them (the leaner `JSON.parse`), frozen.
fn build() -> JsResult<SharedIntrinsics> {
    let mut template = Context::builder().build()?;
    let extra: Vec<_> = crate::json::parse::install(&mut template)?
        .into_iter()
        .collect();
    SharedIntrinsics::freeze(&mut template, &extra)
}

#[cfg(test)]
mod tests {
    use super::for_this_thread;
    use std::rc::Rc;

    #[test]
    fn the_vus_of_a_thread_share_one_set_until_the_last_lets_go() {
        let a = for_this_thread().expect("built");
        let b = for_this_thread().expect("shared");
        assert!(Rc::ptr_eq(&a, &b));
        assert!(a.object_count() > 500, "{}", a.object_count());
        let addr = Rc::as_ptr(&a) as usize;
        drop((a, b));
        let c = for_this_thread().expect("rebuilt");
        // A new set: the old one was dropped with its last holder.
        assert_eq!(Rc::strong_count(&c), 1);
        let _ = addr;
        let other = std::thread::spawn(|| {
            let d = for_this_thread().expect("another thread's own");
            Rc::as_ptr(&d) as usize
        })
        .join()
        .expect("thread");
        assert_ne!(other, Rc::as_ptr(&c) as usize);
    }
}
