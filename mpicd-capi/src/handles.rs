//! Handle tables: each kind of user-visible object (communicator, request, datatype, message,
//! op, group, info, error handler, session, window) lives in a Mutex-protected map from handle value to object. Handle values
//! of each kind start at their own base far above the predefined constants (< 0x1000), so a
//! handle of the wrong kind or a stale one is never mistaken for a live object.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

#[cfg(not(target_pointer_width = "64"))]
compile_error!("mpicd-capi needs 64-bit pointers for its handle values");

pub(crate) const COMM_BASE: usize = 0x1000_0000_0000;
pub(crate) const REQUEST_BASE: usize = 0x2000_0000_0000;
pub(crate) const DATATYPE_BASE: usize = 0x3000_0000_0000;
pub(crate) const MESSAGE_BASE: usize = 0x4000_0000_0000;
pub(crate) const OP_BASE: usize = 0x5000_0000_0000;
pub(crate) const GROUP_BASE: usize = 0x6000_0000_0000;
pub(crate) const INFO_BASE: usize = 0x7000_0000_0000;
pub(crate) const ERRHANDLER_BASE: usize = 0x8000_0000_0000;
pub(crate) const SESSION_BASE: usize = 0x9000_0000_0000;
pub(crate) const WIN_BASE: usize = 0xA000_0000_0000;

struct Slots<T> {
    next: usize,
    map: BTreeMap<usize, T>,
}

/// Objects of one kind, by handle value.
pub(crate) struct Table<T> {
    base: usize,
    inner: Mutex<Slots<T>>,
}

impl<T> Table<T> {
    pub(crate) const fn new(base: usize) -> Self {
        Table {
            base,
            inner: Mutex::new(Slots {
                next: 0,
                map: BTreeMap::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Slots<T>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores `value` under a fresh handle value.
    pub(crate) fn insert(&self, value: T) -> usize {
        let mut slots = self.lock();
        slots.next += 1;
        let handle = self.base + slots.next;
        slots.map.insert(handle, value);
        handle
    }

    /// A fresh handle value with no object yet (one made later, put with `insert_at`).
    pub(crate) fn reserve(&self) -> usize {
        let mut slots = self.lock();
        slots.next += 1;
        self.base + slots.next
    }

    /// Stores `value` under `handle` (predefined handles, or an object put back).
    pub(crate) fn insert_at(&self, handle: usize, value: T) {
        self.lock().map.insert(handle, value);
    }

    /// Runs `f` on the object of `handle`, if it exists. `f` must not call into the tables.
    pub(crate) fn with<R>(&self, handle: usize, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        self.lock().map.get_mut(&handle).map(f)
    }

    /// The first `Some` that `f` gives on the objects, in handle order. `f` must not call into
    /// the tables.
    pub(crate) fn find_map<R>(&self, f: impl FnMut(&T) -> Option<R>) -> Option<R> {
        self.lock().map.values().find_map(f)
    }

    /// Takes the object of `handle` out of the table.
    pub(crate) fn remove(&self, handle: usize) -> Option<T> {
        self.lock().map.remove(&handle)
    }

    /// Takes every object out (finalize).
    pub(crate) fn drain(&self) -> Vec<T> {
        std::mem::take(&mut self.lock().map).into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_distinct_and_removable() {
        let t: Table<i32> = Table::new(COMM_BASE);
        let a = t.insert(1);
        let b = t.insert(2);
        assert_ne!(a, b);
        assert!(a > COMM_BASE);
        assert_eq!(t.with(a, |v| *v), Some(1));
        assert_eq!(t.remove(a), Some(1));
        assert_eq!(t.with(a, |v| *v), None);
        t.insert_at(0x101, 7);
        assert_eq!(t.drain().len(), 2);
    }
}
