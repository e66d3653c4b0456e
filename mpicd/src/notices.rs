//! Completion notices for custom-typed operations: which of them UCX just finished a request
//! for, so that progress polls those and not every operation in flight.
//!
//! A custom operation is a chain of UCX requests (lead, body, region messages) that mpicd
//! advances itself. The engine marks the requests it posts on an operation's behalf with that
//! operation's token ([`crate::transport::Worker::notify`]); UCX's completion callback files
//! the token here, and the engine's next progress call takes the tokens and polls exactly those
//! operations. Polling the right operation right away also matters for speed: a receive whose
//! lead just arrived posts its body's receive before the body arrives, so UCX unpacks the body
//! straight from its transport buffers instead of parking it as an unexpected message.
//!
//! The queue is process-wide because UCX hands a callback one pointer-sized value, which
//! carries the token. A token that outlived its operation (a request that completes after the
//! operation was dropped, or one from an earlier engine) names a slot whose generation moved on
//! or an operation that has nothing to do: polling it is harmless.

use mpicd_ucx_sys as ucx;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Tokens filed since the engine last took them.
static QUEUE: Mutex<Vec<usize>> = Mutex::new(Vec::new());
/// Set after a token is filed: lets progress skip the lock when nothing happened.
static RAISED: AtomicBool = AtomicBool::new(false);

/// Files `token`.
fn file(token: usize) {
    QUEUE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(token);
    RAISED.store(true, Ordering::Release);
}

/// Moves every filed token to the end of `out`.
pub(crate) fn take_into(out: &mut Vec<usize>) {
    // A token filed between the swap and the lock is taken now and leaves the flag raised,
    // which costs one empty look next time; one filed after the lock raises it again.
    if RAISED.load(Ordering::Relaxed) && RAISED.swap(false, Ordering::AcqRel) {
        out.append(
            &mut QUEUE
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
    }
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
