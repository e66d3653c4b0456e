//! The shared file pointer: one 64-bit count of etypes in a window on member 0 of the file's
//! communicator, read and advanced atomically by any member with a fetching accumulate under a
//! shared lock, so that concurrent `_shared` accesses get disjoint ranges of the file.

use crate::comm::Communicator;
use crate::datatype::ElementType;
use crate::error::Result;
use crate::plan::derived::{Datatype, TypedBuf};
use crate::window::{AccumulateOp, LockKind, Window};
use std::sync::Arc;

/// The shared file pointer of one file.
pub(super) struct SharedPointer {
    win: Window,
    word: Datatype,
}

/// The target of every access: one i64 at displacement 0 of member 0's window.
const OWNER: i32 = 0;

impl SharedPointer {
    /// Makes the pointer (at `start`) on every member of `comm`: collective.
    pub(super) fn new(comm: &Communicator, start: u64) -> Result<SharedPointer> {
        let size = if comm.rank() == OWNER { 8 } else { 0 };
        let win = Window::allocate(comm, size, 1)?;
        if comm.rank() == OWNER {
            // SAFETY: the window's memory is 8 bytes, allocated (and aligned) by the window.
            unsafe { (win.base() as *mut i64).write(start as i64) };
        }
        comm.barrier()?;
        Ok(SharedPointer {
            win,
            word: Datatype::of(ElementType::I64),
        })
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
        let add = AccumulateOp::Combine(Arc::new(|old: &mut [u8], origin: &[u8]| {
            let a = i64::from_ne_bytes(old[..8].try_into().expect("8 bytes"));
            let b = i64::from_ne_bytes(origin[..8].try_into().expect("8 bytes"));
            old[..8].copy_from_slice(&a.wrapping_add(b).to_ne_bytes());
            Ok(())
        }));
        self.apply(delta as i64, &add).map(|v| v as u64)
    }

    /// The pointer's value.
    pub(super) fn get(&self, _comm: &Communicator) -> Result<i64> {
        self.apply(0, &AccumulateOp::NoOp)
    }

    /// Sets the pointer to `to`: collective (member 0 sets it, then every member waits).
    pub(super) fn set_collective(&self, comm: &Communicator, to: u64) -> Result<()> {
        let set = match comm.rank() {
            OWNER => self.apply(to as i64, &AccumulateOp::Replace).map(drop),
            _ => Ok(()),
        };
        comm.barrier()?;
        set
    }
}
