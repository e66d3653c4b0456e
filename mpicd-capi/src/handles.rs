//! Handle tables: each kind of user-visible object (communicator, request, datatype, message,
//! op, group, info, error handler, session, window, file) lives in a Mutex-protected table from handle value
//! to object. Handle values of each kind start at their own base far above the predefined
//! constants (< 0x1000), so a handle of the wrong kind is never mistaken for a live object.
//!
//! A table is a slab: a handle names a slot by its index and carries the slot's generation,
//! which changes each time the slot is freed, so a stale handle is not mistaken for the
//! object that reuses its slot (until the 16-bit generation comes round). Lookups index a
//! vector, and moving an object in or out copies it once, which matters for requests: each
//! message makes and frees one. Predefined handles an object is put under
//! ([`Table::insert_at`], e.g. MPI_COMM_WORLD) live beside the slab in a small map.

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
pub(crate) const FILE_BASE: usize = 0xB000_0000_0000;

/// Bits of a handle below its kind's base: the slot index, then the generation.
const KIND_BITS: u32 = 44;
const INDEX_BITS: u32 = 28;
const INDEX_MASK: usize = (1 << INDEX_BITS) - 1;
const GENERATION_MASK: u32 = (1 << (KIND_BITS - INDEX_BITS)) - 1;

enum Slot<T> {
    Vacant {
        generation: u32,
    },
    Live {
        generation: u32,
        value: T,
    },
    /// Reserved for an object that will be put under its handle ([`Table::reserve`]), or
    /// lent out while a caller works on it ([`Table::lend`]).
    Held {
        generation: u32,
    },
}

struct Slots<T> {
    slots: Vec<Slot<T>>,
    /// Indices of vacant slots, the most recently freed last.
    vacant: Vec<usize>,
    /// Objects under predefined handles (a few: searched in order).
    fixed: Vec<(usize, T)>,
}

/// Objects of one kind, by handle value.
pub(crate) struct Table<T> {
    base: usize,
    inner: Mutex<Slots<T>>,
}

/// The slot index a handle of the kind starting at `base` names (the lock-free read path of
/// [`crate::pinned`] keys its entries by it); `None` for a value outside the kind's range.
#[inline]
pub(crate) fn slot_index(base: usize, handle: usize) -> Option<usize> {
    Slots::<()>::locate(base, handle).map(|(index, _)| index)
}

impl<T> Slots<T> {
    /// The slot a handle of `base` names, with the generation the handle carries; `None`
    /// for a value outside the kind's range.
    fn locate(base: usize, handle: usize) -> Option<(usize, u32)> {
        let offset = handle.checked_sub(base).filter(|&o| o < 1 << KIND_BITS)?;
        Some((offset & INDEX_MASK, (offset >> INDEX_BITS) as u32))
    }

    /// The object under predefined handle `handle`.
    fn fixed_mut(&mut self, handle: usize) -> Option<&mut T> {
        self.fixed
            .iter_mut()
            .find(|(h, _)| *h == handle)
            .map(|(_, v)| v)
    }

    /// The live slot of `handle`, if it is one.
    fn live(&mut self, base: usize, handle: usize) -> Option<&mut T> {
        let (index, g) = Self::locate(base, handle)?;
        match self.slots.get_mut(index)? {
            Slot::Live { generation, value } if *generation == g => Some(value),
            _ => None,
        }
    }

    /// Takes a vacant slot (or a new one): its index and the generation of its next object.
    fn vacancy(&mut self) -> (usize, u32) {
        let index = match self.vacant.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot::Vacant { generation: 1 });
                self.slots.len() - 1
            }
        };
        let generation = match self.slots[index] {
            Slot::Vacant { generation } => generation,
            // Only vacant slots are on the list.
            Slot::Live { generation, .. } | Slot::Held { generation } => generation,
        };
        (index, generation)
    }

    /// The handle of slot `index` holding an object of `generation`.
    fn handle(base: usize, index: usize, generation: u32) -> usize {
        base + ((generation as usize) << INDEX_BITS) + index
    }

    /// Frees slot `index` of generation `g`; the next object in it gets a new generation.
    fn vacate(&mut self, index: usize, g: u32) {
        let next = match g.wrapping_add(1) & GENERATION_MASK {
            0 => 1,
            n => n,
        };
        self.slots[index] = Slot::Vacant { generation: next };
        self.vacant.push(index);
    }
}

impl<T> Table<T> {
    pub(crate) const fn new(base: usize) -> Self {
        Table {
            base,
            inner: Mutex::new(Slots {
                slots: Vec::new(),
                vacant: Vec::new(),
                fixed: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Slots<T>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores `value` under a fresh handle value.
    pub(crate) fn insert(&self, value: T) -> usize {
        let mut slots = self.lock();
        let (index, generation) = slots.vacancy();
        // Written in place: an object moves once, into its slot.
        slots.slots[index] = Slot::Live { generation, value };
        Slots::<T>::handle(self.base, index, generation)
    }

    /// A fresh handle value with no object yet (one made later, put with `insert_at`).
    pub(crate) fn reserve(&self) -> usize {
        let mut slots = self.lock();
        let (index, generation) = slots.vacancy();
        slots.slots[index] = Slot::Held { generation };
        Slots::<T>::handle(self.base, index, generation)
    }

    /// Stores `value` under `handle`: a predefined handle, or one reserved or lent out.
    /// Anything else is left alone (and `value` dropped).
    pub(crate) fn insert_at(&self, handle: usize, value: T) {
        let mut slots = self.lock();
        match Slots::<T>::locate(self.base, handle) {
            None => match slots.fixed.iter_mut().find(|(h, _)| *h == handle) {
                Some((_, old)) => *old = value,
                None => slots.fixed.push((handle, value)),
            },
            Some((index, g)) => {
                if let Some(slot @ Slot::Held { .. }) = slots.slots.get_mut(index) {
                    if matches!(slot, Slot::Held { generation } if *generation == g) {
                        *slot = Slot::Live {
                            generation: g,
                            value,
                        };
                    }
                }
            }
        }
    }

    /// Runs `f` on the object of `handle`, if it exists. `f` must not call into the tables.
    pub(crate) fn with<R>(&self, handle: usize, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        let mut slots = self.lock();
        match slots.live(self.base, handle) {
            Some(value) => Some(f(value)),
            None => slots.fixed_mut(handle).map(f),
        }
    }

    /// Runs `f` on the object of each of `handles` that names one, with its position, in one
    /// look at the table. `f` must not call into the tables.
    pub(crate) fn with_each(
        &self,
        handles: impl IntoIterator<Item = usize>,
        mut f: impl FnMut(usize, &mut T),
    ) {
        let mut slots = self.lock();
        for (i, handle) in handles.into_iter().enumerate() {
            match slots.live(self.base, handle) {
                Some(value) => f(i, value),
                None => {
                    if let Some(value) = slots.fixed_mut(handle) {
                        f(i, value);
                    }
                }
            }
        }
    }

    /// Takes the object of `handle` out, keeping its handle for [`Table::insert_at`] to put
    /// it back (or [`Table::release`] to free). Meanwhile the handle names no object.
    pub(crate) fn lend(&self, handle: usize) -> Option<T> {
        let mut slots = self.lock();
        let Some((index, g)) = Slots::<T>::locate(self.base, handle) else {
            let at = slots.fixed.iter().position(|(h, _)| *h == handle)?;
            return Some(slots.fixed.remove(at).1);
        };
        let slot = slots.slots.get_mut(index)?;
        if !matches!(slot, Slot::Live { generation, .. } if *generation == g) {
            return None;
        }
        match std::mem::replace(slot, Slot::Held { generation: g }) {
            Slot::Live { value, .. } => Some(value),
            Slot::Vacant { .. } | Slot::Held { .. } => None,
        }
    }

    /// Frees the handle of an object lent out and not put back.
    pub(crate) fn release(&self, handle: usize) {
        let mut slots = self.lock();
        if let Some((index, g)) = Slots::<T>::locate(self.base, handle) {
            if matches!(slots.slots.get(index), Some(Slot::Held { generation }) if *generation == g)
            {
                slots.vacate(index, g);
            }
        }
    }

    /// The first `Some` that `f` gives on the objects (predefined handles first, then by
    /// slot). `f` must not call into the tables.
    pub(crate) fn find_map<R>(&self, mut f: impl FnMut(&T) -> Option<R>) -> Option<R> {
        let slots = self.lock();
        slots.fixed.iter().find_map(|(_, v)| f(v)).or_else(|| {
            slots.slots.iter().find_map(|s| match s {
                Slot::Live { value, .. } => f(value),
                Slot::Vacant { .. } | Slot::Held { .. } => None,
            })
        })
    }

    /// Takes the object of `handle` out of the table and frees its handle.
    pub(crate) fn remove(&self, handle: usize) -> Option<T> {
        let mut slots = self.lock();
        let Some((index, g)) = Slots::<T>::locate(self.base, handle) else {
            let at = slots.fixed.iter().position(|(h, _)| *h == handle)?;
            return Some(slots.fixed.remove(at).1);
        };
        if !matches!(slots.slots.get(index), Some(Slot::Live { generation, .. }) if *generation == g)
        {
            return None;
        }
        let next = Slot::Vacant { generation: g };
        let Slot::Live { value, .. } = std::mem::replace(&mut slots.slots[index], next) else {
            return None;
        };
        slots.vacate(index, g);
        Some(value)
    }

    /// The position of the first of `handles` that names no object, `null` (the kind's null
    /// handle) aside: one look at the table for all of them.
    pub(crate) fn position_missing(
        &self,
        handles: impl IntoIterator<Item = usize>,
        null: usize,
    ) -> Option<usize> {
        let mut slots = self.lock();
        handles.into_iter().position(|h| {
            h != null && slots.live(self.base, h).is_none() && slots.fixed_mut(h).is_none()
        })
    }

    /// Takes every object out (finalize).
    pub(crate) fn drain(&self) -> Vec<T> {
        let mut slots = self.lock();
        let fixed = std::mem::take(&mut slots.fixed).into_iter();
        let mut all: Vec<T> = fixed.map(|(_, v)| v).collect();
        slots.vacant.clear();
        let taken = std::mem::take(&mut slots.slots);
        all.extend(taken.into_iter().filter_map(|s| match s {
            Slot::Live { value, .. } => Some(value),
            Slot::Vacant { .. } | Slot::Held { .. } => None,
        }));
        all
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
        assert_eq!(t.with(0x101, |v| *v), Some(7));
        assert_eq!(t.drain().len(), 2);
    }

    #[test]
    fn a_freed_handle_stays_dead_when_its_slot_is_reused() {
        let t: Table<i32> = Table::new(REQUEST_BASE);
        let a = t.insert(1);
        assert_eq!(t.remove(a), Some(1));
        let b = t.insert(2);
        assert_ne!(a, b, "the slot is reused under a new generation");
        assert_eq!(t.with(a, |v| *v), None);
        assert_eq!(t.remove(a), None);
        assert_eq!(t.with(b, |v| *v), Some(2));
        // A handle of another kind names nothing here.
        assert_eq!(t.with(b - REQUEST_BASE + COMM_BASE, |v| *v), None);
    }

    #[test]
    fn lent_objects_keep_their_handle() {
        let t: Table<i32> = Table::new(REQUEST_BASE);
        let a = t.insert(1);
        let lent = t.lend(a);
        assert_eq!(lent, Some(1));
        assert_eq!(t.with(a, |v| *v), None, "nothing under a lent handle");
        let b = t.insert(2);
        assert_ne!(a, b, "a lent slot is not reused");
        t.insert_at(a, 3);
        assert_eq!(t.with(a, |v| *v), Some(3));
        assert_eq!(t.lend(a), Some(3));
        t.release(a);
        assert_eq!(t.with(a, |v| *v), None);
        let r = t.reserve();
        assert_eq!(t.with(r, |v| *v), None);
        t.insert_at(r, 4);
        assert_eq!(t.with(r, |v| *v), Some(4));
    }
}
