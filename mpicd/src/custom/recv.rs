//! The receive side of a custom-typed message: match the lead, learn the shape, let the state
//! resize, check sizes (truncation is an error, never an overrun), then take the inline bytes,
//! the fragments in order and the zero-copy regions straight into the receiver's memory.
//!
//! Whatever goes wrong after the lead matched, every private message of the sender is still
//! received (into a discarding sink if need be), so the sender always completes.

use super::stream::StreamReader;
use super::wire::WirePlan;
use super::{RawRegionMut, Shape, UnpackState};
use crate::engine::{Engine, Route};
use crate::error::{Error, Result};
use crate::status::Status;
use crate::tag::private_match;
use crate::transport::{Collector, MessageHandle, RecvInfo, TagMatch, UcxRequest, Worker};
use std::collections::VecDeque;
use std::task::Poll;

/// A fragment receive: its index, its buffer, and how it ended.
struct Fragment {
    req: Option<UcxRequest>,
    index: u64,
    buffer: Vec<u8>,
    outcome: Option<Result<RecvInfo>>,
}

/// A private receive whose content lands elsewhere (a region) or nowhere (a drain).
struct Direct {
    req: Option<UcxRequest>,
    expected: usize,
    done: bool,
}

pub(crate) struct RecvOp {
    // Requests first: they are released before the memory they point to.
    lead_req: Option<UcxRequest>,
    fragments: VecDeque<Fragment>,
    directs: Vec<Direct>,
    lead: Box<Collector>,
    drain_sink: Box<Collector>,
    spare: Vec<Vec<u8>>,
    route: Route,
    source: Option<u32>,
    tag: i32,
    plan: Option<(WirePlan, usize)>,
    reader: Option<StreamReader>,
    next_fragment: u64,
    depth: usize,
    started: bool,
    discarding: bool,
    error: Option<Error>,
    state: Option<Box<dyn UnpackState>>,
}

impl RecvOp {
    fn new(
        engine: &Engine,
        route: &Route,
        source: Option<u32>,
        state: Option<Box<dyn UnpackState>>,
    ) -> RecvOp {
        RecvOp {
            lead_req: None,
            fragments: VecDeque::new(),
            directs: Vec::new(),
            lead: Box::new(Collector {
                keep: usize::MAX,
                ..Collector::default()
            }),
            drain_sink: Box::default(),
            spare: Vec::new(),
            route: route.clone(),
            source,
            tag: 0,
            plan: None,
            reader: None,
            next_fragment: 0,
            depth: engine.custom.pipeline_depth,
            started: false,
            discarding: false,
            error: None,
            state,
        }
    }

    /// Posts the receive of a lead message matching `m`.
    pub(crate) fn post(
        engine: &mut Engine,
        route: &Route,
        source: Option<u32>,
        m: TagMatch,
        state: Option<Box<dyn UnpackState>>,
    ) -> Result<RecvOp> {
        let mut op = RecvOp::new(engine, route, source, state);
        // SAFETY: the collector is boxed in the op and outlives the request.
        op.lead_req = Some(unsafe { engine.worker.tag_recv_collect(&mut *op.lead, m) }?);
        Ok(op)
    }

    /// Starts receiving the lead of a message taken by a matched probe; the state comes later
    /// through [`RecvOp::attach`].
    pub(crate) fn from_message(
        engine: &mut Engine,
        route: &Route,
        info: RecvInfo,
        handle: MessageHandle,
    ) -> Result<RecvOp> {
        let source = Status::from_tag(info.sender_tag, &route.group, None)?.source;
        let source = route.group.world_rank(source).ok();
        let mut op = RecvOp::new(engine, route, source, None);
        // SAFETY: as in `post`.
        op.lead_req = Some(unsafe { engine.worker.msg_recv_collect(&mut *op.lead, handle) }?);
        Ok(op)
    }

    /// Gives a matched message its receive state.
    pub(crate) fn attach(&mut self, engine: &mut Engine, state: Box<dyn UnpackState>) {
        self.state = Some(state);
        let _ = self.poll(engine);
    }

    /// Gives up on a matched message: its data is drained and dropped.
    pub(crate) fn discard(&mut self, engine: &mut Engine) {
        self.discarding = true;
        self.error.get_or_insert(Error::Cancelled);
        let _ = self.poll(engine);
    }

    pub(crate) fn peer(&self) -> Option<u32> {
        self.source
    }

    /// Waits for the lead, then reports the sender's shape.
    pub(crate) fn shape(&mut self, engine: &mut Engine) -> Result<Option<Shape>> {
        loop {
            if let Some((plan, _)) = &self.plan {
                return Ok(Some(plan.shape()));
            }
            if let Poll::Ready(Err(e)) = self.poll_lead(engine) {
                return Err(e);
            }
            if self.plan.is_none() {
                engine.progress();
            }
        }
    }

    fn poll_lead(&mut self, engine: &mut Engine) -> Poll<Result<()>> {
        if self.plan.is_some() {
            return Poll::Ready(Ok(()));
        }
        match engine.worker.poll_recv(&mut self.lead_req) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Ready(Ok(info)) => {
                let status = Status::from_tag(info.sender_tag, &self.route.group, None)?;
                self.tag = status.tag;
                self.source = Some(self.route.group.world_rank(status.source)?);
                let lead = std::mem::take(&mut self.lead.bytes);
                self.plan = Some(WirePlan::decode(&lead)?);
                self.lead.bytes = lead;
                Poll::Ready(Ok(()))
            }
        }
    }

    /// Learns the shape, lets the state size itself, checks sizes, and posts the private
    /// receives. Any failure switches to draining.
    fn start_body(&mut self, engine: &mut Engine) {
        self.started = true;
        let Some((plan, inline_at)) = self.plan.clone() else {
            return;
        };
        let regions = if plan.failed {
            Err(Error::RemoteFailure)
        } else if self.discarding {
            Err(Error::Cancelled)
        } else {
            self.prepare(&plan)
        };
        let source = self.source.unwrap_or(0);
        let first_region_seq = plan.seq_base + plan.fragments();
        match regions {
            Ok(regions) => {
                let inline = &self.lead.bytes[inline_at..];
                if let (Some(reader), Some(state)) = (&mut self.reader, &mut self.state) {
                    if let Err(e) = reader.consume(&mut **state, 0, inline) {
                        self.error = Some(e);
                    }
                }
                for (k, i) in plan.zero_copy_regions().enumerate() {
                    let bytes = plan.regions[i].0.bytes as usize;
                    let m = private_match(source, first_region_seq + k as u64);
                    // SAFETY: the region was checked to hold `bytes` bytes, and UnpackState
                    // guarantees it stays valid and exclusive until the state is dropped.
                    let req = unsafe { engine.worker.tag_recv(regions[i].ptr, bytes, m) };
                    self.push_direct(req, bytes);
                }
            }
            Err(e) => {
                self.error.get_or_insert(e);
                for k in 0..plan.zero_copy_regions().count() as u64 {
                    let m = private_match(source, first_region_seq + k);
                    // SAFETY: the drain sink is boxed in the op and outlives the request.
                    let req = unsafe { engine.worker.tag_recv_collect(&mut *self.drain_sink, m) };
                    self.push_direct(req, usize::MAX);
                }
            }
        }
        self.pump(&engine.worker);
    }

    /// Resizes, checks the incoming shape against the receiver's buffers, and sets up the
    /// stream reader. Returns the receiver's regions.
    fn prepare(&mut self, plan: &WirePlan) -> Result<Vec<RawRegionMut>> {
        let state = self.state.as_mut().ok_or(Error::InvalidMessage)?;
        let shape = plan.shape();
        state.resize(&shape)?;
        let capacity = state.packed_capacity()?;
        let regions = state.regions()?;
        let fits = plan.packed_bytes <= capacity
            && plan.regions.len() <= regions.len()
            && plan
                .regions
                .iter()
                .zip(&regions)
                .all(|((r, _), mine)| r.bytes <= mine.bytes as u64);
        if !fits {
            let buffer_bytes =
                capacity.min(u64::MAX / 2) + regions.iter().map(|r| r.bytes as u64).sum::<u64>();
            return Err(Error::Truncated {
                message_bytes: shape.total_bytes(),
                buffer_bytes,
            });
        }
        // A coalesced region occupies the sender's length in the stream; the receiver's region
        // may be longer (checked above), and the rest of it is left untouched.
        let coalesced = plan
            .regions
            .iter()
            .zip(&regions)
            .filter(|((_, zc), _)| !zc)
            .map(|((sent, _), mine)| (mine.ptr, sent.bytes as usize));
        self.reader = Some(StreamReader::new(plan.packed_bytes, coalesced));
        Ok(regions)
    }

    fn push_direct(&mut self, req: Result<UcxRequest>, expected: usize) {
        match req {
            Ok(r) => self.directs.push(Direct {
                req: Some(r),
                expected,
                done: false,
            }),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }

    /// Posts fragment receives while fewer than the pipeline depth are outstanding; once an
    /// error is recorded, the rest are drained instead.
    fn pump(&mut self, worker: &Worker) {
        let Some((plan, _)) = &self.plan else { return };
        let (fragments, seq_base) = (plan.fragments(), plan.seq_base);
        let source = self.source.unwrap_or(0);
        while self.next_fragment < fragments {
            let i = self.next_fragment;
            let m = private_match(source, seq_base + i);
            if self.error.is_some() {
                // SAFETY: the drain sink is boxed in the op and outlives the request.
                let req = unsafe { worker.tag_recv_collect(&mut *self.drain_sink, m) };
                self.push_direct(req, usize::MAX);
            } else if self.fragments.len() < self.depth {
                let mut buffer = self.spare.pop().unwrap_or_default();
                let Some(plan) = self.plan.as_ref().map(|(p, _)| p) else {
                    return;
                };
                buffer.resize(plan.fragment_len(i), 0);
                // SAFETY: the buffer is kept in `fragments` until the receive completes.
                match unsafe { worker.tag_recv(buffer.as_mut_ptr(), buffer.len(), m) } {
                    Ok(req) => self.fragments.push_back(Fragment {
                        req: Some(req),
                        index: i,
                        buffer,
                        outcome: None,
                    }),
                    Err(e) => {
                        self.error.get_or_insert(e);
                        continue;
                    }
                }
            } else {
                break;
            }
            self.next_fragment += 1;
        }
    }

    /// Advances the receive; ready once every message of the sender has been taken.
    pub(crate) fn poll(&mut self, engine: &mut Engine) -> Poll<Result<Status>> {
        if !self.started {
            match self.poll_lead(engine) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(Error::Cancelled)) if self.error.is_none() => {
                    return Poll::Ready(Ok(Status::cancelled()))
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(self.error.take().unwrap_or(e))),
                Poll::Ready(Ok(())) => {}
            }
            if self.state.is_none() && !self.discarding {
                return Poll::Pending; // a matched message waiting for its receive
            }
            self.start_body(engine);
        }
        let worker = &engine.worker;
        for f in &mut self.fragments {
            if f.outcome.is_none() {
                if let Poll::Ready(r) = worker.poll_recv(&mut f.req) {
                    f.outcome = Some(r);
                }
            }
        }
        while self.fragments.front().is_some_and(|f| f.outcome.is_some()) {
            let Some(f) = self.fragments.pop_front() else {
                break;
            };
            self.deliver(f);
        }
        for d in &mut self.directs {
            if !d.done {
                if let Poll::Ready(r) = worker.poll_recv(&mut d.req) {
                    d.done = true;
                    let r = r.and_then(|info| check_length(info, d.expected));
                    if let Err(e) = r {
                        self.error.get_or_insert(e);
                    }
                }
            }
        }
        self.pump(worker);
        let all_posted = self
            .plan
            .as_ref()
            .map_or(true, |(p, _)| self.next_fragment >= p.fragments());
        if all_posted && self.fragments.is_empty() && self.directs.iter().all(|d| d.done) {
            return Poll::Ready(self.finish());
        }
        Poll::Pending
    }

    fn deliver(&mut self, f: Fragment) {
        let Some((plan, _)) = &self.plan else { return };
        let expected = plan.fragment_len(f.index);
        let offset = plan.fragment_offset(f.index);
        let outcome = f
            .outcome
            .unwrap_or(Err(Error::InvalidRequest))
            .and_then(|info| check_length(info, expected));
        match outcome {
            Err(e) => {
                self.error.get_or_insert(e);
            }
            Ok(()) if self.error.is_none() => {
                if let (Some(reader), Some(state)) = (&mut self.reader, &mut self.state) {
                    if let Err(e) = reader.consume(&mut **state, offset, &f.buffer) {
                        self.error = Some(e);
                    }
                }
            }
            Ok(()) => {}
        }
        self.spare.push(f.buffer);
    }

    fn finish(&mut self) -> Result<Status> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let (plan, _) = self.plan.as_ref().ok_or(Error::InvalidMessage)?;
        let source = self
            .source
            .and_then(|w| self.route.group.comm_rank(w))
            .unwrap_or(crate::PROC_NULL);
        Ok(Status {
            source,
            tag: self.tag,
            bytes: Some(plan.shape().total_bytes()),
            kind: crate::tag::MessageKind::Custom,
            cancelled: false,
        })
    }

    /// Cancels a receive whose lead has not matched yet.
    pub(crate) fn cancel(&mut self, worker: &Worker) -> Result<()> {
        if let Some(r) = &self.lead_req {
            worker.cancel(r);
        }
        Ok(())
    }

    /// Stops early: cancels every outstanding receive; completes with `error`.
    pub(crate) fn abort(&mut self, worker: &Worker, error: Error) {
        self.error.get_or_insert(error);
        if let Some((plan, _)) = &self.plan {
            self.next_fragment = plan.fragments();
        }
        self.started = self.plan.is_some();
        let pending = self
            .lead_req
            .iter()
            .chain(self.fragments.iter().filter_map(|f| f.req.as_ref()));
        for r in pending.chain(self.directs.iter().filter_map(|d| d.req.as_ref())) {
            worker.cancel(r);
        }
    }
}

/// A private message must be exactly as long as announced; an empty one means the sender
/// failed after its lead left.
fn check_length(info: RecvInfo, expected: usize) -> Result<()> {
    if expected == usize::MAX || info.length == expected {
        Ok(())
    } else if info.length == 0 {
        Err(Error::RemoteFailure)
    } else {
        Err(Error::Transport(format!(
            "private message of {} bytes, expected {expected}",
            info.length
        )))
    }
}
