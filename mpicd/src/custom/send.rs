//! The send side of a custom-typed message: query, regions, plan, then the lead message, the
//! zero-copy regions and a bounded pipeline of fragments packed as the transport drains them.

use super::stream::StreamWriter;
use super::wire::WirePlan;
use super::{PackState, RegionShape};
use crate::engine::{Engine, Route};
use crate::error::{Error, Result};
use crate::status::Status;
use crate::tag::{private_tag, MessageKind, UserTag};
use crate::transport::{UcxRequest, Worker};
use std::collections::VecDeque;
use std::task::Poll;

/// A fragment buffer and the send that is using it.
struct InFlight {
    buffer: Vec<u8>,
    req: Option<UcxRequest>,
}

pub(crate) struct SendOp {
    // Requests first: they must be released before the memory they point to.
    lead_req: Option<UcxRequest>,
    region_reqs: Vec<Option<UcxRequest>>,
    in_flight: VecDeque<InFlight>,
    spare: Vec<Vec<u8>>,
    _lead: Vec<u8>,
    plan: WirePlan,
    writer: StreamWriter,
    next_fragment: u64,
    peer: u32,
    depth: usize,
    error: Option<Error>,
    state: Box<dyn PackState>,
}

impl SendOp {
    /// Plans the message and sends its lead and zero-copy regions. A failure here (a callback
    /// error before anything left) fails the send without sending anything.
    pub(crate) fn start(
        engine: &mut Engine,
        route: &Route,
        dest: u32,
        tag: i32,
        mut state: Box<dyn PackState>,
        synchronous: bool,
    ) -> Result<SendOp> {
        let prepared = Self::prepare(engine, &mut *state);
        let (plan, writer, lead, regions, failure) = match prepared {
            Ok((plan, writer, lead, regions)) => (plan, writer, lead, regions, None),
            Err(e) => {
                // Nothing left yet: tell the receiver with a failure lead, so it does not wait
                // for a message that will never come.
                let plan = WirePlan::failure();
                let mut lead = Vec::new();
                plan.encode_header(&mut lead);
                (
                    plan,
                    StreamWriter::new(0, std::iter::empty()),
                    lead,
                    Vec::new(),
                    Some(e),
                )
            }
        };

        let me = engine.rank;
        let bits = UserTag {
            kind: MessageKind::Custom,
            context: route.context,
            source: me,
            tag,
        }
        .encode();
        engine.connect(dest)?;
        let ep = engine
            .existing_endpoint(dest)
            .ok_or(Error::ProcFailed { rank: dest as i32 })?;
        // SAFETY: `lead` is moved into the returned op, which keeps it until the send completes
        // (the heap buffer does not move when the Vec does).
        let lead_req = unsafe {
            engine
                .worker
                .tag_send(ep, lead.as_ptr(), lead.len(), bits, synchronous)
        }?;
        let mut region_reqs = Vec::new();
        let first_region_seq = plan.seq_base + plan.fragments();
        let zero_copy: Vec<usize> = plan.zero_copy_regions().collect();
        let zero_copy_count = zero_copy.len();
        for (k, i) in zero_copy.into_iter().enumerate() {
            let r = regions[i];
            let ptag = private_tag(me, first_region_seq + k as u64);
            // SAFETY: PackState guarantees its regions stay valid until the state is dropped,
            // which happens after this op completes.
            let req = unsafe { engine.worker.tag_send(ep, r.ptr, r.bytes, ptag, false) };
            match req {
                Ok(req) => region_reqs.push(req),
                Err(e) => {
                    // The lead is out: the receiver expects these messages. Record the error;
                    // empty messages on this and the remaining region tags (here) and on the
                    // fragment tags (`pump`) release the receiver. The lead buffer stays with
                    // the op: its send may still be in flight.
                    for k in k..zero_copy_count {
                        let ptag = private_tag(me, first_region_seq + k as u64);
                        // SAFETY: a zero-byte send reads no memory.
                        let empty =
                            unsafe { engine.worker.tag_send(ep, lead.as_ptr(), 0, ptag, false) };
                        if let Ok(req) = empty {
                            region_reqs.push(req);
                        }
                    }
                    let mut op =
                        SendOp::new(lead_req, region_reqs, plan, writer, dest, state, lead);
                    op.error = Some(e);
                    return Ok(op);
                }
            }
        }
        let mut op = SendOp::new(lead_req, region_reqs, plan, writer, dest, state, lead);
        op.error = failure;
        op.depth = engine.custom.pipeline_depth;
        op.pump(&engine.worker, engine.existing_endpoint(dest), me);
        Ok(op)
    }

    /// Queries the state, chooses the plan, and packs the lead's inline bytes.
    #[allow(clippy::type_complexity)]
    fn prepare(
        engine: &mut Engine,
        state: &mut dyn PackState,
    ) -> Result<(WirePlan, StreamWriter, Vec<u8>, Vec<super::RawRegion>)> {
        let packed_bytes = state.packed_size()?;
        let regions = state.regions()?;
        let shapes: Vec<RegionShape> = regions
            .iter()
            .map(|r| RegionShape {
                bytes: r.bytes as u64,
                elem: r.elem,
            })
            .collect();
        let mut plan = WirePlan::choose(packed_bytes, &shapes, &engine.custom);
        plan.seq_base = engine.reserve_sequence(plan.private_messages());
        let coalesced = regions
            .iter()
            .zip(&plan.regions)
            .filter(|(_, (_, zc))| !zc)
            .map(|(r, _)| (r.ptr, r.bytes));
        let mut writer = StreamWriter::new(packed_bytes, coalesced);

        let mut lead = Vec::with_capacity(64 + plan.inline_bytes as usize);
        plan.encode_header(&mut lead);
        let at = lead.len();
        lead.resize(at + plan.inline_bytes as usize, 0);
        writer.fill(state, 0, &mut lead[at..])?;

        Ok((plan, writer, lead, regions))
    }

    fn new(
        lead_req: Option<UcxRequest>,
        region_reqs: Vec<Option<UcxRequest>>,
        plan: WirePlan,
        writer: StreamWriter,
        peer: u32,
        state: Box<dyn PackState>,
        lead: Vec<u8>,
    ) -> SendOp {
        SendOp {
            lead_req,
            region_reqs,
            in_flight: VecDeque::new(),
            spare: Vec::new(),
            _lead: lead,
            plan,
            writer,
            next_fragment: 0,
            peer,
            depth: 1,
            error: None,
            state,
        }
    }

    pub(crate) fn peer(&self) -> u32 {
        self.peer
    }

    /// Packs and sends fragments while fewer than the pipeline depth are in flight. After an
    /// error, the remaining fragment tags get empty messages, which the receiver reads as
    /// "the sender failed".
    fn pump(&mut self, worker: &Worker, ep: Option<&crate::transport::Endpoint>, me: u32) {
        let Some(ep) = ep else {
            self.error.get_or_insert(Error::ProcFailed {
                rank: self.peer as i32,
            });
            return;
        };
        let depth = self.writer_depth();
        while self.next_fragment < self.plan.fragments() && self.in_flight.len() < depth {
            let i = self.next_fragment;
            let tag = private_tag(me, self.plan.seq_base + i);
            let mut buffer = self.spare.pop().unwrap_or_default();
            if self.error.is_none() {
                buffer.resize(self.plan.fragment_len(i), 0);
                if let Err(e) =
                    self.writer
                        .fill(&mut *self.state, self.plan.fragment_offset(i), &mut buffer)
                {
                    self.error = Some(e);
                }
            }
            if self.error.is_some() {
                buffer.clear();
            }
            // Synchronous: the send completes only once the receiver matched the fragment. A
            // fragment below UCX's rendezvous threshold otherwise completes as soon as it is
            // copied out, the window stops limiting anything, and the whole stream can pile up
            // in the receiver's unexpected queue (measured: +52 MiB for a 256 MiB message with
            // 4 KiB fragments over tcp). Rendezvous-sized fragments are synchronous anyway.
            // SAFETY: the buffer is kept in `in_flight` until its send completes.
            match unsafe { worker.tag_send(ep, buffer.as_ptr(), buffer.len(), tag, true) } {
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
        let worker = &engine.worker;
        let record = |r: Poll<Result<()>>, error: &mut Option<Error>| match r {
            Poll::Pending => false,
            Poll::Ready(Ok(())) => true,
            Poll::Ready(Err(e)) => {
                error.get_or_insert(e);
                true
            }
        };
        let lead_done = record(worker.poll_send(&mut self.lead_req), &mut self.error);
        let mut regions_done = true;
        for r in &mut self.region_reqs {
            regions_done &= record(worker.poll_send(r), &mut self.error);
        }
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
        if self.next_fragment < self.plan.fragments() {
            self.pump(&engine.worker, engine.existing_endpoint(self.peer), me);
        }
        if lead_done
            && regions_done
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

    /// Stops early: cancels what is in flight; completes with `error`.
    pub(crate) fn abort(&mut self, worker: &Worker, error: Error) {
        self.error.get_or_insert(error);
        self.next_fragment = self.plan.fragments();
        for r in self
            .lead_req
            .iter()
            .chain(self.region_reqs.iter().flatten())
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
