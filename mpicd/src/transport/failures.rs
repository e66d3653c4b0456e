//! The log of peers lost, and UCX's endpoint error callback that writes to it.
//!
//! An endpoint created with failure detection has UCX's peer error handling (and keepalive):
//! when UCX gives up on the peer, [`endpoint_error`] records the peer's rank here. Detectors
//! outside UCX (the engine's look at local processes) report into the same log, and the engine
//! takes what was reported after progress and fails the operations on those peers.

use mpicd_ucx_sys as ucx;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Peers reported failed, by the UCX error callback during progress or by another detector.
#[derive(Default)]
pub(crate) struct FailureLog {
    failed: Mutex<Vec<u32>>,
    /// Set when `failed` may be non-empty, so the common case takes no lock.
    pending: AtomicBool,
}

impl FailureLog {
    /// Records that `rank` failed.
    pub(crate) fn report(&self, rank: u32) {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(rank);
        self.pending.store(true, Ordering::Release);
    }

    /// Takes the ranks reported since the last call.
    pub(crate) fn take(&self) -> Vec<u32> {
        if !self.pending.load(Ordering::Acquire) || !self.pending.swap(false, Ordering::AcqRel) {
            return Vec::new();
        }
        std::mem::take(&mut *self.failed.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The argument UCX hands back to [`endpoint_error`]: which rank, and where to record it.
pub(super) struct ErrorContext {
    pub(super) rank: u32,
    pub(super) log: Arc<FailureLog>,
}

/// UCX's error callback of an endpoint with peer error handling: the peer is lost.
pub(super) unsafe extern "C" fn endpoint_error(
    arg: *mut c_void,
    _ep: ucx::ucp_ep_h,
    _status: ucx::ucs_status_t,
) {
    // SAFETY: `arg` is the `ErrorContext` boxed in `Worker::connect`, alive until the endpoint
    // is closed (the box is owned by the `Endpoint`).
    let ctx = unsafe { &*(arg as *const ErrorContext) };
    ctx.log.report(ctx.rank);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr;

    #[test]
    fn a_failure_reported_by_the_endpoint_callback_is_taken_once() {
        let log = Arc::new(FailureLog::default());
        assert!(log.take().is_empty());
        let ctx = ErrorContext {
            rank: 3,
            log: Arc::clone(&log),
        };
        // SAFETY: `arg` is a live ErrorContext; the callback does not touch the endpoint.
        unsafe {
            endpoint_error(
                &ctx as *const ErrorContext as *mut c_void,
                ptr::null_mut(),
                ucx::UCS_ERR_ENDPOINT_TIMEOUT,
            )
        };
        assert_eq!(log.take(), vec![3]);
        assert!(log.take().is_empty());
        log.report(5);
        assert_eq!(log.take(), vec![5]);
    }
}
