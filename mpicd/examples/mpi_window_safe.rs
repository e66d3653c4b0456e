//! The safe one-sided API: puts and gets over borrowed slices in epochs that closures delimit
//! (`Window::fence_epoch`, `Window::lock_epoch`): every rank puts its value into every other
//! rank's window and reads a neighbour's whole window back (fences), then every rank writes its
//! slot of rank 0's window under an exclusive lock and reads the whole of it under a shared one;
//! each result is checked.
// mpi-test: ranks=2,3 modes=shm,tcp

#[path = "common/mod.rs"]
mod common;

use common::CaseResult;
use mpicd::{Communicator, LockKind, Window};

fn fence_put_get(w: &Communicator) -> CaseResult {
    let (rank, size) = (w.rank(), w.size());
    let win = Window::allocate(w, 8 * size as usize, 8)?;
    let mine = [100 + rank as u64];
    win.fence_epoch(|e| {
        for t in 0..size {
            e.put(&mine, t, rank as i64)?;
        }
        Ok(())
    })?;
    let mut all = vec![0u64; size as usize];
    win.fence_epoch(|e| e.get(&mut all, (rank + 1) % size, 0))?;
    check!(
        all == (0..size).map(|r| 100 + r as u64).collect::<Vec<_>>(),
        "read back {all:?}"
    );
    win.free()?;
    Ok(())
}

fn lock_put_get(w: &Communicator) -> CaseResult {
    let (rank, size) = (w.rank(), w.size());
    let win = Window::allocate(w, 8 * size as usize, 8)?;
    // Passive target: each rank writes its slot of rank 0's window under an exclusive lock;
    // rank 0 takes no part in the epochs.
    let mine = [7 * rank as u64 + 1];
    win.lock_epoch(LockKind::Exclusive, 0, |e| e.put(&mine, 0, rank as i64))?;
    w.barrier()?;
    let mut all = vec![0u64; size as usize];
    win.lock_epoch(LockKind::Shared, 0, |e| e.get(&mut all, 0, 0))?;
    check!(
        all == (0..size).map(|r| 7 * r as u64 + 1).collect::<Vec<_>>(),
        "rank 0's window {all:?}"
    );
    w.barrier()?;
    win.free()?;
    Ok(())
}

fn main() {
    common::main(&[
        ("fence epochs: put to all, get back", &fence_put_get),
        (
            "lock epochs: put under exclusive locks, get under a shared one",
            &lock_put_get,
        ),
    ]);
}
