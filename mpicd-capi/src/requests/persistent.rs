//! MPI_Start and MPI_Startall: each starts a persistent request's work anew (a persistent
//! collective's run, a persistent send or receive, a partitioned operation). Starting a
//! request that is active, or one that is not persistent, is MPI_ERR_REQUEST.

use super::{lend, requests, Kind, Slot, REQUESTS};
use crate::abi::*;
use crate::comms::default_errh;
use crate::env::read_arg;
use crate::errors::{fail, run, CResult};
use std::ffi::c_int;

/// Starts a persistent request's work.
fn start_one(h: MPI_Request) -> CResult<()> {
    if h == MPI_REQUEST_NULL {
        return Err(fail(MPI_ERR_REQUEST, "MPI_REQUEST_NULL cannot be started"));
    }
    let mut entry = lend(h)?;
    let started = match (&entry.kind, &entry.slot) {
        (Kind::Once | Kind::General(_), _) => {
            Err(fail(MPI_ERR_REQUEST, "not a persistent request"))
        }
        (Kind::Persistent(_), Slot::Active(_) | Slot::Done(_)) => {
            Err(fail(MPI_ERR_REQUEST, "the request is already active"))
        }
        (Kind::Persistent(start), Slot::Inactive) => start(),
    };
    let result = started.map(|work| entry.slot = Slot::Active(work));
    REQUESTS.insert_at(h as usize, entry);
    result
}

/// Starts a persistent request (MPI-4 persistent collectives, point-to-point and partitioned
/// ones).
#[no_mangle]
pub unsafe extern "C" fn MPI_Start(request: *mut MPI_Request) -> c_int {
    run("Start", default_errh(), |ctx| {
        let h = read_arg(request, "request pointer")?;
        if let Some(errh) = REQUESTS.with(h as usize, |e| e.errh) {
            ctx.errh = errh;
        }
        start_one(h)
    })
}

/// Starts persistent requests in order; stops at the first that cannot start.
#[no_mangle]
pub unsafe extern "C" fn MPI_Startall(count: c_int, array_of_requests: *mut MPI_Request) -> c_int {
    run("Startall", default_errh(), |ctx| {
        let all = requests(count, array_of_requests)?;
        all.iter().try_for_each(|&h| {
            if let Some(errh) = REQUESTS.with(h as usize, |e| e.errh) {
                ctx.errh = errh;
            }
            start_one(h)
        })
    })
}
