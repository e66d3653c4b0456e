//! The shared file pointer: one 64-bit count of etypes in a window on member 0 of the file's
//! communicator, read and advanced atomically by any member, so that concurrent `_shared`
//! accesses get disjoint ranges of the file. When every member is on one node the window is a
//! shared-memory one and the count a processor atomic in it (no progress of member 0 needed);
//! otherwise each access is a fetching accumulate under a shared lock.

use crate::comm::Communicator;
use crate::datatype::ElementType;
use crate::error::Result;
use crate::newcomm::SplitType;
use crate::plan::derived::{Datatype, TypedBuf};
use crate::reduction::ReduceOp;
use crate::window::{AccumulateOp, LockKind, Window};
use std::sync::atomic::{AtomicI64, Ordering};

/// The shared file pointer of one file.
pub(super) struct SharedPointer {
    win: Window,
    word: Datatype,
    /// The count in node-shared memory, when every member shares the node.
    local: Option<*const AtomicI64>,
}

// SAFETY: `local` points into the window's shared memory, which lives as long as the window
// (owned alongside) and is only accessed atomically.
unsafe impl Send for SharedPointer {}
// SAFETY: as above.
unsafe impl Sync for SharedPointer {}

/// The target of every access: one i64 at displacement 0 of member 0's window.
const OWNER: i32 = 0;

impl SharedPointer {
    /// Makes the pointer (at `start`) on every member of `comm`: collective.
    pub(super) fn new(comm: &Communicator, start: u64) -> Result<SharedPointer> {
        let size = if comm.rank() == OWNER { 8 } else { 0 };
        let node = comm.split_type(SplitType::Shared, 0)?;
        let one_node = node.as_ref().is_some_and(|n| n.size() == comm.size());
        let win = match one_node {
            true => Window::allocate_shared(comm, size, 1)?,
            false => Window::allocate(comm, size, 1)?,
        };
        if comm.rank() == OWNER {
            // SAFETY: the window's memory is 8 bytes, allocated (and aligned) by the window.
            unsafe { (win.base() as *mut i64).write(start as i64) };
        }
        let local = match one_node {
            true => Some(win.shared_query(Some(OWNER))?.0 as *const AtomicI64),
            false => None,
        };
        comm.barrier()?;
        Ok(SharedPointer {
            win,
            word: Datatype::of(ElementType::I64),
            local,
        })
    }

    /// The count in node-shared memory, if it is there.
    fn atomic(&self) -> Option<&AtomicI64> {
        // SAFETY: 8 bytes of the window's shared memory, aligned, alive with the window, and
        // accessed only atomically once the constructor's barrier passed.
        self.local.map(|p| unsafe { &*p })
    }

    /// Frees the window: collective.
    pub(super) fn free(self) -> Result<()> {
        self.win.free()
    }

    /// Applies `op` with `operand` to the pointer atomically; its previous value.
    fn apply(&self, operand: i64, op: &AccumulateOp) -> Result<i64> {
        let mut old = [0u8; 8];
        let origin = operand.to_ne_bytes();
        let result = TypedBuf::new(old.as_mut_ptr(), 1, &self.word);
        let target = TypedBuf::new(std::ptr::null(), 1, &self.word);
        let origin: &[u8] = match op {
            AccumulateOp::NoOp => &[],
            _ => &origin,
        };
        self.win.lock(LockKind::Shared, OWNER, false)?;
        // SAFETY: `result` is the 8 writable bytes of `old`, alive until the call returns.
        let done = unsafe {
            self.win
                .accumulate(origin, Some(&result), OWNER, 0, &target, op)
        };
        let unlocked = self.win.unlock(OWNER);
        done.and(unlocked)?;
        Ok(i64::from_ne_bytes(old))
    }

    /// Advances the pointer by `delta` etypes; where it was.
    pub(super) fn fetch_add(&self, delta: u64) -> Result<u64> {
        if let Some(a) = self.atomic() {
            return Ok(a.fetch_add(delta as i64, Ordering::SeqCst) as u64);
        }
        let add = AccumulateOp::Reduce(ReduceOp::Sum, ElementType::I64);
        self.apply(delta as i64, &add).map(|v| v as u64)
    }

    /// The pointer's value.
    pub(super) fn get(&self) -> Result<i64> {
        if let Some(a) = self.atomic() {
            return Ok(a.load(Ordering::SeqCst));
        }
        self.apply(0, &AccumulateOp::NoOp)
    }

    /// Sets the pointer to `to`: collective (member 0 sets it, then every member waits).
    pub(super) fn set_collective(&self, comm: &Communicator, to: u64) -> Result<()> {
        let set = match (comm.rank(), self.atomic()) {
            (OWNER, Some(a)) => {
                a.store(to as i64, Ordering::SeqCst);
                Ok(())
            }
            (OWNER, None) => self.apply(to as i64, &AccumulateOp::Replace).map(drop),
            _ => Ok(()),
        };
        comm.barrier()?;
        set
    }
}
