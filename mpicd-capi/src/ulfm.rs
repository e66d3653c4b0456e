//! The ULFM calls of Open MPI 5 (`MPIX_Comm_*`) that report and acknowledge failed processes:
//! translations to [`mpicd::Communicator`]'s failure calls.

use crate::abi::*;
use crate::comms::run_on;
use crate::env::{new_comm_out, out, require};
use crate::errors::fail;
use crate::requests::{failed, Finished, Work};
use crate::status;
use mpicd::{PendingAgreement, PendingShrink};
use std::ffi::c_int;

/// ULFM: acknowledges every failure of a member of `comm` that this process knows of; receives
/// from `MPI_ANY_SOURCE` on `comm` then no longer fail with `MPIX_ERR_PROC_FAILED_PENDING`
/// because of them.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_failure_ack(comm: MPI_Comm) -> c_int {
    run_on("MPIX_Comm_failure_ack", comm, |c| Ok(c.ack_failures()?))
}

/// ULFM: the group of the members of `comm` whose failure was acknowledged with
/// `MPIX_Comm_failure_ack` or `MPIX_Comm_ack_failed`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_failure_get_acked(
    comm: MPI_Comm,
    failedgrp: *mut MPI_Group,
) -> c_int {
    run_on("MPIX_Comm_failure_get_acked", comm, |c| {
        require(failedgrp, "failedgrp")?;
        let group = c.acked_failures()?;
        out(
            failedgrp,
            crate::groups::insert(group, crate::comms::session_of(comm)),
        )
    })
}

/// ULFM (MPI 5 proposal): the group of the members of `comm` this process knows failed, in
/// the order it found them.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_get_failed(comm: MPI_Comm, failedgrp: *mut MPI_Group) -> c_int {
    run_on("MPIX_Comm_get_failed", comm, |c| {
        require(failedgrp, "failedgrp")?;
        let group = c.failed_members()?;
        out(
            failedgrp,
            crate::groups::insert(group, crate::comms::session_of(comm)),
        )
    })
}

/// ULFM (MPI 5 proposal): acknowledges the first `num_to_ack` failed members of `comm` (in
/// the order of `MPIX_Comm_get_failed`) and sets `*num_acked` to how many are acknowledged.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_ack_failed(
    comm: MPI_Comm,
    num_to_ack: c_int,
    num_acked: *mut c_int,
) -> c_int {
    run_on("MPIX_Comm_ack_failed", comm, |c| {
        require(num_acked, "num_acked")?;
        let count =
            usize::try_from(num_to_ack).map_err(|_| fail(MPI_ERR_ARG, "num_to_ack is negative"))?;
        let acked = c.ack_failed(count)?;
        out(num_acked, c_int::try_from(acked).unwrap_or(c_int::MAX))
    })
}

/// ULFM: agrees among the live members of `comm` on the bitwise AND of their `*flag` (set to
/// it on return). Returns `MPIX_ERR_PROC_FAILED` when a member failed whose failure `comm` did
/// not acknowledge; `*flag` is the agreed value all the same.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_agree(comm: MPI_Comm, flag: *mut c_int) -> c_int {
    run_on("MPIX_Comm_agree", comm, |c| {
        require(flag, "flag")?;
        // SAFETY: checked non-null; the caller gives a readable and writable int.
        let mine = unsafe { *flag } as u32;
        let (agreed, outcome) = c.agree(mine);
        out(flag, agreed as c_int)?;
        Ok(outcome?)
    })
}

/// ULFM: a new communicator `*newcomm` of the live members of `comm` (collective over them),
/// in their order in `comm`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_shrink(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    run_on("MPIX_Comm_shrink", comm, |c| {
        new_comm_out(newcomm, "newcomm")?;
        let shrunk = c.shrink()?;
        out(newcomm, crate::comms::insert(shrunk, comm))
    })
}

/// ULFM: revokes `comm` on every process of it (not collective). Every operation on `comm`
/// then fails with `MPIX_ERR_REVOKED`, pending ones included, on each process once it learns
/// of it (within a progress call of the notice's arrival); `MPIX_Comm_agree`, `_shrink`,
/// `_failure_ack`, `_ack_failed`, `_get_failed`, `_failure_get_acked`, `_is_revoked` and
/// `MPI_Comm_free` still work on it.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_revoke(comm: MPI_Comm) -> c_int {
    run_on("MPIX_Comm_revoke", comm, |c| Ok(c.revoke()?))
}

/// ULFM: sets `*flag` to true if this process knows `comm` revoked (by `MPIX_Comm_revoke`
/// here or on another of its processes).
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_is_revoked(comm: MPI_Comm, flag: *mut c_int) -> c_int {
    run_on("MPIX_Comm_is_revoked", comm, |c| {
        require(flag, "flag")?;
        out(flag, c_int::from(c.is_revoked()?))
    })
}

/// ULFM: `MPIX_Comm_agree` without waiting: `*request` completes when the live members agreed,
/// and `*flag` holds the agreed AND then (not before: it must stay valid until completion).
/// The agreement runs on a thread of its own, which progresses the library meanwhile.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_iagree(
    comm: MPI_Comm,
    flag: *mut c_int,
    request: *mut MPI_Request,
) -> c_int {
    run_on("MPIX_Comm_iagree", comm, |c| {
        require(flag, "flag")?;
        require(request, "request")?;
        // SAFETY: checked non-null; the caller gives a readable int.
        let mine = unsafe { *flag } as u32;
        let work = Background::Agree(Some(c.iagree(mine)?), flag);
        out(request, insert_background(work, comm))
    })
}

/// ULFM: `MPIX_Comm_shrink` without waiting: `*request` completes when the live members made
/// the new communicator, which `*newcomm` holds then (not before: it must stay valid until
/// completion). It runs on a thread of its own, which progresses the library meanwhile.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Comm_ishrink(
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    run_on("MPIX_Comm_ishrink", comm, |c| {
        new_comm_out(newcomm, "newcomm")?;
        require(request, "request")?;
        let work = Background::Shrink(Some(c.ishrink()?), comm, newcomm);
        out(request, insert_background(work, comm))
    })
}

fn insert_background(work: Background, comm: MPI_Comm) -> MPI_Request {
    let work = Work::Background(Box::new(work));
    crate::requests::insert_work(work, crate::comms::errh(comm), None)
}

/// `MPIX_Comm_iagree` or `_ishrink` in flight, with where its outcome goes.
pub(crate) enum Background {
    /// The agreement and the caller's flag.
    Agree(Option<PendingAgreement>, *mut c_int),
    /// The shrink, the communicator shrunk and the caller's new handle.
    Shrink(Option<PendingShrink>, MPI_Comm, *mut MPI_Comm),
}

// SAFETY: the pointers are only written when the request completes, on the thread that
// completes it, as MPI allows (the flag and handle belong to the request until then); the
// pending work is Send.
unsafe impl Send for Background {}

impl Background {
    /// The request's outcome once the work completed (the flag or handle written then).
    pub(crate) fn test(&mut self) -> Option<Finished> {
        let outcome = match self {
            Background::Agree(pending, flag) => {
                let done = pending.take_if(|p| p.is_done())?.wait();
                done.and_then(|(agreed, outcome)| {
                    // SAFETY: non-null (checked at the call), valid until the request completes.
                    unsafe { **flag = agreed as c_int };
                    outcome
                })
            }
            Background::Shrink(pending, comm, newcomm) => {
                let shrunk = pending.take_if(|p| p.is_done())?.wait();
                shrunk.map(|s| {
                    // SAFETY: as above.
                    unsafe { **newcomm = crate::comms::insert(s, *comm) };
                })
            }
        };
        Some(match outcome {
            Ok(()) => (status::empty(), None),
            Err(e) => failed(e.into()),
        })
    }
}
