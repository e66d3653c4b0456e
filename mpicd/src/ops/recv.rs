//! The receive side of a custom-typed message, as a state machine ([`Phase`]): match the lead,
//! learn the shape (fetching the region table when it travels apart), wait for a receive state
//! when a matched probe took the message, let the state resize, check sizes (truncation is an
//! error, never an overrun), then take the inline bytes, the body message (UCX hands its
//! fragments, in order, to the [`Unpacker`], which unpacks them straight from UCX's transport
//! buffers) and the zero-copy regions straight into the receiver's memory (a bounded window,
//! posted in order).
//!
//! ```text
//! Lead --lead decoded--> Matched --state attached (or discarded)--> Transfer --all taken--> done
//!   \--table apart--> Table --table decoded--/      \--stopped--> Closed --> done
//! ```
//!
//! Whatever goes wrong after the lead matched, every private message of the sender is still
//! received (into a discarding sink if need be), so the sender always completes: the receive's
//! [`Course`] turns failed, and the rest of the message is drained. That includes a custom-typed
//! message matched by a contiguous receive: the engine then drains it through
//! [`RecvOp::drain`]. A custom receive that matches a contiguous message fails with
//! [`Error::DatatypeMismatch`]; that message was taken whole by the lead's collector, so there
//! is nothing left to drain. Only a stopped receive (dead peer, finalize) posts nothing more.

use super::lead::{decode_lead, decode_table};
use super::unpacker::{check_length, Provided, Unpacker};
use super::{Context, Course, Link};
use crate::error::{Envelope, Error, Result};
use crate::plan::UnpackState;
use crate::route::Route;
use crate::status::Status;
use crate::tag::{private_match, MessageKind, TagMatch};
use crate::transport::{Collector, RecvInfo, StreamEnd, StreamPort, Worker};
use crate::wire::{Lead, Shape, WirePlan, HEADER_BYTES, LEAD_MAX, RUN_BYTES};
use std::collections::VecDeque;
use std::task::Poll;

/// Where a receive is.
enum Phase<L: Link> {
    /// The lead's receive is posted (the collector is the op's `lead`).
    Lead(Option<L::Request>),
    /// The lead said the region table travels apart: its receive is posted.
    Table {
        // The request first: it is released before the collector it writes to.
        req: Option<L::Request>,
        table: Box<Collector>,
        plan: WirePlan,
        runs: u64,
    },
    /// The plan is known; the data waits for a receive state (a matched probe's message
    /// before its receive) or for the op to be polled.
    Matched { plan: WirePlan, inline_at: usize },
    /// The body and the zero-copy regions are arriving, or being drained after a failure.
    Transfer(Box<Transfer<L>>),
    /// Stopped with nothing in flight: the outcome is reported at the next poll.
    Closed,
}

/// What one step of [`RecvOp::poll`] came to.
enum Step<L: Link> {
    /// Go on in this phase.
    Next(Phase<L>),
    /// The phase is set; go on.
    Again,
    /// Nothing to do until a request completes (or the state is attached).
    Wait,
    Done(Result<Status>),
}

/// The data messages of a receive in flight.
struct Transfer<L: Link> {
    // Requests first: they are released before the memory they point to.
    body: Body<L>,
    /// Region message receives (or their drains) in flight, at most `zcopy_depth`.
    directs: VecDeque<Direct<L>>,
    /// What UCX holds while the body arrives: a pointer to the op's unpacker.
    port: Option<Box<StreamPort>>,
    plan: WirePlan,
    /// Zero-copy region receives posted so far, and where to look for the next zero-copy
    /// region: a run of the sender's shape and a region index.
    regions_posted: u64,
    next_region: (usize, usize),
}

/// The receive of the body message.
enum Body<L: Link> {
    /// Not posted yet.
    Unposted,
    /// Arriving into the unpacker.
    Unpacking(Option<L::Request>),
    /// Going into the drain sink, after a failure.
    Draining(Option<L::Request>),
    /// Taken, or there is none.
    Done,
}

/// A private receive whose content lands elsewhere (a region) or nowhere (a drain).
struct Direct<L: Link> {
    req: Option<L::Request>,
    /// Its announced length (`usize::MAX` for a drain, which takes any length).
    expected: usize,
}

pub(crate) struct RecvOp<L: Link = Worker> {
    // The phase first: its requests are released before the memory they point to.
    phase: Phase<L>,
    /// Where drained messages go, made at the first drain.
    drain_sink: Option<Box<Collector>>,
    lead: Box<Collector>,
    unpacker: Box<Unpacker>,
    route: Route,
    source: Option<u32>,
    tag: i32,
    /// A fixed-shape state's parts, taken when the receive was posted.
    early: Option<Result<Provided>>,
    zcopy_depth: usize,
    course: Course,
}

impl<L: Link> RecvOp<L> {
    fn new(
        ctx: &Context<'_, L>,
        route: &Route,
        source: Option<u32>,
        state: Option<Box<dyn UnpackState>>,
    ) -> RecvOp<L> {
        RecvOp {
            phase: Phase::Closed,
            drain_sink: None,
            // A lead is at most LEAD_MAX bytes; anything longer (a contiguous message this
            // receive matched) is drained past that, never held whole.
            lead: Box::new(Collector {
                keep: LEAD_MAX,
                bytes: ctx.worker.lead_buffer(),
                ..Collector::default()
            }),
            unpacker: Box::new(Unpacker::new(state)),
            route: route.clone(),
            source,
            tag: 0,
            early: None,
            zcopy_depth: ctx.config.zcopy_depth.max(1),
            course: Course::Running,
        }
    }

    /// Posts the receive of a lead message matching `m`.
    pub(crate) fn post(
        ctx: &mut Context<'_, L>,
        route: &Route,
        source: Option<u32>,
        m: TagMatch,
        state: Box<dyn UnpackState>,
    ) -> Result<RecvOp<L>> {
        let mut op = RecvOp::new(ctx, route, source, Some(state));
        // SAFETY: the collector is boxed in the op and outlives the request.
        let req = unsafe { ctx.worker.tag_recv_collect(&mut *op.lead, m) }?;
        op.phase = Phase::Lead(Some(req));
        if let Some(state) = op.unpacker.state.as_mut().filter(|s| !s.resizes()) {
            // A fixed shape: its parts are built now, while the sender builds its own.
            op.early = Some(Provided::from(&mut **state));
        }
        Ok(op)
    }

    /// Starts receiving the lead of a message taken by a matched probe; the state comes later
    /// through [`RecvOp::attach`].
    pub(crate) fn from_message(
        ctx: &mut Context<'_, L>,
        route: &Route,
        info: RecvInfo,
        handle: L::Message,
    ) -> Result<RecvOp<L>> {
        let source = Status::from_tag(info.sender_tag, &route.group, None)?.source;
        let source = route.group.world_rank(source).ok();
        let mut op = RecvOp::new(ctx, route, source, None);
        // SAFETY: as in `post`.
        let req = unsafe { ctx.worker.msg_recv_collect(&mut *op.lead, handle) }?;
        op.phase = Phase::Lead(Some(req));
        Ok(op)
    }

    /// Drains a custom-typed message that a contiguous receive took by mistake (its lead is
    /// consumed; `plan` comes from the lead's header): every private message of the sender is
    /// received and dropped, then the operation completes with `error`.
    pub(crate) fn drain(
        ctx: &mut Context<'_, L>,
        route: &Route,
        source: u32,
        tag: i32,
        plan: WirePlan,
        error: Error,
    ) -> RecvOp<L> {
        let mut op = RecvOp::new(ctx, route, Some(source), None);
        op.tag = tag;
        op.course.fail(error);
        let mut transfer = Transfer::new(plan);
        if transfer.plan.table_apart {
            let m = private_match(source, transfer.plan.table_seq());
            match post_drain(&mut op.drain_sink, ctx.worker, m) {
                Ok(req) => transfer.directs.push_back(Direct {
                    req: Some(req),
                    expected: usize::MAX,
                }),
                Err(e) => op.course.stop(e),
            }
        }
        op.phase = Phase::Transfer(Box::new(transfer));
        op.pump(ctx.worker);
        op
    }

    /// Gives a matched message its receive state (the engine polls the op next).
    pub(crate) fn attach(&mut self, state: Box<dyn UnpackState>) {
        self.unpacker.state = Some(state);
    }

    /// Gives up on a matched message: its data is drained and dropped (the engine polls the op
    /// next).
    pub(crate) fn discard(&mut self) {
        self.course.fail(Error::Cancelled);
    }

    /// The context the receive matches on.
    pub(crate) fn context(&self) -> u32 {
        self.route.context
    }

    /// The sender's world rank, once known.
    pub(crate) fn peer(&self) -> Option<u32> {
        self.source
    }

    /// The sender's shape, once the lead (and the table) arrived.
    pub(crate) fn shape(&self) -> Option<&Shape> {
        match &self.phase {
            Phase::Matched { plan, .. } => Some(&plan.shape),
            Phase::Transfer(t) => Some(&t.plan.shape),
            _ => None,
        }
    }

    /// Advances the receive; ready once every message of the sender has been taken.
    pub(crate) fn poll(&mut self, ctx: &mut Context<'_, L>) -> Poll<Result<Status>> {
        loop {
            match self.step(ctx.worker) {
                Step::Next(phase) => self.phase = phase,
                Step::Again => {}
                Step::Wait => return Poll::Pending,
                Step::Done(outcome) => return Poll::Ready(outcome.map_err(|e| self.matched(e))),
            }
        }
    }

    /// One transition, if the current phase allows one.
    fn step(&mut self, worker: &L) -> Step<L> {
        match &mut self.phase {
            Phase::Lead(req) => match worker.poll_recv(req) {
                Poll::Pending => Step::Wait,
                Poll::Ready(Err(Error::Cancelled)) if self.course.is_running() => {
                    Step::Done(Ok(Status::cancelled()))
                }
                Poll::Ready(r) => match r.and_then(|info| self.on_lead(worker, info)) {
                    Ok(next) => Step::Next(next),
                    Err(e) => self.failed(e),
                },
            },
            Phase::Table {
                req,
                table,
                plan,
                runs,
            } => match worker.poll_recv(req) {
                Poll::Pending => Step::Wait,
                Poll::Ready(r) => match r.and_then(|_| decode_table(table, plan, *runs)) {
                    Ok(plan) => Step::Next(Phase::Matched {
                        plan,
                        inline_at: HEADER_BYTES,
                    }),
                    Err(e) => self.failed(e),
                },
            },
            Phase::Matched { .. } if self.course.is_stopped() => Step::Next(Phase::Closed),
            Phase::Matched { .. } if self.unpacker.state.is_none() && self.course.is_running() => {
                Step::Wait // a matched message waiting for its receive
            }
            Phase::Matched { plan, inline_at } => {
                let (plan, inline_at) = (std::mem::replace(plan, WirePlan::failure()), *inline_at);
                self.start_transfer(worker, plan, inline_at);
                Step::Again
            }
            Phase::Transfer(t) => {
                t.collect(worker, &mut self.unpacker, &mut self.course);
                self.pump(worker);
                match &self.phase {
                    Phase::Transfer(t) if !t.is_over(&self.course) => Step::Wait,
                    _ => Step::Done(self.finish()),
                }
            }
            Phase::Closed => self.failed(Error::InvalidMessage),
        }
    }

    /// The end of a receive that failed with `error` (an earlier error is the one reported).
    fn failed(&mut self, error: Error) -> Step<L> {
        Step::Done(Err(self.course.outcome(()).err().unwrap_or(error)))
    }

    /// The lead arrived: the next phase, or why the receive fails.
    fn on_lead(&mut self, worker: &L, info: RecvInfo) -> Result<Phase<L>> {
        let status = Status::from_tag(info.sender_tag, &self.route.group, None)?;
        self.tag = status.tag;
        let source = self.route.group.world_rank(status.source)?;
        self.source = Some(source);
        match decode_lead(status.kind, &mut self.lead)? {
            Lead::Complete { plan, inline_at } => Ok(Phase::Matched { plan, inline_at }),
            Lead::TableApart { plan, runs } => {
                let m = private_match(source, plan.table_seq());
                let mut table = Box::new(Collector {
                    keep: usize::try_from(runs.saturating_mul(RUN_BYTES as u64)).unwrap_or(0),
                    ..Collector::default()
                });
                // SAFETY: the table collector is boxed in the phase, after the request, and
                // outlives it.
                let req = Some(unsafe { worker.tag_recv_collect(&mut *table, m) }?);
                Ok(Phase::Table {
                    req,
                    table,
                    plan,
                    runs,
                })
            }
        }
    }

    /// Lets the state size itself, checks sizes, takes the inline bytes and posts the data
    /// receives. Any failure turns the receive into a drain of the rest.
    fn start_transfer(&mut self, worker: &L, plan: WirePlan, inline_at: usize) {
        let prepared = if plan.failed {
            Err(Error::RemoteFailure)
        } else if let Some(e) = self.course.error() {
            Err(e.clone())
        } else {
            self.provided(&plan.shape)
                .and_then(|p| self.unpacker.prepare(&plan, p))
        };
        match prepared {
            Ok(()) => {
                self.unpacker.consume(0, &self.lead.bytes[inline_at..]);
                if let Some(e) = self.unpacker.error.take() {
                    self.course.fail(e);
                }
            }
            Err(e) => self.course.fail(e),
        }
        worker.recycle_lead(std::mem::take(&mut self.lead.bytes));
        self.phase = Phase::Transfer(Box::new(Transfer::new(plan)));
        self.pump(worker);
    }

    /// What the receive state provides for `shape`: the parts it gave when posted, or (a
    /// dynamic state) its parts after resizing to `shape`.
    fn provided(&mut self, shape: &Shape) -> Result<Provided> {
        if let Some(early) = self.early.take() {
            return early;
        }
        let state = self.unpacker.state.as_mut().ok_or(Error::InvalidMessage)?;
        state.resize(shape)?;
        Provided::from(&mut **state)
    }

    /// Posts the body's receive, and region receives while fewer than the zero-copy depth are
    /// outstanding; once the receive failed the rest are drained instead (through the same
    /// window), and once it stopped nothing more is posted.
    fn pump(&mut self, worker: &L) {
        let Phase::Transfer(t) = &mut self.phase else {
            return;
        };
        if self.course.is_stopped() {
            return;
        }
        let source = self.source.unwrap_or(0);
        if let Body::Unposted = t.body {
            let m = private_match(source, t.plan.body_seq());
            let mut req = Err(Error::Cancelled);
            if self.course.is_running() {
                let end: *mut dyn StreamEnd = &mut *self.unpacker as *mut Unpacker;
                let port = t.port.insert(Box::new(StreamPort(end)));
                // SAFETY: the port and the unpacker are boxed in the op, which keeps them until
                // the request completes; nothing borrows the unpacker while UCX runs.
                req = unsafe { worker.tag_recv_stream(&mut **port, m) };
                if let Err(e) = &req {
                    self.course.fail(e.clone());
                }
            }
            t.body = match req {
                Ok(r) => Body::Unpacking(Some(r)),
                Err(_) => match post_drain(&mut self.drain_sink, worker, m) {
                    Ok(r) => Body::Draining(Some(r)),
                    Err(e) => {
                        self.course.stop(e);
                        return;
                    }
                },
            };
        }
        while t.regions_posted < t.plan.region_messages() && t.directs.len() < self.zcopy_depth {
            let m = private_match(source, t.plan.region_seq(t.regions_posted));
            t.regions_posted += 1;
            // The next zero-copy region; none after an error.
            let target = match self.course {
                Course::Running => t.plan.next_zero_copy(&mut t.next_region),
                _ => None,
            };
            if target.is_none() {
                self.course.fail(Error::InvalidMessage);
            }
            let mut req = Err(Error::Cancelled);
            let mut expected = usize::MAX;
            if let Some((i, bytes)) = target {
                let bytes = bytes as usize;
                req = match self.unpacker.regions.get(i) {
                    // SAFETY: the region holds at least the sender's `bytes` bytes, and
                    // UnpackState guarantees it stays valid and exclusive until the state is
                    // dropped.
                    Some(mine) if mine.bytes >= bytes => unsafe {
                        worker.tag_recv(mine.ptr, bytes, m)
                    },
                    Some(mine) => Err(Error::truncated(bytes as u64, mine.bytes as u64)),
                    None => Err(Error::InvalidMessage),
                };
                match &req {
                    Ok(_) => expected = bytes,
                    Err(e) => self.course.fail(e.clone()),
                }
            }
            if req.is_err() {
                req = post_drain(&mut self.drain_sink, worker, m);
            }
            match req {
                Ok(r) => t.directs.push_back(Direct {
                    req: Some(r),
                    expected,
                }),
                Err(e) => {
                    self.course.stop(e);
                    return;
                }
            }
        }
    }

    /// `error` as this receive reports it: a truncation names the message it matched.
    fn matched(&self, error: Error) -> Error {
        match self.source.and_then(|w| self.route.group.comm_rank(w)) {
            Some(source) => error.matched(Envelope {
                source,
                tag: self.tag,
            }),
            None => error,
        }
    }

    /// The outcome of a receive whose every message was taken.
    fn finish(&mut self) -> Result<Status> {
        let bytes = match &self.phase {
            Phase::Transfer(t) => t.plan.shape.total_bytes(),
            _ => return Err(Error::InvalidMessage),
        };
        self.course.outcome(())?;
        let source = self
            .source
            .and_then(|w| self.route.group.comm_rank(w))
            .unwrap_or(crate::PROC_NULL);
        Ok(Status {
            source,
            tag: self.tag,
            bytes: Some(bytes),
            kind: MessageKind::Custom,
            cancelled: false,
        })
    }

    /// Cancels a receive whose lead has not matched yet (a matched one goes on).
    pub(crate) fn cancel(&mut self, worker: &L) {
        if let Phase::Lead(Some(r)) = &self.phase {
            worker.cancel(r);
        }
    }

    /// Stops early: posts nothing more, cancels every outstanding receive; completes with
    /// `error` once they have ended.
    pub(crate) fn abort(&mut self, worker: &L, error: Error) {
        self.course.stop(error);
        match &mut self.phase {
            Phase::Lead(req) | Phase::Table { req, .. } => {
                if let Some(r) = req {
                    worker.cancel(r);
                }
            }
            Phase::Transfer(t) => {
                let body = match &t.body {
                    Body::Unpacking(r) | Body::Draining(r) => r.as_ref(),
                    Body::Unposted | Body::Done => None,
                };
                for r in body
                    .into_iter()
                    .chain(t.directs.iter().filter_map(|d| d.req.as_ref()))
                {
                    worker.cancel(r);
                }
            }
            Phase::Matched { .. } => self.phase = Phase::Closed,
            Phase::Closed => {}
        }
    }
}

impl<L: Link> Transfer<L> {
    fn new(plan: WirePlan) -> Transfer<L> {
        let body = if plan.body_messages() > 0 {
            Body::Unposted
        } else {
            Body::Done
        };
        Transfer {
            body,
            directs: VecDeque::new(),
            port: None,
            plan,
            regions_posted: 0,
            next_region: (0, 0),
        }
    }

    /// Takes what has arrived: the body (its outcome, the unpacker's and the sender's) and
    /// the region messages.
    fn collect(&mut self, worker: &L, unpacker: &mut Unpacker, course: &mut Course) {
        let expected = self.plan.body_message_bytes();
        match &mut self.body {
            Body::Unpacking(req) => {
                if let Poll::Ready(r) = worker.poll_recv(req) {
                    self.body = Body::Done;
                    let outcome = r
                        .and_then(|info| check_length(info, expected))
                        .and_then(|()| unpacker.outcome());
                    if let Err(e) = outcome {
                        course.fail(e);
                    }
                }
            }
            Body::Draining(req) => {
                if worker.poll_recv(req).is_ready() {
                    self.body = Body::Done;
                }
            }
            Body::Unposted | Body::Done => {}
        }
        self.directs
            .retain_mut(|d| match worker.poll_recv(&mut d.req) {
                Poll::Pending => true,
                Poll::Ready(r) => {
                    if let Err(e) = r.and_then(|info| check_length(info, d.expected)) {
                        course.fail(e);
                    }
                    false
                }
            });
    }

    /// True once nothing is in flight and nothing is left to post.
    fn is_over(&self, course: &Course) -> bool {
        let body_over = match self.body {
            Body::Done => true,
            Body::Unposted => course.is_stopped(),
            Body::Unpacking(_) | Body::Draining(_) => false,
        };
        body_over
            && self.directs.is_empty()
            && (course.is_stopped() || self.regions_posted >= self.plan.region_messages())
    }
}

/// Posts a receive that drops the private message `m` matches, into `sink` (made on first use).
fn post_drain<L: Link>(
    sink: &mut Option<Box<Collector>>,
    worker: &L,
    m: TagMatch,
) -> Result<L::Request> {
    let sink = sink.get_or_insert_with(Box::default);
    // SAFETY: the drain sink is boxed in the op, never replaced, and outlives the request.
    unsafe { worker.tag_recv_collect(&mut **sink, m) }
}
