//! The eager path allocates nothing per message: a counting global allocator watches 8-byte
//! and 1 KiB ping-pongs between ranks 0 and 1 (blocking send/recv, and non-blocking ones
//! waited in a scope) after a warm-up. A rare allocation that is not per message (a table
//! reaching a new high-water mark) is allowed, at most one per ROUNDS / 1000 round trips.
//! Ranks past 1 only take part in the barriers.
// mpi-test: ranks=2,3

#[path = "common/mod.rs"]
mod common;

use common::CaseResult;
use mpicd::Communicator;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting allocations (and reallocations) made by any thread.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded from the caller.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded from the caller.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const WARM_UP: usize = 2_000;
const ROUNDS: usize = 10_000;

/// Runs `round` WARM_UP times, then ROUNDS times while counting: the allocations made.
fn counted(mut round: impl FnMut() -> mpicd::Result<()>) -> Result<usize, mpicd::Error> {
    for _ in 0..WARM_UP {
        round()?;
    }
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..ROUNDS {
        round()?;
    }
    Ok(ALLOCATIONS.load(Ordering::Relaxed) - before)
}

fn blocking(w: &Communicator, len: usize) -> CaseResult {
    let (rank, peer) = (w.rank(), 1 - w.rank().min(1));
    if rank > 1 {
        return Ok(());
    }
    let out = vec![rank as u8; len];
    let mut inc = vec![0u8; len];
    let n = counted(|| {
        if rank == 0 {
            w.send(&out, peer, 1)?;
            w.recv(&mut inc, peer, 1)?;
        } else {
            w.recv(&mut inc, peer, 1)?;
            w.send(&out, peer, 1)?;
        }
        Ok(())
    })?;
    check!(inc.iter().all(|&b| b == peer as u8), "data");
    check!(
        n <= ROUNDS / 1000,
        "{n} heap allocations in {ROUNDS} blocking {len}-byte round trips"
    );
    Ok(())
}

fn nonblocking(w: &Communicator, len: usize) -> CaseResult {
    let (rank, peer) = (w.rank(), 1 - w.rank().min(1));
    if rank > 1 {
        return Ok(());
    }
    let out = vec![rank as u8; len];
    let mut inc = vec![0u8; len];
    let n = counted(|| {
        mpicd::scope(|s| {
            let r = w.irecv(s, &mut inc, peer, 2)?;
            let q = w.isend(s, &out, peer, 2)?;
            q.wait()?;
            r.wait().map(drop)
        })
    })?;
    check!(inc.iter().all(|&b| b == peer as u8), "data");
    check!(
        n <= ROUNDS / 1000,
        "{n} heap allocations in {ROUNDS} non-blocking {len}-byte exchanges"
    );
    Ok(())
}

fn main() {
    common::main(&[
        ("blocking 8 B", &|w| blocking(w, 8)),
        ("blocking 1 KiB", &|w| blocking(w, 1024)),
        ("non-blocking 8 B", &|w| nonblocking(w, 8)),
        ("non-blocking 1 KiB", &|w| nonblocking(w, 1024)),
    ]);
}
