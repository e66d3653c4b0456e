//! The calls that complete or end requests: Wait, Test and their all/any/some forms,
//! Request_free and Cancel. Completing a persistent request leaves it inactive; completing any
//! other frees its handle (a generalized request's free callback runs then).

use super::{
    lend, requests, store_at, sweep_detached, take, Finished, Kind, ReqEntry, Slot, REQUESTS,
};
use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{out, read_arg, require};
use crate::errors::{fail, run, CResult, Ctx, Fail};
use crate::status;
use std::ffi::c_int;

/// Completes the request of `*request`; its status and failure.
fn wait_one(ctx: &mut Ctx, request: *mut MPI_Request) -> CResult<Finished> {
    let h = read_arg(request, "request pointer")?;
    if h == MPI_REQUEST_NULL {
        return Ok((status::empty(), None));
    }
    let mut entry = lend(h)?;
    ctx.errh = entry.errh;
    sweep_detached();
    let (mut s, mut failure) = match entry.finish() {
        Ok(done) => done,
        Err(blocked) => {
            // ULFM: the receive stays active (MPIX_ERR_PROC_FAILED_PENDING).
            REQUESTS.insert_at(h as usize, entry);
            return Ok(blocked);
        }
    };
    if entry.is_persistent() {
        REQUESTS.insert_at(h as usize, entry);
    } else {
        REQUESTS.release(h as usize);
        if let Some(f) = entry.release(h) {
            if failure.is_none() {
                s.MPI_ERROR = f.code;
                failure = Some(f);
            }
        }
        // SAFETY: checked non-null.
        unsafe { *request = MPI_REQUEST_NULL };
    }
    Ok((s, failure))
}

/// Waits for a request; sets it to MPI_REQUEST_NULL (a persistent one becomes inactive).
#[no_mangle]
pub unsafe extern "C" fn MPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    run("Wait", default_errh(), |ctx| {
        let (s, failure) = wait_one(ctx, request)?;
        // SAFETY: MPI_STATUS_IGNORE or a writable status.
        unsafe { status::store(status, s) };
        failure.map_or(Ok(()), Err)
    })
}

/// Tests a request; on completion sets it to MPI_REQUEST_NULL (a persistent one becomes
/// inactive).
#[no_mangle]
pub unsafe extern "C" fn MPI_Test(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    run("Test", default_errh(), |ctx| {
        if request.is_null() || flag.is_null() {
            return Err(fail(MPI_ERR_ARG, "null request or flag"));
        }
        // SAFETY: checked non-null.
        let h = unsafe { *request };
        sweep_detached();
        if h != MPI_REQUEST_NULL {
            let mut entry = lend(h)?;
            ctx.errh = entry.errh;
            let done = entry.poll();
            let blocked = entry.take_blocked();
            REQUESTS.insert_at(h as usize, entry);
            if let Some((s, Some(failure))) = blocked {
                // ULFM: not complete, and failed for now (MPIX_ERR_PROC_FAILED_PENDING).
                out(flag, 0)?;
                // SAFETY: MPI_STATUS_IGNORE or a writable status.
                unsafe { status::store(status, s) };
                return Err(failure);
            }
            if !done {
                return out(flag, 0);
            }
        }
        out(flag, 1)?;
        let (s, failure) = wait_one(ctx, request)?;
        // SAFETY: MPI_STATUS_IGNORE or a writable status.
        unsafe { status::store(status, s) };
        failure.map_or(Ok(()), Err)
    })
}

/// Waits for all; on any failure returns MPI_ERR_IN_STATUS with each status's MPI_ERROR set.
#[no_mangle]
pub unsafe extern "C" fn MPI_Waitall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    run("Waitall", default_errh(), |ctx| {
        let all = requests(count, array_of_requests)?;
        let every = (0..all.len()).map(|i| (i, i));
        complete_picked(ctx, all, every, array_of_statuses)
    })
}

/// Completes `all[i]` for each `(k, i)` of `picked`, writing its status at `k`; any failure
/// makes the call fail with MPI_ERR_IN_STATUS (each status's MPI_ERROR says which).
fn complete_picked(
    ctx: &mut Ctx,
    all: &mut [MPI_Request],
    picked: impl Iterator<Item = (usize, usize)>,
    statuses: *mut MPI_Status,
) -> CResult<()> {
    let mut first: Option<Fail> = None;
    for (k, i) in picked {
        let (s, failure) = wait_one(ctx, &mut all[i])?;
        store_at(statuses, k, s);
        first = first.or(failure);
    }
    match first {
        Some(f) => Err(fail(MPI_ERR_IN_STATUS, f.msg)),
        None => Ok(()),
    }
}

/// One pass over the active requests.
struct Pass {
    /// The indices of those now complete.
    done: Vec<usize>,
    /// The indices of receives from any source a failure blocks (ULFM): they stay active,
    /// and are reported with MPIX_ERR_PROC_FAILED_PENDING.
    blocked: Vec<usize>,
    /// How many are active.
    active: usize,
}

fn poll_all(all: &[MPI_Request]) -> CResult<Pass> {
    // One progress call for the pass, then each request only checked, where it lies in the
    // table: a progress call, and a move out of the table and back, per request made
    // MPI_Testany over 1000 pending receives take 75-90 us.
    crate::env::core_session()?.progress()?;
    let (mut done, mut blocked, mut aside) = (Vec::new(), Vec::new(), Vec::new());
    let mut active = 0;
    let mut look = |i: usize, entry: &mut ReqEntry| {
        if entry.is_active() {
            active += 1;
            if entry.check() {
                done.push(i);
            } else if entry.take_blocked().is_some() {
                blocked.push(i);
            }
        }
    };
    let handles = all.iter().map(|&h| h as usize);
    REQUESTS.with_each(handles, |i, entry| match entry.checks_quietly() {
        true => look(i, entry),
        false => aside.push(i),
    });
    // The others (a generalized request's query is the application's) out of the table.
    for i in aside {
        let h = all[i] as usize;
        if let Some(mut entry) = REQUESTS.lend(h) {
            look(i, &mut entry);
            REQUESTS.insert_at(h, entry);
        }
    }
    done.sort_unstable();
    blocked.sort_unstable();
    Ok(Pass {
        done,
        blocked,
        active,
    })
}

/// Tests all: completes them only if every one is complete.
#[no_mangle]
pub unsafe extern "C" fn MPI_Testall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    flag: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    run("Testall", default_errh(), |ctx| {
        let all = requests(count, array_of_requests)?;
        require(flag, "flag")?;
        sweep_detached();
        let pass = poll_all(all)?;
        if !pass.blocked.is_empty() {
            // ULFM: not complete, and failed for now; the blocked receives' statuses say so.
            out(flag, 0)?;
            let blocked = pass.blocked.into_iter().map(|i| (i, i));
            return complete_picked(ctx, all, blocked, array_of_statuses);
        }
        if pass.done.len() < pass.active {
            return out(flag, 0);
        }
        out(flag, 1)?;
        let every = (0..all.len()).map(|i| (i, i));
        complete_picked(ctx, all, every, array_of_statuses)
    })
}

/// Progresses between the passes of a blocking call over several requests (one that waits
/// only for work the engine does not know, a generalized request, makes none itself).
fn progress_between(idle: &mut mpicd::Idle) -> CResult<()> {
    super::wait_step(idle)
}

/// Shared body of Waitany (`flag` none: block) and Testany.
fn any(
    ctx: &mut Ctx,
    count: c_int,
    reqs: *mut MPI_Request,
    index: *mut c_int,
    flag: Option<*mut c_int>,
    status: *mut MPI_Status,
) -> CResult<()> {
    let all = requests(count, reqs)?;
    require(index, "index")?;
    let mut idle = mpicd::Idle::default();
    loop {
        sweep_detached();
        let Pass {
            done,
            blocked,
            active,
        } = poll_all(all)?;
        if let (None, Some(&i)) = (done.first(), blocked.first()) {
            // ULFM: the receive blocked by a failure is reported, and stays active.
            let (s, failure) = wait_one(ctx, &mut all[i])?;
            out(index, i as c_int)?;
            if let Some(flag) = flag {
                out(flag, 0)?;
            }
            // SAFETY: MPI_STATUS_IGNORE or a writable status.
            unsafe { status::store(status, s) };
            return failure.map_or(Ok(()), Err);
        }
        if let Some(&i) = done.first() {
            let (s, failure) = wait_one(ctx, &mut all[i])?;
            out(index, i as c_int)?;
            if let Some(flag) = flag {
                out(flag, 1)?;
            }
            // SAFETY: MPI_STATUS_IGNORE or a writable status.
            unsafe { status::store(status, s) };
            return failure.map_or(Ok(()), Err);
        }
        if active == 0 {
            out(index, MPI_UNDEFINED)?;
            if let Some(flag) = flag {
                out(flag, 1)?;
            }
            // SAFETY: as above.
            unsafe { status::store(status, status::empty()) };
            return Ok(());
        }
        if let Some(flag) = flag {
            out(index, MPI_UNDEFINED)?;
            return out(flag, 0);
        }
        progress_between(&mut idle)?;
    }
}

/// Waits until one active request completes; MPI_UNDEFINED if none is active.
#[no_mangle]
pub unsafe extern "C" fn MPI_Waitany(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    index: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    run("Waitany", default_errh(), |ctx| {
        any(ctx, count, array_of_requests, index, None, status)
    })
}

/// Completes one active request if any is complete.
#[no_mangle]
pub unsafe extern "C" fn MPI_Testany(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    run("Testany", default_errh(), |ctx| {
        require(flag, "flag")?;
        any(ctx, count, array_of_requests, index, Some(flag), status)
    })
}

/// Shared body of Waitsome (`block`) and Testsome.
fn some(
    ctx: &mut Ctx,
    count: c_int,
    reqs: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
    block: bool,
) -> CResult<()> {
    let all = requests(count, reqs)?;
    if outcount.is_null() || (count > 0 && indices.is_null()) {
        return Err(fail(MPI_ERR_ARG, "null outcount or indices"));
    }
    let mut idle = mpicd::Idle::default();
    loop {
        sweep_detached();
        let Pass {
            mut done,
            blocked,
            active,
        } = poll_all(all)?;
        if active == 0 {
            return out(outcount, MPI_UNDEFINED);
        }
        // ULFM: receives blocked by a failure are reported with the completed ones (their
        // statuses say MPIX_ERR_PROC_FAILED_PENDING), and stay active.
        done.extend(blocked);
        done.sort_unstable();
        if done.is_empty() && block {
            progress_between(&mut idle)?;
            continue;
        }
        for (k, &i) in done.iter().enumerate() {
            // SAFETY: MPI requires room for `count` indices.
            unsafe { indices.add(k).write(i as c_int) };
        }
        out(outcount, done.len() as c_int)?;
        return complete_picked(ctx, all, done.into_iter().enumerate(), statuses);
    }
}

/// Waits until at least one active request completes; reports all that have.
#[no_mangle]
pub unsafe extern "C" fn MPI_Waitsome(
    incount: c_int,
    array_of_requests: *mut MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    run("Waitsome", default_errh(), |ctx| {
        some(
            ctx,
            incount,
            array_of_requests,
            outcount,
            array_of_indices,
            array_of_statuses,
            true,
        )
    })
}

/// Reports every active request that has completed, without blocking.
#[no_mangle]
pub unsafe extern "C" fn MPI_Testsome(
    incount: c_int,
    array_of_requests: *mut MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    run("Testsome", default_errh(), |ctx| {
        some(
            ctx,
            incount,
            array_of_requests,
            outcount,
            array_of_indices,
            array_of_statuses,
            false,
        )
    })
}

/// Frees a request handle; a pending operation still completes in the background (an active
/// persistent request's current operation too). A generalized request's free callback runs
/// now if it is complete, else when MPI_Grequest_complete is called.
#[no_mangle]
pub unsafe extern "C" fn MPI_Request_free(request: *mut MPI_Request) -> c_int {
    run("Request_free", default_errh(), |ctx| {
        let h = read_arg(request, "request pointer")?;
        if h == MPI_REQUEST_NULL {
            return Err(fail(MPI_ERR_REQUEST, "MPI_REQUEST_NULL cannot be freed"));
        }
        // Dropping the entry detaches its unfinished operation (see `Owned`).
        let entry = take(h)?;
        ctx.errh = entry.errh;
        out(request, MPI_REQUEST_NULL)?;
        match &entry.kind {
            Kind::General(g) => g.free(h),
            Kind::Once | Kind::Persistent(_) => Ok(()),
        }
    })
}

/// Asks a pending operation to cancel: a receive not yet matched completes reported
/// cancelled (see MPI_Test_cancelled); a send is not withdrawn once posted (UCX cannot) and
/// completes normally, not cancelled; a generalized request's cancel callback is called.
/// Cancelling an inactive persistent request or MPI_REQUEST_NULL is MPI_ERR_REQUEST.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cancel(request: *mut MPI_Request) -> c_int {
    run("Cancel", default_errh(), |ctx| {
        let h = read_arg(request, "request pointer")?;
        let mut entry = lend(h)?;
        ctx.errh = entry.errh;
        let outcome = match (&entry.kind, &mut entry.slot) {
            // The callback is told whether the request is complete, whatever MPI has seen.
            (Kind::General(g), _) => g.cancel(),
            (_, Slot::Active(work)) => work.cancel(),
            (_, Slot::Done(_)) => Ok(()),
            (_, Slot::Inactive) => Err(fail(
                MPI_ERR_REQUEST,
                "an inactive persistent request cannot be cancelled",
            )),
        };
        REQUESTS.insert_at(h as usize, entry);
        outcome
    })
}
