//! [`Link`]: the transport calls an operation makes, written down as a trait. The engine's
//! operations run on the UCX [`Worker`]; the unit tests run the same operations on an
//! in-memory transport (`ops::fake`), which delivers their messages in any order.

use crate::error::Result;
use crate::tag::TagMatch;
use crate::transport::{
    Collector, Endpoint, MessageHandle, RecvInfo, StreamPort, UcxRequest, Worker,
};
use std::task::Poll;

/// What an operation asks of the transport: tagged sends and receives of contiguous memory, of
/// a collector (a message kept up to a length) and of a stream port (a message produced or
/// consumed piece by piece), polls and cancels, and the pool of lead buffers.
pub(crate) trait Link {
    /// A request in flight.
    type Request;
    /// A connection to a peer.
    type Endpoint;
    /// A message taken by a matched probe.
    type Message;

    /// Sends `len` bytes at `buf`; `Ok(None)` when it completed at once.
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unchanged until the request completes.
    unsafe fn tag_send(
        &self,
        ep: &Self::Endpoint,
        buf: *const u8,
        len: usize,
        tag: u64,
        synchronous: bool,
    ) -> Result<Option<Self::Request>>;

    /// Sends the message `port`'s end produces; `Ok(None)` when it completed at once.
    ///
    /// # Safety
    /// `port` and its end must stay valid, and not otherwise borrowed, until the request
    /// completes.
    unsafe fn tag_send_stream(
        &self,
        ep: &Self::Endpoint,
        port: *mut StreamPort,
        tag: u64,
    ) -> Result<Option<Self::Request>>;

    /// Receives at most `len` bytes into `buf`.
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and otherwise untouched until the request completes.
    unsafe fn tag_recv(&self, buf: *mut u8, len: usize, m: TagMatch) -> Result<Self::Request>;

    /// Receives a message into `sink` (its first `keep` bytes; all of it is counted).
    ///
    /// # Safety
    /// `sink` must stay valid and untouched until the request completes.
    unsafe fn tag_recv_collect(&self, sink: *mut Collector, m: TagMatch) -> Result<Self::Request>;

    /// Receives a message into `port`'s end, piece by piece.
    ///
    /// # Safety
    /// As for [`Link::tag_send_stream`].
    unsafe fn tag_recv_stream(&self, port: *mut StreamPort, m: TagMatch) -> Result<Self::Request>;

    /// Receives a message taken by a matched probe into `sink`.
    ///
    /// # Safety
    /// As for [`Link::tag_recv_collect`].
    unsafe fn msg_recv_collect(
        &self,
        sink: *mut Collector,
        message: Self::Message,
    ) -> Result<Self::Request>;

    /// Ready once the send completed (the request is then released).
    fn poll_send(&self, req: &mut Option<Self::Request>) -> Poll<Result<()>>;
    /// Ready once the receive completed (the request is then released).
    fn poll_recv(&self, req: &mut Option<Self::Request>) -> Poll<Result<RecvInfo>>;
    /// True while the request is in flight.
    fn is_pending(&self, req: &Self::Request) -> bool;
    /// Asks for the request to end early (a receive then completes as cancelled).
    fn cancel(&self, req: &Self::Request);
    /// An empty buffer with room for a lead.
    fn lead_buffer(&self) -> Vec<u8>;
    /// Gives a lead buffer back for reuse.
    fn recycle_lead(&self, buffer: Vec<u8>);
}

impl Link for Worker {
    type Request = UcxRequest;
    type Endpoint = Endpoint;
    type Message = MessageHandle;

    unsafe fn tag_send(
        &self,
        ep: &Endpoint,
        buf: *const u8,
        len: usize,
        tag: u64,
        synchronous: bool,
    ) -> Result<Option<UcxRequest>> {
        // SAFETY: forwarded from the caller.
        unsafe { Worker::tag_send(self, ep, buf, len, tag, synchronous) }
    }

    unsafe fn tag_send_stream(
        &self,
        ep: &Endpoint,
        port: *mut StreamPort,
        tag: u64,
    ) -> Result<Option<UcxRequest>> {
        // SAFETY: forwarded from the caller.
        unsafe { Worker::tag_send_stream(self, ep, port, tag, false) }
    }

    unsafe fn tag_recv(&self, buf: *mut u8, len: usize, m: TagMatch) -> Result<UcxRequest> {
        // SAFETY: forwarded from the caller.
        unsafe { Worker::tag_recv(self, buf, len, m) }
    }

    unsafe fn tag_recv_collect(&self, sink: *mut Collector, m: TagMatch) -> Result<UcxRequest> {
        // SAFETY: forwarded from the caller.
        unsafe { Worker::tag_recv_collect(self, sink, m) }
    }

    unsafe fn tag_recv_stream(&self, port: *mut StreamPort, m: TagMatch) -> Result<UcxRequest> {
        // SAFETY: forwarded from the caller.
        unsafe { Worker::tag_recv_stream(self, port, m) }
    }

    unsafe fn msg_recv_collect(
        &self,
        sink: *mut Collector,
        message: MessageHandle,
    ) -> Result<UcxRequest> {
        // SAFETY: forwarded from the caller.
        unsafe { Worker::msg_recv_collect(self, sink, message) }
    }

    fn poll_send(&self, req: &mut Option<UcxRequest>) -> Poll<Result<()>> {
        Worker::poll_send(self, req)
    }

    fn poll_recv(&self, req: &mut Option<UcxRequest>) -> Poll<Result<RecvInfo>> {
        Worker::poll_recv(self, req)
    }

    fn is_pending(&self, req: &UcxRequest) -> bool {
        Worker::is_pending(self, req)
    }

    fn cancel(&self, req: &UcxRequest) {
        Worker::cancel(self, req)
    }

    fn lead_buffer(&self) -> Vec<u8> {
        Worker::lead_buffer(self)
    }

    fn recycle_lead(&self, buffer: Vec<u8>) {
        Worker::recycle_lead(self, buffer)
    }
}
