//! Load/store access to the members' window memory ([`Mapped`]), when every member of a window
//! can map every other's: memory UCX allocated (`MPI_Win_allocate`) or a node's shared segment
//! (`MPI_Win_allocate_shared`), all members on one node, a shared-memory transport allowed.
//!
//! Puts and gets are then copies, complete when they return; the control words (passive-target
//! locks, the accumulate lock, the PSCW counters) are the CPU's atomics on the mapped control
//! blocks; an accumulate changes each element of 1, 2, 4 or 8 bytes with one CPU atomic
//! ([`super::element`]), and keeps its protocol (take the target's accumulate lock, read,
//! combine, write, release) with loads and stores for larger or misaligned elements. No
//! operation waits for the transport, and none needs the target to call MPI. Calls on
//! contiguous data of one predefined type skip even the window's mutex ([`super::hot`]).
//!
//! A window is mapped for all its members or for none, decided together at creation
//! ([`Window::map_members`]), so that no two members reach one control word by two paths
//! (a CPU atomic and a transport's emulated one are not atomic with each other).
//!
//! Nothing waits, so nothing would notice a member's death: the synchronization calls look at
//! the target's liveness themselves ([`Window::direct_alive`]), and progress the engine every
//! [`PROGRESS_EVERY`] calls, which watches the processes of this node.

use super::Window;
use crate::error::Result;
use crate::transport::AtomicOp;
use crate::TypedBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Synchronization calls of a mapped window between two progress calls of the engine.
const PROGRESS_EVERY: u32 = 64;

/// Where each member's window memory and control block are mapped in this process.
pub(crate) struct Mapped {
    /// The local address of each member's base (0 when it exposes no memory).
    data: Vec<usize>,
    /// The local address of each member's control block.
    control: Vec<usize>,
}

impl Mapped {
    /// The local address of member `rank`'s address `addr`, whose window starts at `base`.
    pub(crate) fn data(&self, rank: usize, addr: u64, base: u64) -> *mut u8 {
        (self.data[rank] as *mut u8).wrapping_add(addr.wrapping_sub(base) as usize)
    }

    /// Where member `rank`'s window memory starts in this process (0 when it exposes none).
    pub(crate) fn base(&self, rank: usize) -> usize {
        self.data[rank]
    }

    /// An atomic `op` on the control word at byte offset `at` of member `rank`, as
    /// [`Window::control_atomic`] defines it: returns the old value (`CompareSwap` compares
    /// with `value` and stores `swap`).
    pub(crate) fn atomic(
        &self,
        rank: usize,
        op: AtomicOp,
        at: u64,
        value: u64,
        swap: Option<u64>,
    ) -> u64 {
        // SAFETY: the control block is mapped while the window's keys live (until it is
        // freed); it is an array of 64-bit atomics and `at` one of its word offsets.
        let w = unsafe { &*((self.control[rank] + at as usize) as *const AtomicU64) };
        let order = Ordering::AcqRel;
        match op {
            AtomicOp::Add => w.fetch_add(value, order),
            AtomicOp::Swap => w.swap(value, order),
            AtomicOp::CompareSwap => {
                match w.compare_exchange(value, swap.unwrap_or(0), order, Ordering::Acquire) {
                    Ok(v) | Err(v) => v,
                }
            }
            AtomicOp::And => w.fetch_and(value, order),
            AtomicOp::Or => w.fetch_or(value, order),
            AtomicOp::Xor => w.fetch_xor(value, order),
        }
    }
}

/// Copies between the packed stream at `stream` and the runs of `target` (a datatype with base
/// 0) laid out from `base`: into the runs for a put, out of them for a get.
///
/// # Safety
/// `stream` must hold the packed size of `target`, and the runs from `base` must lie in mapped
/// window memory (the range checks of [`Window::locate`] passed).
pub(crate) unsafe fn copy_runs(base: *mut u8, target: &TypedBuf, stream: *mut u8, put: bool) {
    let copy = |at: *mut u8, len: usize, pos: usize| {
        let there = base.wrapping_add(at as usize);
        // SAFETY: the caller's promise; `ptr::copy` allows a window that overlaps the origin
        // (a process accessing its own window).
        unsafe {
            match put {
                true => std::ptr::copy(stream.add(pos), there, len),
                false => std::ptr::copy(there, stream.add(pos), len),
            }
        }
    };
    if let Some((at, len)) = target.contiguous() {
        return copy(at, len, 0);
    }
    let mut pos = 0usize;
    target.for_each_run(|at, len| {
        copy(at, len, pos);
        pos += len;
    });
}

impl Window {
    /// Maps every member's memory and control block, if every member can map every other's;
    /// collective (each member tells whether it could). `shared` gives the members' pieces of
    /// a shared segment, already mapped here.
    pub(crate) fn map_members(&mut self, shared: Option<&[usize]>) -> Result<()> {
        let n = self.targets.len();
        let me = self.rank() as usize;
        let (mut data, mut control) = (vec![0usize; n], vec![0usize; n]);
        let mut ok = self
            .comm
            .shared
            .with(|e| Ok(e.rma_worker().uses_shared_memory()))?;
        if ok {
            let mut st = self.lock_state();
            for r in 0..n {
                if r == me {
                    (data[r], control[r]) = (self.base, self.control as usize);
                    continue;
                }
                let rec = &self.targets[r].rec;
                let found = self.on_target(&mut st, r, |_, _, keys, _| {
                    let c = keys.control.local_address(rec.control);
                    let d = match (shared, &keys.data) {
                        (Some(pieces), _) => Some(pieces[r] as *mut u8),
                        (None, Some(k)) => k.local_address(rec.base),
                        (None, None) => Some(std::ptr::null_mut()),
                    };
                    Ok(c.zip(d))
                });
                match found {
                    Ok(Some((c, d))) => (data[r], control[r]) = (d as usize, c as usize),
                    _ => {
                        ok = false;
                        break;
                    }
                }
            }
        }
        let all = crate::collective::allgather(&self.comm, &[u8::from(ok)])?;
        if all.iter().all(|b| b.first() == Some(&1)) {
            self.mapped = Some(Mapped { data, control });
        }
        Ok(())
    }

    /// `ProcFailed` if one of `ranks` is known dead; every [`PROGRESS_EVERY`] calls the
    /// engine progresses first (and so looks at this node's processes now and then).
    pub(crate) fn direct_alive(&self, ranks: impl Iterator<Item = usize>) -> Result<()> {
        let n = self.direct_calls.load(Ordering::Relaxed).wrapping_add(1);
        // A plain count (threads racing on it may lose a call or two: only the pace changes).
        self.direct_calls.store(n, Ordering::Relaxed);
        let progress = n % PROGRESS_EVERY == 0;
        if !progress && !crate::engine::any_failed() {
            return Ok(());
        }
        self.comm.shared.with(|e| {
            if progress {
                e.progress();
            }
            ranks
                .into_iter()
                .try_for_each(|r| e.rma_peer_alive(self.targets[r].world))
        })
    }

    /// [`Window::direct_alive`] when it has nothing to do: counts the call and returns true
    /// while no process is known failed and no progress is due; otherwise counts nothing and
    /// returns false (the caller then calls `direct_alive`).
    #[inline]
    pub(crate) fn direct_quiet(&self) -> bool {
        let n = self.direct_calls.load(Ordering::Relaxed).wrapping_add(1);
        if n % PROGRESS_EVERY == 0 || crate::engine::any_failed() {
            return false;
        }
        self.direct_calls.store(n, Ordering::Relaxed);
        true
    }
}
