//! Completion notices for custom-typed operations: which of them UCX just finished a request
//! for, so that progress polls those and not every operation in flight.
//!
//! A custom operation is a chain of UCX requests (lead, body, region messages) that mpicd
//! advances itself. The engine marks the requests it posts on an operation's behalf with that
//! operation's token ([`super::Worker::mark_requests`]); UCX's completion callback files
//! the token here, and the engine's next progress call takes the tokens and polls exactly those
//! operations. Polling the right operation right away also matters for speed: a receive whose
//! lead just arrived posts its body's receive before the body arrives, so UCX unpacks the body
//! straight from its transport buffers instead of parking it as an unexpected message.
//!
//! The queue is process-wide because UCX hands a callback one pointer-sized value, which
//! carries the token. A token that outlived its operation (a request that completes after the
//! operation was dropped, or one from an earlier engine) names a slot whose generation moved on
//! or an operation that has nothing to do: polling it is harmless.
//!
//! The queue is a ring of atomics written without locks. UCX runs these callbacks only inside
//! the calls the engine makes while it holds its lock, and the engine takes the tokens under
//! that lock, so filing and taking never overlap: plain loads and stores suffice, and a token
//! filed on one thread is taken on the next that progresses. A ring that fills up (more
//! completions than [`RING`] between two progress calls) drops tokens and says so; the engine
//! then polls every operation.

use mpicd_ucx_sys as ucx;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Tokens the ring holds between two progress calls.
const RING: usize = 1024;

static SLOTS: [AtomicUsize; RING] = [const { AtomicUsize::new(0) }; RING];
/// Tokens filed and taken so far (their difference is what the ring holds).
static FILED: AtomicUsize = AtomicUsize::new(0);
static TAKEN: AtomicUsize = AtomicUsize::new(0);
/// A token was dropped because the ring was full.
static OVERFLOWED: AtomicBool = AtomicBool::new(false);

/// Files `token`.
fn file(token: usize) {
    let filed = FILED.load(Ordering::Relaxed);
    if filed.wrapping_sub(TAKEN.load(Ordering::Relaxed)) >= RING {
        OVERFLOWED.store(true, Ordering::Relaxed);
        return;
    }
    SLOTS[filed % RING].store(token, Ordering::Relaxed);
    FILED.store(filed.wrapping_add(1), Ordering::Release);
}

/// Moves every filed token to the end of `out`. False if some were dropped (the ring was
/// full): then every operation must be polled.
pub(crate) fn take_into(out: &mut Vec<usize>) -> bool {
    let filed = FILED.load(Ordering::Acquire);
    let mut taken = TAKEN.load(Ordering::Relaxed);
    while taken != filed {
        out.push(SLOTS[taken % RING].load(Ordering::Relaxed));
        taken = taken.wrapping_add(1);
    }
    TAKEN.store(taken, Ordering::Release);
    !(OVERFLOWED.load(Ordering::Relaxed) && OVERFLOWED.swap(false, Ordering::Relaxed))
}

/// UCX's completion callback for a send posted with a token in `user_data`.
pub(crate) unsafe extern "C" fn send_done(
    _request: *mut c_void,
    _status: ucx::ucs_status_t,
    user_data: *mut c_void,
) {
    file(user_data as usize);
}

/// UCX's completion callback for a receive posted with a token in `user_data`.
pub(crate) unsafe extern "C" fn recv_done(
    _request: *mut c_void,
    _status: ucx::ucs_status_t,
    _info: *const ucx::ucp_tag_recv_info_t,
    user_data: *mut c_void,
) {
    file(user_data as usize);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filed_tokens_are_taken_once_in_order() {
        let mut out = Vec::new();
        take_into(&mut out);
        out.clear();
        // SAFETY: the callbacks only read user_data.
        unsafe {
            send_done(std::ptr::null_mut(), 0, 7 as *mut c_void);
            recv_done(std::ptr::null_mut(), 0, std::ptr::null(), 9 as *mut c_void);
        }
        take_into(&mut out);
        // (Other tests' engines may file tokens meanwhile.)
        let at = |t: usize| out.iter().position(|&x| x == t);
        assert!(matches!((at(7), at(9)), (Some(a), Some(b)) if a < b));
        let mut again = Vec::new();
        take_into(&mut again);
        assert!(!again.contains(&7));
    }
}
