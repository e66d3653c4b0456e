//! Request handles: the table, what an active request waits for, and how it completes. A
//! request handle owns what its operation waits for ([`Work`]: a core request, a generalized
//! request's callbacks, a partitioned operation, a buffer flush), or once done its outcome, and
//! the error handler of its communicator; a persistent one also owns what starts its
//! operation, and completion leaves it inactive instead of freeing it.
//!
//! - [`complete`]: Wait, Test and their all/any/some forms, Request_free and Cancel (the calls
//!   that look without completing, MPI_Request_get_status*, are in [`crate::request_status`]);
//! - [`persistent`]: MPI_Start(all) of persistent requests;
//! - [`generalized`]: MPI_Grequest_start and MPI_Grequest_complete;
//! - [`partitioned`]: the MPI-4 partitioned calls (Psend_init, Precv_init, Pready, Parrived).
//!
//! A core request is an [`Owned`]: its memory is the C caller's, valid until completion as
//! MPI requires, or a state the engine owns. Dropped before completion (MPI_Request_free,
//! MPI_Finalize) it is neither waited for nor leaked: it joins the detached requests, which
//! every completion call progresses and releases once done, and which finalize ends.
//!
//! Progress is the core's: every test or wait progresses the whole engine (UCX and every
//! custom-typed operation, waited on or not), so a blocking call waits for its own request
//! only.

pub mod complete;
pub mod generalized;
pub mod partitioned;
pub mod persistent;

use crate::abi::*;
use crate::detached::Detached;
use crate::errors::{fail, CResult, Errh, Fail};
use crate::handles::{Table, REQUEST_BASE};
use crate::status;
use generalized::Greq;
use mpicd::Request;
use partitioned::Parts;
use std::ffi::c_int;
use std::sync::Arc;

/// How a request is tested: [`Request::test`] (progress first) or [`Request::check`].
type Look = fn(&mut Request<'static>) -> mpicd::Result<Option<mpicd::Status>>;

/// A completed request's C status (MPI_ERROR set) and its failure, if any.
pub(crate) type Finished = (MPI_Status, Option<Fail>);

enum Slot {
    Active(Work),
    Done(Finished),
    /// A persistent request not started, or completed since its last start.
    Inactive,
}

/// What an active request waits for.
pub(crate) enum Work {
    /// A core operation (or, with nothing inside, one that completed at once).
    Core(Owned),
    /// A generalized request: done once the application calls MPI_Grequest_complete.
    General(Arc<Greq>),
    /// A started partitioned operation, whose state MPI_Pready and MPI_Parrived share.
    Partitioned(Arc<Parts>),
    /// MPI_Buffer_iflush and its kin: done once none of the owner's buffered sends is pending.
    Flush(crate::bsend::Owner),
    /// MPI_Isendrecv(_replace): a receive and a send, done when both are.
    Pair(Box<crate::sendrecv::Pair>),
    /// MPIX_Comm_iagree and _ishrink: work on a thread of its own, and where its outcome goes.
    Background(Box<crate::ulfm::Background>),
}

impl Work {
    /// A core operation.
    pub(crate) fn core(request: Request<'static>) -> Work {
        Work::Core(Owned::new(request))
    }

    /// An operation already complete (a buffered send: the message was copied).
    pub(crate) fn done() -> Work {
        Work::Core(Owned(None))
    }

    /// One non-blocking check (it progresses the engine for core work); the outcome once done.
    /// A failure that leaves the request pending (ULFM's MPIX_ERR_PROC_FAILED_PENDING) is an
    /// outcome too: [`ReqEntry::poll`] keeps the request active.
    fn test(&mut self, custom_count: Option<i64>) -> Option<Finished> {
        self.test_with(custom_count, Request::test)
    }

    /// [`Work::test`], a core operation only checked, not progressed (after one progress call
    /// made for many requests).
    fn check(&mut self, custom_count: Option<i64>) -> Option<Finished> {
        self.test_with(custom_count, Request::check)
    }

    fn test_with(&mut self, custom_count: Option<i64>, look: Look) -> Option<Finished> {
        match self {
            Work::Core(r) => match r.test_with(look) {
                Ok(None) => None,
                Ok(Some(s)) => Some(outcome_to_c(Ok(s), custom_count)),
                Err(e) => Some(outcome_to_c(Err(e), custom_count)),
            },
            Work::General(g) => g.test(),
            Work::Partitioned(p) => p.test(),
            Work::Flush(owner) => crate::bsend::flushed(*owner).then(|| (status::empty(), None)),
            Work::Pair(p) => p.test(),
            Work::Background(b) => b.test(),
        }
    }

    /// Blocks until done; `Err` (the work, and its failure) when a failure blocks a receive
    /// from any source (ULFM): the request then stays active.
    fn wait(self, custom_count: Option<i64>) -> Result<Finished, (Work, Finished)> {
        let mut work = match self {
            Work::Core(mut r) => {
                return match r.wait_or_pending() {
                    Err(e @ mpicd::Error::ProcFailedPending { .. }) => {
                        Err((Work::Core(r), outcome_to_c(Err(e), custom_count)))
                    }
                    outcome => Ok(outcome_to_c(outcome, custom_count)),
                }
            }
            other => other,
        };
        let mut idle = mpicd::Idle::default();
        loop {
            if let Some(done) = work.test(custom_count) {
                return Ok(done);
            }
            if let Err(f) = wait_step(&mut idle) {
                return Ok(failed(f));
            }
        }
    }

    /// Asks the operation to cancel (a receive is then reported cancelled; a send completes
    /// normally; a generalized request's cancel callback decides).
    fn cancel(&mut self) -> CResult<()> {
        match self {
            Work::Core(r) => r.cancel().map_err(Into::into),
            Work::General(g) => g.cancel(),
            Work::Partitioned(p) => p.cancel(),
            Work::Flush(_) => Ok(()),
            Work::Pair(p) => p.cancel(),
            // Agreements and shrinks run to their end: cancelling does nothing (as for a
            // collective).
            Work::Background(_) => Ok(()),
        }
    }
}

/// One step of a blocking wait for work the engine does not know: progress, then sleep if
/// the wait has been idle long enough (see [`mpicd::Idle`]).
pub(crate) fn wait_step(idle: &mut mpicd::Idle) -> CResult<()> {
    sweep_detached();
    // The runtime's, not MPI_COMM_WORLD's: a sessions-only program has none.
    crate::env::core_session()?
        .wait_step(idle)
        .map_err(Into::into)
}

/// The outcome of a failure.
pub(crate) fn failed(f: Fail) -> Finished {
    let mut s = status::empty();
    s.MPI_ERROR = f.code;
    (s, Some(f))
}

/// What starts a persistent core operation (MPI_Start), each time anew.
pub(crate) type Starter = Box<dyn Fn() -> mpicd::Result<Request<'static>> + Send>;

/// What starts any persistent request's work (MPI_Start), each time anew.
pub(crate) type WorkStarter = Box<dyn Fn() -> CResult<Work> + Send>;

/// A started operation the C library owns, with MPI's free semantics (see the module docs).
pub(crate) struct Owned(Option<Request<'static>>);

impl Owned {
    pub(crate) fn new(request: Request<'static>) -> Owned {
        Owned(Some(request))
    }

    /// Tests for completion; once complete, nothing is left to detach.
    pub(crate) fn test(&mut self) -> mpicd::Result<Option<mpicd::Status>> {
        self.test_with(Request::test)
    }

    /// [`Owned::test`] through `look` ([`Request::test`] or [`Request::check`]).
    fn test_with(&mut self, look: Look) -> mpicd::Result<Option<mpicd::Status>> {
        let Some(request) = self.0.as_mut() else {
            return Ok(Some(mpicd::Status::empty()));
        };
        let polled = look(request);
        if !matches!(
            polled,
            Ok(None) | Err(mpicd::Error::ProcFailedPending { .. })
        ) {
            self.0 = None;
        }
        polled
    }

    /// Waits for completion, unless a failure blocks a receive from any source (ULFM): then
    /// the error, and the request stays.
    fn wait_or_pending(&mut self) -> mpicd::Result<mpicd::Status> {
        let Some(request) = self.0.as_mut() else {
            return Ok(mpicd::Status::empty());
        };
        let outcome = request.wait_or_pending();
        if !matches!(outcome, Err(mpicd::Error::ProcFailedPending { .. })) {
            self.0 = None;
        }
        outcome
    }

    /// Takes the request out, leaving an empty (completed) one.
    pub(crate) fn take(&mut self) -> Owned {
        Owned(self.0.take())
    }

    pub(crate) fn cancel(&self) -> mpicd::Result<()> {
        self.0.as_ref().map_or(Ok(()), Request::cancel)
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        if let Some(request) = self.0.take().filter(|r| !r.is_inactive()) {
            DETACHED.push(request);
        }
    }
}

/// What kind of request a handle is: what starts it and what its end does.
enum Kind {
    /// Completion frees the handle.
    Once,
    /// MPI_Start starts its work anew; completion leaves the handle inactive.
    Persistent(WorkStarter),
    /// A generalized request: its free callback runs when the handle is freed.
    General(Arc<Greq>),
}

/// A live request.
pub(crate) struct ReqEntry {
    slot: Slot,
    pub(crate) errh: Errh,
    custom_count: Option<i64>,
    kind: Kind,
    /// A failure reported while the request stays active (ULFM's
    /// MPIX_ERR_PROC_FAILED_PENDING), for MPI_Test to return (boxed: rare, and an entry
    /// moves in and out of its table at every wait).
    blocked: Option<Box<Finished>>,
}

pub(crate) static REQUESTS: Table<ReqEntry> = Table::new(REQUEST_BASE);
/// Requests dropped unfinished (see [`Owned`]): progressed until they complete.
static DETACHED: Detached<Request<'static>> = Detached::new();

/// Makes a handle for a started operation.
pub(crate) fn insert(req: Request<'static>, errh: Errh, custom_count: Option<i64>) -> MPI_Request {
    insert_work(Work::core(req), errh, custom_count)
}

/// Makes a handle for started work.
pub(crate) fn insert_work(work: Work, errh: Errh, custom_count: Option<i64>) -> MPI_Request {
    let kind = match &work {
        Work::General(g) => Kind::General(Arc::clone(g)),
        _ => Kind::Once,
    };
    REQUESTS.insert(ReqEntry {
        slot: Slot::Active(work),
        errh,
        custom_count,
        kind,
        blocked: None,
    }) as MPI_Request
}

/// Makes a handle for an operation complete at its start, with `status` (a receive from
/// MPI_PROC_NULL).
pub(crate) fn insert_complete(status: MPI_Status, errh: Errh) -> MPI_Request {
    REQUESTS.insert(ReqEntry {
        slot: Slot::Done((status, None)),
        errh,
        custom_count: None,
        kind: Kind::Once,
        blocked: None,
    }) as MPI_Request
}

/// Makes a handle for a persistent core operation, inactive until MPI_Start.
pub(crate) fn insert_persistent(starter: Starter, errh: Errh) -> MPI_Request {
    let start: WorkStarter = Box::new(move || starter().map(Work::core).map_err(Into::into));
    insert_persistent_work(start, errh, None)
}

/// Makes a handle for persistent work, inactive until MPI_Start; `custom_count` is the count
/// a custom-typed receive reports.
pub(crate) fn insert_persistent_work(
    start: WorkStarter,
    errh: Errh,
    custom_count: Option<i64>,
) -> MPI_Request {
    REQUESTS.insert(ReqEntry {
        slot: Slot::Inactive,
        errh,
        custom_count,
        kind: Kind::Persistent(start),
        blocked: None,
    }) as MPI_Request
}

impl ReqEntry {
    /// One non-blocking check; true once the outcome is known.
    fn poll(&mut self) -> bool {
        self.poll_with(Work::test)
    }

    /// Whether [`ReqEntry::check`] runs no application callback (a generalized request's
    /// query does), so that it may run where the request table is held.
    pub(crate) fn checks_quietly(&self) -> bool {
        !matches!(&self.slot, Slot::Active(work) if !matches!(work, Work::Core(_)))
    }

    /// [`ReqEntry::poll`] without a progress call of its own (see [`Work::check`]).
    pub(crate) fn check(&mut self) -> bool {
        self.poll_with(Work::check)
    }

    fn poll_with(&mut self, test: fn(&mut Work, Option<i64>) -> Option<Finished>) -> bool {
        let Slot::Active(work) = &mut self.slot else {
            return true;
        };
        match test(work, self.custom_count) {
            None => false,
            Some(done) if is_blocked(&done) => {
                self.blocked = Some(Box::new(done));
                false
            }
            Some(done) => {
                self.slot = Slot::Done(done);
                true
            }
        }
    }

    /// The failure the last [`ReqEntry::poll`] found while the request stays active (ULFM).
    pub(crate) fn take_blocked(&mut self) -> Option<Finished> {
        self.blocked.take().map(|b| *b)
    }

    /// Blocks until done; the C status and the failure, if any. A persistent request is left
    /// inactive. `Err` when a failure blocks a receive from any source (ULFM): the request
    /// stays active, and the error is reported.
    fn finish(&mut self) -> Result<Finished, Finished> {
        match std::mem::replace(&mut self.slot, Slot::Inactive) {
            Slot::Active(work) => match work.wait(self.custom_count) {
                Ok(done) => Ok(done),
                Err((work, blocked)) => {
                    self.slot = Slot::Active(work);
                    Err(blocked)
                }
            },
            Slot::Done(done) => Ok(done),
            Slot::Inactive => Ok((status::empty(), None)),
        }
    }

    /// Ends a completed handle that is not persistent: a generalized request's free callback
    /// runs; its failure, if any.
    fn release(self, h: MPI_Request) -> Option<Fail> {
        match &self.kind {
            Kind::General(g) => g.release(h).err(),
            Kind::Once | Kind::Persistent(_) => None,
        }
    }

    /// The status and failure once done, without completing it (MPI_Request_get_status);
    /// `None` while pending. Inactive: the empty status.
    pub(crate) fn peek(&mut self) -> Option<Finished> {
        self.poll().then(|| match &self.slot {
            Slot::Done(done) => done.clone(),
            Slot::Active(_) | Slot::Inactive => (status::empty(), None),
        })
    }

    /// True unless it is a persistent request not started.
    pub(crate) fn is_active(&self) -> bool {
        !matches!(self.slot, Slot::Inactive)
    }

    fn is_persistent(&self) -> bool {
        matches!(self.kind, Kind::Persistent(_))
    }
}

/// True for the outcome of a request that stays active: MPIX_ERR_PROC_FAILED_PENDING.
fn is_blocked(done: &Finished) -> bool {
    done.1
        .as_ref()
        .is_some_and(|f| f.code == MPIX_ERR_PROC_FAILED_PENDING)
}

/// The C status of an outcome, with MPI_ERROR set, and the failure if any.
pub(crate) fn outcome_to_c(
    outcome: mpicd::Result<mpicd::Status>,
    custom_count: Option<i64>,
) -> Finished {
    match outcome {
        Ok(s) => (status::from_core(&s, custom_count), None),
        // A truncated receive still reports the message it matched, and the bytes it holds.
        Err(
            ref e @ mpicd::Error::Truncated {
                buffer_bytes,
                matched: Some(m),
                ..
            },
        ) => {
            let held = mpicd::Status {
                source: m.source,
                tag: m.tag,
                bytes: Some(buffer_bytes),
                ..mpicd::Status::empty()
            };
            let mut s = status::from_core(&held, None);
            let f = Fail::from(e.clone());
            s.MPI_ERROR = f.code;
            (s, Some(f))
        }
        Err(e) => failed(Fail::from(e)),
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
    // SAFETY: forwarded from the caller.
    unsafe { report_now(req.wait(), custom_count, out) }
}

/// Reports the outcome of an operation a blocking call completed: its status stored in `out`
/// (a truncated receive's too: it names the message), and its failure if any.
///
/// # Safety
/// `out` is MPI_STATUS_IGNORE or a writable status.
pub(crate) unsafe fn report_now(
    outcome: mpicd::Result<mpicd::Status>,
    custom_count: Option<i64>,
    out: *mut MPI_Status,
) -> CResult<()> {
    let (s, failure) = outcome_to_c(outcome, custom_count);
    // A failed receive that matched a message (a truncated one) still reports the message.
    if failure.is_none() || s.MPI_SOURCE != MPI_ANY_SOURCE {
        // SAFETY: forwarded from the caller.
        unsafe { status::store(out, s) };
    }
    failure.map_or(Ok(()), Err)
}

/// Takes a request out of the table to work on it, keeping its handle: the caller puts it
/// back (`REQUESTS.insert_at`) or frees the handle (`REQUESTS.release`).
fn lend(h: MPI_Request) -> CResult<ReqEntry> {
    REQUESTS
        .lend(h as usize)
        .ok_or_else(|| fail(MPI_ERR_REQUEST, "unknown or already freed request"))
}

/// Takes a request out of the table for good.
fn take(h: MPI_Request) -> CResult<ReqEntry> {
    REQUESTS
        .remove(h as usize)
        .ok_or_else(|| fail(MPI_ERR_REQUEST, "unknown or already freed request"))
}

/// Progresses detached requests and buffered sends; releases those that completed.
pub(crate) fn sweep_detached() {
    DETACHED.sweep(|r| matches!(r.test(), Ok(None)));
    crate::bsend::sweep();
    crate::sendrecv::sweep();
}

/// Finalize: completes the operations of the requests the application freed unfinished, as
/// MPI requires, for at most `limit` (an erroneous program's receive that never matches must
/// not hang it); what is left is then cancelled and reported by the engine's finalize.
pub(crate) fn complete_detached(limit: std::time::Duration) {
    let deadline = std::time::Instant::now() + limit;
    while !DETACHED.is_empty() && std::time::Instant::now() < deadline {
        sweep_detached();
        std::thread::yield_now();
    }
}

/// Frees every request handle (finalize, before the engine's): the unfinished ones detach,
/// and the engine's finalize then cancels and reports them.
pub(crate) fn free_all() {
    drop(REQUESTS.drain());
    generalized::free_all();
}

/// Releases the detached requests once the engine is gone (after finalize): nothing is left to
/// wait for.
pub(crate) fn release_detached() {
    drop(DETACHED.take_all());
    crate::sendrecv::release();
}

/// The `count` request handles at `reqs`, each known or MPI_REQUEST_NULL.
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
    let handles = all.iter().map(|&h| h as usize);
    if let Some(i) = REQUESTS.position_missing(handles, MPI_REQUEST_NULL as usize) {
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
