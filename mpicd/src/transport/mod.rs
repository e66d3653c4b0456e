//! The UCX transport: context, worker, endpoints and tag requests (UCP), kept in that order of
//! ownership. This is the only module that calls into `mpicd-ucx-sys`; every `unsafe` block here
//! says why it is sound. Everything above it speaks in [`Worker`], [`Endpoint`] and
//! [`UcxRequest`], never in raw UCX pointers.
//!
//! It moves bytes under 64-bit tags and knows nothing of datatypes, MPI semantics or the
//! formats of the messages it carries: the sizes it must respect for the layer above (how much
//! of a message to keep aside, how large a lead buffer is) come in [`WorkerSettings`]. The one
//! thing it reads in a tag is whether a message is a custom-typed lead ([`crate::tag`]), to raise
//! the alert of [`Worker::take_custom_alert`].
//!
//! Requests are polled: a pending operation is a [`UcxRequest`] that the engine tests after
//! progressing the worker. That keeps Rust closures out of UCX and lets the engine own the order
//! in which completions are observed. The completion callbacks are plain functions: one files
//! the token of the custom operation a request was posted for ([`notices`]), one raises a flag
//! when a user's contiguous receive took a custom-typed lead (the engine then turns it into a
//! drain without waiting for its test).
//!
//! # The surface
//!
//! Every call the layers above may make, one a line (`ep`: an [`Endpoint`], `m`: a
//! [`TagMatch`](crate::tag::TagMatch), `req`: a [`UcxRequest`]). `Ok(None)` from a send means it completed at once;
//! a receive always returns a request. Calls marked `unsafe` take memory that must stay valid
//! until the request completes.
//!
//! ```text
//! Worker::new(WorkerSettings) -> Worker                  context, worker, generic datatypes
//! Worker::address() -> Vec<u8>                           this worker's address, for the launcher
//! Worker::progress() -> bool                             one round of UCX progress
//! Worker::connect(address, rank, detect_failure) -> Endpoint
//! Worker::close(Endpoint, timeout)                       flush, forced after the timeout
//! Worker::failures.report(rank) / .take() -> ranks       peers lost (UCX or another detector)
//! Worker::mark_requests(Option<token>) -> previous       requests posted from now on notify token
//! notices::take_into(&mut tokens) -> nothing dropped     tokens of completed marked requests
//! unsafe Worker::tag_send(ep, buf, len, tag, synchronous) -> Option<req>
//! unsafe Worker::tag_send_stream(ep, *StreamPort, tag, synchronous) -> Option<req>
//! unsafe Worker::tag_recv(buf, len, m) -> req
//! unsafe Worker::tag_recv_contiguous(buf, len, m) -> (req, RecvTarget)
//! unsafe Worker::tag_recv_through(*StreamPort, len, Option<MessageHandle>, m) -> (req, RecvTarget)
//! unsafe Worker::tag_recv_collect(*Collector, m) -> req
//! unsafe Worker::tag_recv_stream(*StreamPort, m) -> req
//! Worker::probe(m, remove) -> Option<(RecvInfo, Option<MessageHandle>)>
//! unsafe Worker::msg_recv(buf, len, MessageHandle) -> req
//! unsafe Worker::msg_recv_collect(*Collector, MessageHandle) -> req
//! Worker::is_pending(&req) -> bool
//! Worker::poll_send(&mut Option<req>) -> Poll<Result<()>>      releases req when done
//! Worker::poll_recv(&mut Option<req>) -> Poll<Result<RecvInfo>> releases req when done
//! Worker::cancel(&req)
//! unsafe Worker::direct_target(buf, len) -> RecvTarget   target of a matched receive
//! RecvTarget::lead_header(length) -> Option<Vec<u8>>     first bytes of a custom-typed lead
//! Worker::take_custom_alert() -> bool                    a contiguous receive took a lead
//! Worker::recycle(&mut RecvTarget)                       after the receive is settled
//! Worker::lead_buffer() -> Vec<u8> / recycle_lead(Vec<u8>)
//! StreamPort(*mut dyn StreamEnd) / StreamPort::detach(port, length) -> DetachedPort
//! OwnedPort::new(Box<dyn StreamEnd>) / .port() -> *StreamPort / .detach() -> DetachedPort
//! unsafe Worker::mem_map(addr, len) -> MemRegion / mem_unmap(MemRegion)
//! Worker::mem_allocate(len) -> (MemRegion, addr)       registered memory UCX allocates
//! Worker::rkey_pack(&MemRegion) -> Vec<u8> / rkey_unpack(ep, bytes) -> RemoteKey
//! unsafe Worker::put(ep, buf, len, remote, rkey) / get(...) -> Option<req>
//! unsafe Worker::atomic(ep, AtomicOp, width, value, reply, remote, rkey) -> Option<req>
//! Worker::flush_endpoint(ep) / flush_worker() -> Option<req>
//! ```
//!
//! The files, each importing only those listed before it: [`collect`] (receive buffers as UCX's
//! generic datatypes see them), [`stream`] (messages packed and unpacked through callbacks),
//! [`failures`] (the log of peers lost, and UCX's endpoint error callback), [`notices`]
//! (completions of custom operations' requests), [`worker`] (context and worker, UCX settings,
//! progress, request parameters, spare buffers), [`request`] (testing and cancelling requests),
//! [`endpoint`] (connecting and closing), [`tagged`] (tag sends, receives and probes), [`rma`] (registered memory, remote keys,
//! puts, gets, atomics and flushes).

mod collect;
mod endpoint;
mod failures;
pub(crate) mod notices;
mod request;
mod rma;
mod stream;
mod tagged;
mod worker;

pub(crate) use collect::{Collector, RecvTarget};
pub(crate) use endpoint::Endpoint;
pub(crate) use failures::take_copy_failure;
pub(crate) use request::{RecvInfo, UcxRequest};
pub(crate) use rma::{AtomicOp, MemRegion, RemoteKey};
pub(crate) use stream::{OwnedPort, StreamEnd, StreamPort};
pub(crate) use tagged::MessageHandle;
pub(crate) use worker::{Armed, Worker, WorkerSettings};
