//! The send side of a custom-typed message: query, regions, plan, then the lead message (and
//! the region table, when it is too long for the lead), a bounded window of region messages
//! (batches of zero-copy regions) and a bounded pipeline of fragments packed as the transport
//! drains them.

use super::stream::{RegionList, StreamWriter};
use super::wire::{PullSource, Reach, WirePlan};
use super::{PackState, RawRegion, RegionShape, Shape};
use crate::engine::{Engine, Route, Stranded};
use crate::error::{Error, Result};
use crate::status::Status;
use crate::tag::{private_reply_match, private_tag, MessageKind, UserTag};
use crate::transport::{Collector, Endpoint, IovList, UcxRequest, Worker};
use std::collections::VecDeque;
use std::task::Poll;

/// A region message in flight: its send, then the scatter/gather list UCX reads until it
/// completes (empty for a batch of one region, sent as a contiguous message).
struct RegionSend {
    req: Option<UcxRequest>,
    iov: IovList,
}

/// A fragment buffer and the send that is using it.
struct InFlight {
    buffer: Vec<u8>,
    req: Option<UcxRequest>,
}

pub(crate) struct SendOp {
    // Requests first: they must be released before the memory they point to.
    lead_req: Option<UcxRequest>,
    /// The receiver's reply when it pulls the regions (see [`super::pull`]).
    reply_req: Option<UcxRequest>,
    reply: Box<Collector>,
    table_req: Option<UcxRequest>,
    /// Region messages in flight (at most `zcopy_depth`).
    region_sends: VecDeque<RegionSend>,
    /// Scatter/gather lists of completed region messages, for the next ones.
    spare_lists: Vec<IovList>,
    /// The regions of the batch being posted (indices and lengths).
    batch: Vec<(usize, u64)>,
    in_flight: VecDeque<InFlight>,
    spare: Vec<Vec<u8>>,
    lead: Vec<u8>,
    /// The region table, when it travels apart from the lead.
    table: Vec<u8>,
    plan: WirePlan,
    /// The state's regions, taken once.
    regions: RegionList<RawRegion>,
    writer: StreamWriter,
    next_fragment: u64,
    /// Region messages posted so far, and where to look for the next zero-copy region (a run
    /// of the shape and a region index).
    regions_posted: u64,
    next_region: (usize, usize),
    peer: u32,
    depth: usize,
    zcopy_depth: usize,
    error: Option<Error>,
    /// The peer died: what is in flight is handed to the engine, not awaited.
    peer_failed: bool,
    state: Box<dyn PackState>,
}

/// Region messages go as synchronous sends: a message below UCX's rendezvous threshold is
/// otherwise sent eagerly and completes at once, and the window of messages in flight would
/// bound nothing (the receiver's unexpected queue would take them all).
const SYNCHRONOUS_REGIONS: bool = true;

impl SendOp {
    /// Plans the message and sends its lead, then starts the zero-copy regions and fragments.
    /// A failure here (a callback error before anything left) fails the send after a failure
    /// lead.
    pub(crate) fn start(
        engine: &mut Engine,
        route: &Route,
        dest: u32,
        tag: i32,
        mut state: Box<dyn PackState>,
        synchronous: bool,
    ) -> Result<SendOp> {
        let cfg = engine.custom;
        engine.connect(dest)?;
        let reach = engine.reach(dest);
        let mut op = match Self::prepare(engine, &mut *state, reach) {
            Ok((plan, writer, lead, regions)) => SendOp::new(plan, writer, lead, regions, state),
            Err(e) => {
                // Nothing left yet: tell the receiver with a failure lead, so it does not wait
                // for a message that will never come.
                let plan = WirePlan::failure();
                let mut lead = Vec::new();
                plan.encode_header(&mut lead);
                let writer = StreamWriter::new(0, plan.zcopy_threshold);
                let mut op = SendOp::new(plan, writer, lead, Vec::new(), state);
                op.error = Some(e);
                op
            }
        };
        op.peer = dest;
        op.depth = cfg.pipeline_depth.max(1);
        op.zcopy_depth = cfg.zcopy_depth.max(1);

        let me = engine.rank;
        let bits = UserTag {
            kind: MessageKind::Custom,
            context: route.context,
            source: me,
            tag,
        }
        .encode();
        if op.plan.pull.is_some() {
            let m = private_reply_match(dest, op.plan.reply_seq());
            // SAFETY: the reply collector is boxed in the op and outlives the request.
            op.reply_req = Some(unsafe { engine.worker.tag_recv_collect(&mut *op.reply, m) }?);
        }
        let ep = engine
            .existing_endpoint(dest)
            .ok_or(Error::ProcFailed { rank: dest as i32 })?;
        // SAFETY: `lead` is owned by the op, which keeps it until the send completes (the heap
        // buffer does not move when the op does).
        op.lead_req = unsafe {
            engine
                .worker
                .tag_send(ep, op.lead.as_ptr(), op.lead.len(), bits, synchronous)
        }?;
        if op.plan.table_apart {
            op.plan.encode_table(&mut op.table);
            let tag = private_tag(me, op.plan.table_seq());
            // Synchronous, like the fragments: it completes once the receiver took it.
            // SAFETY: `table` is owned by the op and kept until the send completes (the heap
            // buffer does not move when the op does).
            let sent = unsafe {
                engine
                    .worker
                    .tag_send(ep, op.table.as_ptr(), op.table.len(), tag, true)
            };
            // The lead is in flight: a failure is recorded, not returned, so that the op (and
            // the lead's buffer) lives until the lead's send completes.
            match sent {
                Ok(req) => op.table_req = req,
                Err(e) => {
                    op.error.get_or_insert(e);
                }
            }
        }
        op.pump(&engine.worker, engine.existing_endpoint(dest), me);
        Ok(op)
    }

    /// Queries the state, chooses the plan, and packs the lead's inline bytes.
    #[allow(clippy::type_complexity)]
    fn prepare(
        engine: &mut Engine,
        state: &mut dyn PackState,
        reach: Reach,
    ) -> Result<(WirePlan, StreamWriter, Vec<u8>, Vec<RawRegion>)> {
        let packed_bytes = state.packed_size()?;
        let regions = state.regions()?;
        let shape = match state.shape_hint() {
            Some(mut shape) if shape.region_count() == regions.len() => {
                shape.packed_bytes = packed_bytes;
                shape
            }
            _ => Shape::new(
                packed_bytes,
                regions.iter().map(|r| RegionShape {
                    bytes: r.bytes as u64,
                    elem: r.elem,
                }),
            ),
        };
        // The receiver reads the list itself; its heap buffer stays put while the op owns it.
        let reach = match reach {
            Reach::NodeLocal(Some(pull)) => Reach::NodeLocal(Some(PullSource {
                table: regions.as_ptr() as u64,
                ..pull
            })),
            other => other,
        };
        let mut plan = WirePlan::choose(shape, &engine.custom, reach)?;
        plan.seq_base = engine.reserve_sequence(plan.sequence_numbers());
        let mut writer = StreamWriter::new(packed_bytes, plan.zcopy_threshold);

        let mut lead = Vec::with_capacity(plan.lead_bytes());
        plan.encode_header(&mut lead);
        let at = lead.len();
        lead.resize(at + plan.inline_bytes as usize, 0);
        writer.fill(state, &plan.shape, &regions, 0, &mut lead[at..])?;

        Ok((plan, writer, lead, regions))
    }

    fn new(
        plan: WirePlan,
        writer: StreamWriter,
        lead: Vec<u8>,
        regions: Vec<RawRegion>,
        state: Box<dyn PackState>,
    ) -> SendOp {
        SendOp {
            lead_req: None,
            reply_req: None,
            reply: Box::default(),
            table_req: None,
            region_sends: VecDeque::new(),
            spare_lists: Vec::new(),
            batch: Vec::new(),
            in_flight: VecDeque::new(),
            spare: Vec::new(),
            lead,
            table: Vec::new(),
            plan,
            regions: RegionList(regions),
            writer,
            next_fragment: 0,
            regions_posted: 0,
            next_region: (0, 0),
            peer: 0,
            depth: 1,
            zcopy_depth: 1,
            error: None,
            peer_failed: false,
            state,
        }
    }

    pub(crate) fn peer(&self) -> u32 {
        self.peer
    }

    /// Posts zero-copy regions and fragments while fewer than their windows are in flight.
    fn pump(&mut self, worker: &Worker, ep: Option<&Endpoint>, me: u32) {
        let Some(ep) = ep else {
            self.error.get_or_insert(Error::ProcFailed {
                rank: self.peer as i32,
            });
            return;
        };
        self.pump_regions(worker, ep, me);
        self.pump_fragments(worker, ep, me);
    }

    /// Sends the next region messages (batches of zero-copy regions), in order, while fewer than
    /// `zcopy_depth` are in flight. After an error each remaining region tag gets an empty
    /// message instead, which the receiver reads as "the sender failed".
    fn pump_regions(&mut self, worker: &Worker, ep: &Endpoint, me: u32) {
        while self.regions_posted < self.plan.region_messages()
            && self.region_sends.len() < self.zcopy_depth
        {
            let tag = private_tag(me, self.plan.region_seq(self.regions_posted));
            self.regions_posted += 1;
            let mut iov = self.spare_lists.pop().unwrap_or_default();
            iov.clear();
            if self.error.is_none() {
                if let Err(e) = self.gather_batch(&mut iov) {
                    self.error = Some(e);
                    iov.clear();
                }
            }
            let mut sent = Err(Error::Cancelled);
            if self.error.is_none() {
                // SAFETY: PackState guarantees its regions stay valid until the state is
                // dropped, which happens after this op completes; the list is kept with the
                // request in `region_sends`.
                sent = unsafe {
                    match iov.single() {
                        Some((ptr, len)) => worker.tag_send(ep, ptr, len, tag, SYNCHRONOUS_REGIONS),
                        None => worker.tag_send_iov(ep, &iov, tag, SYNCHRONOUS_REGIONS),
                    }
                };
                if let Err(e) = &sent {
                    self.error.get_or_insert(e.clone());
                }
            }
            if sent.is_err() {
                iov.clear();
                // SAFETY: a zero-byte send reads no memory.
                sent = unsafe { worker.tag_send(ep, self.lead.as_ptr(), 0, tag, false) };
            }
            match sent {
                Ok(Some(req)) => self.region_sends.push_back(RegionSend {
                    req: Some(req),
                    iov,
                }),
                Ok(None) => self.spare_lists.push(iov),
                Err(e) => {
                    self.error.get_or_insert(e);
                    self.spare_lists.push(iov);
                }
            }
        }
    }

    /// Lists the regions of the next batch in `iov`, checking them against the shape.
    fn gather_batch(&mut self, iov: &mut IovList) -> Result<()> {
        self.plan.next_batch(&mut self.next_region, &mut self.batch);
        if self.batch.is_empty() {
            return Err(Error::InvalidDatatype(
                "the regions differ from their shape".into(),
            ));
        }
        for &(i, bytes) in &self.batch {
            match self.regions.get(i) {
                Some(r) if r.bytes as u64 == bytes => iov.push(r.ptr as *mut u8, r.bytes),
                _ => {
                    return Err(Error::InvalidDatatype(
                        "the regions differ from their shape".into(),
                    ))
                }
            }
        }
        Ok(())
    }

    /// Packs and sends fragments while fewer than the pipeline depth are in flight. After an
    /// error, the remaining fragment tags get empty messages.
    fn pump_fragments(&mut self, worker: &Worker, ep: &Endpoint, me: u32) {
        let depth = self.writer_depth();
        while self.next_fragment < self.plan.fragments() && self.in_flight.len() < depth {
            let i = self.next_fragment;
            let tag = private_tag(me, self.plan.fragment_seq(i));
            let mut buffer = self.spare.pop().unwrap_or_default();
            if self.error.is_none() {
                buffer.resize(self.plan.fragment_len(i), 0);
                let offset = self.plan.fragment_offset(i);
                let (state, shape) = (&mut *self.state, &self.plan.shape);
                if let Err(e) = self
                    .writer
                    .fill(state, shape, &self.regions, offset, &mut buffer)
                {
                    self.error = Some(e);
                }
            }
            if self.error.is_some() {
                buffer.clear();
            }
            // Synchronous after the first window: such a send completes only once the receiver
            // matched the fragment. A fragment below UCX's rendezvous threshold otherwise
            // completes as soon as it is copied out, the window stops limiting anything, and the
            // whole stream can pile up in the receiver's unexpected queue (measured: +52 MiB for
            // a 256 MiB message with 4 KiB fragments over tcp). The first `depth` fragments go
            // eagerly: they are the window's worth the receiver may hold anyway, and a short
            // message then costs no acknowledgement round trip. Rendezvous-sized fragments are
            // synchronous anyway.
            let synchronous = i >= self.depth as u64;
            // SAFETY: the buffer is kept in `in_flight` until its send completes.
            let mut sent =
                unsafe { worker.tag_send(ep, buffer.as_ptr(), buffer.len(), tag, synchronous) };
            if let (Err(e), false) = (&sent, buffer.is_empty()) {
                // Tell the receiver with an empty message rather than leave it waiting.
                self.error.get_or_insert(e.clone());
                buffer.clear();
                // SAFETY: a zero-byte send reads no memory.
                sent = unsafe { worker.tag_send(ep, buffer.as_ptr(), 0, tag, true) };
            }
            match sent {
                Ok(req) => self.in_flight.push_back(InFlight { buffer, req }),
                Err(e) => {
                    self.error.get_or_insert(e);
                    self.spare.push(buffer);
                }
            }
            self.next_fragment += 1;
        }
    }

    fn writer_depth(&self) -> usize {
        // With an error pending nothing is packed, so the empty messages can all go at once.
        if self.error.is_some() {
            usize::MAX
        } else {
            self.depth
        }
    }

    /// Advances the pipeline; ready when every message has left.
    pub(crate) fn poll(&mut self, engine: &mut Engine) -> Poll<Result<Status>> {
        if self.peer_failed {
            self.strand(engine);
            let dead = Error::ProcFailed {
                rank: self.peer as i32,
            };
            return Poll::Ready(Err(self.error.take().unwrap_or(dead)));
        }
        let worker = &engine.worker;
        let record = |r: Poll<Result<()>>, error: &mut Option<Error>| match r {
            Poll::Pending => false,
            Poll::Ready(Ok(())) => true,
            Poll::Ready(Err(e)) => {
                error.get_or_insert(e);
                true
            }
        };
        let lead_done = record(worker.poll_send(&mut self.lead_req), &mut self.error)
            & record(worker.poll_send(&mut self.table_req), &mut self.error);
        // No reply request: none expected, or it came.
        let replied = self.reply_req.is_none()
            || match worker.poll_recv(&mut self.reply_req) {
                Poll::Pending => false,
                Poll::Ready(Ok(info)) if info.length == 0 => true,
                Poll::Ready(Ok(_)) => {
                    self.error.get_or_insert(Error::Transport(
                        "the receiver could not read this message's regions".into(),
                    ));
                    true
                }
                Poll::Ready(Err(e)) => {
                    self.error.get_or_insert(e);
                    true
                }
            };
        let (error, spare_lists) = (&mut self.error, &mut self.spare_lists);
        self.region_sends.retain_mut(|r| {
            let done = record(worker.poll_send(&mut r.req), error);
            if done {
                spare_lists.push(std::mem::take(&mut r.iov));
            }
            !done
        });
        let mut i = 0;
        while i < self.in_flight.len() {
            if record(
                worker.poll_send(&mut self.in_flight[i].req),
                &mut self.error,
            ) {
                if let Some(done) = self.in_flight.remove(i) {
                    self.spare.push(done.buffer);
                }
            } else {
                i += 1;
            }
        }
        let me = engine.rank;
        if self.next_fragment < self.plan.fragments()
            || self.regions_posted < self.plan.region_messages()
        {
            self.pump(&engine.worker, engine.existing_endpoint(self.peer), me);
        }
        if lead_done
            && replied
            && self.region_sends.is_empty()
            && self.regions_posted >= self.plan.region_messages()
            && self.in_flight.is_empty()
            && self.next_fragment >= self.plan.fragments()
        {
            return Poll::Ready(match self.error.take() {
                Some(e) => Err(e),
                None => Ok(Status::empty()),
            });
        }
        Poll::Pending
    }

    /// Hands every request still in flight, with the memory it uses, to the engine.
    fn strand(&mut self, engine: &mut Engine) {
        let lead = std::mem::take(&mut self.lead);
        if let Some(r) = self.lead_req.take() {
            engine.strand(Stranded::new(r, Box::new(lead)));
        }
        if let Some(r) = self.reply_req.take() {
            let reply = std::mem::take(&mut self.reply);
            engine.strand(Stranded::new(r, reply));
        }
        let table = std::mem::take(&mut self.table);
        if let Some(r) = self.table_req.take() {
            engine.strand(Stranded::new(r, Box::new(table)));
        }
        // Regions are the user's memory, which a dead peer no longer reads: their requests are
        // released now (UCX frees a pending request when it completes), but a scatter/gather
        // list is ours and stays with its request.
        for r in self.region_sends.drain(..) {
            if let Some(req) = r.req {
                engine.strand(Stranded::new(req, Box::new(r.iov)));
            }
        }
        for f in self.in_flight.drain(..) {
            if let Some(r) = f.req {
                engine.strand(Stranded::new(r, Box::new(f.buffer)));
            }
        }
    }

    /// Stops early: cancels what is in flight; completes with `error` (at once when the peer
    /// died, without waiting for sends that UCX may never complete).
    pub(crate) fn abort(&mut self, worker: &Worker, error: Error) {
        self.peer_failed = matches!(error, Error::ProcFailed { .. });
        self.error.get_or_insert(error);
        self.next_fragment = self.plan.fragments();
        self.regions_posted = self.plan.region_messages();
        for r in self
            .lead_req
            .iter()
            .chain(self.reply_req.iter())
            .chain(self.table_req.iter())
            .chain(self.region_sends.iter().filter_map(|r| r.req.as_ref()))
        {
            worker.cancel(r);
        }
        for f in &self.in_flight {
            if let Some(r) = &f.req {
                worker.cancel(r);
            }
        }
    }
}
