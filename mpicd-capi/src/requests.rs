//! Request handles and the completion calls: Wait, Test and their all/any/some forms,
//! Request_free and Cancel, and MPI_Start(all) of persistent requests (the calls that look
//! without completing, MPI_Request_get_status*, are in [`crate::request_status`]). A request handle owns
//! the core request (or, once completed by a Testall that could not complete all, its
//! outcome) and the error handler of its communicator; a persistent one also owns what starts
//! its operation, and completion leaves it inactive instead of freeing it.
//!
//! The core request is an [`Owned`]: its memory is the C caller's, valid until completion as
//! MPI requires, or a state the engine owns. Dropped before completion (MPI_Request_free,
//! MPI_Finalize) it is neither waited for nor leaked: it joins the detached requests, which
//! every completion call progresses and releases once done, and which finalize ends.
//!
//! Progress is the core's: every test or wait progresses the whole engine (UCX and every
//! custom-typed operation, waited on or not), so a blocking call waits for its own request
//! only.

use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{out, read_arg, require};
use crate::errors::{fail, run, CResult, Ctx, Errh, Fail};
use crate::handles::{Table, REQUEST_BASE};
use crate::status;
use mpicd::Request;
use std::ffi::c_int;
use std::sync::Mutex;

type Outcome = mpicd::Result<mpicd::Status>;

enum Slot {
    Active(Owned),
    Done(Outcome),
    /// A persistent request not started, or completed since its last start.
    Inactive,
}

/// What starts a persistent request's operation (MPI_Start), each time anew.
pub(crate) type Starter = Box<dyn Fn() -> mpicd::Result<Request<'static>> + Send>;

/// A started operation the C library owns, with MPI's free semantics (see the module docs).
struct Owned(Option<Request<'static>>);

impl Owned {
    fn new(request: Request<'static>) -> Owned {
        Owned(Some(request))
    }

    /// Tests for completion; once complete, nothing is left to detach.
    fn test(&mut self) -> mpicd::Result<Option<mpicd::Status>> {
        let Some(request) = self.0.as_mut() else {
            return Ok(Some(mpicd::Status::empty()));
        };
        let polled = request.test();
        if !matches!(polled, Ok(None)) {
            self.0 = None;
        }
        polled
    }

    fn wait(mut self) -> Outcome {
        self.0
            .take()
            .map_or(Ok(mpicd::Status::empty()), Request::wait)
    }

    fn cancel(&self) -> mpicd::Result<()> {
        self.0.as_ref().map_or(Ok(()), Request::cancel)
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        if let Some(request) = self.0.take().filter(|r| !r.is_inactive()) {
            detached().push(request);
        }
    }
}

/// A live request.
pub(crate) struct ReqEntry {
    slot: Slot,
    pub(crate) errh: Errh,
    custom_count: Option<i64>,
    /// A persistent request's starter: completion leaves the handle, inactive.
    persistent: Option<Starter>,
}

pub(crate) static REQUESTS: Table<ReqEntry> = Table::new(REQUEST_BASE);
/// Requests dropped unfinished (see [`Owned`]): progressed until they complete.
static DETACHED: Mutex<Vec<Request<'static>>> = Mutex::new(Vec::new());

fn detached() -> std::sync::MutexGuard<'static, Vec<Request<'static>>> {
    DETACHED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Makes a handle for a started operation.
pub(crate) fn insert(req: Request<'static>, errh: Errh, custom_count: Option<i64>) -> MPI_Request {
    REQUESTS.insert(ReqEntry {
        slot: Slot::Active(Owned::new(req)),
        errh,
        custom_count,
        persistent: None,
    }) as MPI_Request
}

/// Makes a handle for a persistent operation, inactive until MPI_Start.
pub(crate) fn insert_persistent(starter: Starter, errh: Errh) -> MPI_Request {
    REQUESTS.insert(ReqEntry {
        slot: Slot::Inactive,
        errh,
        custom_count: None,
        persistent: Some(starter),
    }) as MPI_Request
}

impl ReqEntry {
    /// One non-blocking check; true once the outcome is known.
    fn poll(&mut self) -> bool {
        let outcome = match &mut self.slot {
            Slot::Done(_) | Slot::Inactive => return true,
            Slot::Active(r) => match r.test() {
                Ok(None) => return false,
                Ok(Some(s)) => Ok(s),
                Err(e) => Err(e),
            },
        };
        self.slot = Slot::Done(outcome);
        true
    }

    /// Blocks until done; the C status and the failure, if any. A persistent request is left
    /// inactive.
    fn finish(&mut self) -> (MPI_Status, Option<Fail>) {
        let outcome = match std::mem::replace(&mut self.slot, Slot::Inactive) {
            Slot::Active(r) => r.wait(),
            Slot::Done(o) => o,
            Slot::Inactive => return (status::empty(), None),
        };
        outcome_to_c(outcome, self.custom_count)
    }

    /// The status and failure once done, without completing it (MPI_Request_get_status);
    /// `None` while pending. Inactive: the empty status.
    pub(crate) fn peek(&mut self) -> Option<(MPI_Status, Option<Fail>)> {
        self.poll().then(|| match &self.slot {
            Slot::Done(outcome) => outcome_to_c(outcome.clone(), self.custom_count),
            Slot::Active(_) | Slot::Inactive => (status::empty(), None),
        })
    }

    /// True unless it is a persistent request not started.
    pub(crate) fn is_active(&self) -> bool {
        !matches!(self.slot, Slot::Inactive)
    }
}

/// The C status of an outcome, with MPI_ERROR set, and the failure if any.
pub(crate) fn outcome_to_c(
    outcome: mpicd::Result<mpicd::Status>,
    custom_count: Option<i64>,
) -> (MPI_Status, Option<Fail>) {
    match outcome {
        Ok(s) => (status::from_core(&s, custom_count), None),
        Err(e) => {
            let f = Fail::from(e);
            let mut s = status::empty();
            s.MPI_ERROR = f.code;
            (s, Some(f))
        }
    }
}

/// Waits for a request of a blocking call and writes its status.
///
/// # Safety
/// `out` is null or a writable status.
pub(crate) unsafe fn complete_now(
    req: Request<'static>,
    custom_count: Option<i64>,
    out: *mut MPI_Status,
) -> CResult<()> {
    let outcome = req.wait();
    let (s, failure) = outcome_to_c(outcome, custom_count);
    match failure {
        Some(f) => Err(f),
        None => {
            // SAFETY: forwarded from the caller.
            unsafe { status::store(out, s) };
            Ok(())
        }
    }
}

fn take(h: MPI_Request) -> CResult<ReqEntry> {
    REQUESTS
        .remove(h as usize)
        .ok_or_else(|| fail(MPI_ERR_REQUEST, "unknown or already freed request"))
}

fn exists(h: MPI_Request) -> bool {
    h == MPI_REQUEST_NULL || REQUESTS.with(h as usize, |_| ()).is_some()
}

/// Progresses detached requests; releases those that completed.
pub(crate) fn sweep_detached() {
    let mut list = std::mem::take(&mut *detached());
    list.retain_mut(|r| matches!(r.test(), Ok(None)));
    detached().extend(list);
}

/// Frees every request handle (finalize, before the engine's): the unfinished ones detach,
/// and the engine's finalize then cancels and reports them.
pub(crate) fn free_all() {
    drop(REQUESTS.drain());
}

/// Releases the detached requests once the engine is gone (after finalize): nothing is left to
/// wait for.
pub(crate) fn release_detached() {
    drop(std::mem::take(&mut *detached()));
}

fn requests<'a>(count: c_int, reqs: *mut MPI_Request) -> CResult<&'a mut [MPI_Request]> {
    if count < 0 {
        return Err(fail(MPI_ERR_COUNT, format!("negative count {count}")));
    }
    if count == 0 {
        return Ok(&mut []);
    }
    if reqs.is_null() {
        return Err(fail(MPI_ERR_ARG, "null array of requests"));
    }
    // SAFETY: MPI requires `count` requests at `reqs`.
    let all = unsafe { std::slice::from_raw_parts_mut(reqs, count as usize) };
    if let Some(i) = all.iter().position(|&h| !exists(h)) {
        return Err(fail(
            MPI_ERR_REQUEST,
            format!("request {i} is unknown or freed"),
        ));
    }
    Ok(all)
}

/// Writes status `i` unless `statuses` is MPI_STATUSES_IGNORE.
pub(crate) fn store_at(statuses: *mut MPI_Status, i: usize, s: MPI_Status) {
    if !statuses.is_null() {
        // SAFETY: MPI requires one status per request.
        unsafe { statuses.add(i).write(s) };
    }
}

/// Completes the request of `*request`; its status and failure.
fn wait_one(ctx: &mut Ctx, request: *mut MPI_Request) -> CResult<(MPI_Status, Option<Fail>)> {
    let h = read_arg(request, "request pointer")?;
    if h == MPI_REQUEST_NULL {
        return Ok((status::empty(), None));
    }
    let mut entry = take(h)?;
    ctx.errh = entry.errh;
    sweep_detached();
    let finished = entry.finish();
    if entry.persistent.is_some() {
        REQUESTS.insert_at(h as usize, entry);
    } else {
        // SAFETY: checked non-null.
        unsafe { *request = MPI_REQUEST_NULL };
    }
    Ok(finished)
}

/// Waits for a request; sets it to MPI_REQUEST_NULL.
#[no_mangle]
pub unsafe extern "C" fn MPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    run("Wait", default_errh(), |ctx| {
        let (s, failure) = wait_one(ctx, request)?;
        // SAFETY: MPI_STATUS_IGNORE or a writable status.
        unsafe { status::store(status, s) };
        failure.map_or(Ok(()), Err)
    })
}

/// Tests a request; on completion sets it to MPI_REQUEST_NULL.
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
        if h != MPI_REQUEST_NULL {
            let mut entry = take(h)?;
            ctx.errh = entry.errh;
            sweep_detached();
            if !entry.poll() {
                REQUESTS.insert_at(h as usize, entry);
                return out(flag, 0);
            }
            REQUESTS.insert_at(h as usize, entry);
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

/// One pass over the active requests: the indices of those now complete.
fn poll_all(all: &[MPI_Request]) -> (Vec<usize>, usize) {
    let mut done = Vec::new();
    let mut active = 0;
    for (i, &h) in all.iter().enumerate() {
        if h == MPI_REQUEST_NULL {
            continue;
        }
        active += 1;
        let Some(mut entry) = REQUESTS.remove(h as usize) else {
            continue;
        };
        if !entry.is_active() {
            active -= 1;
        } else if entry.poll() {
            done.push(i);
        }
        REQUESTS.insert_at(h as usize, entry);
    }
    (done, active)
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
        sweep_detached();
        let (done, active) = poll_all(all);
        if done.len() < active {
            return out(flag, 0);
        }
        out(flag, 1)?;
        let every = (0..all.len()).map(|i| (i, i));
        complete_picked(ctx, all, every, array_of_statuses)
    })
}

/// Shared body of Waitany (`block`) and Testany.
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
    loop {
        sweep_detached();
        let (done, active) = poll_all(all);
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
    loop {
        sweep_detached();
        let (done, active) = poll_all(all);
        if active == 0 {
            return out(outcount, MPI_UNDEFINED);
        }
        if done.is_empty() && block {
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

/// Frees a request handle; a pending operation still completes in the background.
#[no_mangle]
pub unsafe extern "C" fn MPI_Request_free(request: *mut MPI_Request) -> c_int {
    run("Request_free", default_errh(), |ctx| {
        let h = read_arg(request, "request pointer")?;
        if h == MPI_REQUEST_NULL {
            return Err(fail(MPI_ERR_REQUEST, "MPI_REQUEST_NULL cannot be freed"));
        }
        // Dropping the entry detaches its unfinished operation (see `Owned`).
        ctx.errh = take(h)?.errh;
        out(request, MPI_REQUEST_NULL)
    })
}

/// Asks a pending receive to cancel; its completion then reports it cancelled (see
/// MPI_Test_cancelled). Sends cannot be cancelled and complete normally.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cancel(request: *mut MPI_Request) -> c_int {
    run("Cancel", default_errh(), |ctx| {
        let h = read_arg(request, "request pointer")?;
        let entry = take(h)?;
        ctx.errh = entry.errh;
        let outcome = match &entry.slot {
            Slot::Active(r) => r.cancel(),
            Slot::Done(_) | Slot::Inactive => Ok(()),
        };
        REQUESTS.insert_at(h as usize, entry);
        outcome.map_err(Into::into)
    })
}

/// Starts a persistent request's operation.
fn start_one(h: MPI_Request) -> CResult<()> {
    let mut entry = take(h)?;
    let started = match (&entry.persistent, &entry.slot) {
        (None, _) => Err(fail(MPI_ERR_REQUEST, "not a persistent request")),
        (Some(_), Slot::Active(_) | Slot::Done(_)) => {
            Err(fail(MPI_ERR_REQUEST, "the request is already active"))
        }
        (Some(start), Slot::Inactive) => start().map_err(Into::into),
    };
    let result = started.map(|req| entry.slot = Slot::Active(Owned::new(req)));
    REQUESTS.insert_at(h as usize, entry);
    result
}

/// Starts a persistent request (MPI-4 persistent collectives, and point-to-point ones).
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

/// Starts persistent requests in order.
#[no_mangle]
pub unsafe extern "C" fn MPI_Startall(count: c_int, array_of_requests: *mut MPI_Request) -> c_int {
    run("Startall", default_errh(), |_| {
        let all = requests(count, array_of_requests)?;
        all.iter().try_for_each(|&h| start_one(h))
    })
}
