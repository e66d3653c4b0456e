//! Requests of non-blocking operations, the scopes that make requests over borrowed buffers
//! sound, and the MPI completion calls: wait, test and their all/any/some forms.
//!
//! # Borrowed buffers live in a scope
//!
//! Safe Rust may forget a value (never run its destructor), so no destructor of a value the user
//! holds may be what keeps the transport from writing into freed memory. A non-blocking call
//! that borrows a buffer ([`Communicator::isend`](crate::Communicator::isend) and its kin)
//! therefore takes a [`Scope`]: only [`scope`] makes one, in its own stack frame, and it lends
//! the scope to a closure by shared reference, so user code can neither move, drop nor forget
//! it. Every operation started in the scope is recorded there until its request sees it
//! complete. When the closure returns or unwinds, the scope cancels the receives whose requests
//! were forgotten and progresses until every recorded operation has completed; only then do the
//! buffers' borrows, which outlive the scope, end. The scope's lifetime parameter is invariant, so a buffer that
//! lives inside the closure cannot be lent to it, and a scoped request borrows the scope itself,
//! so none can leave the closure.
//!
//! Requests over memory the operation owns (a boxed [`PackState`](crate::custom::PackState) or
//! [`UnpackState`](crate::custom::UnpackState)) or over raw memory the caller vouches for (the
//! `unsafe` `*_raw` calls) are `Request<'static>` and need no scope.
//!
//! # Dropping a request
//!
//! Dropping a pending request cancels it if it is a receive, then waits for it; its outcome is
//! lost. That is a convenience (the buffer is free again once the drop returns), not what
//! soundness rests on: a forgotten scoped request is finished by its scope, and a
//! `Request<'static>` borrows nothing.
//!
//! This module drives operations only through the engine's test, cancel and progress calls; it
//! knows nothing of datatypes, communicators or wire formats.

use crate::engine::{OpId, Posted, Shared};
use crate::error::{Error, Result};
use crate::status::Status;
use smallvec::SmallVec;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};

mod many;
pub use many::{test_all, test_any, test_some, wait_all, wait_all_outcomes, wait_any, wait_some};

/// Runs `f` with a [`Scope`] for non-blocking operations over borrowed buffers, and returns its
/// result once every operation started in the scope has completed.
///
/// Buffers lent to the scope must live longer than the call (declare them before it); their
/// borrows last until it returns. Requests the closure forgot are finished here: receives are
/// cancelled, sends awaited.
///
/// ```no_run
/// let mpi = mpicd::init()?;
/// let world = mpi.world();
/// let (rank, size) = (world.rank(), world.size());
/// let (out, mut inc) = ([1u8, 2, 3], [0u8; 3]);
/// mpicd::scope(|s| {
///     let r = world.irecv(s, &mut inc, (rank + size - 1) % size, 0)?;
///     let mut requests = [r, world.isend(s, &out, (rank + 1) % size, 0)?];
///     mpicd::wait_all(&mut requests)
/// })?;
/// assert_eq!(inc, out); // the borrows ended with the scope
/// # Ok::<(), mpicd::Error>(())
/// ```
///
/// Should finishing a forgotten operation panic, the process aborts: unwinding would free
/// buffers the transport may still write into.
pub fn scope<'a, R>(f: impl FnOnce(&Scope<'a>) -> R) -> R {
    let scope = Scope {
        registry: Registry::default(),
        _buffers: PhantomData,
    };
    f(&scope)
}

/// Where non-blocking operations over borrowed buffers are started; made only by [`scope`].
///
/// `'a` is how long the buffers lent to the scope are borrowed: at least the whole [`scope`]
/// call.
pub struct Scope<'a> {
    registry: Registry,
    /// Invariant in `'a`: the scope cannot be shrunk to accept a buffer that dies inside it.
    _buffers: PhantomData<fn(&'a ()) -> &'a ()>,
}

impl Scope<'_> {
    /// The request of an operation started in the scope: a pending operation is recorded until
    /// the request sees it complete, and the request cannot outlive the scope.
    pub(crate) fn request<'s>(&'s self, shared: &Arc<Shared>, posted: Posted) -> Request<'s> {
        let state = match posted {
            Posted::Pending(id) => State::Pending {
                id,
                _ticket: Some(self.registry.enter(shared, id)),
            },
            Posted::Done(outcome) => State::Done(outcome),
        };
        Request {
            shared: Held::Shared(Arc::clone(shared)),
            state,
        }
    }
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        let forgotten = self.registry.take_all();
        if forgotten.is_empty() {
            return;
        }
        if catch_unwind(AssertUnwindSafe(|| finish(forgotten))).is_err() {
            eprintln!("mpicd: finishing the operations of a request scope failed; aborting");
            std::process::abort();
        }
    }
}

/// Finishes operations whose requests were forgotten: nobody will read what a receive brings,
/// so receives are cancelled; then progress until each has completed or the engine is gone
/// (finalized: no operation touches memory any more).
fn finish(mut ops: Vec<(Arc<Shared>, OpId)>) {
    for (shared, id) in &ops {
        let _ = shared.with(|e| match e.is_receive(*id) {
            true => e.cancel(*id),
            false => Ok(()),
        });
    }
    while !ops.is_empty() {
        ops.retain(|(shared, id)| {
            let step = shared.with(|e| {
                let pending = e.test(*id)?.is_none();
                if pending {
                    e.progress();
                }
                Ok(pending)
            });
            matches!(step, Ok(true))
        });
    }
}

/// The operations of a scope still pending as far as their requests know.
#[derive(Default)]
struct Registry {
    entries: Mutex<Entries>,
}

/// Operations recorded inline before the record moves to the heap.
const INLINE_ENTRIES: usize = 4;

/// A recorded operation: the engine it runs on and its id there (`None` once completed).
type Entry = Option<(Arc<Shared>, OpId)>;

#[derive(Default)]
struct Entries {
    ops: SmallVec<[Entry; INLINE_ENTRIES]>,
    vacant: SmallVec<[usize; INLINE_ENTRIES]>,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn enter(&self, shared: &Arc<Shared>, id: OpId) -> Ticket<'_> {
        let mut entries = self.lock();
        let entry = Some((Arc::clone(shared), id));
        let index = match entries.vacant.pop() {
            Some(i) => {
                entries.ops[i] = entry;
                i
            }
            None => {
                entries.ops.push(entry);
                entries.ops.len() - 1
            }
        };
        Ticket {
            registry: self,
            index,
        }
    }

    fn take_all(&mut self) -> Vec<(Arc<Shared>, OpId)> {
        let entries = self.entries.get_mut().unwrap_or_else(|p| p.into_inner());
        entries.vacant.clear();
        entries.ops.drain(..).flatten().collect()
    }
}

/// A scoped operation's entry in its scope; dropped (and the entry cleared) when the request
/// sees the operation complete. A forgotten request keeps its entry for the scope to finish.
struct Ticket<'s> {
    registry: &'s Registry,
    index: usize,
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let mut entries = self.registry.lock();
        entries.ops[self.index] = None;
        entries.vacant.push(self.index);
    }
}

enum State<'s> {
    Pending {
        id: OpId,
        /// The operation's entry in its scope (none for a `'static` request), held for its drop.
        _ticket: Option<Ticket<'s>>,
    },
    /// Completed, the outcome not yet reported.
    Done(Result<Status>),
    Inactive,
}

/// Whether a test progresses the engine first, or only looks.
#[derive(Clone, Copy)]
enum Look {
    Progress,
    Only,
}

/// A non-blocking operation in flight. `'s` is the [`Scope`] it was started in, or `'static`
/// when it borrows nothing. See the [module docs](self) for what dropping it does.
#[must_use = "a request must be waited on or tested to completion"]
pub struct Request<'s> {
    shared: Held<'s>,
    state: State<'s>,
}

/// How a request reaches its engine: with a share of it, or, inside a blocking call, with the
/// share of the handle that made the call (no count to raise and lower per message).
enum Held<'s> {
    Shared(Arc<Shared>),
    Lent(&'s Arc<Shared>),
}

impl std::ops::Deref for Held<'_> {
    type Target = Arc<Shared>;

    fn deref(&self) -> &Arc<Shared> {
        match self {
            Held::Shared(shared) => shared,
            Held::Lent(shared) => shared,
        }
    }
}

impl Request<'static> {
    pub(crate) fn posted(shared: &Arc<Shared>, posted: Posted) -> Request<'static> {
        Request {
            shared: Held::Shared(Arc::clone(shared)),
            state: match posted {
                Posted::Pending(id) => State::Pending { id, _ticket: None },
                Posted::Done(outcome) => State::Done(outcome),
            },
        }
    }
}

/// Waits, in a blocking call, for the operation it just posted: through a request that borrows
/// the caller's share of the engine for the length of the call (no count raised and lowered
/// per message). An operation done at once is reported at once.
pub(crate) fn wait_posted(shared: &Arc<Shared>, posted: Posted) -> Result<Status> {
    match posted {
        // The post's own outcome (a post never reports ProcFailedPending: only waits do).
        Posted::Done(outcome) => outcome,
        Posted::Pending(id) => Request {
            shared: Held::Lent(shared),
            state: State::Pending { id, _ticket: None },
        }
        .wait(),
    }
}

impl Request<'_> {
    /// Detaches the request from its scope, which then no longer waits for the operation. For
    /// language bindings (the C library) that track buffer lifetimes themselves.
    ///
    /// # Safety
    /// The buffers of the operation must stay valid, and a receive buffer untouched, until the
    /// operation completes, even if the returned request is forgotten (never dropped).
    pub unsafe fn into_static(mut self) -> Request<'static> {
        let state = match std::mem::replace(&mut self.state, State::Inactive) {
            // Dropping the ticket takes the operation off the scope's record.
            State::Pending { id, .. } => State::Pending { id, _ticket: None },
            State::Done(outcome) => State::Done(outcome),
            State::Inactive => State::Inactive,
        };
        Request {
            shared: Held::Shared(Arc::clone(&self.shared)),
            state,
        }
    }

    /// True once the request completed and its outcome was taken (MPI's null request).
    pub fn is_inactive(&self) -> bool {
        matches!(self.state, State::Inactive)
    }

    /// Tests for completion: `Some(status)` once done (the request is then inactive). A
    /// receive from any source on a communicator with a failed member not acknowledged fails
    /// with [`Error::ProcFailedPending`] and stays pending (ULFM).
    pub fn test(&mut self) -> Result<Option<Status>> {
        self.test_as(Look::Progress)
    }

    /// [`Request::test`] without its progress call: whether what earlier progress calls did
    /// completed the operation. For a caller that progresses once and then checks many
    /// requests (MPI_Testany over a thousand took a progress call per request).
    pub fn check(&mut self) -> Result<Option<Status>> {
        self.test_as(Look::Only)
    }

    fn test_as(&mut self, look: Look) -> Result<Option<Status>> {
        let state = &mut self.state;
        let polled = match state {
            State::Pending { id, .. } => {
                let id = *id;
                self.shared.with(|e| {
                    if let Look::Progress = look {
                        e.progress();
                    }
                    let outcome = settle(state, |id| e.test(id));
                    if outcome.is_none() {
                        if let Some(rank) = e.any_source_blocked(id) {
                            return Ok(Some(Err(Error::ProcFailedPending { rank })));
                        }
                    }
                    Ok(outcome)
                })
            }
            _ => Ok(take_outcome(state)),
        };
        self.fail_if_gone(polled)?.transpose()
    }

    /// Waits for completion. A receive from any source that a failed member of its
    /// communicator blocks (see [`Request::wait_or_pending`]) is cancelled and fails with
    /// [`Error::ProcFailed`]: a blocking receive has no request left to wait on again.
    pub fn wait(mut self) -> Result<Status> {
        match self.wait_or_pending() {
            Err(Error::ProcFailedPending { rank }) => Err(Error::ProcFailed { rank }),
            outcome => outcome,
        }
    }

    /// Waits for completion, unless the request is a receive from any source on a
    /// communicator with a failed member whose failure was not acknowledged: then it fails
    /// with [`Error::ProcFailedPending`] and stays pending, to be waited on again (ULFM).
    pub fn wait_or_pending(&mut self) -> Result<Status> {
        let state = &mut self.state;
        if !matches!(state, State::Pending { .. }) {
            // Complete when started (an eager send), or already waited on: nothing to progress.
            return take_outcome(state).unwrap_or(Ok(Status::empty()));
        }
        let outcome = self.shared.progress_until(|e| {
            let id = match state {
                State::Pending { id, .. } => Some(*id),
                _ => None,
            };
            let outcome = settle(state, |id| e.test(id));
            if outcome.is_none() {
                if let Some(rank) = id.and_then(|id| e.any_source_blocked(id)) {
                    return Ok(Some(Err(Error::ProcFailedPending { rank })));
                }
            }
            Ok(outcome)
        });
        self.fail_if_gone(outcome)?
    }

    fn wait_mut(&mut self) -> Result<Status> {
        let state = &mut self.state;
        let outcome = self
            .shared
            .progress_until(|e| Ok(settle(state, |id| e.test(id))));
        self.fail_if_gone(outcome)?
    }

    /// An engine error (finalized) ends the request: no operation runs any more.
    fn fail_if_gone<T>(&mut self, step: Result<T>) -> Result<T> {
        if step.is_err() {
            self.state = State::Inactive;
        }
        step
    }

    /// Asks a pending receive to cancel; wait then reports `status.cancelled`. A send is not
    /// withdrawn: it completes normally (not cancelled).
    pub fn cancel(&self) -> Result<()> {
        match self.state {
            State::Pending { id, .. } => self.shared.with(|e| e.cancel(id)),
            _ => Ok(()),
        }
    }
}

/// One non-blocking check of a request's state with the engine's `test`; on completion returns
/// the outcome and makes the request inactive (which clears its scope entry).
fn settle(
    state: &mut State<'_>,
    test: impl FnOnce(OpId) -> Result<Option<Result<Status>>>,
) -> Option<Result<Status>> {
    if let State::Pending { id, .. } = *state {
        match test(id) {
            Ok(None) => return None,
            Ok(Some(outcome)) => *state = State::Done(outcome),
            // No such operation: it is gone, and so is its claim on memory.
            Err(err) => *state = State::Done(Err(err)),
        }
    }
    take_outcome(state)
}

/// The outcome of a request that is not pending (inactive: an empty status).
fn take_outcome(state: &mut State<'_>) -> Option<Result<Status>> {
    match std::mem::replace(state, State::Inactive) {
        State::Done(outcome) => Some(outcome),
        State::Inactive => Some(Ok(Status::empty())),
        pending @ State::Pending { .. } => {
            *state = pending;
            None
        }
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if let State::Pending { id, .. } = self.state {
            let _ = self.shared.with(|e| match e.is_receive(id) {
                true => e.cancel(id),
                false => Ok(()),
            });
            let _ = self.wait_mut();
        }
    }
}
