//! Lists of work the application let go of unfinished (requests freed while pending,
//! `_replace` pairs): every completion call sweeps them, so the common case, an empty list,
//! costs one atomic load instead of a lock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Work items progressed by sweeps until done.
pub(crate) struct Detached<T> {
    items: Mutex<Vec<T>>,
    /// False only while `items` is empty (set under the lock by a push, cleared by a sweep
    /// that leaves nothing).
    occupied: AtomicBool,
}

impl<T> Detached<T> {
    pub(crate) const fn new() -> Self {
        Detached {
            items: Mutex::new(Vec::new()),
            occupied: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<T>> {
        self.items.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn push(&self, item: T) {
        let mut items = self.lock();
        items.push(item);
        self.occupied.store(true, Ordering::Release);
    }

    pub(crate) fn is_empty(&self) -> bool {
        !self.occupied.load(Ordering::Acquire)
    }

    /// Keeps the items for which `pending` is true. `pending` runs without the lock (it may
    /// progress the runtime, which may detach more).
    pub(crate) fn sweep(&self, pending: impl FnMut(&mut T) -> bool) {
        if self.is_empty() {
            return;
        }
        let mut list = std::mem::take(&mut *self.lock());
        list.retain_mut(pending);
        let mut items = self.lock();
        items.extend(list);
        self.occupied.store(!items.is_empty(), Ordering::Release);
    }

    /// Takes every item out (finalize).
    pub(crate) fn take_all(&self) -> Vec<T> {
        let mut items = self.lock();
        self.occupied.store(false, Ordering::Release);
        std::mem::take(&mut *items)
    }
}
