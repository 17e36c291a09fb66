//! Coroutine stacks carved from shared reservations, so that a VU's stack costs no memory
//! mapping of its own.
//!
//! corosensei's `DefaultStack` maps every stack separately and `mprotect`s its guard page:
//! two kernel mappings (VMAs) per VU, and `vm.max_map_count`'s default of 65,530 stopped a
//! process near 30,000 VUs. Here a reservation ("chunk") holds [`SLOTS_PER_CHUNK`] stacks in
//! one mapping; each stack's low end is guarded with `MADV_GUARD_INSTALL` (Linux ≥ 6.13),
//! which faults like `PROT_NONE` without splitting the mapping. Older kernels refuse it with
//! `EINVAL`, and then the guard is an `mprotect`ed range as before (two mappings a stack).
//! Freed stacks go back to a free list with their guard in place and their pages released.

use std::io;
use std::mem::ManuallyDrop;
use std::sync::{Mutex, OnceLock};

use corosensei::stack::valgrind::ValgrindStackRegistration;
use corosensei::stack::{Stack, StackPointer};

/// Usable bytes of every coroutine stack. Stacks are virtual: only touched pages cost
/// memory. Recursion that passes through natives (`map`, `sort`, `JSON.parse` revivers,
/// `check`) uses native stack on every level; up to the runtime's recursion limit (2048
/// calls) it peaked under 3 MiB, and 8 MiB keeps a margin so runaway recursion ends in a
/// RangeError, never a stack overflow.
pub(crate) const STACK_SIZE: usize = 8 << 20;

/// Guard below each stack. Rust probes every page of a large frame, so one page would do;
/// a guard costs no memory and no mapping, so it is wide enough to also catch a frame of
/// foreign code that skips its probes.
pub(crate) const GUARD_SIZE: usize = 64 << 10;

/// A stack with its guard: the stride of stacks in a chunk.
const SLOT: usize = GUARD_SIZE + STACK_SIZE;

/// Stacks per reservation: 32 × 8 MiB = 258 MiB of address space. Few enough that a small
/// test reserves little beyond its 8 MiB a VU (which `ulimit -v` users budget for), many
/// enough that 100,000 VUs need ~3,100 mappings at most (the kernel merges adjacent chunks
/// into one mapping when it can).
pub(crate) const SLOTS_PER_CHUNK: usize = 32;

/// `MADV_GUARD_INSTALL` from `<linux/mman.h>` (Linux 6.13); the libc crate lacks it.
#[cfg(target_os = "linux")]
const MADV_GUARD_INSTALL: libc::c_int = 102;

/// How stack guards are made in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GuardKind {
    /// `MADV_GUARD_INSTALL`: a guard inside the chunk's mapping.
    Madvise,
    /// `mprotect(PROT_NONE)`: the guard splits the mapping, two mappings per stack.
    Mprotect,
}

/// The guard this kernel supports, probed once on a scratch mapping.
pub(crate) fn guard_kind() -> GuardKind {
    static KIND: OnceLock<GuardKind> = OnceLock::new();
    *KIND.get_or_init(probe_guard)
}

#[cfg(target_os = "linux")]
fn probe_guard() -> GuardKind {
    let len = page_size();
    // SAFETY: a fresh private anonymous mapping, unmapped below; nothing else sees it.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return GuardKind::Mprotect;
        }
        let ok = libc::madvise(p, len, MADV_GUARD_INSTALL) == 0;
        libc::munmap(p, len);
        if ok {
            GuardKind::Madvise
        } else {
            GuardKind::Mprotect
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn probe_guard() -> GuardKind {
    GuardKind::Mprotect
}

/// Whether each VU stack's guard splits its reservation into two mappings of the stack's
/// own, as on kernels without `MADV_GUARD_INSTALL`; otherwise a reservation of
/// [`STACKS_PER_MAPPING`] stacks is one mapping.
pub fn stack_guards_split() -> bool {
    guard_kind() == GuardKind::Mprotect
}

/// Stacks a reservation holds.
pub const STACKS_PER_MAPPING: u64 = SLOTS_PER_CHUNK as u64;

pub(crate) fn page_size() -> usize {
    static PAGE: OnceLock<usize> = OnceLock::new();
    // SAFETY: sysconf has no preconditions.
    *PAGE.get_or_init(|| match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as usize,
        _ => 4096,
    })
}

/// Why a stack could not be had.
#[derive(Debug, thiserror::Error)]
#[error(
    "{source} with {in_use} VU stacks allocated; the process may be at vm.max_map_count \
     ({}) or its address-space limit (ulimit -v): raise them \
     (`sysctl -w vm.max_map_count=262144`) or run fewer VUs per process",
    map_figures()
)]
pub(crate) struct StackError {
    /// What the kernel said.
    pub(crate) source: io::Error,
    /// Stacks handed out and not yet returned.
    pub(crate) in_use: usize,
}

/// `65530, this process has 65490 mappings`, from `/proc`; empty parts where unknown.
fn map_figures() -> String {
    let max = std::fs::read_to_string("/proc/sys/vm/max_map_count").unwrap_or_default();
    let used = std::fs::read_to_string("/proc/self/maps").map(|m| m.lines().count());
    match used {
        Ok(n) => format!("{}, this process has {n} mappings", max.trim()),
        Err(_) => max.trim().to_string(),
    }
}

/// Where stacks come from; one per process ([`StackPool::global`]), more in tests.
pub(crate) struct StackPool {
    state: Mutex<PoolState>,
    /// The guard to make; a test may force [`GuardKind::Mprotect`].
    guard: GuardKind,
    /// At most this many stacks at once, to test the failure path cheaply.
    limit: Option<usize>,
}

#[derive(Default)]
struct PoolState {
    /// Low ends (guard starts) of freed slots: guarded, pages released.
    free: Vec<usize>,
    /// The next never-used slot of the newest chunk, and that chunk's end.
    next: usize,
    end: usize,
    in_use: usize,
}

impl StackPool {
    /// A pool that makes guards of `guard` kind.
    pub(crate) const fn new(guard: GuardKind, limit: Option<usize>) -> StackPool {
        StackPool {
            state: Mutex::new(PoolState {
                free: Vec::new(),
                next: 0,
                end: 0,
                in_use: 0,
            }),
            guard,
            limit,
        }
    }

    /// The process's pool. Stacks are created and dropped on the VUs' worker threads, so it
    /// is shared by all of them (a pool per thread would keep a part-used chunk per worker);
    /// the lock is taken once per VU created or dropped.
    pub(crate) fn global() -> &'static StackPool {
        static POOL: OnceLock<StackPool> = OnceLock::new();
        POOL.get_or_init(|| StackPool::new(guard_kind(), test_limit()))
    }

    /// Stacks handed out and not yet dropped.
    #[cfg(test)]
    pub(crate) fn in_use(&self) -> usize {
        self.lock().in_use
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        // The state stays consistent across a panic: every update is a single push or field.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A stack of [`STACK_SIZE`] usable bytes over a guard of [`GUARD_SIZE`].
    pub(crate) fn alloc(&'static self) -> Result<PooledStack, StackError> {
        let mut st = self.lock();
        let fail = |source, in_use| StackError { source, in_use };
        if self.limit.is_some_and(|l| st.in_use >= l) {
            return Err(fail(io::Error::from_raw_os_error(libc::ENOMEM), st.in_use));
        }
        let low = match st.free.pop() {
            Some(low) => low,
            None => {
                if st.next == st.end {
                    let base = map_chunk().map_err(|e| fail(e, st.in_use))?;
                    st.next = base;
                    st.end = base + SLOT * SLOTS_PER_CHUNK;
                }
                let low = st.next;
                if let Err(e) = self.install_guard(low) {
                    // The slot stays unused at `next`; the next attempt retries it.
                    return Err(fail(e, st.in_use));
                }
                st.next += SLOT;
                low
            }
        };
        st.in_use += 1;
        Ok(PooledStack {
            low,
            pool: self,
            valgrind: ManuallyDrop::new(ValgrindStackRegistration::new(low as *mut u8, SLOT)),
        })
    }

    fn install_guard(&self, low: usize) -> io::Result<()> {
        let addr = low as *mut libc::c_void;
        // SAFETY: [low, low + GUARD_SIZE) is the guard range of a slot of a chunk this pool
        // mapped and never unmaps, and no stack uses it yet.
        let rc = unsafe {
            match self.guard {
                #[cfg(target_os = "linux")]
                GuardKind::Madvise => libc::madvise(addr, GUARD_SIZE, MADV_GUARD_INSTALL),
                #[cfg(not(target_os = "linux"))]
                GuardKind::Madvise => unreachable!("guards by madvise are Linux only"),
                GuardKind::Mprotect => libc::mprotect(addr, GUARD_SIZE, libc::PROT_NONE),
            }
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn free(&self, low: usize) {
        // A reused slot must start like a fresh mapping: uncommitted, reading zero. Guards
        // made by MADV_GUARD_INSTALL survive MADV_DONTNEED (the kernel's madvise(2)), and the
        // range here starts above the guard anyway.
        #[cfg(target_os = "linux")]
        // SAFETY: the slot's stack range belongs to a stack that was just dropped; nothing
        // runs on it or points into it any more.
        unsafe {
            libc::madvise(
                (low + GUARD_SIZE) as *mut libc::c_void,
                STACK_SIZE,
                libc::MADV_DONTNEED,
            );
        }
        let mut st = self.lock();
        st.free.push(low);
        st.in_use -= 1;
    }
}

/// Debug builds read `RK6_TEST_MAX_STACKS` so that an integration test can make stack
/// allocation fail without exhausting the machine; release builds ignore it.
fn test_limit() -> Option<usize> {
    if cfg!(debug_assertions) {
        std::env::var("RK6_TEST_MAX_STACKS").ok()?.parse().ok()
    } else {
        None
    }
}

/// Reserves address space for a chunk of stacks; pages cost memory only once touched.
fn map_chunk() -> io::Result<usize> {
    let len = SLOT * SLOTS_PER_CHUNK;
    // OpenBSD insists on MAP_STACK for stacks; Linux ≥ 6.7 also takes it to mean no huge
    // pages, which matters: a stack touched a few KiB deep must not become 2 MiB resident.
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK;
    // SAFETY: a fresh mapping at an address the kernel picks; it is never unmapped, so the
    // slots handed out stay valid for the process's life.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // Older kernels ignore MAP_STACK for huge pages; failure leaves the default.
        #[cfg(target_os = "linux")]
        libc::madvise(p, len, libc::MADV_NOHUGEPAGE);
        Ok(p as usize)
    }
}

/// A stack lent by a [`StackPool`], returned to it on drop.
pub(crate) struct PooledStack {
    /// Lowest address: the guard's start.
    low: usize,
    pool: &'static StackPool,
    valgrind: ManuallyDrop<ValgrindStackRegistration>,
}

impl PooledStack {
    /// Lowest usable address, just above the guard.
    pub(crate) fn bottom(&self) -> usize {
        self.low + GUARD_SIZE
    }
}

impl Drop for PooledStack {
    fn drop(&mut self) {
        // SAFETY: dropped once, here, before the slot can be lent again.
        unsafe { ManuallyDrop::drop(&mut self.valgrind) };
        self.pool.free(self.low);
    }
}

// SAFETY: [low, low + GUARD_SIZE) faults on any access (a guard region or PROT_NONE), and
// the STACK_SIZE bytes above it are readable and writable and lent to this value alone
// until it drops. Both ends are page aligned, so aligned to STACK_ALIGNMENT.
unsafe impl Stack for PooledStack {
    fn base(&self) -> StackPointer {
        StackPointer::new(self.low + SLOT).expect("a mapped address is not zero")
    }

    fn limit(&self) -> StackPointer {
        StackPointer::new(self.low).expect("a mapped address is not zero")
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use corosensei::{Coroutine, CoroutineResult};

    /// Lines of /proc/self/maps: the process's mappings.
    fn mappings() -> usize {
        std::fs::read_to_string("/proc/self/maps")
            .expect("procfs")
            .lines()
            .count()
    }

    fn test_pool(guard: GuardKind) -> &'static StackPool {
        Box::leak(Box::new(StackPool::new(guard, None)))
    }

    #[test]
    fn two_thousand_stacks_share_a_few_mappings() {
        if guard_kind() != GuardKind::Madvise {
            println!("skipped: this kernel refuses MADV_GUARD_INSTALL (Linux < 6.13)");
            return;
        }
        let pool = test_pool(GuardKind::Madvise);
        let before = mappings();
        let stacks: Vec<_> = (0..2000).map(|_| pool.alloc().expect("stack")).collect();
        let added = mappings().saturating_sub(before);
        // 63 chunks; other threads of the test binary may map a few things meanwhile.
        assert!(
            added <= 2000 / SLOTS_PER_CHUNK + 20,
            "{added} mappings added"
        );
        assert_eq!(pool.in_use(), 2000);
        drop(stacks);
        assert_eq!(pool.in_use(), 0);
    }

    #[test]
    fn the_mprotect_fallback_costs_two_mappings_a_stack() {
        let pool = test_pool(GuardKind::Mprotect);
        let before = mappings();
        let stacks: Vec<_> = (0..100).map(|_| pool.alloc().expect("stack")).collect();
        let added = mappings().saturating_sub(before);
        assert!((190..=220).contains(&added), "{added} mappings added");
        drop(stacks);
    }

    /// Set in the child that [`a_write_into_the_guard_kills_with_sigsegv`] runs.
    const GUARD_CHILD: &str = "RK6_STACK_GUARD_CHILD";

    #[test]
    fn guard_write_child() {
        let Ok(kind) = std::env::var(GUARD_CHILD) else {
            return; // Only meaningful in the child process.
        };
        let guard = if kind == "madvise" {
            GuardKind::Madvise
        } else {
            GuardKind::Mprotect
        };
        let stack = test_pool(guard).alloc().expect("stack");
        let top_of_guard = (stack.bottom() - 8) as *mut u64;
        // SAFETY: none: this write must fault and end the process.
        unsafe { top_of_guard.write_volatile(1) };
        std::process::exit(0);
    }

    #[test]
    fn a_write_into_the_guard_kills_with_sigsegv() {
        use std::os::unix::process::ExitStatusExt;
        let mut kinds = vec!["mprotect"];
        if guard_kind() == GuardKind::Madvise {
            kinds.push("madvise");
        }
        for kind in kinds {
            let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
                .args([
                    "--exact",
                    "host::stack::tests::guard_write_child",
                    "--nocapture",
                ])
                .env(GUARD_CHILD, kind)
                .output()
                .expect("run child");
            assert_eq!(
                out.status.signal(),
                Some(libc::SIGSEGV),
                "{kind}: {:?} {}",
                out.status,
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }

    #[test]
    fn a_reused_slot_reads_zero() {
        for guard in [guard_kind(), GuardKind::Mprotect] {
            let pool = test_pool(guard);
            let stack = pool.alloc().expect("stack");
            let (bottom, top) = (stack.bottom(), stack.base().get());
            // SAFETY: both addresses are inside the stack's usable range, and no coroutine
            // runs on it.
            unsafe {
                (bottom as *mut u8).write_volatile(0xAA);
                ((top - 1) as *mut u8).write_volatile(0xBB);
            }
            drop(stack);
            let again = pool.alloc().expect("stack");
            assert_eq!(again.bottom(), bottom, "the freed slot is lent again");
            // SAFETY: as above, the slot is lent to `again`.
            unsafe {
                assert_eq!((bottom as *const u8).read_volatile(), 0);
                assert_eq!(((top - 1) as *const u8).read_volatile(), 0);
            }
        }
    }

    /// Recurses with 64 KiB frames until less than 512 KiB of the stack at `bottom` is left,
    /// suspends there with the deepest frame's address, and after the resume returns the
    /// levels it went down and a checksum every frame contributes to.
    #[inline(never)]
    fn recurse(level: u64, bottom: usize, y: &corosensei::Yielder<(), usize>) -> (u64, u64) {
        let mut frame = [level as u8; 64 << 10];
        std::hint::black_box(&mut frame);
        let here = std::hint::black_box(&frame) as *const _ as usize;
        let (levels, below) = if here - bottom < 512 << 10 {
            y.suspend(here);
            (level, 0)
        } else {
            recurse(level + 1, bottom, y)
        };
        (
            levels,
            below + frame.iter().map(|&b| u64::from(b)).sum::<u64>(),
        )
    }

    #[test]
    fn coroutines_on_pooled_stacks_suspend_resume_and_recurse_deep() {
        let pool = StackPool::global();
        let mut cos: Vec<_> = (0..3)
            .map(|_| {
                let stack = pool.alloc().expect("stack");
                let bottom = stack.bottom();
                let co = Coroutine::with_stack(stack, move |y, ()| recurse(0, bottom, y));
                (co, bottom)
            })
            .collect();
        // Interleave: all three suspend at their deepest point before any finishes.
        for (co, bottom) in &mut cos {
            match co.resume(()) {
                CoroutineResult::Yield(deepest) => assert!(
                    deepest > *bottom && deepest - *bottom < 512 << 10,
                    "deepest frame at {:#x} over a stack bottom at {bottom:#x}",
                    deepest
                ),
                CoroutineResult::Return(_) => panic!("should have suspended"),
            }
        }
        for (co, _) in &mut cos {
            match co.resume(()) {
                CoroutineResult::Return((levels, sum)) => {
                    // The frames used at least 7 MiB of the 8 MiB and all survived.
                    assert!(levels * (64 << 10) >= 7 << 20, "{levels} levels");
                    let expect: u64 = (0..=levels).map(|l| (l % 256) * (64 << 10)).sum();
                    assert_eq!(sum, expect);
                }
                CoroutineResult::Yield(_) => panic!("should have finished"),
            }
        }
    }
}
