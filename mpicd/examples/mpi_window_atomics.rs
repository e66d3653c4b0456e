//! The safe accumulate family of window epochs (`Epoch::accumulate`, `get_accumulate`,
//! `fetch_and_op`, `compare_and_swap`): a counter in rank 0's window taken by every rank with
//! fetch-and-op sums loses no update and hands out every ticket once; a compare-and-swap race
//! has exactly one winner; accumulates with Max, Min, Sum and Replace (integers and floats)
//! leave the values the ops define, read back with get-accumulate's NoOp; a get-accumulate
//! returns the previous elements; ops a type does not define are `InvalidOp` errors (class
//! MPI_ERR_OP), compare-and-swap on floats an `InvalidDatatype`, and neither ends the epoch.
// mpi-test: ranks=2,3,4 modes=shm,tcp

#[path = "common/mod.rs"]
mod common;

use common::CaseResult;
use mpicd::error::class;
use mpicd::{Communicator, LockKind, Op, ReduceOp, Window};

/// Tickets each rank takes from the counter.
const TICKETS: u64 = 50;

fn counter(w: &Communicator) -> CaseResult {
    let (rank, size) = (w.rank(), w.size() as u64);
    let total = size * TICKETS;
    // Rank 0's window: slot 0 the counter, slots 1..=total how often each ticket was drawn.
    let win = Window::allocate(w, 8 * (1 + total as usize), 8)?;
    let mut mine = Vec::new();
    for i in 0..TICKETS {
        // Alternate shared-lock epochs with several draws and single-draw epochs.
        if i % 2 == 0 {
            let (a, b) = win.lock_epoch(LockKind::Shared, 0, |e| {
                Ok((
                    e.fetch_and_op(1u64, 0, 0, ReduceOp::Sum)?,
                    e.fetch_and_op(0u64, 0, 0, Op::NoOp)?,
                ))
            })?;
            check!(b > a, "rank {rank}: counter read {b} after drawing {a}");
            mine.push(a);
        } else {
            mine.push(win.lock_epoch(LockKind::Shared, 0, |e| {
                e.fetch_and_op(1u64, 0, 0, ReduceOp::Sum)
            })?);
        }
    }
    check!(
        mine.windows(2).all(|p| p[0] < p[1]) && mine.iter().all(|&t| t < total),
        "rank {rank}: tickets {mine:?}"
    );
    let ones = vec![1u64; 1];
    win.lock_epoch(LockKind::Shared, 0, |e| {
        for &t in &mine {
            e.accumulate(&ones, 0, 1 + t as i64, ReduceOp::Sum)?;
        }
        Ok(())
    })?;
    w.barrier()?;
    let mut seen = vec![0u64; 1 + total as usize];
    win.lock_epoch(LockKind::Shared, 0, |e| {
        e.get_accumulate(&[], &mut seen, 0, 0, Op::NoOp)
    })?;
    check!(seen[0] == total, "counter {} after {total} draws", seen[0]);
    check!(
        seen[1..].iter().all(|&n| n == 1),
        "tickets not drawn exactly once: {:?}",
        &seen[1..]
    );
    w.barrier()?;
    win.free()?;
    Ok(())
}

fn cas_one_winner(w: &Communicator) -> CaseResult {
    let rank = w.rank();
    // Rank 0's window: slot 0 the flag (-1: free), slot 1 the number of winners.
    let win = Window::allocate(w, 16, 8)?;
    win.fence_epoch(|e| match rank {
        0 => e.put(&[-1i64], 0, 0),
        _ => Ok(()),
    })?;
    let old = win.lock_epoch(LockKind::Shared, 0, |e| {
        e.compare_and_swap(rank as i64, -1i64, 0, 0)
    })?;
    let won = old == -1;
    check!(
        won || (0..w.size() as i64).contains(&old),
        "rank {rank}: compare-and-swap returned {old}"
    );
    let count = [won as i64];
    win.lock_epoch(LockKind::Shared, 0, |e| {
        e.accumulate(&count, 0, 1, ReduceOp::Sum)
    })?;
    w.barrier()?;
    let mut state = [0i64; 2];
    win.lock_epoch(LockKind::Shared, 0, |e| {
        e.get_accumulate(&[], &mut state, 0, 0, Op::NoOp)
    })?;
    check!(state[1] == 1, "{} winners", state[1]);
    check!(
        !won || state[0] == rank as i64,
        "rank {rank} won but the flag holds {}",
        state[0]
    );
    // A compare that fails leaves the element and returns it.
    let again = win.lock_epoch(LockKind::Exclusive, 0, |e| {
        e.compare_and_swap(99i64, -1i64, 0, 0)
    })?;
    check!(again == state[0], "failed swap returned {again}");
    w.barrier()?;
    win.free()?;
    Ok(())
}

fn accumulate_ops(w: &Communicator) -> CaseResult {
    let (rank, size) = (w.rank(), w.size());
    let last = size - 1;
    // Every window: i64 slots max, min, sum, replace; then f64 slots sum, max.
    let win = Window::allocate(w, 48, 8)?;
    win.fence_epoch(|e| e.put(&[i64::MIN, i64::MAX, 0, -1], rank, 0))?;
    let r = rank as i64;
    let (max, min, sum) = ([10 * r + 3], [10 * r - 7], [r + 1]);
    let repl = [1000 + r];
    let (fsum, fmax) = ([0.5 + r as f64], [-(r as f64)]);
    win.fence_epoch(|e| {
        for t in 0..size {
            e.accumulate(&max, t, 0, ReduceOp::Max)?;
            e.accumulate(&min, t, 1, ReduceOp::Min)?;
            e.accumulate(&sum, t, 2, ReduceOp::Sum)?;
            e.accumulate(&fsum, t, 4, ReduceOp::Sum)?;
            e.accumulate(&fmax, t, 5, ReduceOp::Max)?;
            if rank == last {
                e.accumulate(&repl, t, 3, Op::Replace)?;
            }
        }
        Ok(())
    })?;
    let s = size as i64;
    let mut ints = [0i64; 4];
    let mut floats = [0f64; 2];
    win.fence_epoch(|e| {
        e.get_accumulate(&[], &mut ints, (rank + 1) % size, 0, Op::NoOp)?;
        e.get_accumulate(&[], &mut floats, (rank + 1) % size, 4, Op::NoOp)
    })?;
    let want = [10 * (s - 1) + 3, -7, s * (s + 1) / 2, 1000 + s - 1];
    check!(ints == want, "integers {ints:?}, want {want:?}");
    let fwant = [s as f64 * s as f64 / 2.0, 0.0];
    check!(floats == fwant, "floats {floats:?}, want {fwant:?}");
    // get_accumulate with a sum returns the elements before it: only the last rank adds.
    let add = [5i64, 6];
    let mut before = [0i64; 2];
    win.fence_epoch(|e| match rank == last {
        true => e.get_accumulate(&add, &mut before, 0, 2, ReduceOp::Sum),
        false => Ok(()),
    })?;
    if rank == last {
        check!(before == want[2..], "previous elements {before:?}");
    }
    let mut after = [0i64; 2];
    win.fence_epoch(|e| e.get_accumulate(&[], &mut after, 0, 2, Op::NoOp))?;
    check!(
        after == [want[2] + 5, want[3] + 6],
        "after the sum {after:?}"
    );
    // Replace through fetch_and_op is an atomic swap; the f64 counter sums exactly.
    if rank == 0 {
        let old = win.lock_epoch(LockKind::Exclusive, last, |e| {
            e.fetch_and_op(7i64, last, 3, Op::Replace)
        })?;
        check!(old == want[3], "swap returned {old}");
    }
    w.barrier()?;
    let f = win.lock_epoch(LockKind::Shared, 0, |e| {
        e.fetch_and_op(0.25f64, 0, 4, ReduceOp::Sum)
    })?;
    let (start, step) = (fwant[0], 0.25);
    check!(
        (0..size).any(|k| f == start + step * k as f64),
        "f64 counter read {f}"
    );
    w.barrier()?;
    let end = win.lock_epoch(LockKind::Shared, 0, |e| {
        e.fetch_and_op(0.0f64, 0, 4, Op::NoOp)
    })?;
    check!(end == start + step * s as f64, "f64 counter ended at {end}");
    w.barrier()?;
    win.free()?;
    Ok(())
}

fn undefined_ops(w: &Communicator) -> CaseResult {
    let win = Window::allocate(w, 8, 8)?;
    let x = [1.0f64];
    let mut r = [0f64];
    let classes = win.fence_epoch(|e| {
        let errs = [
            e.accumulate(&x, 0, 0, ReduceOp::Band).err(),
            e.accumulate(&x, 0, 0, ReduceOp::Lor).err(),
            e.get_accumulate(&x, &mut r, 0, 0, ReduceOp::Bxor).err(),
            e.fetch_and_op(1.0f64, 0, 0, ReduceOp::Bor).err(),
            e.accumulate(&[1u64], 0, 0, Op::NoOp).err(),
            e.compare_and_swap(1.0f64, 0.0, 0, 0).err(),
        ];
        // The epoch is still usable after the refusals.
        let v = e.fetch_and_op(0u64, 0, 0, Op::NoOp)?;
        Ok((errs.map(|e| e.map(|e| e.class())), v))
    })?;
    let op = Some(class::ERR_OP);
    let want = [op, op, op, op, op, Some(class::ERR_TYPE)];
    check!(classes.0 == want, "error classes {:?}", classes.0);
    check!(classes.1 == 0, "window changed to {}", classes.1);
    win.free()?;
    Ok(())
}

fn main() {
    common::main(&[
        (
            "fetch_and_op Sum counter: no lost update, every ticket once",
            &counter,
        ),
        ("compare_and_swap: exactly one winner", &cas_one_winner),
        (
            "accumulate Max/Min/Sum/Replace, get_accumulate NoOp and Sum",
            &accumulate_ops,
        ),
        ("undefined ops are MPI_ERR_OP errors", &undefined_ops),
    ]);
}
