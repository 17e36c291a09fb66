//! Stackful coroutines that let synchronous k6 calls (`http.get`, `sleep`) wait on Rust
//! futures without blocking the worker thread.
//!
//! A VU's JS context lives inside a corosensei coroutine. A blocking native pins its future in
//! its own frame and suspends the coroutine (Boa's stack included), handing the driver — the
//! tokio task that runs the VU — a pointer to it. The driver polls the future on the worker
//! thread's stack until it is ready, then resumes the coroutine, which takes the output.
//!
//! Polling outside the coroutine keeps the coroutine's stack as shallow as the JS it runs: an
//! HTTP request's futures reach ~80 KiB of stack when polled, which every VU's own stack kept
//! resident (or gave back and faulted in again at each `sleep`, ~15 % of the CPU of a test
//! with think time); the worker's stack is one, and warm.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll};

use corosensei::{Coroutine, CoroutineResult, Yielder};
use tokio_util::sync::CancellationToken;

use crate::host::stack::{PooledStack, StackError, StackPool};

/// Work sent into a coroutine: a closure over the value the coroutine owns (type-erased so
/// that natives can suspend without knowing the owner's type).
type Task = Box<dyn FnOnce(&mut dyn Any) -> Box<dyn Any>>;

enum Resume {
    Run(Task),
    Poll,
    Exit,
}

enum Yielded {
    /// Waiting for the future behind the pointer, which lives in the suspended coroutine's
    /// frame; the driver polls it and resumes the coroutine once it is ready.
    Await(*mut (dyn Await + 'static)),
    /// Nothing to wait for: resume on the next poll.
    Pending,
    Done(Box<dyn Any>),
}

/// A blocked native's future as the driver polls it.
trait Await {
    /// Polls the future; `Ready` once the outcome is stored.
    fn poll_await(&mut self, cx: &mut TaskContext<'_>) -> Poll<()>;
    /// Gives up on the future: the iteration was interrupted.
    fn interrupt(&mut self);
}

/// The future of a [`Suspender::block_on`] and the outcome once known.
struct Awaiting<'a, F: Future> {
    fut: Pin<&'a mut F>,
    out: Option<Result<F::Output, BlockError>>,
}

impl<F: Future> Await for Awaiting<'_, F> {
    fn poll_await(&mut self, cx: &mut TaskContext<'_>) -> Poll<()> {
        if let Poll::Ready(v) = self.fut.as_mut().poll(cx) {
            self.out = Some(Ok(v));
            return Poll::Ready(());
        }
        Poll::Pending
    }

    fn interrupt(&mut self) {
        self.out = Some(Err(BlockError::Interrupted));
    }
}

/// Shared between the driver (tokio side) and the natives running inside the coroutine.
pub struct Suspender {
    yielder: Cell<*const ()>,
    interrupt: RefCell<Option<CancellationToken>>,
    /// Set by [`Suspender::block_on_idle`] just before it suspends: an address inside its
    /// frame, under which the coroutine's stack holds nothing live until it resumes.
    idle_below: Cell<usize>,
}

impl Suspender {
    fn new() -> Rc<Self> {
        Rc::new(Suspender {
            yielder: Cell::new(std::ptr::null()),
            interrupt: RefCell::new(None),
            idle_below: Cell::new(0),
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
    pub fn block_on<F: Future>(&self, fut: Pin<&mut F>) -> Result<F::Output, BlockError> {
        self.block_on_inner(fut, false)
    }

    /// [`Suspender::block_on`] for a wait expected to be long (`sleep`): while the coroutine
    /// is suspended, the stack pages deeper than this call are given back to the OS. Deep
    /// calls made earlier (an HTTP request's futures reach ~80 KiB) would otherwise stay
    /// resident for the VU's whole life although an idle VU needs a few KiB.
    pub fn block_on_idle<F: Future>(&self, fut: Pin<&mut F>) -> Result<F::Output, BlockError> {
        self.block_on_inner(fut, true)
    }

    fn block_on_inner<F: Future>(
        &self,
        fut: Pin<&mut F>,
        idle: bool,
    ) -> Result<F::Output, BlockError> {
        let yielder = self.yielder.get();
        if yielder.is_null() {
            return Err(BlockError::NotInCoroutine);
        }
        // SAFETY: `yielder` was set by the coroutine body that owns this suspender's context
        // and stays valid for the coroutine's whole life; natives only run inside it.
        let yielder = unsafe { &*(yielder as *const Yielder<Resume, Yielded>) };
        let mut awaiting = Awaiting { fut, out: None };
        if idle {
            let probe = 0u8;
            let here = std::hint::black_box(&probe) as *const u8 as usize;
            self.idle_below.set(here);
        }
        let ptr: *mut (dyn Await + '_) = &mut awaiting;
        // SAFETY: only the lifetime is erased. The driver dereferences the pointer only while
        // this frame is suspended in the `suspend` below (it polls between the yield and the
        // resume, and drops the pointer when it resumes or exits the coroutine), so
        // `awaiting` and everything it borrows are alive whenever it is used.
        let ptr: *mut (dyn Await + 'static) = unsafe { std::mem::transmute(ptr) };
        match yielder.suspend(Yielded::Await(ptr)) {
            Resume::Poll => {}
            Resume::Exit => return Err(BlockError::Interrupted),
            Resume::Run(_) => unreachable!("a coroutine got new work while blocked"),
        }
        awaiting.out.take().unwrap_or(Err(BlockError::Interrupted))
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
    co: Coroutine<Resume, Yielded, (), PooledStack>,
    /// Lowest usable address of the coroutine's stack, just above its guard.
    stack_bottom: usize,
    _owner: std::marker::PhantomData<T>,
    suspender: Rc<Suspender>,
}

impl<T: 'static> CoCell<T> {
    /// Moves `value` into a new coroutine. `attach` receives the suspender so the value can
    /// hand it to its natives (stored in the JS context's host data). The stack comes from
    /// the process's [`StackPool`].
    pub fn new(value: T, attach: impl FnOnce(&mut T, Rc<Suspender>)) -> Result<Self, StackError> {
        let suspender = Suspender::new();
        let mut value = value;
        attach(&mut value, suspender.clone());
        let inner = suspender.clone();
        let stack = StackPool::global().alloc()?;
        let stack_bottom = stack.bottom();
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
            stack_bottom,
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
        *self.suspender.interrupt.borrow_mut() = interrupt.clone();
        // One wait for the interruption per run, polled by the driver while a native is
        // blocked, rather than a token clone and a waiter per blocking call (~2 % of a
        // tight loop's time went to the token's locks).
        let mut cancelled = pin!(async {
            match &interrupt {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        });
        let mut interrupted = false;
        let mut input = Some(Resume::Run(Box::new(move |v: &mut dyn Any| {
            Box::new(f(v.downcast_mut::<T>().expect("coroutine value type"))) as Box<dyn Any>
        })));
        // The future a blocked native waits for, in the suspended coroutine's frame.
        let mut awaiting: Option<*mut (dyn Await + 'static)> = None;
        let out = std::future::poll_fn(|cx| loop {
            if let Some(ptr) = awaiting {
                // SAFETY: the coroutine is suspended inside the `block_on` that made `ptr`,
                // whose frame holds the future (see `Suspender::block_on_inner`).
                if unsafe { (*ptr).poll_await(cx) }.is_pending() {
                    // Once fired, the wait is not polled again (an async block must not be).
                    if !interrupted {
                        interrupted = cancelled.as_mut().poll(cx).is_ready();
                    }
                    if !interrupted {
                        return Poll::Pending;
                    }
                    // SAFETY: as above; the coroutine is still suspended in that frame.
                    unsafe { (*ptr).interrupt() };
                }
                awaiting = None;
            }
            let msg = input.take().unwrap_or(Resume::Poll);
            match self.co.resume(msg) {
                CoroutineResult::Yield(Yielded::Await(ptr)) => {
                    let below = self.suspender.idle_below.replace(0);
                    if below != 0 {
                        release_stack(self.stack_bottom, below);
                    }
                    awaiting = Some(ptr);
                }
                CoroutineResult::Yield(Yielded::Pending) => return Poll::Pending,
                CoroutineResult::Yield(Yielded::Done(v)) => return Poll::Ready(v),
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

/// Stack kept under the frame of a suspended [`Suspender::block_on_idle`]. The frames that
/// switch stacks (`Yielder::suspend`) take a few hundred bytes; the rest is the depth an
/// iteration's natives reach below a `sleep` (an HTTP request's, since its futures are polled
/// on the worker's stack): releasing that too made each iteration fault it in again, ~10 %
/// of the CPU of a test with think time for ~7 KiB per VU (design 004). What deeper JS
/// recursion touched is still given back.
const IDLE_MARGIN: usize = 32 << 10;

/// Gives back to the OS the pages of a suspended coroutine's stack between its lowest
/// usable address (`bottom`, above the guard) and `IDLE_MARGIN` below `below`; they read as
/// zero when touched again, which is all a stack needs of fresh pages.
#[cfg(target_os = "linux")]
fn release_stack(bottom: usize, below: usize) {
    let page = crate::host::stack::page_size();
    let start = bottom;
    let end = below.saturating_sub(IDLE_MARGIN) & !(page - 1);
    if end > start {
        // SAFETY: [start, end) lies inside this coroutine's own stack mapping, under every
        // frame that is live while it is suspended (the caller runs on another stack), so
        // no live data is discarded. A failure only means the pages stay resident.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
        }
    }
}

/// Elsewhere `MADV_DONTNEED` does not promise to free the pages; they simply stay resident.
#[cfg(not(target_os = "linux"))]
fn release_stack(_bottom: usize, _below: usize) {}

impl<T: 'static> Drop for CoCell<T> {
    fn drop(&mut self) {
        // Let the coroutine leave its loop normally, so the value drops on the coroutine
        // stack without a forced unwind.
        if self.co.started() && !self.co.done() {
            let _ = self.co.resume(Resume::Exit);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::host::stack::STACK_SIZE;
    use std::task::Waker;

    struct Owner {
        suspender: Option<Rc<Suspender>>,
    }

    /// Writes 256 KiB of this coroutine's stack and returns a checksum of it.
    #[inline(never)]
    fn touch_deep_stack() -> u64 {
        let mut buf = [1u8; 256 << 10];
        std::hint::black_box(&mut buf);
        buf.iter().map(|&b| u64::from(b)).sum()
    }

    /// Resident pages of a coroutine stack whose usable range starts at `bottom`.
    fn resident_pages(bottom: usize) -> usize {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let len = STACK_SIZE;
        let mut vec = vec![0u8; len / page];
        // SAFETY: the range is the coroutine's usable stack mapping, which outlives this
        // call, and `vec` has one byte per page of it.
        let rc =
            unsafe { libc::mincore(bottom as *mut libc::c_void, len, vec.as_mut_ptr().cast()) };
        assert_eq!(rc, 0, "mincore failed");
        vec.iter().filter(|&&b| b & 1 == 1).count()
    }

    /// Runs a deep call then waits on a oneshot inside a coroutine; returns the resident
    /// stack pages while it waits, and the value the coroutine computed after the wait.
    fn deep_then_wait(idle: bool) -> (usize, u64) {
        let mut cell =
            CoCell::new(Owner { suspender: None }, |o, s| o.suspender = Some(s)).expect("stack");
        let bottom = cell.stack_bottom;
        let (tx, rx) = tokio::sync::oneshot::channel::<u64>();
        let resident;
        let out;
        {
            let mut fut = pin!(cell.run(None, move |o: &mut Owner| {
                let before = touch_deep_stack();
                let s = o.suspender.clone().expect("attached");
                let mut rx = pin!(rx);
                let got = if idle {
                    s.block_on_idle(rx.as_mut())
                } else {
                    s.block_on(rx.as_mut())
                };
                // `before` lived in a frame above the wait: it must have survived it.
                before + got.expect("not interrupted").expect("sent")
            }));
            let mut cx = TaskContext::from_waker(Waker::noop());
            assert!(fut.as_mut().poll(&mut cx).is_pending());
            resident = resident_pages(bottom);
            tx.send(7).expect("receiver alive");
            out = match fut.as_mut().poll(&mut cx) {
                Poll::Ready(v) => v,
                Poll::Pending => panic!("the coroutine should have finished"),
            };
        }
        (resident, out)
    }

    #[test]
    fn idle_wait_gives_deep_stack_pages_back_and_resumes_intact() {
        let (busy, busy_out) = deep_then_wait(false);
        let (idle, idle_out) = deep_then_wait(true);
        assert_eq!(busy_out, (256 << 10) + 7);
        assert_eq!(idle_out, (256 << 10) + 7);
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        // 256 KiB touched stay resident during an ordinary wait...
        assert!(
            busy >= (240 << 10) / page,
            "ordinary wait kept {busy} pages"
        );
        // ...and only the frames in use plus the margin during an idle one.
        assert!(
            idle <= (IDLE_MARGIN + (24 << 10)) / page,
            "idle wait kept {idle} pages"
        );
    }
}
