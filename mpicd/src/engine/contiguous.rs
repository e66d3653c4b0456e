//! Contiguous operations: sends and receives of bytes, probes and matched messages, and the
//! drain that replaces a contiguous receive which took a custom-typed message.

use super::{Engine, Matched, Op, OpId, Posted, Route};
use crate::error::{Error, Result};
use crate::ops::RecvOp;
use crate::ops::TypedEnd;
use crate::plan::derived::TypedBuf;
use crate::status::Status;
use crate::tag::{MessageKind, UserTag};
use crate::transport::{
    Endpoint, MessageHandle, OwnedPort, RecvInfo, RecvTarget, UcxRequest, Worker,
};
use crate::wire::WirePlan;
use std::sync::OnceLock;

/// The byte type, made once: a long node-local contiguous send streams as a run of it.
fn byte_type() -> &'static crate::plan::derived::Datatype {
    static BYTE: OnceLock<crate::plan::derived::Datatype> = OnceLock::new();
    BYTE.get_or_init(|| crate::plan::derived::Datatype::of(crate::datatype::ElementType::Byte))
}
use std::task::Poll;

impl Engine {
    /// Starts a contiguous point-to-point send (it may complete at once), through the stream
    /// datatype from `MPICD_LOCAL_STREAM` bytes on this node.
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unchanged until the operation completes.
    pub(crate) unsafe fn post_send(
        &mut self,
        route: &Route,
        dest: u32,
        tag: i32,
        buf: *const u8,
        len: usize,
        synchronous: bool,
    ) -> Result<Posted> {
        if self.net.streams_contiguous(dest, len) {
            // Through UCX's stream datatype (see `config::LOCAL_STREAM`): the bytes as one dense
            // run of a derived-typed send, which packs them with one copy per fragment.
            let bytes = TypedBuf::new(buf, len as u64, byte_type());
            // SAFETY: forwarded from the caller: the run is the buffer.
            return unsafe { self.post_send_typed(route, dest, tag, bytes, synchronous) };
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.post_coll_send(route, dest, tag, buf, len, synchronous) }
    }

    /// [`Engine::post_send`] of a collective: never through the stream datatype. A
    /// collective's members send and receive at once, each core busy with its own copies,
    /// where the receiver's one copy (cma) beats the stream's two (2 ranks, allgather and
    /// alltoall of 2-4 MiB: 0.97-1.00x Open MPI's time against 0.77-0.78).
    ///
    /// # Safety
    /// As for [`Engine::post_send`].
    pub(crate) unsafe fn post_coll_send(
        &mut self,
        route: &Route,
        dest: u32,
        tag: i32,
        buf: *const u8,
        len: usize,
        synchronous: bool,
    ) -> Result<Posted> {
        // SAFETY: forwarded from the caller.
        self.post_user_send(
            route,
            dest,
            tag,
            None,
            len as u64,
            |worker, ep, bits| unsafe { worker.tag_send(ep, buf, len, bits, synchronous) },
        )
    }

    /// Starts a send of a derived-typed buffer, packed as UCX asks for its fragments: one
    /// contiguous-kind message, so any receive of the same type signature matches it.
    ///
    /// # Safety
    /// The bytes of `buf`'s type map must stay valid and unchanged until the send completes.
    pub(crate) unsafe fn post_send_typed(
        &mut self,
        route: &Route,
        dest: u32,
        tag: i32,
        buf: TypedBuf,
        synchronous: bool,
    ) -> Result<Posted> {
        let bytes = buf.packed_size();
        let mut port = OwnedPort::new(Box::new(TypedEnd(buf)));
        let at = port.port();
        // SAFETY: the port and its end live in the operation until the request completes, or
        // are detached and stranded with it (`Engine::handle_failures`).
        self.post_user_send(
            route,
            dest,
            tag,
            Some(port),
            bytes,
            |worker, ep, bits| unsafe { worker.tag_send_stream(ep, at, bits, synchronous) },
        )
    }

    /// Sends a user-level contiguous-kind message of `bytes` to world rank `dest`: `send` posts
    /// it on the peer's endpoint under the tag's bits; the operation keeps `port` until it
    /// completes.
    fn post_user_send(
        &mut self,
        route: &Route,
        dest: u32,
        tag: i32,
        port: Option<OwnedPort>,
        bytes: u64,
        send: impl FnOnce(&Worker, &Endpoint, u64) -> Result<Option<UcxRequest>>,
    ) -> Result<Posted> {
        self.check_revoked(route)?;
        let bits = UserTag {
            kind: MessageKind::Contiguous,
            context: route.context,
            source: self.net.tag_source(Some(dest)),
            tag,
        }
        .encode();
        self.net.connect(dest)?;
        let ep = self
            .net
            .existing_endpoint(dest)
            .ok_or(Error::ProcFailed { rank: dest as i32 })?;
        let sent =
            send(&self.net.worker, ep, bits).map_err(|e| self.net.name_lost_peer(Some(dest), e));
        let sent = sent?;
        crate::tool::pvar::MESSAGES_SENT.add(1);
        crate::tool::pvar::BYTES_SENT.add(bytes);
        Ok(match sent {
            Some(r) => Posted::Pending(self.table.insert(Op::Send {
                req: Some(r),
                peer: dest,
                port,
            })),
            None => Posted::Done(Ok(Status::empty())),
        })
    }

    /// Posts a receive into a derived-typed buffer, placed as its fragments arrive. It settles
    /// like a contiguous receive (truncation, a custom-typed message drained and refused).
    ///
    /// # Safety
    /// The bytes of `buf`'s type map must stay valid and untouched until the receive completes.
    pub(crate) unsafe fn post_recv_typed(
        &mut self,
        route: &Route,
        source: Option<u32>,
        tag: Option<i32>,
        buf: TypedBuf,
    ) -> Result<Posted> {
        self.check_revoked(route)?;
        let capacity = usize::try_from(buf.packed_size()).map_err(|_| Error::InvalidCount(-1))?;
        if let Some(peer) = source {
            self.connect_sender(peer)?;
        }
        let m = UserTag::matcher(route.context, source, tag);
        let port = OwnedPort::new(Box::new(TypedEnd(buf)));
        let (req, target) = self.net.worker.tag_recv_through(port, capacity, None, m)?;
        let id = self.table.insert(Op::Recv {
            req: Some(req),
            target,
            capacity,
            route: route.clone(),
            peer: source,
        });
        if let Some(peer) = source {
            self.settle_lost_sender(peer, id);
        }
        Ok(Posted::Pending(id))
    }

    /// Posts a contiguous receive. It matches messages of both kinds (MPI matches on
    /// communicator, source and tag only); one that takes a custom-typed message drains it and
    /// fails with a datatype mismatch (see [`Engine::settle_contiguous`]).
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and untouched until the operation completes.
    pub(crate) unsafe fn post_recv(
        &mut self,
        route: &Route,
        source: Option<u32>,
        tag: Option<i32>,
        buf: *mut u8,
        len: usize,
    ) -> Result<Posted> {
        self.check_revoked(route)?;
        // SAFETY: forwarded from the caller.
        unsafe { self.post_recv_on_any(route, source, tag, buf, len) }
    }

    /// [`Engine::post_recv`] on any context, revoked or not (the drains of revoked contexts).
    ///
    /// # Safety
    /// As [`Engine::post_recv`].
    pub(super) unsafe fn post_recv_on_any(
        &mut self,
        route: &Route,
        source: Option<u32>,
        tag: Option<i32>,
        buf: *mut u8,
        len: usize,
    ) -> Result<Posted> {
        if let Some(peer) = source {
            self.connect_sender(peer)?;
        }
        let m = UserTag::matcher(route.context, source, tag);
        // SAFETY: forwarded from the caller; the target is kept in the op until the request
        // completes.
        let (req, target) = unsafe { self.net.worker.tag_recv_contiguous(buf, len, m) }?;
        let id = self.table.insert(Op::Recv {
            req: Some(req),
            target,
            capacity: len,
            route: route.clone(),
            peer: source,
        });
        if let Some(peer) = source {
            self.settle_lost_sender(peer, id);
        }
        Ok(Posted::Pending(id))
    }

    /// Looks for a matching message without receiving it (probe) or takes it (matched probe).
    pub(crate) fn probe(
        &mut self,
        route: &Route,
        source: Option<u32>,
        tag: Option<i32>,
        remove: bool,
    ) -> Result<Option<(Status, Option<Matched>)>> {
        self.check_revoked(route)?;
        self.handle_failures();
        self.net.worker.progress();
        let m = UserTag::matcher(route.context, source, tag);
        let Some((info, handle)) = self.net.worker.probe(m, remove) else {
            if let Some(peer) = source.filter(|&p| self.net.has_failed(p)) {
                return Err(Error::ProcFailed { rank: peer as i32 });
            }
            return Ok(None);
        };
        let status = Status::from_tag(info.sender_tag, &route.group, None)?;
        let status = match status.kind {
            MessageKind::Contiguous => Status {
                bytes: Some(info.length as u64),
                ..status
            },
            MessageKind::Custom => status,
        };
        let matched = match handle {
            None => None,
            Some(h) => Some(self.match_message(route, status.kind, info, h)?),
        };
        Ok(Some((status, matched)))
    }

    fn match_message(
        &mut self,
        route: &Route,
        kind: MessageKind,
        info: RecvInfo,
        handle: MessageHandle,
    ) -> Result<Matched> {
        Ok(match kind {
            MessageKind::Contiguous => Matched::Contiguous {
                handle,
                info,
                route: route.clone(),
            },
            MessageKind::Custom => Matched::Custom(self.start_custom(None, |ctx| {
                RecvOp::from_message(ctx, route, info, handle)
                    .map(|op| Op::CustomRecv(Box::new(op)))
            })?),
        })
    }

    /// Receives a matched contiguous message into `buf..buf+len`, or into `typed` (a
    /// derived-typed buffer of `len` bytes).
    ///
    /// # Safety
    /// As for [`Engine::post_recv`].
    pub(crate) unsafe fn post_mrecv(
        &mut self,
        matched: Matched,
        buf: *mut u8,
        len: usize,
        typed: Option<TypedBuf>,
    ) -> Result<OpId> {
        match matched {
            Matched::Contiguous {
                handle,
                info,
                route,
            } => {
                let peer = Status::from_tag(info.sender_tag, &route.group, None)?.source;
                let peer = route.group.world_rank(peer).ok();
                let (req, target) = match typed {
                    None => {
                        // SAFETY: forwarded from the caller.
                        let req = unsafe { self.net.worker.msg_recv(buf, len, handle) }?;
                        // SAFETY: forwarded from the caller.
                        (req, unsafe { self.net.worker.direct_target(buf, len) })
                    }
                    Some(buf) => {
                        let port = OwnedPort::new(Box::new(TypedEnd(buf)));
                        let m = UserTag::matcher(route.context, None, None);
                        self.net
                            .worker
                            .tag_recv_through(port, len, Some(handle), m)?
                    }
                };
                Ok(self.table.insert(Op::Recv {
                    req: Some(req),
                    target,
                    capacity: len,
                    route,
                    peer,
                }))
            }
            Matched::Custom(id) => {
                // Drained in the background, so that the sender completes.
                self.discard_matched(id);
                Err(Error::DatatypeMismatch {
                    message: MessageKind::Custom,
                })
            }
        }
    }

    /// Drops a matched message nobody will receive: its data is drained (so the sender
    /// completes) and thrown away.
    pub(crate) fn discard(&mut self, matched: Matched) {
        match matched {
            Matched::Custom(id) => self.discard_matched(id),
            Matched::Contiguous { handle, .. } => {
                let mut sink = Box::new(crate::transport::Collector::default());
                // SAFETY: the collector is kept alive until the drain completes below.
                let Ok(req) = (unsafe { self.net.worker.msg_recv_collect(&mut *sink, handle) })
                else {
                    return;
                };
                let mut req = Some(req);
                while self.net.worker.poll_recv(&mut req).is_pending() {
                    self.net.worker.progress();
                }
            }
        }
    }

    /// Settles every completed contiguous receive now, without waiting for its test: one of
    /// them took a custom-typed lead (the transport raised its alert), and the drain that its
    /// sender needs to complete must start even while this process waits on something else
    /// (MPI's progress rule). Runs only after such a mismatch, so the scan costs nothing
    /// otherwise.
    pub(super) fn settle_custom_leads(&mut self) {
        for id in self.table.ids() {
            let done = match self.table.get(id) {
                Some(Op::Recv { req: Some(r), .. }) => !self.net.worker.is_pending(r),
                _ => false,
            };
            if !done {
                continue;
            }
            // (None: turned into a drain, already back in its slot.)
            if let Some(result) = self.poll_contiguous(id) {
                self.table.put_back(id, Op::Finished(result));
            }
        }
    }

    /// Polls the contiguous receive in slot `id`: once complete, takes it out of its slot and
    /// gives its outcome; `None` if it is still pending (left in place) or became a drain (put
    /// back in its slot).
    pub(super) fn poll_contiguous(&mut self, id: OpId) -> Option<Result<Status>> {
        let Some(Op::Recv { req, .. }) = self.table.get_mut(id) else {
            return None;
        };
        let (outcome, info) = match self.net.worker.poll_recv_matched(req) {
            Poll::Pending => return None,
            Poll::Ready(r) => r,
        };
        let Some(Op::Recv {
            mut target,
            capacity,
            route,
            peer,
            ..
        }) = self.table.take(id)
        else {
            return Some(Err(Error::InvalidRequest));
        };
        let settled =
            self.settle_contiguous(id, (outcome, info), &mut target, capacity, &route, peer);
        match settled {
            Settled::Done(result) => Some(result),
            Settled::Drain(drain) => {
                self.table.put_back(id, Op::CustomRecv(drain));
                self.custom_active.push(id);
                self.noticed.push(id.token());
                None
            }
        }
    }

    /// The outcome of a completed contiguous receive, or the drain that replaces it when it
    /// took a custom-typed message.
    ///
    /// A custom message is a lead followed by private messages that the sender sends
    /// synchronously: unless they are received, the sender never completes. The lead's fixed
    /// header names them (their first sequence number and how many there are), and the
    /// transport guarantees that a contiguous receive holds that header whatever its size (see
    /// [`crate::transport::Worker::tag_recv_contiguous`]). So the receive is turned into a drain of those private
    /// messages, which completes with [`Error::DatatypeMismatch`] once the last has arrived.
    /// Draining before reporting, rather than in the background, is what a custom receive that
    /// fails does too, and it bounds what one failed receive leaves behind.
    fn settle_contiguous(
        &mut self,
        id: OpId,
        (outcome, info): (Result<()>, RecvInfo),
        target: &mut RecvTarget,
        capacity: usize,
        route: &Route,
        peer: Option<u32>,
    ) -> Settled {
        // A contiguous message longer than the buffer, as a failure the status still reports.
        let truncated = || {
            let e = Error::truncated(info.length as u64, capacity as u64);
            match Status::from_tag(info.sender_tag, &route.group, None) {
                Ok(s) => e.matched(s.envelope()),
                Err(_) => e,
            }
        };
        match outcome {
            Ok(()) => {}
            Err(e) => {
                self.net.worker.recycle(target);
                return Settled::Done(match e {
                    Error::Truncated { .. } => Err(truncated()),
                    Error::Cancelled => match self.net.failed_peer(peer) {
                        Some(e) => Err(e),
                        None if self.revocations.covers(route.context) => Err(Error::Revoked),
                        None => Ok(Status::cancelled()),
                    },
                    e => Err(e),
                });
            }
        }
        let header = match UserTag::kind_of(info.sender_tag) {
            Some(MessageKind::Custom) => Some(target.lead_header(info.length)),
            _ => None,
        };
        self.net.worker.recycle(target);
        let Some(header) = header else {
            return Settled::Done(if info.length > capacity {
                // Received through the transport's sink, which takes any length.
                Err(truncated())
            } else {
                crate::tool::pvar::MESSAGES_RECEIVED.add(1);
                crate::tool::pvar::BYTES_RECEIVED.add(info.length as u64);
                Status::from_tag(info.sender_tag, &route.group, Some(info.length as u64))
            });
        };
        let mismatch = Error::DatatypeMismatch {
            message: MessageKind::Custom,
        };
        let status = Status::from_tag(info.sender_tag, &route.group, None);
        let source = status
            .as_ref()
            .ok()
            .and_then(|s| route.group.world_rank(s.source).ok());
        let plan = header.and_then(|h| WirePlan::decode_header(&h).ok());
        match (status, source, plan) {
            (Ok(status), Some(source), Some((plan, _))) if plan.private_messages() > 0 => {
                let drain = self.net.on_behalf(id, Some(source), |ctx| {
                    RecvOp::drain(ctx, route, source, status.tag, plan, mismatch)
                });
                Settled::Drain(Box::new(drain))
            }
            // Nothing follows the lead, or its header is unreadable (then
            // there is nothing this process could drain).
            _ => Settled::Done(Err(mismatch)),
        }
    }
}

/// What a completed contiguous receive comes to.
enum Settled {
    Done(Result<Status>),
    /// It took a custom-typed message: this drain of that message's private messages takes
    /// its place and reports the datatype mismatch.
    Drain(Box<RecvOp>),
}
