//! The receive side of a custom-typed message: match the lead, learn the shape, let the state
//! resize, check sizes (truncation is an error, never an overrun), then take the inline bytes,
//! the body message (UCX hands its fragments, in order, to our [`Unpacker`], which unpacks
//! them straight from UCX's transport buffers) and the zero-copy regions straight into the
//! receiver's memory (a bounded window, posted in order).
//!
//! Whatever goes wrong after the lead matched, every private message of the sender is still
//! received (into a discarding sink if need be), so the sender always completes. That includes
//! a custom-typed message matched by a contiguous receive: the engine then drains it through
//! [`RecvOp::drain`]. A custom receive that matches a contiguous message fails with
//! [`Error::DatatypeMismatch`]; that message was taken whole by the lead's collector, so there
//! is nothing left to drain.

use super::stream::{RegionList, StreamReader};
use super::wire::{Lead, WirePlan, HEADER_BYTES, LEAD_MAX, RUN_BYTES, TRAILER_BYTES};
use super::{RawRegionMut, Shape, UnpackState};
use crate::engine::{Engine, Route};
use crate::error::{Error, Result};
use crate::status::Status;
use crate::tag::{private_match, MessageKind};
use crate::transport::{
    Collector, MessageHandle, RecvInfo, StreamEnd, StreamPort, TagMatch, UcxRequest, Worker,
};
use std::collections::VecDeque;
use std::task::Poll;

/// Where the receiver's stream goes: the state and its regions, and the reader that walks
/// the sender's shape. UCX hands it the body message as it arrives (see [`StreamEnd`]); the
/// lead's inline bytes go through [`Unpacker::consume`] too.
#[derive(Default)]
struct Unpacker {
    reader: Option<StreamReader>,
    /// The sender's shape.
    shape: Shape,
    /// The receiver's regions, taken once from the state.
    regions: RegionList<RawRegionMut>,
    /// Stream offset where the body starts, and the body's stream bytes.
    start: u64,
    bytes: u64,
    /// The body's trailer: zero unless the sender's pack failed.
    trailer: [u8; TRAILER_BYTES],
    error: Option<Error>,
    state: Option<Box<dyn UnpackState>>,
}

impl Unpacker {
    /// Delivers stream bytes from stream offset `offset` to the state and the coalesced
    /// regions (nothing after an error).
    fn consume(&mut self, offset: u64, src: &[u8]) {
        if self.error.is_some() {
            return;
        }
        if let (Some(reader), Some(state)) = (&mut self.reader, &mut self.state) {
            if let Err(e) = reader.consume(&mut **state, &self.shape, &self.regions, offset, src) {
                self.error = Some(e);
            }
        }
    }

    /// The body's outcome once it arrived whole: a sender's failure first (what the
    /// receiver's callbacks made of the zeros that followed it does not matter), then ours.
    fn outcome(&mut self) -> Result<()> {
        if self.trailer != [0; TRAILER_BYTES] {
            return Err(Error::RemoteFailure);
        }
        self.error.take().map_or(Ok(()), Err)
    }
}

impl StreamEnd for Unpacker {
    fn length(&self) -> usize {
        self.bytes as usize + TRAILER_BYTES
    }

    fn pack(&mut self, _offset: usize, dst: &mut [u8]) {
        dst.fill(0);
    }

    fn unpack(&mut self, offset: usize, src: &[u8]) {
        let offset = offset as u64;
        let in_stream = (self.bytes.saturating_sub(offset) as usize).min(src.len());
        let (body, trailer) = src.split_at(in_stream);
        if !body.is_empty() {
            self.consume(self.start + offset, body);
        }
        if !trailer.is_empty() {
            let from = (offset + in_stream as u64 - self.bytes) as usize;
            if let Some(word) = self.trailer.get_mut(from..from + trailer.len()) {
                word.copy_from_slice(trailer);
            }
        }
    }

    fn poisoned(&mut self) {
        self.error.get_or_insert(Error::Callback {
            callback: "unpack",
            code: crate::error::class::ERR_OTHER,
        });
    }
}

/// The receive of the body message.
struct BodyRecv {
    req: Option<UcxRequest>,
    /// Drained into the discarding sink (after an error) rather than unpacked.
    drained: bool,
}

/// What a receive's state provides: its packed capacity, its regions and (if it tracked them)
/// their shape.
struct Provided {
    capacity: u64,
    regions: RegionList<RawRegionMut>,
    hint: Option<Shape>,
}

impl Provided {
    fn from(state: &mut dyn UnpackState) -> Result<Provided> {
        let capacity = state.packed_capacity()?;
        let regions = state.regions()?;
        let hint = state
            .shape_hint()
            .filter(|h| h.region_count() == regions.len());
        Ok(Provided {
            capacity,
            regions: RegionList(regions),
            hint,
        })
    }
}

/// A private receive whose content lands elsewhere (a region) or nowhere (a drain).
struct Direct {
    req: Option<UcxRequest>,
    expected: usize,
}

pub(crate) struct RecvOp {
    // Requests first: they are released before the memory they point to.
    lead_req: Option<UcxRequest>,
    /// The receive of the region table, when it travels apart from the lead.
    table_req: Option<UcxRequest>,
    body: Option<BodyRecv>,
    /// Region message receives (or their drains) in flight, at most `zcopy_depth`.
    directs: VecDeque<Direct>,
    lead: Box<Collector>,
    /// Made when needed (boxed: UCX writes into it while the op may move).
    table: Option<Box<Collector>>,
    /// A lead whose region table is on its way: the plan so far and the number of runs.
    awaiting_table: Option<(WirePlan, u64)>,
    /// Where drained messages go, made at the first drain.
    drain_sink: Option<Box<Collector>>,
    /// What UCX holds while the body arrives: a pointer to `unpacker`.
    port: Option<Box<StreamPort>>,
    unpacker: Box<Unpacker>,
    route: Route,
    source: Option<u32>,
    tag: i32,
    /// The decoded lead and where its inline stream bytes start.
    plan: Option<WirePlan>,
    inline_at: usize,
    /// A fixed-shape state's parts, taken when the receive was posted.
    early: Option<Result<Provided>>,
    body_posted: bool,
    /// Zero-copy region receives posted so far, and where to look for the next zero-copy
    /// region: a run of the sender's shape and a region index.
    regions_posted: u64,
    next_region: (usize, usize),
    zcopy_depth: usize,
    started: bool,
    discarding: bool,
    error: Option<Error>,
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
            table_req: None,
            body: None,
            directs: VecDeque::new(),
            // A lead is at most LEAD_MAX bytes; anything longer (a contiguous message this
            // receive matched) is drained past that, never held whole.
            lead: Box::new(Collector {
                keep: LEAD_MAX,
                bytes: engine.worker.lead_buffer(),
                ..Collector::default()
            }),
            table: None,
            awaiting_table: None,
            drain_sink: None,
            port: None,
            unpacker: Box::new(Unpacker {
                state,
                ..Unpacker::default()
            }),
            route: route.clone(),
            source,
            tag: 0,
            plan: None,
            inline_at: 0,
            early: None,
            body_posted: false,
            regions_posted: 0,
            next_region: (0, 0),
            zcopy_depth: engine.custom.zcopy_depth.max(1),
            started: false,
            discarding: false,
            error: None,
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
        if let Some(state) = op.unpacker.state.as_mut().filter(|s| !s.resizes()) {
            // A fixed shape: its parts are built now, while the sender builds its own.
            op.early = Some(Provided::from(&mut **state));
        }
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

    /// Drains a custom-typed message that a contiguous receive took by mistake (its lead is
    /// consumed; `plan` comes from the lead's header): every private message of the sender is
    /// received and dropped, then the operation completes with `error`.
    pub(crate) fn drain(
        engine: &mut Engine,
        route: &Route,
        source: u32,
        tag: i32,
        plan: WirePlan,
        error: Error,
    ) -> RecvOp {
        let mut op = RecvOp::new(engine, route, Some(source), None);
        op.tag = tag;
        op.started = true;
        op.discarding = true;
        op.error = Some(error);
        if plan.table_apart {
            let m = private_match(source, plan.table_seq());
            match post_drain(&mut op.drain_sink, &engine.worker, m) {
                Ok(req) => op.directs.push_back(Direct {
                    req: Some(req),
                    expected: usize::MAX,
                }),
                Err(e) => op.error = Some(e),
            }
        }
        op.plan = Some(plan);
        op.pump(&engine.worker);
        op
    }

    /// Gives a matched message its receive state.
    pub(crate) fn attach(&mut self, engine: &mut Engine, state: Box<dyn UnpackState>) {
        self.unpacker.state = Some(state);
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
            if let Some(plan) = &self.plan {
                return Ok(Some(plan.shape.clone()));
            }
            if let Poll::Ready(Err(e)) = self.poll_lead(engine) {
                return Err(e);
            }
            if self.plan.is_none() {
                engine.progress();
            }
        }
    }

    /// Waits for the lead (and the region table, if it travels apart) and decodes the plan.
    fn poll_lead(&mut self, engine: &mut Engine) -> Poll<Result<()>> {
        if self.plan.is_some() {
            return Poll::Ready(Ok(()));
        }
        if self.awaiting_table.is_none() {
            let info = match engine.worker.poll_recv(&mut self.lead_req) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(info)) => info,
            };
            let status = Status::from_tag(info.sender_tag, &self.route.group, None)?;
            self.tag = status.tag;
            let source = self.route.group.world_rank(status.source)?;
            self.source = Some(source);
            if status.kind == MessageKind::Contiguous {
                // A contiguous message: the collector took all of it (keeping at most
                // LEAD_MAX bytes), and its sender completes normally.
                self.lead.bytes = Vec::new();
                return Poll::Ready(Err(Error::DatatypeMismatch {
                    message: MessageKind::Contiguous,
                }));
            }
            if self.lead.received > LEAD_MAX {
                return Poll::Ready(Err(Error::InvalidDatatype(
                    "malformed custom message: lead longer than the protocol allows".into(),
                )));
            }
            match WirePlan::decode_lead(&self.lead.bytes)? {
                Lead::Complete { plan, inline_at } => {
                    self.plan = Some(plan);
                    self.inline_at = inline_at;
                    return Poll::Ready(Ok(()));
                }
                Lead::TableApart { plan, runs } => {
                    let m = private_match(source, plan.table_seq());
                    let table = self.table.insert(Box::new(Collector {
                        keep: usize::try_from(runs.saturating_mul(RUN_BYTES as u64)).unwrap_or(0),
                        ..Collector::default()
                    }));
                    // SAFETY: the table collector is boxed in the op and outlives the request.
                    self.table_req =
                        Some(unsafe { engine.worker.tag_recv_collect(&mut **table, m) }?);
                    self.inline_at = HEADER_BYTES;
                    self.awaiting_table = Some((plan, runs));
                }
            }
        }
        match engine.worker.poll_recv(&mut self.table_req) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Ready(Ok(_)) => {
                let Some((mut plan, runs)) = self.awaiting_table.take() else {
                    return Poll::Ready(Err(Error::InvalidMessage));
                };
                let Some(collected) = self.table.as_mut() else {
                    return Poll::Ready(Err(Error::InvalidMessage));
                };
                let table = std::mem::take(&mut collected.bytes);
                if collected.received != table.len() {
                    return Poll::Ready(Err(Error::InvalidDatatype(
                        "malformed custom message: region table of the wrong length".into(),
                    )));
                }
                plan.decode_table(runs, &table)?;
                self.plan = Some(plan);
                Poll::Ready(Ok(()))
            }
        }
    }

    /// Learns the shape, lets the state size itself, checks sizes, takes the inline bytes and
    /// posts the first private receives. Any failure switches to draining.
    fn start_body(&mut self, engine: &mut Engine) {
        self.started = true;
        let Some(plan) = self.plan.take() else {
            return;
        };
        let prepared = if plan.failed {
            Err(Error::RemoteFailure)
        } else if self.discarding {
            Err(Error::Cancelled)
        } else {
            self.prepare(&plan)
        };
        match prepared {
            Ok(()) => {
                self.unpacker.consume(0, &self.lead.bytes[self.inline_at..]);
                if let Some(e) = self.unpacker.error.take() {
                    self.error = Some(e);
                }
            }
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        engine
            .worker
            .recycle_lead(std::mem::take(&mut self.lead.bytes));
        self.plan = Some(plan);
        self.pump(&engine.worker);
    }

    /// Resizes (unless the state gave its parts when posted), checks the incoming shape against
    /// the receiver's buffers, and sets up the stream reader and the receiver's regions.
    fn prepare(&mut self, plan: &WirePlan) -> Result<()> {
        let state = self.unpacker.state.as_mut().ok_or(Error::InvalidMessage)?;
        let shape = &plan.shape;
        let Provided {
            capacity,
            regions,
            hint,
        } = match self.early.take() {
            Some(provided) => provided?,
            None => {
                state.resize(shape)?;
                Provided::from(&mut **state)?
            }
        };
        let fits = shape.packed_bytes <= capacity
            && shape.region_count() <= regions.len()
            && match &hint {
                Some(mine) => runs_fit(shape, mine),
                None => shape.run_slice().iter().all(|run| {
                    let start = run.end - run.count;
                    regions[start..run.end]
                        .iter()
                        .all(|mine| run.region.bytes <= mine.bytes as u64)
                }),
            };
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
        let unpacker = &mut *self.unpacker;
        unpacker.reader = Some(StreamReader::new(shape.packed_bytes, plan.zcopy_threshold));
        unpacker.shape = shape.clone();
        unpacker.regions = regions;
        unpacker.start = plan.inline_bytes;
        unpacker.bytes = plan.body_bytes();
        Ok(())
    }

    /// Posts the body's receive, and region receives while fewer than the zero-copy depth are
    /// outstanding; once an error is recorded, the rest are drained instead (through the same
    /// window).
    fn pump(&mut self, worker: &Worker) {
        let Some(plan) = &self.plan else { return };
        let source = self.source.unwrap_or(0);
        if !self.body_posted && plan.body_messages() > 0 {
            self.body_posted = true;
            let m = private_match(source, plan.body_seq());
            let mut req = Err(Error::Cancelled);
            if self.error.is_none() {
                let end: *mut dyn StreamEnd = &mut *self.unpacker as *mut Unpacker;
                let port = self.port.insert(Box::new(StreamPort(end)));
                // SAFETY: the port and the unpacker are boxed in the op, which keeps them until
                // the request completes; nothing borrows the unpacker while UCX runs.
                req = unsafe { worker.tag_recv_stream(&mut **port, m) };
                if let Err(e) = &req {
                    self.error.get_or_insert(e.clone());
                }
            }
            let drained = req.is_err();
            if drained {
                req = post_drain(&mut self.drain_sink, worker, m);
            }
            match req {
                Ok(r) => {
                    self.body = Some(BodyRecv {
                        req: Some(r),
                        drained,
                    })
                }
                Err(e) => {
                    self.error.get_or_insert(e);
                }
            }
        }
        while self.regions_posted < plan.region_messages() && self.directs.len() < self.zcopy_depth
        {
            let m = private_match(source, plan.region_seq(self.regions_posted));
            self.regions_posted += 1;
            // The next zero-copy region; none after an error.
            let target = match self.error {
                None => plan.next_zero_copy(&mut self.next_region),
                Some(_) => None,
            };
            if target.is_none() {
                self.error.get_or_insert(Error::InvalidMessage);
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
                    Some(mine) => Err(Error::Truncated {
                        message_bytes: bytes as u64,
                        buffer_bytes: mine.bytes as u64,
                    }),
                    None => Err(Error::InvalidMessage),
                };
                match &req {
                    Ok(_) => expected = bytes,
                    Err(e) => {
                        self.error.get_or_insert(e.clone());
                    }
                }
            }
            if req.is_err() {
                req = post_drain(&mut self.drain_sink, worker, m);
            }
            match req {
                Ok(r) => self.directs.push_back(Direct {
                    req: Some(r),
                    expected,
                }),
                Err(e) => {
                    self.error.get_or_insert(e);
                }
            }
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
            if self.unpacker.state.is_none() && !self.discarding {
                return Poll::Pending; // a matched message waiting for its receive
            }
            self.start_body(engine);
        }
        let worker = &engine.worker;
        if let Some(body) = &mut self.body {
            if let Poll::Ready(r) = worker.poll_recv(&mut body.req) {
                let drained = body.drained;
                self.body = None;
                if !drained {
                    let expected = self.plan.as_ref().map_or(0, |p| p.body_message_bytes());
                    let outcome = r
                        .and_then(|info| check_length(info, expected))
                        .and_then(|()| self.unpacker.outcome());
                    if let Err(e) = outcome {
                        self.error.get_or_insert(e);
                    }
                }
            }
        }
        let error = &mut self.error;
        self.directs
            .retain_mut(|d| match worker.poll_recv(&mut d.req) {
                Poll::Pending => true,
                Poll::Ready(r) => {
                    if let Err(e) = r.and_then(|info| check_length(info, d.expected)) {
                        error.get_or_insert(e);
                    }
                    false
                }
            });
        self.pump(worker);
        let all_posted = self.plan.as_ref().map_or(true, |p| {
            (self.body_posted || p.body_messages() == 0)
                && self.regions_posted >= p.region_messages()
        });
        if all_posted && self.body.is_none() && self.directs.is_empty() {
            return Poll::Ready(self.finish());
        }
        Poll::Pending
    }

    fn finish(&mut self) -> Result<Status> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let plan = self.plan.as_ref().ok_or(Error::InvalidMessage)?;
        let source = self
            .source
            .and_then(|w| self.route.group.comm_rank(w))
            .unwrap_or(crate::PROC_NULL);
        Ok(Status {
            source,
            tag: self.tag,
            bytes: Some(plan.shape.total_bytes()),
            kind: crate::tag::MessageKind::Custom,
            cancelled: false,
        })
    }

    /// Cancels a receive whose lead has not matched yet (a matched one goes on).
    pub(crate) fn cancel(&mut self, worker: &Worker) -> Result<()> {
        if let Some(r) = &self.lead_req {
            worker.cancel(r);
        }
        Ok(())
    }

    /// Stops early: cancels every outstanding receive; completes with `error`.
    pub(crate) fn abort(&mut self, worker: &Worker, error: Error) {
        self.error.get_or_insert(error);
        if let Some(plan) = &self.plan {
            self.body_posted = true;
            self.regions_posted = plan.region_messages();
        }
        self.started = self.plan.is_some();
        let pending = self
            .lead_req
            .iter()
            .chain(self.table_req.iter())
            .chain(self.body.iter().filter_map(|b| b.req.as_ref()));
        for r in pending.chain(self.directs.iter().filter_map(|d| d.req.as_ref())) {
            worker.cancel(r);
        }
    }
}

/// Posts a receive that drops the private message `m` matches, into `sink` (made on first use).
fn post_drain(
    sink: &mut Option<Box<Collector>>,
    worker: &Worker,
    m: TagMatch,
) -> Result<UcxRequest> {
    let sink = sink.get_or_insert_with(Box::default);
    // SAFETY: the drain sink is boxed in the op, never replaced, and outlives the request.
    unsafe { worker.tag_recv_collect(&mut **sink, m) }
}

/// True if every region of `sent` fits the region at the same index of `mine` (which may have
/// more regions): a walk over both run lists, not over the regions.
fn runs_fit(sent: &Shape, mine: &Shape) -> bool {
    let mut ours = mine.run_slice().iter().peekable();
    let mut at = 0usize; // regions of `sent` checked so far
    for run in sent.run_slice() {
        while at < run.end {
            let Some(m) = ours.peek() else {
                return false;
            };
            if m.end <= at {
                ours.next();
                continue;
            }
            if run.region.bytes > m.region.bytes {
                return false;
            }
            at = run.end.min(m.end);
        }
    }
    true
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::custom::RegionShape;
    use crate::datatype::ElementType;

    fn shape(lens: &[u64]) -> Shape {
        Shape::new(
            0,
            lens.iter().map(|&bytes| RegionShape {
                bytes,
                elem: ElementType::U8,
            }),
        )
    }

    fn brute(sent: &[u64], mine: &[u64]) -> bool {
        sent.len() <= mine.len() && sent.iter().zip(mine).all(|(s, m)| s <= m)
    }

    #[test]
    fn runs_fit_agrees_with_region_by_region() {
        let cases: &[(&[u64], &[u64])] = &[
            (&[8, 8, 8, 16, 16], &[8, 8, 16, 16, 16]),
            (&[8, 8, 8, 16, 16], &[8, 8, 8, 8, 16]),
            (&[8, 8], &[8]),
            (&[8, 8], &[8, 8, 0, 0]),
            (&[], &[]),
            (&[], &[1]),
            (&[0, 0, 5], &[0, 0, 4]),
        ];
        for (sent, mine) in cases {
            let fits = runs_fit(&shape(sent), &shape(mine));
            assert_eq!(fits, brute(sent, mine), "{sent:?} into {mine:?}");
        }
        // Random run structures.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..2000 {
            let gen = |next: &mut dyn FnMut(u64) -> u64| {
                let mut v = Vec::new();
                for _ in 0..next(6) {
                    let len = next(4);
                    v.extend(std::iter::repeat(len).take(1 + next(4) as usize));
                }
                v
            };
            let sent = gen(&mut next);
            let mine = gen(&mut next);
            assert_eq!(
                runs_fit(&shape(&sent), &shape(&mine)),
                brute(&sent, &mine),
                "{sent:?} into {mine:?}"
            );
        }
    }
}
