//! The safe face of one-sided communication: puts, gets and the accumulate family over
//! borrowed slices inside an epoch that a closure delimits, so that no buffer can be freed,
//! moved or read while the transport may still use it.
//!
//! [`Window::fence_epoch`] opens an access epoch with a fence, lends an [`Epoch`] to the
//! closure and closes it with a fence; [`Window::lock_epoch`] does the same with a
//! passive-target lock and its unlock. The slices given to [`Epoch::put`], [`Epoch::get`],
//! [`Epoch::accumulate`] and [`Epoch::get_accumulate`] are borrowed for `'a`, which outlives
//! the whole call, and the epoch itself is only lent by reference, so user code can neither
//! forget it nor end it early: the closing synchronization, which completes every operation of
//! the epoch, always runs before the borrows end, also when the closure fails or unwinds.
//! [`Epoch::fetch_and_op`] and [`Epoch::compare_and_swap`] lend no buffer at all: they take
//! values and return the target's previous one, complete when they return (the `atomics`
//! submodule). A closing call that fails (a target died) aborts the process:
//! the buffers cannot be let go while the transport may still hold operations on them. A
//! program that must survive a dead target uses the `unsafe` calls ([`Window::put`] ...) and
//! handles the synchronization's `ProcFailed` itself.
//!
//! The element type of every call is a [`Primitive`]; the accumulate calls take an
//! [`crate::Op`] (a [`crate::ReduceOp`] converts into one), and one MPI does not define on the type (a bitwise op on `f64`) is an
//! `Error::InvalidOp` (class `MPI_ERR_OP`), never a panic.
//!
//! ```no_run
//! let mpi = mpicd::init()?;
//! let world = mpi.world();
//! let win = mpicd::Window::allocate(&world, 8 * world.size() as usize, 8)?;
//! let mine = [world.rank() as u64];
//! let mut all = vec![0u64; world.size() as usize];
//! win.fence_epoch(|e| {
//!     for t in 0..world.size() {
//!         e.put(&mine, t, world.rank() as i64)?; // my value into slot `rank` of every rank
//!     }
//!     Ok(())
//! })?;
//! win.fence_epoch(|e| e.get(&mut all, 0, 0))?; // rank 0's slots, after the puts
//! # Ok::<(), mpicd::Error>(())
//! ```
//!
//! A ticket counter in rank 0's window, taken by every rank without any other coordination:
//!
//! ```no_run
//! use mpicd::{LockKind, ReduceOp, Window};
//! let mpi = mpicd::init()?;
//! let world = mpi.world();
//! let win = Window::allocate(&world, 8, 8)?; // zeroed
//! let ticket: u64 = win.lock_epoch(LockKind::Shared, 0, |e| e.fetch_and_op(1u64, 0, 0, ReduceOp::Sum))?;
//! // Every rank holds a different ticket in 0..size.
//! # Ok::<(), mpicd::Error>(())
//! ```

use super::{LockKind, Window};
use crate::error::{Error, Result};
use crate::{Datatype, ElementType, Primitive, TypedBuf};
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

mod atomics;

/// `T`'s element type, checked to be as large as `T` (the typed buffers below cover exactly
/// the slices' bytes only then).
fn element<T: Primitive>() -> Result<ElementType> {
    match T::TYPE.size() == std::mem::size_of::<T>() {
        true => Ok(T::TYPE),
        false => Err(Error::InvalidDatatype(format!(
            "a Primitive of {} bytes claims to be {:?}",
            std::mem::size_of::<T>(),
            T::TYPE
        ))),
    }
}

/// The datatype of one `T`.
fn typed<T: Primitive>() -> Result<Datatype> {
    element::<T>().map(Datatype::of)
}

/// An access epoch on a window, lent to the closure of [`Window::fence_epoch`] or
/// [`Window::lock_epoch`]; `'a` is how long the buffers of its operations are borrowed.
pub struct Epoch<'w, 'a> {
    win: &'w Window,
    /// Invariant in `'a`: a buffer that dies inside the closure cannot be lent.
    _buffers: PhantomData<fn(&'a ()) -> &'a ()>,
}

impl<'a> Epoch<'_, 'a> {
    /// Writes `data` into member `rank`'s window at displacement `disp` (in the target's
    /// displacement units); complete when the epoch ends.
    pub fn put<T: Primitive>(&self, data: &'a [T], rank: i32, disp: i64) -> Result<()> {
        element::<T>()?;
        let len = std::mem::size_of_val(data);
        // SAFETY: `data` is readable for its bytes (and borrowed past the epoch).
        if unsafe {
            self.win
                .try_put_mapped(data.as_ptr().cast(), len, rank, disp)
        } {
            return Ok(());
        }
        let ty = typed::<T>()?;
        let origin = TypedBuf::new(data.as_ptr().cast(), data.len() as u64, &ty);
        let target = TypedBuf::new(std::ptr::null(), data.len() as u64, &ty);
        // SAFETY: `data` is borrowed for 'a, which outlives the epoch's closing
        // synchronization, the point where the put has completed.
        unsafe { self.win.put(&origin, rank, disp, &target) }
    }

    /// Reads member `rank`'s window at displacement `disp` into `into`; the data is there
    /// when the epoch has ended (the borrow keeps `into` out of reach until then).
    pub fn get<T: Primitive>(&self, into: &'a mut [T], rank: i32, disp: i64) -> Result<()> {
        element::<T>()?;
        let len = std::mem::size_of_val(into);
        // SAFETY: `into` is writable for its bytes, and its elements take any bytes.
        if unsafe {
            self.win
                .try_get_mapped(into.as_mut_ptr().cast(), len, rank, disp)
        } {
            return Ok(());
        }
        let ty = typed::<T>()?;
        let origin = TypedBuf::new(
            into.as_mut_ptr().cast_const().cast(),
            into.len() as u64,
            &ty,
        );
        let target = TypedBuf::new(std::ptr::null(), into.len() as u64, &ty);
        // SAFETY: `into` is mutably borrowed for 'a, past the closing synchronization that
        // completes the get, so nothing else reads or writes it meanwhile.
        unsafe { self.win.get(&origin, rank, disp, &target) }
    }
}

impl Window {
    /// Runs `f` in a fence epoch (collective over the window's group: every member calls it):
    /// a fence, `f`'s operations, a fence that completes them. Returns `f`'s result, or the
    /// closing fence's error.
    pub fn fence_epoch<'a, R>(&self, f: impl FnOnce(&Epoch<'_, 'a>) -> Result<R>) -> Result<R> {
        self.fence(false, false)?;
        self.in_epoch(f, || self.fence(false, false))
    }

    /// Runs `f` in a passive-target epoch on member `rank` (lock, `f`'s operations, unlock,
    /// which completes them); the target takes no part.
    pub fn lock_epoch<'a, R>(
        &self,
        kind: LockKind,
        rank: i32,
        f: impl FnOnce(&Epoch<'_, 'a>) -> Result<R>,
    ) -> Result<R> {
        self.lock(kind, rank, false)?;
        self.in_epoch(f, || self.unlock(rank))
    }

    fn in_epoch<'a, R>(
        &self,
        f: impl FnOnce(&Epoch<'_, 'a>) -> Result<R>,
        close: impl FnOnce() -> Result<()>,
    ) -> Result<R> {
        let epoch = Epoch {
            win: self,
            _buffers: PhantomData,
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| f(&epoch)));
        if let Err(e) = close() {
            eprintln!("mpicd: closing a window epoch failed ({e}); aborting: its buffers may still be in use");
            std::process::abort();
        }
        match outcome {
            Ok(r) => r,
            Err(panic) => resume_unwind(panic),
        }
    }
}
