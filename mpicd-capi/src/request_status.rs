//! The calls that look at requests without completing them (MPI-4.1): MPI_Request_get_status
//! and its _all, _any and _some forms. Like the tests they progress the engine, but a request
//! that is done stays as it is: not freed, not set to MPI_REQUEST_NULL, and a persistent one
//! stays active until a wait or test completes it.

use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{out, require};
use crate::errors::{fail, run, CResult, Ctx, Fail};
use crate::requests::{store_at, sweep_detached, REQUESTS};
use crate::status;
use std::ffi::c_int;

/// The empty status of MPI_REQUEST_NULL and inactive requests: any source, any tag, success,
/// count 0.
fn empty() -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: MPI_ANY_SOURCE,
        ..status::empty()
    }
}

/// What a look at one request found.
enum Look {
    /// MPI_REQUEST_NULL, or a persistent request not started: counts as done, empty status.
    Inactive,
    /// Still in flight.
    Pending,
    /// Done: its status, and its failure if it failed.
    Done(MPI_Status, Option<Fail>),
}

/// Progresses `h` and says whether it is done, leaving it in its table; the request's error
/// handler applies from then on.
fn look(ctx: &mut Ctx, h: MPI_Request) -> CResult<Look> {
    if h == MPI_REQUEST_NULL {
        return Ok(Look::Inactive);
    }
    let mut entry = REQUESTS
        .lend(h as usize)
        .ok_or_else(|| fail(MPI_ERR_REQUEST, "unknown or already freed request"))?;
    ctx.errh = entry.errh;
    let found = if !entry.is_active() {
        Look::Inactive
    } else {
        match entry.peek() {
            None => Look::Pending,
            Some((s, failure)) => Look::Done(s, failure),
        }
    };
    REQUESTS.insert_at(h as usize, entry);
    Ok(found)
}

/// Whether `request` is done (`*flag`) and, if so, its status; the request is left as it is.
/// A failed request's error is returned (and is in the status's MPI_ERROR).
#[no_mangle]
pub unsafe extern "C" fn MPI_Request_get_status(
    request: MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    run("Request_get_status", default_errh(), |ctx| {
        require(flag, "flag")?;
        sweep_detached();
        let (s, failure) = match look(ctx, request)? {
            Look::Pending => return out(flag, 0),
            Look::Inactive => (empty(), None),
            Look::Done(s, failure) => (s, failure),
        };
        out(flag, 1)?;
        // SAFETY: MPI_STATUS_IGNORE or a writable status.
        unsafe { status::store(status, s) };
        failure.map_or(Ok(()), Err)
    })
}

/// The looks at the `count` requests at `reqs`, in order (MPI_ERR_REQUEST for an unknown one).
fn look_all(ctx: &mut Ctx, count: c_int, reqs: *const MPI_Request) -> CResult<Vec<Look>> {
    let n = usize::try_from(count)
        .map_err(|_| fail(MPI_ERR_COUNT, format!("negative count {count}")))?;
    if n == 0 {
        return Ok(Vec::new());
    }
    require(reqs, "array_of_requests")?;
    // SAFETY: non-null, and MPI requires `count` requests at `reqs`.
    let all = unsafe { std::slice::from_raw_parts(reqs, n) };
    sweep_detached();
    all.iter().map(|&h| look(ctx, h)).collect()
}

/// Writes the status of each `(k, look)` at `k`; MPI_ERR_IN_STATUS if any failed.
fn report<'a>(
    statuses: *mut MPI_Status,
    done: impl Iterator<Item = (usize, &'a Look)>,
) -> CResult<()> {
    let mut first: Option<&Fail> = None;
    for (k, look) in done {
        match look {
            Look::Done(s, failure) => {
                store_at(statuses, k, *s);
                first = first.or(failure.as_ref());
            }
            Look::Inactive | Look::Pending => store_at(statuses, k, empty()),
        }
    }
    match first {
        Some(f) => Err(fail(MPI_ERR_IN_STATUS, f.msg.clone())),
        None => Ok(()),
    }
}

/// Whether every active request is done (`*flag`) and, if so, the status of each (an empty one
/// for MPI_REQUEST_NULL and inactive requests); the requests are left as they are.
#[no_mangle]
pub unsafe extern "C" fn MPI_Request_get_status_all(
    count: c_int,
    array_of_requests: *const MPI_Request,
    flag: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    run("Request_get_status_all", default_errh(), |ctx| {
        require(flag, "flag")?;
        let looks = look_all(ctx, count, array_of_requests)?;
        if looks.iter().any(|l| matches!(l, Look::Pending)) {
            return out(flag, 0);
        }
        out(flag, 1)?;
        report(array_of_statuses, looks.iter().enumerate())
    })
}

/// The index (`*index`) and status of a done active request, if any is (`*flag`); with no
/// active request, `*flag` = 1 and `*index` = MPI_UNDEFINED. The request is left as it is.
#[no_mangle]
pub unsafe extern "C" fn MPI_Request_get_status_any(
    count: c_int,
    array_of_requests: *const MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    run("Request_get_status_any", default_errh(), |ctx| {
        require(index, "index")?;
        require(flag, "flag")?;
        let looks = look_all(ctx, count, array_of_requests)?;
        let done = looks.iter().position(|l| matches!(l, Look::Done(..)));
        if let Some(i) = done {
            let Look::Done(s, failure) = &looks[i] else {
                return Err(fail(MPI_ERR_INTERN, "a done request changed"));
            };
            out(index, i as c_int)?;
            out(flag, 1)?;
            // SAFETY: MPI_STATUS_IGNORE or a writable status.
            unsafe { status::store(status, *s) };
            return failure.clone().map_or(Ok(()), Err);
        }
        out(index, MPI_UNDEFINED)?;
        let none_active = looks.iter().all(|l| matches!(l, Look::Inactive));
        if none_active {
            // SAFETY: as above.
            unsafe { status::store(status, empty()) };
        }
        out(flag, none_active as c_int)
    })
}

/// The indices (`array_of_indices`, `*outcount` of them) and statuses of the active requests
/// that are done; `*outcount` = MPI_UNDEFINED with no active request. The requests are left
/// as they are; MPI_ERR_IN_STATUS if one of those reported failed.
#[no_mangle]
pub unsafe extern "C" fn MPI_Request_get_status_some(
    incount: c_int,
    array_of_requests: *const MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    run("Request_get_status_some", default_errh(), |ctx| {
        require(outcount, "outcount")?;
        if incount > 0 {
            require(array_of_indices, "array_of_indices")?;
        }
        let looks = look_all(ctx, incount, array_of_requests)?;
        if looks.iter().all(|l| matches!(l, Look::Inactive)) {
            return out(outcount, MPI_UNDEFINED);
        }
        let done: Vec<(usize, &Look)> = looks
            .iter()
            .enumerate()
            .filter(|(_, l)| matches!(l, Look::Done(..)))
            .collect();
        for (k, (i, _)) in done.iter().enumerate() {
            // SAFETY: MPI requires room for `incount` indices.
            unsafe { array_of_indices.add(k).write(*i as c_int) };
        }
        out(outcount, done.len() as c_int)?;
        report(
            array_of_statuses,
            done.into_iter().enumerate().map(|(k, (_, l))| (k, l)),
        )
    })
}
