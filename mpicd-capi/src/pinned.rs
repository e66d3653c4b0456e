//! A lock-free read path beside a handle table ([`Pinned`]): the hot calls of one-sided
//! communication reach a window from its handle with a few loads and no lock, no reference
//! count, while `MPI_Win_free` may still free the window safely.
//!
//! A published object sits in the entry of its handle's slot (see [`crate::handles`]: the
//! handle value carries the slot index and a generation, so a stale handle never matches a
//! newer object). A reader marks the handle it is using in its thread's hazard word, then
//! checks that the entry still holds that handle, uses the object, and clears the mark.
//! [`Pinned::unpublish`] clears the entry, then waits until no thread's hazard word holds the
//! handle, and only then gives the object back to be freed: a reader that saw the entry either
//! finished before, or is waited for. A handle freed before is simply not found (the caller
//! then takes the general path, which reports MPI_ERR_WIN).
//!
//! The reader's mark must be visible before its check of the entry (a store then a load: the
//! one order the processor may swap). Instead of a full fence on every call, the rare
//! unpublish asks the kernel to run one on every thread of the process
//! (`membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, Linux 4.14); where the kernel refuses, the
//! readers fence themselves.

use crate::handles::slot_index;
use std::cell::Cell;
use std::sync::atomic::{compiler_fence, fence, AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Entries per chunk, and chunks: handles of slots beyond are not published (their calls take
/// the general path).
const CHUNK: usize = 64;
const CHUNKS: usize = 256;

/// The entry of one slot: the handle published there (0: none) and its object.
struct Entry<T> {
    handle: AtomicUsize,
    object: AtomicPtr<T>,
}

/// Objects of one handle kind, reachable by handle without a lock.
pub(crate) struct Pinned<T> {
    base: usize,
    /// Chunks of entries, made on first use and kept until the process ends.
    chunks: [AtomicPtr<[Entry<T>; CHUNK]>; CHUNKS],
    /// Serializes publishing and unpublishing.
    writers: Mutex<()>,
}

/// An object of a [`Pinned`] directory, safe to use until this drops.
pub(crate) struct Held<'a, T> {
    object: &'a T,
    _mark: Option<Marked>,
}

impl<T> std::ops::Deref for Held<'_, T> {
    type Target = T;

    #[inline(always)]
    fn deref(&self) -> &T {
        self.object
    }
}

/// One thread's hazard word: the handle it is using (0: none).
#[repr(align(64))]
struct Hazard {
    handle: AtomicUsize,
}

/// Every hazard word ever handed out (a thread's word goes back to `idle` when it ends).
static HAZARDS: Mutex<Vec<&'static Hazard>> = Mutex::new(Vec::new());
static IDLE: Mutex<Vec<&'static Hazard>> = Mutex::new(Vec::new());

/// True once the kernel's process-wide barrier is registered for this process: readers then
/// need no fence of their own.
static ASYMMETRIC: AtomicBool = AtomicBool::new(false);

/// True once several threads may call MPI at the same time: MPI_THREAD_MULTIPLE was asked
/// for, or a session started (whose threads are not the world model's). Until then the MPI
/// standard lets only one thread at a time call MPI (MPI_THREAD_SINGLE, _FUNNELED,
/// _SERIALIZED), so no `unpublish` can run while a reader looks, and readers skip the hazard
/// word.
static CONCURRENT: AtomicBool = AtomicBool::new(false);

/// Says that several threads may now call MPI at once (see [`CONCURRENT`]); never undone.
pub(crate) fn allow_concurrent_calls() {
    CONCURRENT.store(true, Ordering::SeqCst);
}

/// This thread's hazard word, taken on first use and given back when the thread ends.
struct Mine(Cell<Option<&'static Hazard>>);

impl Mine {
    #[inline]
    fn get(&self) -> &'static Hazard {
        match self.0.get() {
            Some(h) => h,
            None => self.take(),
        }
    }

    /// Takes a hazard word for this thread (its first use).
    #[cold]
    fn take(&self) -> &'static Hazard {
        let reused = IDLE.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let h = reused.unwrap_or_else(|| {
            let h: &'static Hazard = Box::leak(Box::new(Hazard {
                handle: AtomicUsize::new(0),
            }));
            HAZARDS.lock().unwrap_or_else(|p| p.into_inner()).push(h);
            h
        });
        self.0.set(Some(h));
        h
    }
}

impl Drop for Mine {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            h.handle.store(0, Ordering::Release);
            IDLE.lock().unwrap_or_else(|p| p.into_inner()).push(h);
        }
    }
}

/// A hazard word naming a handle, cleared when dropped (also if the reader unwinds).
struct Marked(&'static Hazard);

impl Marked {
    #[inline]
    fn new(h: &'static Hazard, handle: usize) -> Marked {
        h.handle.store(handle, Ordering::Relaxed);
        match ASYMMETRIC.load(Ordering::Relaxed) {
            true => compiler_fence(Ordering::SeqCst),
            false => fence(Ordering::SeqCst),
        }
        Marked(h)
    }
}

impl Drop for Marked {
    #[inline]
    fn drop(&mut self) {
        self.0.handle.store(0, Ordering::Release);
    }
}

thread_local! {
    static MINE: Mine = const { Mine(Cell::new(None)) };
}

/// `membarrier(2)` commands (linux/membarrier.h).
#[cfg(target_os = "linux")]
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
#[cfg(target_os = "linux")]
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

/// Registers the process-wide barrier once; whether readers may skip their fence.
fn register_barrier() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: a system call with integer arguments only.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_membarrier,
                    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
                    0,
                    0,
                )
            };
            if r == 0 {
                ASYMMETRIC.store(true, Ordering::SeqCst);
            }
        }
    });
}

/// Makes every thread's earlier stores visible before the caller's later loads (the heavy
/// side of the readers' light fence).
fn barrier_all_threads() {
    fence(Ordering::SeqCst);
    #[cfg(target_os = "linux")]
    if ASYMMETRIC.load(Ordering::SeqCst) {
        // SAFETY: a system call with integer arguments only.
        let r =
            unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) };
        if r != 0 {
            // Registered but refused: readers that relied on it cannot be told apart, so
            // this would be unsound; it does not happen on a kernel that registered.
            eprintln!("mpicd: membarrier failed after registration; aborting");
            std::process::abort();
        }
    }
}

impl<T> Pinned<T> {
    pub(crate) const fn new(base: usize) -> Self {
        Pinned {
            base,
            chunks: [const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS],
            writers: Mutex::new(()),
        }
    }

    /// The entry of `handle`'s slot, if its chunk exists.
    #[inline(always)]
    fn entry(&self, handle: usize) -> Option<&Entry<T>> {
        let index = slot_index(self.base, handle)?;
        let chunk = self.chunks.get(index / CHUNK)?.load(Ordering::Acquire);
        // SAFETY: a chunk, once made, lives until the process ends.
        unsafe { chunk.as_ref() }.map(|c| &c[index % CHUNK])
    }

    /// The object published under `handle`, held until the guard drops; `None` when there
    /// is none (or the thread is ending). No other object of this directory may be held by
    /// this thread meanwhile.
    #[inline(always)]
    pub(crate) fn get(&self, handle: usize) -> Option<Held<'_, T>> {
        let e = self.entry(handle)?;
        // Without concurrent calls, no `unpublish` can run until the guard drops: no mark.
        let mark = match CONCURRENT.load(Ordering::Relaxed) {
            false => None,
            true => Some(MINE.try_with(|mine| Marked::new(mine.get(), handle)).ok()?),
        };
        if e.handle.load(Ordering::Acquire) != handle {
            return None;
        }
        // SAFETY: the entry holds `handle`, so its object is published, and stays alive
        // while the hazard word names it (`unpublish` waits for the mark's drop).
        let object = unsafe { e.object.load(Ordering::Acquire).as_ref() }?;
        Some(Held {
            object,
            _mark: mark,
        })
    }

    /// Publishes `object` under `handle` (a fresh handle of the table).
    pub(crate) fn publish(&self, handle: usize, object: Arc<T>) {
        let Some(index) = slot_index(self.base, handle) else {
            return;
        };
        let Some(slot) = self.chunks.get(index / CHUNK) else {
            return;
        };
        register_barrier();
        let _w = self.writers.lock().unwrap_or_else(|p| p.into_inner());
        if slot.load(Ordering::Acquire).is_null() {
            let chunk: Box<[Entry<T>; CHUNK]> = Box::new(std::array::from_fn(|_| Entry {
                handle: AtomicUsize::new(0),
                object: AtomicPtr::new(std::ptr::null_mut()),
            }));
            slot.store(Box::into_raw(chunk), Ordering::Release);
        }
        let Some(e) = self.entry(handle) else {
            return;
        };
        let old = e
            .object
            .swap(Arc::into_raw(object) as *mut T, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: an object left behind by an entry cleared without `unpublish` (not
            // done): the pointer came from `Arc::into_raw`.
            drop(unsafe { Arc::from_raw(old) });
        }
        e.handle.store(handle, Ordering::Release);
    }

    /// Withdraws the object of `handle`, once no reader uses it; its reference.
    pub(crate) fn unpublish(&self, handle: usize) -> Option<Arc<T>> {
        let _w = self.writers.lock().unwrap_or_else(|p| p.into_inner());
        let e = self.entry(handle)?;
        if e.handle
            .compare_exchange(handle, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return None;
        }
        barrier_all_threads();
        let hazards: Vec<&'static Hazard> =
            HAZARDS.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for h in hazards {
            while h.handle.load(Ordering::Acquire) == handle {
                std::thread::yield_now();
            }
        }
        let p = e.object.swap(std::ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: the pointer came from `Arc::into_raw` in `publish`, and no reader holds it.
        (!p.is_null()).then(|| unsafe { Arc::from_raw(p) })
    }
}

impl<T> Pinned<T> {
    /// Withdraws every object (finalize), as [`Pinned::unpublish`] does each.
    pub(crate) fn clear(&self) {
        let mut handles = Vec::new();
        for chunk in &self.chunks {
            // SAFETY: a chunk, once made, lives until the process ends.
            if let Some(c) = unsafe { chunk.load(Ordering::Acquire).as_ref() } {
                handles.extend(
                    c.iter()
                        .map(|e| e.handle.load(Ordering::Acquire))
                        .filter(|&h| h != 0),
                );
            }
        }
        for h in handles {
            drop(self.unpublish(h));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handles::{Table, WIN_BASE};

    #[test]
    fn a_published_object_is_found_until_unpublished() {
        let table: Table<u32> = Table::new(WIN_BASE);
        let pinned: Pinned<u32> = Pinned::new(WIN_BASE);
        let h = table.insert(7);
        pinned.publish(h, Arc::new(7));
        assert_eq!(pinned.get(h).map(|v| *v), Some(7));
        let other = table.insert(8);
        assert_eq!(pinned.get(other).map(|v| *v), None, "not published");
        assert_eq!(pinned.unpublish(h).map(|a| *a), Some(7));
        assert_eq!(pinned.get(h).map(|v| *v), None);
        assert!(pinned.unpublish(h).is_none());
        table.remove(h);
        let reused = table.insert(9);
        pinned.publish(reused, Arc::new(9));
        assert_eq!(
            pinned.get(h).map(|v| *v),
            None,
            "a stale handle of the reused slot"
        );
        assert_eq!(pinned.get(reused).map(|v| *v), Some(9));
    }

    #[test]
    fn unpublish_waits_for_readers() {
        static P: Pinned<AtomicUsize> = Pinned::new(WIN_BASE);
        allow_concurrent_calls();
        let table: Table<()> = Table::new(WIN_BASE);
        let h = table.insert(());
        P.publish(h, Arc::new(AtomicUsize::new(0)));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                std::thread::spawn(move || {
                    let mut seen = 0u64;
                    while P
                        .get(h)
                        .map(|v| v.fetch_add(1, Ordering::Relaxed))
                        .is_some()
                    {
                        seen += 1;
                    }
                    seen
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let obj = P.unpublish(h).expect("published");
        let calls = obj.load(Ordering::Relaxed);
        let seen: u64 = readers.into_iter().map(|t| t.join().expect("reader")).sum();
        assert_eq!(
            calls as u64, seen,
            "no reader used the object after unpublish"
        );
        assert_eq!(Arc::strong_count(&obj), 1);
    }
}
