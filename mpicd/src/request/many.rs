//! The completion calls over several requests: wait and test for all, any or some of them
//! (MPI_Waitall ... MPI_Testsome). They share one engine, so each step tests the requests
//! and progresses once.

use super::{settle, take_outcome, Request, State};
use crate::engine::Idle;
use crate::error::{Error, Result};
use crate::status::Status;
use std::sync::Arc;

/// One step of a blocking wait on `requests` (see [`Idle`]).
fn wait_step(requests: &[Request<'_>], idle: &mut Idle) -> Result<()> {
    match requests.first() {
        Some(r) => r.shared.wait_step(idle),
        None => Ok(()),
    }
}

/// Progresses the engine once (through any request: they share one engine).
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
/// Each step tests the requests in order up to the first still pending and progresses once,
/// under one lock.
pub fn wait_all_outcomes(requests: &mut [Request<'_>]) -> Vec<Result<Status>> {
    let mut outcomes: Vec<Option<Result<Status>>> = requests
        .iter_mut()
        .map(|r| take_outcome(&mut r.state))
        .collect();
    let Some(shared) = requests.first().map(|r| Arc::clone(&r.shared)) else {
        return Vec::new();
    };
    let mut idle = Idle::default();
    // Every request before `first` is complete. A pass tests from there up to the first that
    // is still pending, not every pending one: testing them all after each progress call made
    // a window of n receives cost O(n^2) tests (64 per window: 6 tests per message).
    let mut first = 0;
    while first < requests.len() {
        let step = shared.with(|e| {
            while first < requests.len() {
                if outcomes[first].is_none() {
                    outcomes[first] = settle(&mut requests[first].state, |id| e.test(id));
                    if outcomes[first].is_none() {
                        break;
                    }
                }
                first += 1;
            }
            if first == requests.len() {
                return Ok(None);
            }
            let active = e.progress();
            Ok(e.idle(&mut idle, active))
        });
        if let Ok(Some(nap)) = step {
            nap.take();
        } else if let Err(err) = step {
            for (r, outcome) in requests.iter_mut().zip(outcomes.iter_mut()) {
                if outcome.is_none() {
                    r.state = State::Inactive;
                    *outcome = Some(Err(err.clone()));
                }
            }
            break;
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
        if let State::Pending { .. } = r.state {
            match poll(r)? {
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

/// One check of one request without progress: its outcome once complete.
fn poll(r: &mut Request<'_>) -> Result<Option<Result<Status>>> {
    let state = &mut r.state;
    let polled = r.shared.with(|e| Ok(settle(state, |id| e.test(id))));
    r.fail_if_gone(polled)
}

/// Waits until one active request completes: its index and outcome. `None` if all are inactive.
pub fn wait_any(requests: &mut [Request<'_>]) -> Result<Option<(usize, Status)>> {
    let mut idle = Idle::default();
    loop {
        if let Some(found) = test_any_once(requests)? {
            return found
                .map(|(i, s)| s.map(|s| Some((i, s))))
                .unwrap_or(Ok(None));
        }
        wait_step(requests, &mut idle)?;
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
        if let Some(outcome) = poll(r)? {
            return Ok(Some(Some((i, outcome))));
        }
    }
    Ok(if any_active { None } else { Some(None) })
}

/// Waits until at least one active request completes; returns every one that has.
pub fn wait_some(requests: &mut [Request<'_>]) -> Result<Vec<(usize, Result<Status>)>> {
    let mut idle = Idle::default();
    loop {
        let done = completed(requests)?;
        if !done.is_empty() || requests.iter().all(Request::is_inactive) {
            return Ok(done);
        }
        wait_step(requests, &mut idle)?;
    }
}

/// Returns every active request that has completed, without blocking. It progresses the
/// runtime once, as MPI_Testsome does: a loop of these calls alone sees its messages arrive.
pub fn test_some(requests: &mut [Request<'_>]) -> Result<Vec<(usize, Result<Status>)>> {
    progress(requests)?;
    completed(requests)
}

/// The active requests that have completed, by what earlier progress calls did.
fn completed(requests: &mut [Request<'_>]) -> Result<Vec<(usize, Result<Status>)>> {
    let mut done = Vec::new();
    for (i, r) in requests.iter_mut().enumerate() {
        if r.is_inactive() {
            continue;
        }
        if let Some(outcome) = poll(r)? {
            done.push((i, outcome));
        }
    }
    Ok(done)
}
