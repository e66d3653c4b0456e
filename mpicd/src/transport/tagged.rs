//! Tag operations: sends and receives of contiguous memory, of a [`Collector`] and of a
//! [`StreamPort`], probes and matched receives. A user's contiguous receive goes through
//! [`Worker::tag_recv_contiguous`], which keeps the first bytes of any message aside (see
//! [`super::collect`]). The requests they return are tested in [`super::request`].

use super::collect::{Collector, RecvTarget, Sink};
use super::endpoint::Endpoint;
use super::request::{RecvInfo, UcxRequest};
use super::stream::{OwnedPort, StreamPort};
use super::worker::Worker;
use crate::error::Result;
use crate::tag::TagMatch;
use mpicd_ucx_sys as ucx;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A message taken out of UCX's matching queue by a removing probe, waiting to be received.
#[derive(Debug)]
pub(crate) struct MessageHandle(ucx::ucp_tag_message_h);

// SAFETY: used only under the engine's mutex.
unsafe impl Send for MessageHandle {}

/// Called by UCX when a contiguous receive completes: raises the worker's alert when the message
/// it took is a custom-typed lead, so that progress turns that receive into a drain even if
/// nobody tests it (see `Engine::progress`).
unsafe extern "C" fn contiguous_recv_done(
    _request: *mut c_void,
    status: ucx::ucs_status_t,
    info: *const ucx::ucp_tag_recv_info_t,
    user_data: *mut c_void,
) {
    // SAFETY: UCX passes the receive's tag information, valid for the duration of the call
    // (checked for null all the same).
    let custom = status == ucx::UCS_OK
        && !info.is_null()
        && crate::tag::is_custom_lead(unsafe { (*info).sender_tag });
    if custom {
        // SAFETY: user_data is the worker's `custom_alert`, which lives as long as the worker
        // (UCX calls this only during progress of that worker, or while destroying it).
        let alert = unsafe { &*(user_data as *const AtomicBool) };
        alert.store(true, Ordering::Release);
    }
}

impl Worker {
    /// Starts a tag send of `len` bytes at `buf`. `Ok(None)` means it completed at once.
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unchanged until the returned request completes.
    pub(crate) unsafe fn tag_send(
        &self,
        ep: &Endpoint,
        buf: *const u8,
        len: usize,
        tag: u64,
        synchronous: bool,
    ) -> Result<Option<UcxRequest>> {
        let params = self.send_params(0);
        // SAFETY: the caller keeps the buffer alive; ep belongs to this worker.
        let ptr = unsafe {
            if synchronous {
                ucx::ucp_tag_send_sync_nbx(ep.ep, buf as *const c_void, len, tag, &params)
            } else {
                ucx::ucp_tag_send_nbx(ep.ep, buf as *const c_void, len, tag, &params)
            }
        };
        UcxRequest::from_status_ptr(ptr)
    }

    /// Posts a tag receive of at most `len` bytes into `buf`, always returning a request.
    /// (Immediate completion with `UCP_OP_ATTR_FIELD_RECV_INFO` was tried: UCX 1.13 then
    /// reported an empty sender tag, so every receive is polled.)
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and otherwise untouched until the request completes.
    pub(crate) unsafe fn tag_recv(
        &self,
        buf: *mut u8,
        len: usize,
        m: TagMatch,
    ) -> Result<UcxRequest> {
        let params = self.recv_params(ucx::UCP_OP_ATTR_FLAG_NO_IMM_CMPL);
        // SAFETY: the caller keeps the buffer alive and exclusive.
        let ptr = unsafe {
            ucx::ucp_tag_recv_nbx(self.worker, buf as *mut c_void, len, m.tag, m.mask, &params)
        };
        UcxRequest::of_recv(ptr)
    }

    /// Posts a user's contiguous receive of at most `len` bytes into `buf`, matching both
    /// kinds of user message, and returns the request with the [`RecvTarget`] that must be kept
    /// (unmoved or boxed, as it is) until the request completes.
    ///
    /// A buffer of at least [`super::WorkerSettings::lead_capacity`] bytes is received into
    /// directly (UCX's zero-copy rendezvous stays possible); a custom-typed lead always fits
    /// in it whole. A shorter buffer is received through a sink (a generic datatype, which
    /// costs no extra copy) that accepts a message of any length: the first `len` bytes land in
    /// the buffer, the rest are counted and dropped, and the first
    /// [`super::WorkerSettings::header_keep`] bytes are also kept aside. Either way, when the
    /// message turns out to be a custom-typed lead, [`RecvTarget::lead_header`] has its
    /// header, which tells which private messages must be drained for its sender to complete.
    /// (UCX itself would report a truncation and nothing else: the header would be lost.)
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and otherwise untouched until the request completes.
    pub(crate) unsafe fn tag_recv_contiguous(
        &self,
        buf: *mut u8,
        len: usize,
        m: TagMatch,
    ) -> Result<(UcxRequest, RecvTarget)> {
        let mut params = Self::request_params(
            ucx::UCP_OP_ATTR_FLAG_NO_IMM_CMPL
                | ucx::UCP_OP_ATTR_FIELD_CALLBACK
                | ucx::UCP_OP_ATTR_FIELD_USER_DATA,
        );
        params.cb.recv = Some(contiguous_recv_done);
        params.user_data = Arc::as_ptr(&self.custom_alert) as *mut c_void;
        let header = self.settings.header_keep;
        if len >= self.settings.lead_capacity {
            // SAFETY: the caller keeps the buffer alive and exclusive.
            let ptr = unsafe {
                ucx::ucp_tag_recv_nbx(self.worker, buf as *mut c_void, len, m.tag, m.mask, &params)
            };
            return Ok((
                UcxRequest::of_recv(ptr)?,
                RecvTarget::direct(buf, len, header),
            ));
        }
        let mut sink = self.spare_sink();
        sink.aim(buf, len);
        params.op_attr_mask |= ucx::UCP_OP_ATTR_FIELD_DATATYPE;
        params.datatype = self.sink_dt;
        let at: *mut Sink = &mut *sink;
        let target = RecvTarget::through(sink, buf, len, header);
        // SAFETY: for a generic datatype the buffer is handed to start_unpack, which treats it as
        // the Sink; the sink is boxed in the target (the box does not move with it), which the
        // caller keeps until the request completes, and it writes only within the caller's
        // buffer.
        let ptr = unsafe {
            ucx::ucp_tag_recv_nbx(self.worker, at as *mut c_void, 1, m.tag, m.mask, &params)
        };
        Ok((UcxRequest::of_recv(ptr)?, target))
    }

    /// Posts a user's receive whose bytes go to `port`'s end (a derived-typed receive; with
    /// `msg`, of the message a probe took), matching both kinds of user message like
    /// [`Worker::tag_recv_contiguous`]: through a sink that gives the end the first `capacity`
    /// bytes, counts the rest, and keeps the head of a custom-typed lead. The target keeps the
    /// port; it must be kept until the request completes.
    pub(crate) fn tag_recv_through(
        &self,
        mut port: OwnedPort,
        capacity: usize,
        msg: Option<MessageHandle>,
        m: TagMatch,
    ) -> Result<(UcxRequest, RecvTarget)> {
        let mut params = Self::request_params(
            ucx::UCP_OP_ATTR_FLAG_NO_IMM_CMPL
                | ucx::UCP_OP_ATTR_FIELD_CALLBACK
                | ucx::UCP_OP_ATTR_FIELD_USER_DATA
                | ucx::UCP_OP_ATTR_FIELD_DATATYPE,
        );
        params.cb.recv = Some(contiguous_recv_done);
        params.user_data = Arc::as_ptr(&self.custom_alert) as *mut c_void;
        params.datatype = self.sink_dt;
        let mut sink = self.spare_sink();
        sink.aim_port(port.port(), capacity);
        let at: *mut Sink = &mut *sink;
        let mut target =
            RecvTarget::through(sink, std::ptr::null_mut(), 0, self.settings.header_keep);
        target.keep(port);
        // SAFETY: the sink datatype's start_unpack treats the buffer as the Sink, boxed in the
        // target (with the port it hands bytes to) that the caller keeps until the request
        // completes. A message handle is consumed here once.
        let ptr = unsafe {
            match msg {
                Some(h) => {
                    ucx::ucp_tag_msg_recv_nbx(self.worker, at as *mut c_void, 1, h.0, &params)
                }
                None => {
                    ucx::ucp_tag_recv_nbx(self.worker, at as *mut c_void, 1, m.tag, m.mask, &params)
                }
            }
        };
        Ok((UcxRequest::of_recv(ptr)?, target))
    }

    /// Posts a tag receive whose bytes are appended to `sink` as they arrive, whatever their
    /// number (up to its `keep`): used for the lead message of a custom-typed message and,
    /// with nothing kept, to drain messages nobody wants.
    ///
    /// # Safety
    /// `sink` must stay valid and untouched until the request completes.
    pub(crate) unsafe fn tag_recv_collect(
        &self,
        sink: *mut Collector,
        m: TagMatch,
    ) -> Result<UcxRequest> {
        // SAFETY: the collect datatype's start_unpack treats the buffer as the Collector the
        // caller keeps alive.
        unsafe { self.tag_recv_generic(sink as *mut c_void, self.collect_dt, m) }
    }

    /// Starts a tag send of a message whose bytes `port`'s end produces as UCX asks for them
    /// (a generic datatype: UCX calls [`super::StreamEnd::pack`] for each of its fragments, in
    /// order, straight into its transport buffers). `Ok(None)` means it completed at once.
    ///
    /// # Safety
    /// `port` and the end it points to must stay valid, and not otherwise borrowed while UCX
    /// runs, until the request completes.
    pub(crate) unsafe fn tag_send_stream(
        &self,
        ep: &Endpoint,
        port: *mut StreamPort,
        tag: u64,
        synchronous: bool,
    ) -> Result<Option<UcxRequest>> {
        let mut params = self.send_params(ucx::UCP_OP_ATTR_FIELD_DATATYPE);
        params.datatype = self.stream_dt;
        let buf = port as *const c_void;
        // SAFETY: for a generic datatype the buffer is handed to start_pack, which treats it
        // as the StreamPort the caller keeps alive.
        let ptr = unsafe {
            if synchronous {
                ucx::ucp_tag_send_sync_nbx(ep.ep, buf, 1, tag, &params)
            } else {
                ucx::ucp_tag_send_nbx(ep.ep, buf, 1, tag, &params)
            }
        };
        UcxRequest::from_status_ptr(ptr)
    }

    /// Posts a tag receive of a message whose bytes go to `port`'s end as they arrive
    /// ([`super::StreamEnd::unpack`], in order on one UCX lane); a message longer than the end's
    /// length fails as truncated. Always returns a request.
    ///
    /// # Safety
    /// As for [`Worker::tag_send_stream`].
    pub(crate) unsafe fn tag_recv_stream(
        &self,
        port: *mut StreamPort,
        m: TagMatch,
    ) -> Result<UcxRequest> {
        // SAFETY: the stream datatype's start_unpack treats the buffer as the StreamPort the
        // caller keeps alive.
        unsafe { self.tag_recv_generic(port as *mut c_void, self.stream_dt, m) }
    }

    /// Posts a tag receive through one of our generic datatypes, whose callbacks get `buffer`.
    /// Always returns a request.
    ///
    /// # Safety
    /// `buffer` must be what `datatype`'s callbacks expect, valid until the request completes.
    unsafe fn tag_recv_generic(
        &self,
        buffer: *mut c_void,
        datatype: ucx::ucp_datatype_t,
        m: TagMatch,
    ) -> Result<UcxRequest> {
        let mut params =
            self.recv_params(ucx::UCP_OP_ATTR_FLAG_NO_IMM_CMPL | ucx::UCP_OP_ATTR_FIELD_DATATYPE);
        params.datatype = datatype;
        // SAFETY: for a generic datatype the buffer is handed to its start_unpack (the caller's
        // promise); the worker is live.
        let ptr = unsafe { ucx::ucp_tag_recv_nbx(self.worker, buffer, 1, m.tag, m.mask, &params) };
        UcxRequest::of_recv(ptr)
    }

    /// Looks for an unexpected message; with `remove`, takes it out of the matching queue and
    /// returns its handle for [`Worker::msg_recv`].
    pub(crate) fn probe(
        &self,
        m: TagMatch,
        remove: bool,
    ) -> Option<(RecvInfo, Option<MessageHandle>)> {
        // SAFETY: all-zero is a valid info out-structure.
        let mut info: ucx::ucp_tag_recv_info_t = unsafe { std::mem::zeroed() };
        // SAFETY: worker is live; info is an out pointer.
        let msg =
            unsafe { ucx::ucp_tag_probe_nb(self.worker, m.tag, m.mask, remove as i32, &mut info) };
        if msg.is_null() {
            return None;
        }
        let info = RecvInfo {
            sender_tag: info.sender_tag,
            length: info.length,
        };
        Some((info, remove.then_some(MessageHandle(msg))))
    }

    /// Receives a message taken by [`Worker::probe`] into `buf`.
    ///
    /// # Safety
    /// As for [`Worker::tag_recv`].
    pub(crate) unsafe fn msg_recv(
        &self,
        buf: *mut u8,
        len: usize,
        msg: MessageHandle,
    ) -> Result<UcxRequest> {
        let params = self.recv_params(ucx::UCP_OP_ATTR_FLAG_NO_IMM_CMPL);
        // SAFETY: msg came from a removing probe on this worker and is consumed here once.
        let ptr = unsafe {
            ucx::ucp_tag_msg_recv_nbx(self.worker, buf as *mut c_void, len, msg.0, &params)
        };
        UcxRequest::of_recv(ptr)
    }

    /// Receives a probed message through a [`Collector`].
    ///
    /// # Safety
    /// As for [`Worker::tag_recv_collect`].
    pub(crate) unsafe fn msg_recv_collect(
        &self,
        sink: *mut Collector,
        msg: MessageHandle,
    ) -> Result<UcxRequest> {
        let mut params =
            self.recv_params(ucx::UCP_OP_ATTR_FLAG_NO_IMM_CMPL | ucx::UCP_OP_ATTR_FIELD_DATATYPE);
        params.datatype = self.collect_dt;
        // SAFETY: as in tag_recv_collect; msg is consumed here once.
        let ptr = unsafe {
            ucx::ucp_tag_msg_recv_nbx(self.worker, sink as *mut c_void, 1, msg.0, &params)
        };
        UcxRequest::of_recv(ptr)
    }

    /// A target for a receive that is not posted through [`Worker::tag_recv_contiguous`] (a
    /// matched contiguous message, received straight into `buf`).
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid until the receive that writes there is reported
    /// complete ([`RecvTarget::lead_header`] may read it after UCX finished).
    pub(crate) unsafe fn direct_target(&self, buf: *mut u8, len: usize) -> RecvTarget {
        RecvTarget::direct(buf, len, self.settings.header_keep)
    }
}
