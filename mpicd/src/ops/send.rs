//! The send side of a custom-typed message: query, regions, plan, then the lead message (and
//! the region table, when it is too long for the lead), the body message (the rest of the
//! stream, which UCX asks our [`Packer`] for fragment by fragment, straight into its transport
//! buffers) and a bounded window of zero-copy region messages.
//!
//! Every message is posted when the send starts, except the region messages, which go out in
//! order as earlier ones complete. The send's [`Course`] says what happens to the rest after a
//! failure: a failed send still sends every message the receiver expects (zeros, or empty
//! messages, which the receiver reads as "the sender failed"); a stopped one posts nothing more
//! and, when its peer died, leaves what is in flight to the engine at once.

use super::{Context, Course, Link};
use crate::error::{class, Error, Result};
use crate::plan::{choose, PackState, RawRegion, Reach, RegionList, StreamWriter};
use crate::status::Status;
use crate::tag::{private_tag, MessageKind, UserTag};
use crate::transport::{StreamEnd, StreamPort, Worker};
use crate::wire::{RegionShape, Shape, WirePlan};
use std::collections::VecDeque;
use std::task::Poll;

/// The sender's stream as UCX asks for it: the body message is the stream after the lead's
/// inline bytes, then the status trailer (zero, or one when a pack failed: UCX cannot cut a
/// message short, so the rest of a failed body is zeros).
struct Packer {
    writer: StreamWriter,
    /// The message's plan (its shape drives the writer).
    plan: WirePlan,
    /// The state's regions, taken once (coalesced ones are copied into the stream; the
    /// others are sent from here).
    regions: RegionList<RawRegion>,
    error: Option<Error>,
    state: Box<dyn PackState>,
}

impl StreamEnd for Packer {
    fn length(&self) -> usize {
        self.plan.body_message_bytes()
    }

    fn pack(&mut self, offset: usize, dst: &mut [u8]) {
        let (offset, bytes) = (offset as u64, self.plan.body_bytes());
        let in_stream = (bytes.saturating_sub(offset) as usize).min(dst.len());
        let (body, trailer) = dst.split_at_mut(in_stream);
        if !body.is_empty() {
            if self.error.is_none() {
                let (state, at) = (&mut *self.state, self.plan.inline_bytes + offset);
                let (writer, plan, regions) = (&mut self.writer, &self.plan, &self.regions);
                let (timed, n) = (writer.past_packed(at), body.len());
                let mut fill = |streaming: bool| {
                    writer.set_streaming(streaming);
                    writer.fill(state, &plan.shape, regions, at, body)
                };
                // A fragment of coalesced regions only is our copy alone: timed as one, its long
                // regions may go with non-temporal stores (see `stream_copy`). One with packed
                // bytes runs the type's pack, whose speed says nothing about the copy.
                let filled = if timed {
                    super::stream_copy::fragment(n, fill)
                } else {
                    fill(false)
                };
                if let Err(e) = filled {
                    self.error = Some(e);
                }
            }
            if self.error.is_some() {
                body.fill(0);
            }
        }
        if !trailer.is_empty() {
            let word = u64::from(self.error.is_some()).to_le_bytes();
            let from = (offset + in_stream as u64 - bytes) as usize;
            trailer.copy_from_slice(&word[from..from + trailer.len()]);
        }
    }

    fn unpack(&mut self, _offset: usize, _src: &[u8]) {}

    fn poisoned(&mut self) {
        self.error.get_or_insert(Error::Callback {
            callback: "pack",
            code: class::ERR_OTHER,
        });
    }
}

pub(crate) struct SendOp<L: Link = Worker> {
    // Requests first: they must be released before the memory they point to.
    lead_req: Option<L::Request>,
    table_req: Option<L::Request>,
    body_req: Option<L::Request>,
    /// Zero-copy region sends in flight (at most `zcopy_depth`).
    region_reqs: VecDeque<Option<L::Request>>,
    lead: Vec<u8>,
    /// The region table, when it travels apart from the lead.
    table: Vec<u8>,
    /// What UCX holds while the body is in flight: a pointer to `packer`.
    port: Option<Box<StreamPort>>,
    packer: Box<Packer>,
    /// Zero-copy region messages posted so far, and where to look for the next one (a run of
    /// the shape and a region index).
    regions_posted: u64,
    next_region: (usize, usize),
    peer: u32,
    zcopy_depth: usize,
    course: Course,
}

/// Zero-copy regions go as synchronous sends: a region below UCX's rendezvous threshold is
/// otherwise sent eagerly and completes at once, and the window of regions in flight would
/// bound nothing (the receiver's unexpected queue would take them all).
const SYNCHRONOUS_REGIONS: bool = true;

/// Where a send goes: the communicator's context, the destination's world rank, the tag, and
/// where the destination runs.
pub(crate) struct Destination {
    pub context: u32,
    pub rank: u32,
    pub tag: i32,
    pub reach: Reach,
}

impl<L: Link> SendOp<L> {
    /// Plans the message and sends its lead, its body and the first region messages (the
    /// context's endpoint is the destination's). A failure here (a callback error before
    /// anything left) fails the send after a failure lead.
    pub(crate) fn start(
        ctx: &mut Context<'_, L>,
        dest: Destination,
        mut state: Box<dyn PackState>,
        synchronous: bool,
    ) -> Result<SendOp<L>> {
        let ep = ctx.endpoint.ok_or(Error::ProcFailed {
            rank: dest.rank as i32,
        })?;
        let mut op = match Self::prepare(ctx, &mut *state, dest.reach) {
            Ok((plan, writer, lead, regions)) => {
                crate::tool::pvar::custom_plan(plan.private_messages(), plan.region_messages());
                SendOp::new(plan, writer, lead, regions, state)
            }
            Err(e) => {
                // Nothing left yet: tell the receiver with a failure lead, so it does not wait
                // for a message that will never come.
                let plan = WirePlan::failure();
                let mut lead = Vec::new();
                plan.encode_header(&mut lead);
                let writer = StreamWriter::new(0, plan.zcopy_threshold);
                let mut op = SendOp::new(plan, writer, lead, Vec::new(), state);
                op.course.fail(e);
                op
            }
        };
        op.peer = dest.rank;
        op.zcopy_depth = ctx.config.zcopy_depth.max(1);

        let me = ctx.rank;
        let bits = UserTag {
            kind: MessageKind::Custom,
            context: dest.context,
            source: me,
            tag: dest.tag,
        }
        .encode();
        // SAFETY: `lead` is owned by the op, which keeps it until the send completes (the heap
        // buffer does not move when the op does).
        op.lead_req = unsafe {
            ctx.worker
                .tag_send(ep, op.lead.as_ptr(), op.lead.len(), bits, synchronous)
        }?;
        // The lead is in flight: from here on a failure is recorded, not returned, so that the
        // op (and the lead's buffer) lives until the lead's send completes.
        if op.packer.plan.table_apart {
            op.packer.plan.encode_table(&mut op.table);
            let tag = private_tag(me, op.packer.plan.table_seq());
            // Synchronous: it completes once the receiver took it.
            // SAFETY: `table` is owned by the op and kept until the send completes (the heap
            // buffer does not move when the op does).
            let sent = unsafe {
                ctx.worker
                    .tag_send(ep, op.table.as_ptr(), op.table.len(), tag, true)
            };
            match sent {
                Ok(req) => op.table_req = req,
                Err(e) => op.course.fail(e),
            }
        }
        if op.packer.plan.body_messages() > 0 {
            op.send_body(ctx.worker, ep, private_tag(me, op.packer.plan.body_seq()));
        }
        op.pump_regions(ctx);
        Ok(op)
    }

    /// Queries the state, chooses the plan, and packs the lead's inline bytes.
    #[allow(clippy::type_complexity)]
    fn prepare(
        ctx: &mut Context<'_, L>,
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
        let mut plan = choose(shape, ctx.config, reach)?;
        plan.seq_base = ctx.reserve_sequence(plan.private_messages());
        let mut writer = StreamWriter::new(packed_bytes, plan.zcopy_threshold);

        let mut lead = ctx.worker.lead_buffer();
        plan.encode_header(&mut lead);
        let at = lead.len();
        lead.resize(at + plan.inline_bytes as usize, 0);
        writer.fill(state, &plan.shape, &regions, 0, &mut lead[at..])?;
        debug_assert_eq!(lead.len(), plan.lead_bytes());

        Ok((plan, writer, lead, regions))
    }

    fn new(
        plan: WirePlan,
        writer: StreamWriter,
        lead: Vec<u8>,
        regions: Vec<RawRegion>,
        state: Box<dyn PackState>,
    ) -> SendOp<L> {
        let packer = Box::new(Packer {
            writer,
            plan,
            regions: RegionList(regions),
            error: None,
            state,
        });
        SendOp {
            lead_req: None,
            table_req: None,
            body_req: None,
            region_reqs: VecDeque::new(),
            lead,
            table: Vec::new(),
            port: None,
            packer,
            regions_posted: 0,
            next_region: (0, 0),
            peer: 0,
            zcopy_depth: 1,
            course: Course::Running,
        }
    }

    /// The destination's world rank.
    pub(crate) fn peer(&self) -> u32 {
        self.peer
    }

    /// Sends the body message: UCX calls the packer as it sends it (some of it during this
    /// call). After an error, an empty message tells the receiver instead.
    fn send_body(&mut self, worker: &L, ep: &L::Endpoint, tag: u64) {
        let mut sent = Err(Error::Cancelled);
        if self.course.is_running() {
            let end: *mut dyn StreamEnd = &mut *self.packer as *mut Packer;
            let port = self.port.insert(Box::new(StreamPort(end)));
            // SAFETY: the port and the packer are boxed in the op, which keeps them until the
            // request completes (or strands them, see `strand`); nothing borrows the packer
            // while UCX runs.
            sent = unsafe { worker.tag_send_stream(ep, &mut **port, tag) };
            if let Err(e) = &sent {
                self.course.fail(e.clone());
            }
        }
        if sent.is_err() {
            // SAFETY: a zero-byte send reads no memory.
            sent = unsafe { worker.tag_send(ep, self.lead.as_ptr(), 0, tag, false) };
        }
        match sent {
            Ok(req) => self.body_req = req,
            Err(e) => self.course.fail(e),
        }
    }

    /// Sends the next zero-copy regions, in order, while fewer than `zcopy_depth` are in
    /// flight. After an error each remaining region tag gets an empty message instead, which
    /// the receiver reads as "the sender failed"; once stopped, nothing more is sent.
    fn pump_regions(&mut self, ctx: &Context<'_, L>) {
        if self.course.is_stopped() {
            return;
        }
        let Some(ep) = ctx.endpoint else {
            self.course.stop(Error::ProcFailed {
                rank: self.peer as i32,
            });
            return;
        };
        let worker = ctx.worker;
        while self.regions_posted < self.packer.plan.region_messages()
            && self.region_reqs.len() < self.zcopy_depth
        {
            let tag = private_tag(ctx.rank, self.packer.plan.region_seq(self.regions_posted));
            self.regions_posted += 1;
            let mut region = None;
            if self.course.is_running() {
                let found = self.packer.plan.next_zero_copy(&mut self.next_region);
                match found.and_then(|(i, bytes)| Some((self.packer.regions.get(i)?, bytes))) {
                    Some((r, bytes)) if r.bytes as u64 == bytes => region = Some(*r),
                    _ => self.course.fail(Error::InvalidDatatype(
                        "the regions differ from their shape".into(),
                    )),
                }
            }
            let mut sent = Err(Error::Cancelled);
            if let Some(r) = region {
                // SAFETY: PackState guarantees its regions stay valid until the state is
                // dropped, which happens after this op completes.
                sent = unsafe { worker.tag_send(ep, r.ptr, r.bytes, tag, SYNCHRONOUS_REGIONS) };
                if let Err(e) = &sent {
                    self.course.fail(e.clone());
                }
            }
            if sent.is_err() {
                // SAFETY: a zero-byte send reads no memory.
                sent = unsafe { worker.tag_send(ep, self.lead.as_ptr(), 0, tag, false) };
            }
            match sent {
                Ok(Some(req)) => self.region_reqs.push_back(Some(req)),
                Ok(None) => {}
                Err(e) => self.course.fail(e),
            }
        }
    }

    /// Advances the message; ready when every message has left (at once, when the peer died:
    /// what is still in flight is stranded).
    pub(crate) fn poll(&mut self, ctx: &mut Context<'_, L>) -> Poll<Result<Status>> {
        if self.course.peer_lost() {
            self.strand(ctx);
            return Poll::Ready(self.course.outcome(Status::empty()));
        }
        let worker = ctx.worker;
        let record = |r: Poll<Result<()>>, course: &mut Course| match r {
            Poll::Pending => false,
            Poll::Ready(Ok(())) => true,
            Poll::Ready(Err(e)) => {
                course.fail(e);
                true
            }
        };
        let lead_done = record(worker.poll_send(&mut self.lead_req), &mut self.course)
            & record(worker.poll_send(&mut self.table_req), &mut self.course);
        let body_done = record(worker.poll_send(&mut self.body_req), &mut self.course);
        if let Some(e) = &self.packer.error {
            self.course.fail(e.clone());
        }
        let course = &mut self.course;
        self.region_reqs
            .retain_mut(|r| !record(worker.poll_send(r), course));
        if self.regions_posted < self.packer.plan.region_messages() {
            self.pump_regions(ctx);
        }
        let regions_done =
            self.course.is_stopped() || self.regions_posted >= self.packer.plan.region_messages();
        if lead_done && body_done && self.region_reqs.is_empty() && regions_done {
            ctx.worker.recycle_lead(std::mem::take(&mut self.lead));
            return Poll::Ready(self.course.outcome(Status::empty()));
        }
        Poll::Pending
    }

    /// Hands every request still in flight, with the memory it uses, to the engine.
    fn strand(&mut self, ctx: &mut Context<'_, L>) {
        let lead = std::mem::take(&mut self.lead);
        if let Some(r) = self.lead_req.take() {
            ctx.strand(r, Box::new(lead));
        }
        let table = std::mem::take(&mut self.table);
        if let Some(r) = self.table_req.take() {
            ctx.strand(r, Box::new(table));
        }
        if let (Some(r), Some(port)) = (self.body_req.take(), self.port.take()) {
            // The packer (and the user's state) goes with the op; should UCX still ask the
            // port for bytes, it gets zeros.
            let length = self.packer.length();
            ctx.strand(r, Box::new(StreamPort::detach(port, length)));
        }
        // Regions are the user's memory, which a dead peer no longer reads: their requests are
        // released now (UCX frees a pending request when it completes).
        self.region_reqs.clear();
    }

    /// Stops early: cancels what is in flight; completes with `error` (at once when the peer
    /// died, without waiting for sends that UCX may never complete).
    pub(crate) fn abort(&mut self, worker: &L, error: Error) {
        self.course.stop(error);
        for r in self
            .lead_req
            .iter()
            .chain(self.table_req.iter())
            .chain(self.body_req.iter())
            .chain(self.region_reqs.iter().flatten())
        {
            worker.cancel(r);
        }
    }
}
