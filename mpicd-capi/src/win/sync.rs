//! The synchronization calls of windows: fence, passive-target locks (`MPI_Win_lock`,
//! `_unlock`, `_lock_all`, `_unlock_all`), flushes, `MPI_Win_sync`, and the PSCW calls
//! (`MPI_Win_post`, `_start`, `_complete`, `_wait`, `_test`). Arguments are checked here; the
//! epochs are [`mpicd::Window`]'s.

use super::run_on_win;
use crate::abi::*;
use crate::env::out;
use crate::errors::{fail, CResult};
use mpicd::{LockKind, Window};
use std::ffi::c_int;

/// Every assertion bit a synchronization call may take.
const ASSERTS: c_int =
    MPI_MODE_NOCHECK | MPI_MODE_NOPRECEDE | MPI_MODE_NOPUT | MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED;

fn check_assert(assert: c_int) -> CResult<()> {
    if assert & !ASSERTS != 0 {
        return Err(fail(
            MPI_ERR_ASSERT,
            format!("invalid assertion {assert:#x}"),
        ));
    }
    Ok(())
}

/// The window ranks of the members of `group` (each must be a member of the window).
fn ranks_of(w: &Window, group: MPI_Group) -> CResult<Vec<c_int>> {
    let g = crate::groups::get(group)?;
    let mine = w.group();
    let ranks: Vec<c_int> = (0..g.size()).collect();
    let translated = g.translate(&ranks, &mine)?;
    if translated.iter().any(|&r| r < 0) {
        return Err(fail(
            MPI_ERR_GROUP,
            "the group names a process that is not a member of the window",
        ));
    }
    Ok(translated)
}

/// Completes every one-sided operation on the window and waits for every member: an epoch
/// ends and (unless MPI_MODE_NOSUCCEED) the next starts. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_fence(assert: c_int, win: MPI_Win) -> c_int {
    run_on_win("Win_fence", win, |w| {
        check_assert(assert)?;
        let (precede, succeed) = (
            assert & MPI_MODE_NOPRECEDE != 0,
            assert & MPI_MODE_NOSUCCEED != 0,
        );
        w.fence(precede, succeed).map_err(Into::into)
    })
}

/// Starts a passive-target epoch on `rank` with a shared or exclusive lock; the target need
/// not call MPI. MPI_MODE_NOCHECK skips the lock itself.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_lock(
    lock_type: c_int,
    rank: c_int,
    assert: c_int,
    win: MPI_Win,
) -> c_int {
    run_on_win("Win_lock", win, |w| {
        check_assert(assert)?;
        let kind = match lock_type {
            MPI_LOCK_EXCLUSIVE => LockKind::Exclusive,
            MPI_LOCK_SHARED => LockKind::Shared,
            other => return Err(fail(MPI_ERR_LOCKTYPE, format!("invalid lock type {other}"))),
        };
        w.lock(kind, rank, assert & MPI_MODE_NOCHECK != 0)
            .map_err(Into::into)
    })
}

/// Completes the operations on `rank` (at the target too) and releases its lock.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_unlock(rank: c_int, win: MPI_Win) -> c_int {
    run_on_win("Win_unlock", win, |w| w.unlock(rank).map_err(Into::into))
}

/// Starts a passive-target epoch on every member with shared locks.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_lock_all(assert: c_int, win: MPI_Win) -> c_int {
    run_on_win("Win_lock_all", win, |w| {
        check_assert(assert)?;
        w.lock_all(assert & MPI_MODE_NOCHECK != 0)
            .map_err(Into::into)
    })
}

/// Ends the epoch of MPI_Win_lock_all: completes every operation and releases the locks.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_unlock_all(win: MPI_Win) -> c_int {
    run_on_win("Win_unlock_all", win, |w| {
        w.unlock_all().map_err(Into::into)
    })
}

/// Completes the operations on `rank`, at the target too, inside a passive-target epoch.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_flush(rank: c_int, win: MPI_Win) -> c_int {
    if super::hot::flush(Some(rank), win) {
        return MPI_SUCCESS;
    }
    flush_slow("Win_flush", Some(rank), win)
}

/// The flushes as `name` (`rank` None: on every member), the general path (what the
/// lock-free one, [`super::hot::flush`], does not take).
#[cold]
#[inline(never)]
fn flush_slow(name: &'static str, rank: Option<c_int>, win: MPI_Win) -> c_int {
    run_on_win(name, win, |w| {
        match rank {
            Some(r) => w.flush(r),
            None => w.flush_all(),
        }
        .map_err(Into::into)
    })
}

/// Completes the operations on every member, at the targets too.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_flush_all(win: MPI_Win) -> c_int {
    if super::hot::flush(None, win) {
        return MPI_SUCCESS;
    }
    flush_slow("Win_flush_all", None, win)
}

/// Completes the operations on `rank` locally (mpicd completes them at the target too).
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_flush_local(rank: c_int, win: MPI_Win) -> c_int {
    if super::hot::flush(Some(rank), win) {
        return MPI_SUCCESS;
    }
    flush_slow("Win_flush_local", Some(rank), win)
}

/// Completes the operations on every member locally (at the targets too, in mpicd).
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_flush_local_all(win: MPI_Win) -> c_int {
    if super::hot::flush(None, win) {
        return MPI_SUCCESS;
    }
    flush_slow("Win_flush_local_all", None, win)
}

/// Synchronizes the public and private copies of the window (one memory in the unified
/// model: a memory barrier).
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_sync(win: MPI_Win) -> c_int {
    run_on_win("Win_sync", win, |w| w.sync().map_err(Into::into))
}

/// Starts an exposure epoch for the members of `group`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_post(group: MPI_Group, assert: c_int, win: MPI_Win) -> c_int {
    run_on_win("Win_post", win, |w| {
        check_assert(assert)?;
        let ranks = ranks_of(&w, group)?;
        w.post(&ranks).map_err(Into::into)
    })
}

/// Starts an access epoch on the members of `group`, once each has posted.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_start(group: MPI_Group, assert: c_int, win: MPI_Win) -> c_int {
    run_on_win("Win_start", win, |w| {
        check_assert(assert)?;
        let ranks = ranks_of(&w, group)?;
        w.start(&ranks).map_err(Into::into)
    })
}

/// Ends the access epoch of MPI_Win_start: its operations are complete at the targets.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_complete(win: MPI_Win) -> c_int {
    run_on_win("Win_complete", win, |w| w.complete().map_err(Into::into))
}

/// Ends the exposure epoch of MPI_Win_post once every origin has completed.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_wait(win: MPI_Win) -> c_int {
    run_on_win("Win_wait", win, |w| w.wait().map_err(Into::into))
}

/// MPI_Win_wait without blocking: `*flag` = 1 once the exposure epoch ended.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_test(win: MPI_Win, flag: *mut c_int) -> c_int {
    run_on_win("Win_test", win, |w| {
        crate::env::require(flag, "flag")?;
        out(flag, w.test()? as c_int)
    })
}
