//! Requests in flight: the [`UcxRequest`] handle every posting call returns, and how the engine
//! tests, polls and cancels it. What a request moves is the business of the call that posted it.

use super::worker::{status_error, Worker};
use crate::error::{Error, Result};
use mpicd_ucx_sys as ucx;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::task::Poll;

/// What a completed or probed receive tells about the message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RecvInfo {
    pub sender_tag: u64,
    pub length: usize,
}

/// A UCX request still in flight. Released (`ucp_request_free`) when dropped; the engine only
/// drops it after completion, or after cancelling it and seeing it complete.
#[derive(Debug)]
pub(crate) struct UcxRequest(NonNull<c_void>);

// SAFETY: used only under the engine's mutex.
unsafe impl Send for UcxRequest {}

impl UcxRequest {
    /// The request of a UCX call's status pointer: `Ok(None)` if the call completed at once.
    pub(super) fn from_status_ptr(ptr: ucx::ucs_status_ptr_t) -> Result<Option<UcxRequest>> {
        // SAFETY: the shim functions only inspect the pointer value.
        unsafe {
            if ucx::mpicd_ucs_ptr_is_err(ptr) != 0 {
                return Err(status_error(ucx::mpicd_ucs_ptr_status(ptr)));
            }
        }
        Ok(NonNull::new(ptr).map(UcxRequest))
    }

    /// The request of a receive, which never completes at once.
    pub(super) fn of_recv(ptr: ucx::ucs_status_ptr_t) -> Result<UcxRequest> {
        UcxRequest::from_status_ptr(ptr)?
            .ok_or_else(|| Error::Transport("receive completed without a request".into()))
    }
}

impl Drop for UcxRequest {
    fn drop(&mut self) {
        // SAFETY: the request came from a UCX nbx call and is released exactly once.
        unsafe { ucx::ucp_request_free(self.0.as_ptr()) }
    }
}

impl Worker {
    /// True while a request is in flight (a cheap check that releases nothing).
    pub(crate) fn is_pending(&self, req: &UcxRequest) -> bool {
        // SAFETY: req is a live request of this worker.
        unsafe { ucx::ucp_request_check_status(req.0.as_ptr()) == ucx::UCS_INPROGRESS }
    }

    /// Tests a send request: pending, or its outcome. The request is released on completion.
    pub(crate) fn poll_send(&self, req: &mut Option<UcxRequest>) -> Poll<Result<()>> {
        let Some(r) = req else {
            return Poll::Ready(Ok(()));
        };
        // SAFETY: r is a live request of this worker.
        let status = unsafe { ucx::ucp_request_check_status(r.0.as_ptr()) };
        if status == ucx::UCS_INPROGRESS {
            return Poll::Pending;
        }
        *req = None; // releases the request
        Poll::Ready(if status == ucx::UCS_OK {
            Ok(())
        } else {
            Err(status_error(status))
        })
    }

    /// Tests a receive request: pending, or what arrived. The request is released on completion.
    pub(crate) fn poll_recv(&self, req: &mut Option<UcxRequest>) -> Poll<Result<RecvInfo>> {
        self.poll_recv_matched(req)
            .map(|(outcome, info)| outcome.map(|()| info))
    }

    /// [`Worker::poll_recv`], with the info of the message the receive matched beside its
    /// outcome: a truncated message's sender tag and length too (UCX keeps them); all zero when
    /// none matched.
    pub(crate) fn poll_recv_matched(
        &self,
        req: &mut Option<UcxRequest>,
    ) -> Poll<(Result<()>, RecvInfo)> {
        let Some(r) = req else {
            return Poll::Ready((Err(Error::InvalidRequest), RecvInfo::default()));
        };
        // SAFETY: all-zero is a valid info out-structure; r is a live receive request.
        let mut info: ucx::ucp_tag_recv_info_t = unsafe { std::mem::zeroed() };
        let status = unsafe { ucx::ucp_tag_recv_request_test(r.0.as_ptr(), &mut info) };
        if status == ucx::UCS_INPROGRESS {
            return Poll::Pending;
        }
        *req = None;
        let info = RecvInfo {
            sender_tag: info.sender_tag,
            length: info.length,
        };
        Poll::Ready(match status {
            ucx::UCS_OK => (Ok(()), info),
            ucx::UCS_ERR_MESSAGE_TRUNCATED => (Err(status_error(status)), info),
            _ => (Err(status_error(status)), RecvInfo::default()),
        })
    }

    /// Asks UCX to cancel a pending request; it then completes with `Cancelled` (or normally, if
    /// it had already matched).
    pub(crate) fn cancel(&self, req: &UcxRequest) {
        // SAFETY: req is a live request of this worker.
        unsafe { ucx::ucp_request_cancel(self.worker, req.0.as_ptr()) }
    }
}
