//! Requests of non-blocking operations and the MPI completion calls over them: wait, test and
//! their all/any/some forms.
//!
//! A [`Request`] borrows the buffer of its operation for `'a`. Dropping a request that has not
//! completed waits for it (a receive is cancelled first), so a buffer is never freed while the
//! transport still writes into it.

use crate::engine::{OpId, Posted, Shared};
use crate::error::{Error, Result};
use crate::status::Status;
use std::marker::PhantomData;
use std::sync::Arc;

enum State {
    Pending(OpId),
    Done(Result<Status>),
    Inactive,
}

/// A non-blocking operation in flight.
#[must_use = "a request must be waited on or tested to completion"]
pub struct Request<'a> {
    shared: Arc<Shared>,
    state: State,
    _buffer: PhantomData<&'a mut [u8]>,
}

impl<'a> Request<'a> {
    pub(crate) fn pending(shared: &Arc<Shared>, id: OpId) -> Request<'a> {
        Request {
            shared: Arc::clone(shared),
            state: State::Pending(id),
            _buffer: PhantomData,
        }
    }

    pub(crate) fn posted(shared: &Arc<Shared>, posted: Posted) -> Request<'a> {
        match posted {
            Posted::Pending(id) => Request::pending(shared, id),
            Posted::Done(outcome) => Request::done(shared, outcome),
        }
    }

    pub(crate) fn done(shared: &Arc<Shared>, outcome: Result<Status>) -> Request<'a> {
        Request {
            shared: Arc::clone(shared),
            state: State::Done(outcome),
            _buffer: PhantomData,
        }
    }

    /// Forgets the borrow of the request's buffers. For language bindings (the C library) that
    /// track buffer lifetimes themselves.
    ///
    /// # Safety
    /// The buffers of the operation must stay valid until the request completes.
    pub unsafe fn into_static(self) -> Request<'static> {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: fields are moved out exactly once from a value that is never dropped.
        let (shared, state) = unsafe { (std::ptr::read(&me.shared), std::ptr::read(&me.state)) };
        Request {
            shared,
            state,
            _buffer: PhantomData,
        }
    }

    /// True once the request completed and its outcome was taken (MPI's null request).
    pub fn is_inactive(&self) -> bool {
        matches!(self.state, State::Inactive)
    }

    /// One non-blocking check; on completion returns the outcome and makes the request inactive.
    fn poll_once(&mut self) -> Result<Option<Result<Status>>> {
        match std::mem::replace(&mut self.state, State::Inactive) {
            State::Inactive => Ok(Some(Ok(Status::empty()))),
            State::Done(outcome) => Ok(Some(outcome)),
            State::Pending(id) => match self.shared.with(|e| e.test(id)) {
                Ok(Some(outcome)) => Ok(Some(outcome)),
                Ok(None) => {
                    self.state = State::Pending(id);
                    Ok(None)
                }
                Err(e) => Err(e),
            },
        }
    }

    /// Tests for completion: `Some(status)` once done (the request is then inactive).
    pub fn test(&mut self) -> Result<Option<Status>> {
        if matches!(self.state, State::Pending(_)) {
            self.shared.with(|e| {
                e.progress();
                Ok(())
            })?;
        }
        self.poll_once()?.transpose()
    }

    /// Waits for completion.
    pub fn wait(mut self) -> Result<Status> {
        self.wait_mut()
    }

    fn wait_mut(&mut self) -> Result<Status> {
        match std::mem::replace(&mut self.state, State::Inactive) {
            State::Inactive => Ok(Status::empty()),
            State::Done(outcome) => outcome,
            State::Pending(id) => self.shared.progress_until(|e| e.test(id))?,
        }
    }

    /// Asks a pending receive to cancel; wait then reports `status.cancelled`. Sends cannot be
    /// cancelled.
    pub fn cancel(&self) -> Result<()> {
        match self.state {
            State::Pending(id) => self.shared.with(|e| e.cancel(id)),
            _ => Ok(()),
        }
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if let State::Pending(id) = self.state {
            let receive = self.shared.with(|e| Ok(e.is_receive(id))).unwrap_or(false);
            if receive {
                let _ = self.cancel();
            }
            let _ = self.wait_mut();
        }
    }
}

fn progress(requests: &[Request<'_>]) -> Result<()> {
    match requests.first() {
        Some(r) => r.shared.with(|e| {
            e.progress();
            Ok(())
        }),
        None => Ok(()),
    }
}

/// Waits for all requests; the first error is returned after every request has completed.
pub fn wait_all(requests: &mut [Request<'_>]) -> Result<Vec<Status>> {
    wait_all_outcomes(requests).into_iter().collect()
}

/// Waits for all requests and returns each one's outcome (MPI_Waitall with MPI_ERR_IN_STATUS).
/// Each step tests every pending request and progresses once, under one lock.
pub fn wait_all_outcomes(requests: &mut [Request<'_>]) -> Vec<Result<Status>> {
    let mut outcomes: Vec<Option<Result<Status>>> = Vec::with_capacity(requests.len());
    let mut pending: Vec<(usize, OpId)> = Vec::new();
    for (i, r) in requests.iter_mut().enumerate() {
        outcomes.push(match std::mem::replace(&mut r.state, State::Inactive) {
            State::Pending(id) => {
                pending.push((i, id));
                None
            }
            State::Done(outcome) => Some(outcome),
            State::Inactive => Some(Ok(Status::empty())),
        });
    }
    if let Some(shared) = requests.first().map(|r| Arc::clone(&r.shared)) {
        while !pending.is_empty() {
            let step = shared.with(|e| {
                pending.retain(|(i, id)| match e.test(*id) {
                    Ok(None) => true,
                    Ok(Some(outcome)) => {
                        outcomes[*i] = Some(outcome);
                        false
                    }
                    Err(err) => {
                        outcomes[*i] = Some(Err(err));
                        false
                    }
                });
                if !pending.is_empty() {
                    e.progress();
                }
                Ok(())
            });
            if let Err(err) = step {
                for (i, _) in pending.drain(..) {
                    outcomes[i] = Some(Err(err.clone()));
                }
            }
        }
    }
    outcomes
        .into_iter()
        .map(|o| o.unwrap_or(Err(Error::InvalidRequest)))
        .collect()
}

/// Tests all requests: `Some(statuses)` only if every one has completed (they then become
/// inactive); otherwise none is completed by this call, as in MPI.
pub fn test_all(requests: &mut [Request<'_>]) -> Result<Option<Vec<Status>>> {
    progress(requests)?;
    // Completed operations keep their outcome in the request (not yet reported), so to the
    // caller nothing changes unless all are done.
    let mut all_done = true;
    for r in requests.iter_mut() {
        if let State::Pending(_) = r.state {
            match r.poll_once()? {
                Some(outcome) => r.state = State::Done(outcome),
                None => all_done = false,
            }
        }
    }
    if !all_done {
        return Ok(None);
    }
    wait_all(requests).map(Some)
}

/// Waits until one active request completes: its index and outcome. `None` if all are inactive.
pub fn wait_any(requests: &mut [Request<'_>]) -> Result<Option<(usize, Status)>> {
    loop {
        if let Some(found) = test_any_once(requests)? {
            return found
                .map(|(i, s)| s.map(|s| Some((i, s))))
                .unwrap_or(Ok(None));
        }
        progress(requests)?;
    }
}

/// Like [`wait_any`] without blocking: `Ok(None)` while nothing is done.
pub fn test_any(requests: &mut [Request<'_>]) -> Result<Option<(usize, Status)>> {
    progress(requests)?;
    match test_any_once(requests)? {
        Some(Some((i, s))) => s.map(|s| Some((i, s))),
        _ => Ok(None),
    }
}

type AnyOutcome = Option<(usize, Result<Status>)>;

/// `None`: something is still pending; `Some(None)`: all inactive; `Some(Some(..))`: one done.
fn test_any_once(requests: &mut [Request<'_>]) -> Result<Option<AnyOutcome>> {
    let mut any_active = false;
    for (i, r) in requests.iter_mut().enumerate() {
        if r.is_inactive() {
            continue;
        }
        any_active = true;
        if let Some(outcome) = r.poll_once()? {
            return Ok(Some(Some((i, outcome))));
        }
    }
    Ok(if any_active { None } else { Some(None) })
}

/// Waits until at least one active request completes; returns every one that has.
pub fn wait_some(requests: &mut [Request<'_>]) -> Result<Vec<(usize, Result<Status>)>> {
    loop {
        let done = test_some(requests)?;
        if !done.is_empty() || requests.iter().all(Request::is_inactive) {
            return Ok(done);
        }
        progress(requests)?;
    }
}

/// Returns every active request that has completed, without blocking.
pub fn test_some(requests: &mut [Request<'_>]) -> Result<Vec<(usize, Result<Status>)>> {
    let mut done = Vec::new();
    for (i, r) in requests.iter_mut().enumerate() {
        if r.is_inactive() {
            continue;
        }
        if let Some(outcome) = r.poll_once()? {
            done.push((i, outcome));
        }
    }
    Ok(done)
}
