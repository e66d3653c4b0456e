//! Connections to peer workers: creating endpoints (with UCX's peer error handling when failures
//! are to be detected, reported through [`super::failures`]) and closing them.

use super::failures::{endpoint_error, ErrorContext};
use super::request::UcxRequest;
use super::worker::{check, Worker};
use crate::error::Result;
use mpicd_ucx_sys as ucx;
use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

/// A connection to one peer worker.
pub(crate) struct Endpoint {
    pub(super) ep: ucx::ucp_ep_h,
    _error_ctx: Box<ErrorContext>,
}

// SAFETY: used only under the engine's mutex, like the worker.
unsafe impl Send for Endpoint {}

impl Worker {
    /// Connects to a peer worker. With `detect_failure` (and peer errors enabled), UCX reports
    /// `rank` through [`Worker::failures`] if it loses the peer.
    pub(crate) fn connect(
        &self,
        address: &[u8],
        rank: u32,
        detect_failure: bool,
    ) -> Result<Endpoint> {
        let error_ctx = Box::new(ErrorContext {
            rank,
            log: Arc::clone(&self.failures),
        });
        // SAFETY: all-zero is a valid ucp_ep_params_t.
        let mut params: ucx::ucp_ep_params_t = unsafe { std::mem::zeroed() };
        params.field_mask = ucx::UCP_EP_PARAM_FIELD_REMOTE_ADDRESS as u64;
        params.address = address.as_ptr() as *const ucx::ucp_address_t;
        if self.settings.peer_errors && detect_failure {
            params.field_mask |= (ucx::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                | ucx::UCP_EP_PARAM_FIELD_ERR_HANDLER) as u64;
            params.err_mode = ucx::UCP_ERR_HANDLING_MODE_PEER;
            params.err_handler.cb = Some(endpoint_error);
            params.err_handler.arg = &*error_ctx as *const ErrorContext as *mut c_void;
        }
        let mut ep: ucx::ucp_ep_h = ptr::null_mut();
        // SAFETY: worker is live, address points to a worker address blob that UCX copies during
        // the call, the error context outlives the endpoint (owned by it).
        check(
            unsafe { ucx::ucp_ep_create(self.worker, &params, &mut ep) },
            "ucp_ep_create",
        )?;
        Ok(Endpoint {
            ep,
            _error_ctx: error_ctx,
        })
    }

    /// Closes an endpoint, flushing what is in flight; gives up (forcing the close) after
    /// `timeout`. The endpoint of a peer known lost is closed at once (`lost`): nothing can
    /// be flushed to it.
    pub(crate) fn close(&self, ep: Endpoint, timeout: std::time::Duration, lost: bool) {
        let mut params = Self::request_params(0);
        if lost {
            params.op_attr_mask |= ucx::UCP_OP_ATTR_FIELD_FLAGS;
            params.flags = ucx::UCP_EP_CLOSE_FLAG_FORCE;
        }
        // SAFETY: ep is a live endpoint of this worker, consumed here.
        let ptr = unsafe { ucx::ucp_ep_close_nbx(ep.ep, &params) };
        let Ok(Some(req)) = UcxRequest::from_status_ptr(ptr) else {
            return;
        };
        let deadline = std::time::Instant::now() + timeout;
        let mut req = Some(req);
        while self.poll_send(&mut req).is_pending() {
            if std::time::Instant::now() > deadline {
                if let Some(r) = &req {
                    self.cancel(r);
                }
                break;
            }
            self.progress();
        }
        drop(ep);
    }
}
