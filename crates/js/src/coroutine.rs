//! Stackful coroutines that let synchronous k6 calls (`http.get`, `sleep`) wait on Rust
//! futures without blocking the worker thread.
//!
//! A VU's JS context lives inside a corosensei coroutine. A blocking native polls its future
//! with the waker of the tokio task that drives the VU; on `Pending` it suspends the whole
//! coroutine (Boa's stack included) and the task returns `Pending`. When the future's waker
//! fires, tokio polls the task again, which resumes the coroutine where it stopped.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll, Waker};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use tokio_util::sync::CancellationToken;

/// Work sent into a coroutine: a closure over the value the coroutine owns (type-erased so
/// that natives can suspend without knowing the owner's type).
type Task = Box<dyn FnOnce(&mut dyn Any) -> Box<dyn Any>>;

enum Resume {
    Run(Task),
    Poll,
    Exit,
}

enum Yielded {
    Pending,
    Done(Box<dyn Any>),
}

/// Shared between the driver (tokio side) and the natives running inside the coroutine.
pub struct Suspender {
    yielder: Cell<*const ()>,
    waker: RefCell<Waker>,
    interrupt: RefCell<Option<CancellationToken>>,
}

impl Suspender {
    fn new() -> Rc<Self> {
        Rc::new(Suspender {
            yielder: Cell::new(std::ptr::null()),
            waker: RefCell::new(Waker::noop().clone()),
            interrupt: RefCell::new(None),
        })
    }

    /// Whether the current iteration was asked to stop.
    pub fn is_interrupted(&self) -> bool {
        self.interrupt
            .borrow()
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Runs `fut` to completion from synchronous code inside the coroutine, suspending the
    /// coroutine while it is pending. Fails at once when the iteration is interrupted, and when
    /// called outside a coroutine (the init context, where blocking calls are not allowed).
    /// The future is taken pinned in place: request futures are several KiB, and moving
    /// them through each layer by value showed up as memcpy in profiles.
    pub fn block_on<F: Future>(&self, mut fut: Pin<&mut F>) -> Result<F::Output, BlockError> {
        let yielder = self.yielder.get();
        if yielder.is_null() {
            return Err(BlockError::NotInCoroutine);
        }
        // SAFETY: `yielder` was set by the coroutine body that owns this suspender's context
        // and stays valid for the coroutine's whole life; natives only run inside it.
        let yielder = unsafe { &*(yielder as *const Yielder<Resume, Yielded>) };
        let interrupt = self.interrupt.borrow().clone();
        let mut cancelled = pin!(async {
            match &interrupt {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        });
        loop {
            let waker = self.waker.borrow().clone();
            let mut cx = TaskContext::from_waker(&waker);
            if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                return Ok(v);
            }
            if cancelled.as_mut().poll(&mut cx).is_ready() {
                return Err(BlockError::Interrupted);
            }
            match yielder.suspend(Yielded::Pending) {
                Resume::Poll => {}
                Resume::Exit => return Err(BlockError::Interrupted),
                Resume::Run(_) => unreachable!("a coroutine got new work while blocked"),
            }
        }
    }
}

/// Why [`Suspender::block_on`] gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockError {
    /// The iteration was interrupted.
    Interrupted,
    /// Not inside a coroutine (init context).
    NotInCoroutine,
}

/// A value of type `T` living inside its own coroutine, on which closures can be run that may
/// block through the [`Suspender`].
pub struct CoCell<T: 'static> {
    co: Coroutine<Resume, Yielded, (), DefaultStack>,
    _owner: std::marker::PhantomData<T>,
    suspender: Rc<Suspender>,
}

/// Coroutine stacks are virtual: only touched pages cost memory. Recursion that passes
/// through natives (`map`, `sort`, `JSON.parse` revivers, `check`) uses native stack on every
/// level; up to the runtime's recursion limit (2048 calls) it peaked under 3 MiB, and 8 MiB
/// keeps a margin so runaway recursion ends in a RangeError, never a stack overflow.
const STACK_SIZE: usize = 8 << 20;

impl<T: 'static> CoCell<T> {
    /// Moves `value` into a new coroutine. `attach` receives the suspender so the value can
    /// hand it to its natives (stored in the JS context's host data).
    pub fn new(value: T, attach: impl FnOnce(&mut T, Rc<Suspender>)) -> std::io::Result<Self> {
        let suspender = Suspender::new();
        let mut value = value;
        attach(&mut value, suspender.clone());
        let inner = suspender.clone();
        let stack = DefaultStack::new(STACK_SIZE)?;
        let mut value: Box<dyn Any> = Box::new(value);
        let co = Coroutine::with_stack(
            stack,
            move |yielder: &Yielder<Resume, Yielded>, first: Resume| {
                inner.yielder.set(yielder as *const _ as *const ());
                let mut msg = first;
                loop {
                    match msg {
                        Resume::Run(task) => {
                            let out = task(value.as_mut());
                            msg = yielder.suspend(Yielded::Done(out));
                        }
                        Resume::Poll => msg = yielder.suspend(Yielded::Pending),
                        Resume::Exit => break,
                    }
                }
                inner.yielder.set(std::ptr::null());
            },
        );
        Ok(CoCell {
            co,
            suspender,
            _owner: std::marker::PhantomData,
        })
    }

    /// Runs `f` on the value inside the coroutine; blocking calls inside it suspend this future.
    /// `interrupt`, when cancelled, makes pending blocking calls fail with [`BlockError::Interrupted`].
    pub async fn run<R: 'static>(
        &mut self,
        interrupt: Option<CancellationToken>,
        f: impl FnOnce(&mut T) -> R + 'static,
    ) -> R {
        *self.suspender.interrupt.borrow_mut() = interrupt;
        let mut input = Some(Resume::Run(Box::new(move |v: &mut dyn Any| {
            Box::new(f(v.downcast_mut::<T>().expect("coroutine value type"))) as Box<dyn Any>
        })));
        let out = std::future::poll_fn(|cx| {
            self.suspender.waker.borrow_mut().clone_from(cx.waker());
            let msg = input.take().unwrap_or(Resume::Poll);
            match self.co.resume(msg) {
                CoroutineResult::Yield(Yielded::Pending) => Poll::Pending,
                CoroutineResult::Yield(Yielded::Done(v)) => Poll::Ready(v),
                CoroutineResult::Return(()) => {
                    unreachable!("a VU coroutine ended while running work")
                }
            }
        })
        .await;
        *self.suspender.interrupt.borrow_mut() = None;
        *out.downcast::<R>().expect("coroutine result type")
    }
}

impl<T: 'static> Drop for CoCell<T> {
    fn drop(&mut self) {
        // Let the coroutine leave its loop normally, so the value drops on the coroutine
        // stack without a forced unwind.
        if self.co.started() && !self.co.done() {
            let _ = self.co.resume(Resume::Exit);
        }
    }
}
