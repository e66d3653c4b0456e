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

    /// Whether ranks were reported since the last [`FailureLog::take`].
    pub(crate) fn is_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
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

/// Set when UCX reported a failed shared-memory copy from or to another process (CMA).
static COPY_FAILED: AtomicBool = AtomicBool::new(false);

/// Installs [`log_filter`] in UCX's log, once per process.
pub(super) fn install_log_filter() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: the filter is a plain function that lives as long as the process.
    ONCE.call_once(|| unsafe { ucx::ucs_log_push_handler(Some(log_filter)) });
}

/// True once after UCX reported a failed copy between processes (the engine then looks at its
/// local peers at once).
pub(crate) fn take_copy_failure() -> bool {
    COPY_FAILED.load(Ordering::Relaxed) && COPY_FAILED.swap(false, Ordering::AcqRel)
}

/// UCX's log, seen before its own handler: a CMA copy (`process_vm_readv`/`writev`) that fails
/// because the other process is gone is logged as a fatal error, which aborts this process,
/// when the endpoint has no peer error handling, and in UCX 1.13 no shared-memory endpoint can
/// have it. That one message is kept from the fatal path: the copy then fails with an error,
/// the operation on the endpoint completes with it, and the local pid check names the peer.
unsafe extern "C" fn log_filter(
    file: *const std::ffi::c_char,
    _line: std::ffi::c_uint,
    _function: *const std::ffi::c_char,
    level: ucx::ucs_log_level_t,
    _comp_conf: *const ucx::ucs_log_component_config_t,
    _message: *const std::ffi::c_char,
    _ap: *mut ucx::__va_list_tag,
) -> ucx::ucs_log_func_rc_t {
    if level != ucx::UCS_LOG_LEVEL_FATAL || file.is_null() {
        return ucx::UCS_LOG_FUNC_RC_CONTINUE;
    }
    // SAFETY: UCX passes its source file name, a static NUL-terminated string.
    let file = unsafe { std::ffi::CStr::from_ptr(file) }.to_bytes();
    if file.ends_with(b"cma_ep.c") {
        COPY_FAILED.store(true, Ordering::Release);
        return ucx::UCS_LOG_FUNC_RC_STOP;
    }
    ucx::UCS_LOG_FUNC_RC_CONTINUE
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
