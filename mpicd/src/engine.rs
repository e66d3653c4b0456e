//! The engine: one UCX worker, the peers (endpoints made on first use), and the table of
//! operations in flight. It posts operations, progresses the worker, and turns finished UCX
//! requests into MPI completions. Argument checking happens above it, in [`crate::comm`].
//!
//! The engine lives behind one mutex ([`Shared`]); every public call takes the lock for a short
//! step (post, or progress and test) and releases it, so several threads may use the runtime.

use crate::bootstrap::Bootstrap;
use crate::custom::recv::RecvOp as CustomRecvOp;
use crate::custom::send::SendOp as CustomSendOp;
use crate::custom::wire::Reach;
use crate::custom::wire::{CustomConfig, WirePlan};
use crate::custom::{PackState, Shape, UnpackState};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::liveness::{Identity, Watch};
use crate::status::Status;
use crate::tag::{MessageKind, UserTag};
use crate::transport::{Endpoint, MessageHandle, RecvInfo, RecvTarget, UcxRequest, Worker};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::Duration;

const ADDRESS_KEY: &str = "mpicd.ucx.address";
const IDENTITY_KEY: &str = "mpicd.identity";
/// Custom ops are polled when one of their UCX requests completed (see [`crate::notices`]),
/// when they start and when they are aborted; every custom op is polled once in this many
/// progress calls besides, a backstop that costs little and keeps any op from waiting on a
/// notice that never comes.
const FULL_CUSTOM_POLL: u32 = 256;

/// Where a message goes or comes from: a communicator's context and group.
#[derive(Clone)]
pub(crate) struct Route {
    pub context: u32,
    pub group: Arc<Group>,
}

/// The identity of an operation in the engine's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct OpId {
    index: u32,
    generation: u32,
}

impl OpId {
    /// The value that marks this operation's UCX requests (see [`crate::notices`]).
    fn token(self) -> usize {
        ((self.index as usize) << 32) | self.generation as usize
    }

    fn from_token(token: usize) -> OpId {
        OpId {
            index: (token >> 32) as u32,
            generation: token as u32,
        }
    }
}

/// What polling one custom op found.
enum CustomPoll {
    /// Still in flight.
    Pending,
    /// Done: its outcome waits in its slot for a test.
    Finished,
    /// Taken out of its slot by a caller further up (its notice is kept for later).
    Busy,
    /// No such op any more (a notice that outlived it).
    Gone,
}

/// One operation in flight.
pub(crate) enum Op {
    Send {
        req: Option<UcxRequest>,
        peer: u32,
    },
    Recv {
        // The request first: it is released before the target it writes to.
        req: Option<UcxRequest>,
        target: RecvTarget,
        capacity: usize,
        route: Route,
        peer: Option<u32>,
    },
    CustomSend(Box<CustomSendOp>),
    CustomRecv(Box<CustomRecvOp>),
    /// A custom-typed operation that finished during progress, its outcome kept for the test
    /// that reports it (its state is already freed).
    Finished(Result<Status>),
}

impl Op {
    /// The world rank this operation depends on, if it names one.
    fn peer(&self) -> Option<u32> {
        match self {
            Op::Send { peer, .. } => Some(*peer),
            Op::Recv { peer, .. } => *peer,
            Op::CustomSend(op) => Some(op.peer()),
            Op::CustomRecv(op) => op.peer(),
            Op::Finished(_) => None,
        }
    }

    fn is_receive(&self) -> bool {
        matches!(self, Op::Recv { .. } | Op::CustomRecv(_))
    }
}

/// A send to a dead peer that UCX may never complete (it cannot cancel sends, and endpoints to
/// this node's processes have no error handling), with the memory it reads: kept here, not
/// awaited, so that the operation fails at once; released when UCX is done with it, leaked if
/// it never is.
pub(crate) struct Stranded {
    req: UcxRequest,
    keep: std::mem::ManuallyDrop<Box<dyn std::any::Any + Send>>,
}

impl Stranded {
    pub(crate) fn new(req: UcxRequest, keep: Box<dyn std::any::Any + Send>) -> Stranded {
        Stranded {
            req,
            keep: std::mem::ManuallyDrop::new(keep),
        }
    }
}

struct Slot {
    generation: u32,
    op: Option<Op>,
}

/// A process-to-process connection, made when first needed.
struct Peer {
    endpoint: Option<Endpoint>,
    /// The peer's pid when it runs on this node (watched by [`crate::liveness`]).
    local_pid: Option<u32>,
    failed: bool,
}

/// The engine state.
pub(crate) struct Engine {
    // Field order matters: operations and endpoints are released before the worker.
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Drains of discarded matched messages, finished in the background.
    orphans: Vec<OpId>,
    /// Custom-typed operations in flight.
    custom_active: Vec<OpId>,
    /// Tokens of the custom ops to poll at the next progress call: filed by UCX when one of
    /// their requests completed, or added when they started or were aborted.
    noticed: Vec<usize>,
    /// Progress calls, for the periodic poll of every custom op.
    progress_calls: u32,
    stranded: Vec<Stranded>,
    peers: Vec<Peer>,
    pub(crate) worker: Worker,
    boot: Bootstrap,
    pub(crate) rank: u32,
    pub(crate) size: u32,
    next_seq: u64,
    pub(crate) custom: CustomConfig,
    next_context: u32,
    identity: Identity,
    watch: Watch,
}

impl Engine {
    /// Starts the transport and publishes this process's address through the launcher.
    pub(crate) fn start() -> Result<Engine> {
        let custom = CustomConfig::from_env()?;
        let peer_errors = std::env::var("MPICD_PEER_ERRORS")
            .map(|v| v != "0")
            .unwrap_or(true);
        let mut boot = Bootstrap::init()?;
        if boot.size() > crate::tag::MAX_PROCESSES {
            return Err(Error::Launch(format!(
                "{} processes exceed the limit of {}",
                boot.size(),
                crate::tag::MAX_PROCESSES
            )));
        }
        let worker = Worker::new(peer_errors)?;
        boot.put(ADDRESS_KEY, &worker.address()?)?;
        boot.put(IDENTITY_KEY, &Identity::current().encode())?;
        boot.fence()?;
        let (rank, size) = (boot.rank(), boot.size());
        Ok(Engine {
            slots: Vec::new(),
            free: Vec::new(),
            orphans: Vec::new(),
            custom_active: Vec::new(),
            noticed: Vec::new(),
            progress_calls: 0,
            stranded: Vec::new(),
            peers: (0..size)
                .map(|_| Peer {
                    endpoint: None,
                    local_pid: None,
                    failed: false,
                })
                .collect(),
            worker,
            boot,
            rank,
            size,
            next_seq: 0,
            custom,
            next_context: crate::comm::FIRST_FREE_CONTEXT,
            identity: Identity::current(),
            watch: Watch::new(),
        })
    }

    /// Connects to world rank `peer` unless already connected (endpoints are made on first use).
    pub(crate) fn connect(&mut self, peer: u32) -> Result<()> {
        let p = self.peers.get(peer as usize).ok_or(Error::InvalidRank {
            rank: peer as i32,
            size: self.size as i32,
        })?;
        if p.failed {
            return Err(Error::ProcFailed { rank: peer as i32 });
        }
        if p.endpoint.is_none() {
            let address = self.boot.get(peer, ADDRESS_KEY)?;
            let identity =
                Identity::decode(&self.boot.get(peer, IDENTITY_KEY)?).ok_or_else(|| {
                    Error::Launch(format!("rank {peer} published a malformed identity"))
                })?;
            let local_pid = (identity.node == self.identity.node).then_some(identity.pid);
            let ep = self.worker.connect(&address, peer, local_pid.is_none())?;
            let p = &mut self.peers[peer as usize];
            p.endpoint = Some(ep);
            p.local_pid = local_pid;
        }
        Ok(())
    }

    /// The endpoint to `peer` if one was made and the peer is alive.
    pub(crate) fn existing_endpoint(&self, peer: u32) -> Option<&Endpoint> {
        self.peers
            .get(peer as usize)
            .filter(|p| !p.failed)
            .and_then(|p| p.endpoint.as_ref())
    }

    /// The pid of connected world rank `peer` if it runs on this node.
    pub(crate) fn local_pid(&self, peer: u32) -> Option<u32> {
        self.peers.get(peer as usize).and_then(|p| p.local_pid)
    }

    /// Where world rank `peer` (connected) runs, for the wire plan of a custom-typed message:
    /// on this node (unless node-local plans are turned off), or elsewhere.
    pub(crate) fn reach(&self, peer: u32) -> Reach {
        match self.local_pid(peer) {
            Some(_) if self.custom.node_local => Reach::NodeLocal,
            _ => Reach::Remote,
        }
    }

    /// Keeps a send to a dead peer alive until UCX lets go of it (see [`Stranded`]).
    pub(crate) fn strand(&mut self, stranded: Stranded) {
        self.stranded.push(stranded);
    }

    /// Releases stranded sends that UCX has completed.
    fn release_stranded(&mut self) {
        let worker = &self.worker;
        self.stranded.retain_mut(|s| {
            let pending = worker.is_pending(&s.req);
            if !pending {
                // SAFETY: UCX is done with the request, so nothing reads this memory any more;
                // it is dropped once, as the entry is removed.
                unsafe { std::mem::ManuallyDrop::drop(&mut s.keep) };
            }
            pending
        });
    }

    /// Reserves `n` private sequence numbers.
    pub(crate) fn reserve_sequence(&mut self, n: u64) -> u64 {
        let base = self.next_seq;
        self.next_seq += n;
        base
    }

    /// The next unused context id on this process (agreed on collectively by `comm`).
    pub(crate) fn next_context(&self) -> u32 {
        self.next_context
    }

    /// Marks contexts below `next` as used.
    pub(crate) fn claim_contexts(&mut self, next: u32) -> Result<()> {
        if next >= crate::tag::MAX_CONTEXTS {
            return Err(Error::InvalidCommunicator);
        }
        self.next_context = self.next_context.max(next);
        Ok(())
    }

    fn insert(&mut self, op: Op) -> OpId {
        let id = self.vacant();
        self.occupy(id, op);
        id
    }

    /// Reserves an empty slot: the identity of an operation about to start.
    fn vacant(&mut self) -> OpId {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    op: None,
                });
                (self.slots.len() - 1) as u32
            }
        };
        OpId {
            index,
            generation: self.slots[index as usize].generation,
        }
    }

    /// Puts a new operation in the slot reserved for it.
    fn occupy(&mut self, id: OpId, op: Op) {
        let custom = matches!(op, Op::CustomSend(_) | Op::CustomRecv(_));
        self.slots[id.index as usize].op = Some(op);
        if custom {
            self.custom_active.push(id);
            self.noticed.push(id.token());
        }
    }

    /// Starts a custom op in a reserved slot, with the UCX requests `start` posts already
    /// marked as its own (a request may complete before the op is in its slot: its notice
    /// waits). The slot is released if the start fails.
    fn start_custom(&mut self, start: impl FnOnce(&mut Engine) -> Result<Op>) -> Result<OpId> {
        let id = self.vacant();
        match self.on_behalf(id, start) {
            Ok(op) => {
                self.occupy(id, op);
                Ok(id)
            }
            Err(e) => {
                self.retire(id);
                Err(e)
            }
        }
    }

    /// The token of the operation in slot `index`.
    fn slot_token(&self, index: usize) -> usize {
        OpId {
            index: index as u32,
            generation: self.slots[index].generation,
        }
        .token()
    }

    /// Runs `f` with the UCX requests it posts marked as custom op `id`'s, so that their
    /// completions get `id` polled.
    fn on_behalf<R>(&mut self, id: OpId, f: impl FnOnce(&mut Engine) -> R) -> R {
        let outer = self.worker.mark_requests(Some(id.token()));
        let r = f(self);
        self.worker.mark_requests(outer);
        r
    }

    fn take(&mut self, id: OpId) -> Result<Op> {
        let slot = self
            .slots
            .get_mut(id.index as usize)
            .ok_or(Error::InvalidRequest)?;
        if slot.generation != id.generation {
            return Err(Error::InvalidRequest);
        }
        slot.op.take().ok_or(Error::InvalidRequest)
    }

    fn put_back(&mut self, id: OpId, op: Op) {
        self.slots[id.index as usize].op = Some(op);
    }

    fn retire(&mut self, id: OpId) {
        let slot = &mut self.slots[id.index as usize];
        slot.op = None;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(id.index);
    }

    /// Starts a contiguous send (it may complete at once).
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
        let bits = UserTag {
            kind: MessageKind::Contiguous,
            context: route.context,
            source: self.rank,
            tag,
        }
        .encode();
        self.connect(dest)?;
        let ep = self
            .existing_endpoint(dest)
            .ok_or(Error::ProcFailed { rank: dest as i32 })?;
        // SAFETY: forwarded from the caller.
        let req = unsafe { self.worker.tag_send(ep, buf, len, bits, synchronous) }?;
        Ok(match req {
            Some(r) => Posted::Pending(self.insert(Op::Send {
                req: Some(r),
                peer: dest,
            })),
            None => Posted::Done(Ok(Status::empty())),
        })
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
        if let Some(peer) = source {
            // Connecting now lets a dead sender be noticed while we wait.
            self.connect(peer)?;
        }
        let m = UserTag::matcher(route.context, source, tag);
        // SAFETY: forwarded from the caller; the target is kept in the op until the request
        // completes.
        let (req, target) = unsafe { self.worker.tag_recv_contiguous(buf, len, m) }?;
        Ok(Posted::Pending(self.insert(Op::Recv {
            req: Some(req),
            target,
            capacity: len,
            route: route.clone(),
            peer: source,
        })))
    }

    /// Starts a custom-typed send.
    pub(crate) fn post_custom_send(
        &mut self,
        route: &Route,
        dest: u32,
        tag: i32,
        state: Box<dyn PackState>,
        synchronous: bool,
    ) -> Result<OpId> {
        self.start_custom(|e| {
            CustomSendOp::start(e, route, dest, tag, state, synchronous)
                .map(|op| Op::CustomSend(Box::new(op)))
        })
    }

    /// Posts a custom-typed receive. It matches messages of both kinds; one that takes a
    /// contiguous message fails with a datatype mismatch.
    pub(crate) fn post_custom_recv(
        &mut self,
        route: &Route,
        source: Option<u32>,
        tag: Option<i32>,
        state: Box<dyn UnpackState>,
    ) -> Result<OpId> {
        if let Some(peer) = source {
            self.connect(peer)?;
        }
        let m = UserTag::matcher(route.context, source, tag);
        self.start_custom(|e| {
            CustomRecvOp::post(e, route, source, m, Some(state))
                .map(|op| Op::CustomRecv(Box::new(op)))
        })
    }

    /// Looks for a matching message without receiving it (probe) or takes it (matched probe).
    pub(crate) fn probe(
        &mut self,
        route: &Route,
        source: Option<u32>,
        tag: Option<i32>,
        remove: bool,
    ) -> Result<Option<(Status, Option<Matched>)>> {
        self.handle_failures();
        self.worker.progress();
        let m = UserTag::matcher(route.context, source, tag);
        let Some((info, handle)) = self.worker.probe(m, remove) else {
            if let Some(peer) = source {
                if self.peers.get(peer as usize).is_some_and(|p| p.failed) {
                    return Err(Error::ProcFailed { rank: peer as i32 });
                }
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
            MessageKind::Custom => Matched::Custom(self.start_custom(|e| {
                CustomRecvOp::from_message(e, route, info, handle)
                    .map(|op| Op::CustomRecv(Box::new(op)))
            })?),
        })
    }

    /// Receives a matched contiguous message into `buf`.
    ///
    /// # Safety
    /// As for [`Engine::post_recv`].
    pub(crate) unsafe fn post_mrecv(
        &mut self,
        matched: Matched,
        buf: *mut u8,
        len: usize,
    ) -> Result<OpId> {
        match matched {
            Matched::Contiguous {
                handle,
                info,
                route,
            } => {
                let peer = Status::from_tag(info.sender_tag, &route.group, None)?.source;
                // SAFETY: forwarded from the caller.
                let req = unsafe { self.worker.msg_recv(buf, len, handle) }?;
                let peer = route.group.world_rank(peer).ok();
                Ok(self.insert(Op::Recv {
                    req: Some(req),
                    // SAFETY: forwarded from the caller.
                    target: unsafe { Worker::direct_target(buf, len) },
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

    /// Receives a matched custom-typed message through `state`.
    pub(crate) fn post_custom_mrecv(
        &mut self,
        matched: Matched,
        state: Box<dyn UnpackState>,
    ) -> Result<OpId> {
        match matched {
            Matched::Custom(id) => {
                let mut op = self.take(id)?;
                if let Op::CustomRecv(r) = &mut op {
                    self.on_behalf(id, |e| r.attach(e, state));
                }
                self.put_back(id, op);
                Ok(id)
            }
            matched @ Matched::Contiguous { .. } => {
                self.discard(matched);
                Err(Error::DatatypeMismatch {
                    message: MessageKind::Contiguous,
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
                let Ok(req) = (unsafe { self.worker.msg_recv_collect(&mut *sink, handle) }) else {
                    return;
                };
                let mut req = Some(req);
                while self.worker.poll_recv(&mut req).is_pending() {
                    self.worker.progress();
                }
            }
        }
    }

    /// Waits (progressing) until a matched custom message's lead has arrived; its shape.
    pub(crate) fn matched_shape(&mut self, id: OpId) -> Result<Option<Shape>> {
        let mut op = self.take(id)?;
        let shape = match &mut op {
            Op::CustomRecv(r) => self.on_behalf(id, |e| r.shape(e)),
            _ => Err(Error::InvalidMessage),
        };
        self.put_back(id, op);
        shape
    }

    /// Drops a matched custom message nobody will receive, draining its data.
    fn discard_matched(&mut self, id: OpId) {
        if let Ok(mut op) = self.take(id) {
            if let Op::CustomRecv(r) = &mut op {
                self.on_behalf(id, |e| r.discard(e));
            }
            self.put_back(id, op);
            // The drain finishes in the background; nobody waits for its result.
            self.orphans.push(id);
        }
    }

    /// Progresses the transport and the multi-step operations.
    pub(crate) fn progress(&mut self) {
        let active = self.worker.progress();
        let due = self.watch.due();
        if due {
            self.check_local_peers();
        }
        if active || due {
            // Failures are reported by UCX callbacks during progress, or by the local check.
            self.handle_failures();
            if !self.stranded.is_empty() {
                self.release_stranded();
            }
        }
        if self.worker.take_custom_alert() {
            self.settle_custom_leads();
        }
        let complete = crate::notices::take_into(&mut self.noticed);
        self.progress_calls = self.progress_calls.wrapping_add(1);
        if !complete || due || self.progress_calls % FULL_CUSTOM_POLL == 0 {
            self.poll_every_custom();
        } else if !self.noticed.is_empty() {
            self.poll_noticed_custom();
        }
        if !self.orphans.is_empty() {
            self.reap_orphans();
        }
    }

    /// Settles every completed contiguous receive now, without waiting for its test: one of
    /// them took a custom-typed lead (the transport raised its alert), and the drain that its
    /// sender needs to complete must start even while this process waits on something else
    /// (MPI's progress rule). Runs only after such a mismatch, so the scan costs nothing
    /// otherwise.
    fn settle_custom_leads(&mut self) {
        for index in 0..self.slots.len() {
            let slot = &self.slots[index];
            let done = match &slot.op {
                Some(Op::Recv { req: Some(r), .. }) => !self.worker.is_pending(r),
                _ => false,
            };
            if !done {
                continue;
            }
            let id = OpId {
                index: index as u32,
                generation: slot.generation,
            };
            let Ok(op) = self.take(id) else { continue };
            // (None: turned into a drain, already back in its slot.)
            if let Some(result) = self.poll_contiguous(id, op) {
                self.put_back(id, Op::Finished(result));
            }
        }
    }

    /// Polls a contiguous receive taken out of its slot: its outcome once complete; `None` if
    /// it is still pending or became a drain, and is back in its slot.
    fn poll_contiguous(&mut self, id: OpId, mut op: Op) -> Option<Result<Status>> {
        let Op::Recv { req, .. } = &mut op else {
            self.put_back(id, op);
            return None;
        };
        let outcome = match self.worker.poll_recv(req) {
            Poll::Pending => {
                self.put_back(id, op);
                return None;
            }
            Poll::Ready(r) => r,
        };
        let Op::Recv {
            mut target,
            capacity,
            route,
            peer,
            ..
        } = op
        else {
            return Some(Err(Error::InvalidRequest));
        };
        let settled = self.on_behalf(id, |e| {
            e.settle_contiguous(outcome, &mut target, capacity, &route, peer)
        });
        match settled {
            Settled::Done(result) => Some(result),
            Settled::Drain(drain) => {
                self.put_back(id, Op::CustomRecv(drain));
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
    /// [`Worker::tag_recv_contiguous`]). So the receive is turned into a drain of those private
    /// messages, which completes with [`Error::DatatypeMismatch`] once the last has arrived.
    /// Draining before reporting, rather than in the background, is what a custom receive that
    /// fails does too, and it bounds what one failed receive leaves behind.
    fn settle_contiguous(
        &mut self,
        outcome: Result<RecvInfo>,
        target: &mut RecvTarget,
        capacity: usize,
        route: &Route,
        peer: Option<u32>,
    ) -> Settled {
        let info = match outcome {
            Ok(info) => info,
            Err(e) => {
                self.worker.recycle(target);
                return Settled::Done(match e {
                    Error::Truncated { .. } => Err(Error::Truncated {
                        message_bytes: 0,
                        buffer_bytes: capacity as u64,
                    }),
                    Error::Cancelled => match self.failed_peer(peer) {
                        Some(e) => Err(e),
                        None => Ok(Status::cancelled()),
                    },
                    e => Err(e),
                });
            }
        };
        let header = match UserTag::kind_of(info.sender_tag) {
            Some(MessageKind::Custom) => Some(target.lead_header(info.length)),
            _ => None,
        };
        self.worker.recycle(target);
        let Some(header) = header else {
            return Settled::Done(if info.length > capacity {
                // Received through the transport's sink, which takes any length.
                Err(Error::Truncated {
                    message_bytes: info.length as u64,
                    buffer_bytes: capacity as u64,
                })
            } else {
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
                let drain = CustomRecvOp::drain(self, route, source, status.tag, plan, mismatch);
                Settled::Drain(Box::new(drain))
            }
            // Nothing follows the lead, or its header is unreadable (then
            // there is nothing this process could drain).
            _ => Settled::Done(Err(mismatch)),
        }
    }

    /// The error of an operation that depends on `peer` if that peer failed.
    fn failed_peer(&self, peer: Option<u32>) -> Option<Error> {
        peer.filter(|p| self.peers.get(*p as usize).is_some_and(|x| x.failed))
            .map(|p| Error::ProcFailed { rank: p as i32 })
    }

    /// Polls the custom ops that UCX filed a notice for (or that started or were aborted):
    /// their fragments and region messages are posted by mpicd, not by UCX, so without this a
    /// pending receive would stall a blocking send to the same process (MPI's progress rule).
    fn poll_noticed_custom(&mut self) {
        let mut noticed = std::mem::take(&mut self.noticed);
        // (An op with several notices is polled again at once, which finds nothing to do.)
        noticed.dedup();
        for token in noticed.drain(..) {
            let id = OpId::from_token(token);
            match self.poll_custom(id) {
                CustomPoll::Finished => {
                    if let Some(at) = self.custom_active.iter().position(|&a| a == id) {
                        self.custom_active.swap_remove(at);
                    }
                }
                // Polled again once its caller put it back.
                CustomPoll::Busy => self.noticed.push(token),
                CustomPoll::Pending | CustomPoll::Gone => {}
            }
        }
        // (The buffer is kept, for its capacity.)
        noticed.append(&mut self.noticed);
        self.noticed = noticed;
    }

    /// Polls every custom op in flight (the backstop to notices, and the liveness check).
    fn poll_every_custom(&mut self) {
        self.noticed.clear();
        // Taken out (no copy) while the ops are polled, kept in place, and put back with any
        // op started meanwhile.
        let mut active = std::mem::take(&mut self.custom_active);
        active.retain(|&id| match self.poll_custom(id) {
            CustomPoll::Pending | CustomPoll::Busy => true,
            CustomPoll::Finished | CustomPoll::Gone => false,
        });
        active.append(&mut self.custom_active);
        self.custom_active = active;
    }

    /// Advances one custom op, with the requests it posts marked as its own.
    fn poll_custom(&mut self, id: OpId) -> CustomPoll {
        match self.slots.get(id.index as usize) {
            Some(slot) if slot.generation == id.generation => {
                if slot.op.is_none() {
                    return CustomPoll::Busy;
                }
            }
            _ => return CustomPoll::Gone,
        }
        let Ok(mut op) = self.take(id) else {
            return CustomPoll::Gone;
        };
        let outcome = self.on_behalf(id, |e| match &mut op {
            Op::CustomSend(s) => Some(s.poll(e)),
            Op::CustomRecv(r) => Some(r.poll(e)),
            _ => None,
        });
        match outcome {
            Some(Poll::Pending) => {
                self.put_back(id, op);
                CustomPoll::Pending
            }
            Some(Poll::Ready(result)) => {
                drop(op); // frees the custom state exactly once
                self.put_back(id, Op::Finished(result));
                CustomPoll::Finished
            }
            None => {
                self.put_back(id, op);
                CustomPoll::Gone
            }
        }
    }

    /// Reports connected processes of this node that no longer exist.
    fn check_local_peers(&mut self) {
        for (rank, p) in self.peers.iter().enumerate() {
            if let (Some(pid), false, true) = (p.local_pid, p.failed, p.endpoint.is_some()) {
                if !crate::liveness::is_alive(pid) {
                    self.worker.failures.report(rank as u32);
                }
            }
        }
    }

    fn reap_orphans(&mut self) {
        let orphans = std::mem::take(&mut self.orphans);
        for id in orphans {
            if let Ok(None) = self.test(id) {
                self.orphans.push(id);
            }
        }
    }

    /// Completes operations that depend on peers whose endpoint failed.
    fn handle_failures(&mut self) {
        for rank in self.worker.failures.take() {
            let Some(peer) = self.peers.get_mut(rank as usize) else {
                continue;
            };
            if peer.failed {
                continue;
            }
            peer.failed = true;
            for i in 0..self.slots.len() {
                let Some(mut op) = self.slots[i].op.take() else {
                    continue;
                };
                if op.peer() == Some(rank) {
                    match &mut op {
                        Op::Recv { req: Some(r), .. } => self.worker.cancel(r),
                        Op::Send { req, .. } => {
                            // Released now (UCX frees a pending request when it completes);
                            // the user's buffer is not kept: a dead peer reads nothing more.
                            if let Some(r) = req.take() {
                                self.worker.cancel(&r);
                            }
                            op = Op::Finished(Err(Error::ProcFailed { rank: rank as i32 }));
                        }
                        Op::CustomSend(s) => {
                            s.abort(&self.worker, Error::ProcFailed { rank: rank as i32 });
                            self.noticed.push(self.slot_token(i));
                        }
                        Op::CustomRecv(r) => {
                            r.abort(&self.worker, Error::ProcFailed { rank: rank as i32 });
                            self.noticed.push(self.slot_token(i));
                        }
                        _ => {}
                    }
                }
                self.slots[i].op = Some(op);
            }
        }
    }

    /// Tests an operation; on completion it is removed and its outcome returned.
    pub(crate) fn test(&mut self, id: OpId) -> Result<Option<Result<Status>>> {
        // Fast path: a contiguous operation still in flight is polled in place.
        let slot = self
            .slots
            .get_mut(id.index as usize)
            .ok_or(Error::InvalidRequest)?;
        if slot.generation == id.generation {
            let pending = match &mut slot.op {
                Some(Op::Send { req: Some(r), .. }) | Some(Op::Recv { req: Some(r), .. }) => {
                    self.worker.is_pending(r)
                }
                // Custom operations are advanced by progress calls, which every waiting loop
                // makes between tests, and then become `Finished`.
                Some(Op::CustomSend(_)) | Some(Op::CustomRecv(_)) => true,
                _ => false,
            };
            if pending {
                return Ok(None);
            }
        }
        let mut op = self.take(id)?;
        if matches!(op, Op::Recv { .. }) {
            let outcome = self.poll_contiguous(id, op);
            if outcome.is_some() {
                self.retire(id);
            }
            return Ok(outcome);
        }
        let outcome = match &mut op {
            Op::Send { req, peer } => match self.worker.poll_send(req) {
                Poll::Pending => None,
                Poll::Ready(r) => Some(
                    r.map_err(|e| self.failed_peer(Some(*peer)).unwrap_or(e))
                        .map(|()| Status::empty()),
                ),
            },
            Op::Recv { .. } | Op::CustomSend(_) | Op::CustomRecv(_) => None,
            Op::Finished(r) => Some(std::mem::replace(r, Err(Error::InvalidRequest))),
        };
        match outcome {
            None => {
                self.put_back(id, op);
                Ok(None)
            }
            Some(result) => {
                self.retire(id);
                drop(op); // frees the custom state exactly once
                Ok(Some(result))
            }
        }
    }

    /// Asks a pending receive to cancel; it then completes as cancelled.
    pub(crate) fn cancel(&mut self, id: OpId) -> Result<()> {
        let mut op = self.take(id)?;
        let result = match &mut op {
            Op::Recv { req: Some(r), .. } => {
                self.worker.cancel(r);
                Ok(())
            }
            Op::CustomRecv(r) => {
                self.noticed.push(id.token());
                r.cancel(&self.worker)
            }
            // Already complete (possibly settled during progress): nothing to cancel.
            Op::Recv { .. } | Op::Finished(_) => Ok(()),
            _ => Err(Error::InvalidArgument(
                "only receives can be cancelled".into(),
            )),
        };
        self.put_back(id, op);
        result
    }

    /// True if `id` is a receive (a request dropped unfinished is cancelled, not awaited).
    pub(crate) fn is_receive(&self, id: OpId) -> bool {
        self.slots
            .get(id.index as usize)
            .and_then(|s| s.op.as_ref())
            .is_some_and(Op::is_receive)
    }

    /// Operations still in flight, not counting drains of discarded messages.
    pub(crate) fn pending(&self) -> usize {
        self.slots.iter().filter(|s| s.op.is_some()).count() - self.orphans.len()
    }

    /// Shuts down: cancels what is left, synchronizes with the other processes, flushes and
    /// closes endpoints (bounded in time), and reports operations that were still pending.
    pub(crate) fn finalize(mut self) -> Result<()> {
        let pending = self.pending();
        for i in 0..self.slots.len() {
            if let Some(op) = &mut self.slots[i].op {
                match op {
                    Op::Recv { req: Some(r), .. } | Op::Send { req: Some(r), .. } => {
                        self.worker.cancel(r)
                    }
                    Op::CustomSend(s) => s.abort(&self.worker, Error::Cancelled),
                    Op::CustomRecv(r) => r.abort(&self.worker, Error::Cancelled),
                    _ => {}
                }
            }
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while self.slots.iter().any(|s| s.op.is_some()) && std::time::Instant::now() < deadline {
            self.progress();
            for i in 0..self.slots.len() {
                if self.slots[i].op.is_some() {
                    let id = OpId {
                        index: i as u32,
                        generation: self.slots[i].generation,
                    };
                    let _ = self.test(id);
                }
            }
        }
        // Synchronize so nobody tears down connections others still use, unless a peer is
        // known dead (the launcher could then wait for it forever).
        let fence = if self.peers.iter().any(|p| p.failed) {
            Ok(())
        } else {
            self.boot.fence()
        };
        let endpoints: Vec<Endpoint> = self
            .peers
            .iter_mut()
            .filter_map(|p| p.endpoint.take())
            .collect();
        for ep in endpoints {
            self.worker.close(ep, Duration::from_secs(2));
        }
        fence?;
        if pending > 0 {
            return Err(Error::PendingOperations(pending));
        }
        Ok(())
    }

    /// True when no launcher started this process.
    pub(crate) fn is_singleton(&self) -> bool {
        self.boot.is_singleton()
    }

    /// Terminates the whole job.
    pub(crate) fn abort(&self, code: i32, message: &str) -> ! {
        self.boot.abort(code, message)
    }
}

/// What a completed contiguous receive comes to.
enum Settled {
    Done(Result<Status>),
    /// It took a custom-typed message: this drain of that message's private messages takes
    /// its place and reports the datatype mismatch.
    Drain(Box<CustomRecvOp>),
}

/// A posted operation: in flight, or already complete.
pub(crate) enum Posted {
    Pending(OpId),
    Done(Result<Status>),
}

/// A message taken by a matched probe, waiting for its receive.
pub(crate) enum Matched {
    Contiguous {
        handle: MessageHandle,
        info: RecvInfo,
        route: Route,
    },
    Custom(OpId),
}

/// The engine behind its lock, shared by every handle of one runtime.
pub(crate) struct Shared {
    engine: Mutex<Option<Engine>>,
}

impl Shared {
    pub(crate) fn new(engine: Engine) -> Arc<Shared> {
        Arc::new(Shared {
            engine: Mutex::new(Some(engine)),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Option<Engine>> {
        self.engine
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on the live engine; `Finalized` once it is gone.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Engine) -> Result<R>) -> Result<R> {
        match self.lock().as_mut() {
            Some(engine) => f(engine),
            None => Err(Error::Finalized),
        }
    }

    /// Takes the engine out and runs `f` (finalize) on it while still holding the lock, so that
    /// once any handle sees `Finalized` the engine is gone and no operation touches memory any
    /// more (request scopes rely on this). `None` if it was already taken.
    pub(crate) fn shut_down<R>(&self, f: impl FnOnce(Engine) -> R) -> Option<R> {
        let mut engine = self.lock();
        engine.take().map(f)
    }

    /// Progresses until `ready` returns a value.
    pub(crate) fn progress_until<R>(
        &self,
        mut ready: impl FnMut(&mut Engine) -> Result<Option<R>>,
    ) -> Result<R> {
        loop {
            let step = self.with(|e| {
                if let Some(r) = ready(e)? {
                    return Ok(Some(r));
                }
                e.progress();
                Ok(None)
            })?;
            if let Some(r) = step {
                return Ok(r);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::OpId;

    #[test]
    fn a_token_names_its_operation_and_generation() {
        for (index, generation) in [(0, 0), (1, 0), (0, 1), (7, u32::MAX), (u32::MAX, 3)] {
            let id = OpId { index, generation };
            assert_eq!(OpId::from_token(id.token()), id);
        }
        // A later generation of the same slot is another operation.
        let old = OpId {
            index: 5,
            generation: 1,
        };
        let new = OpId {
            index: 5,
            generation: 2,
        };
        assert_ne!(old.token(), new.token());
    }
}
