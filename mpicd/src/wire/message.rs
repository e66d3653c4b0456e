//! [`WirePlan`]: how one custom-typed message travels (its shape, which regions go zero-copy,
//! how its stream is cut, which private messages follow the lead), with the pure encoding and
//! decoding of its lead and region table. Choosing a plan is [`crate::plan`]'s job.

use super::*;
use crate::datatype::ElementType;
use crate::error::{Error, Result};

/// How one message travels: its shape, which regions go zero-copy, how the stream is cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WirePlan {
    /// Packed size and region runs (what the receiver learns).
    pub shape: Shape,
    /// Regions of at least this many bytes travel as their own zero-copy message (>= 1).
    pub zcopy_threshold: u64,
    /// Number of zero-copy regions.
    pub zero_copy_count: u64,
    /// Stream bytes: packed part plus coalesced regions.
    pub stream_bytes: u64,
    /// Stream bytes inside the lead message (the rest travels in the body message).
    pub inline_bytes: u64,
    /// First private sequence number of this message.
    pub seq_base: u64,
    /// The sender's callbacks failed before any data could be sent: the lead carries nothing
    /// but this flag, and the receive fails with `RemoteFailure`.
    pub failed: bool,
    /// The region runs travel as private message `seq_base` instead of inside the lead.
    pub table_apart: bool,
}

/// What a lead message tells at first sight: either the whole plan, or (when the region table
/// travels apart) a plan whose shape is still empty and the number of runs to expect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lead {
    Complete { plan: WirePlan, inline_at: usize },
    TableApart { plan: WirePlan, runs: u64 },
}

impl WirePlan {
    /// The plan of a message whose sender failed before any data left: an empty lead that
    /// tells the receiver so, instead of leaving it waiting for a message that never comes.
    pub(crate) fn failure() -> WirePlan {
        WirePlan {
            shape: Shape::default(),
            zcopy_threshold: u64::MAX,
            zero_copy_count: 0,
            stream_bytes: 0,
            inline_bytes: 0,
            seq_base: 0,
            failed: true,
            table_apart: false,
        }
    }

    /// True if a region of this shape travels as its own zero-copy message.
    pub(crate) fn is_zero_copy(&self, bytes: u64) -> bool {
        bytes >= self.zcopy_threshold
    }

    /// The next zero-copy region at or after the cursor (a run of the shape and a region
    /// index), as its index and length; the cursor moves past it. Whole runs of coalesced
    /// regions are skipped at once.
    pub(crate) fn next_zero_copy(&self, cursor: &mut (usize, usize)) -> Option<(usize, u64)> {
        let (run, region) = cursor;
        while let Some(r) = self.shape.run_slice().get(*run) {
            if *region < r.end && self.is_zero_copy(r.region.bytes) {
                *region += 1;
                return Some((*region - 1, r.region.bytes));
            }
            *run += 1;
            *region = (*region).max(r.end);
        }
        None
    }

    /// Stream bytes after the lead, carried by the body message.
    pub(crate) fn body_bytes(&self) -> u64 {
        self.stream_bytes - self.inline_bytes
    }

    /// Number of body messages: one when the stream does not fit in the lead.
    pub(crate) fn body_messages(&self) -> u64 {
        u64::from(self.body_bytes() > 0)
    }

    /// Bytes of the body message: the rest of the stream and the trailer.
    pub(crate) fn body_message_bytes(&self) -> usize {
        self.body_bytes() as usize + TRAILER_BYTES
    }

    /// Private messages before the body: the region table, when it travels apart.
    fn table_messages(&self) -> u64 {
        self.table_apart as u64
    }

    /// Sequence number of the region table message (when [`WirePlan::table_apart`]).
    pub(crate) fn table_seq(&self) -> u64 {
        self.seq_base
    }

    /// Sequence number of the body message.
    pub(crate) fn body_seq(&self) -> u64 {
        self.seq_base + self.table_messages()
    }

    /// Sequence number of the k-th zero-copy region message.
    pub(crate) fn region_seq(&self, k: u64) -> u64 {
        self.seq_base + self.table_messages() + self.body_messages() + k
    }

    /// Number of zero-copy region messages.
    pub(crate) fn region_messages(&self) -> u64 {
        self.zero_copy_count
    }

    /// Private sequence numbers this message uses.
    pub(crate) fn private_messages(&self) -> u64 {
        self.table_messages() + self.body_messages() + self.region_messages()
    }

    /// Bytes of the region table.
    pub(crate) fn table_bytes(&self) -> usize {
        RUN_BYTES * self.shape.run_slice().len()
    }

    /// Bytes of the lead message (at most [`LEAD_MAX`]).
    pub(crate) fn lead_bytes(&self) -> usize {
        let table = if self.table_apart {
            0
        } else {
            self.table_bytes()
        };
        HEADER_BYTES + table + self.inline_bytes as usize
    }

    /// Encodes the lead header and, unless it travels apart, the region table (the inline
    /// stream bytes follow).
    pub(crate) fn encode_header(&self, out: &mut Vec<u8>) {
        let runs = self.shape.run_slice();
        out.reserve(HEADER_BYTES + RUN_BYTES * runs.len());
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.extend_from_slice(&VERSION.to_le_bytes());
        let mut flags: u16 = 0;
        if self.failed {
            flags |= FLAG_FAILED;
        }
        if self.table_apart {
            flags |= FLAG_TABLE_APART;
        }
        out.extend_from_slice(&flags.to_le_bytes());
        for v in [
            self.shape.packed_bytes,
            self.stream_bytes,
            self.inline_bytes,
            self.seq_base,
            self.zcopy_threshold,
            runs.len() as u64,
            self.zero_copy_count,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        if !self.table_apart {
            self.encode_table(out);
        }
    }

    /// Encodes the region runs (the table message, when it travels apart).
    pub(crate) fn encode_table(&self, out: &mut Vec<u8>) {
        for run in self.shape.run_slice() {
            let word = run.region.bytes | ((run.region.elem.code() as u64) << ELEM_SHIFT);
            out.extend_from_slice(&word.to_le_bytes());
            out.extend_from_slice(&(run.count as u64).to_le_bytes());
        }
    }

    /// Decodes the fixed header at the start of a lead: a plan with an empty shape (enough to
    /// find and drain every private message of the message) and the number of region runs.
    pub(crate) fn decode_header(head: &[u8]) -> Result<(WirePlan, u64)> {
        let mut r = Reader { buf: head, pos: 0 };
        if r.u32()? != MAGIC {
            return Err(malformed("not an mpicd custom-typed message"));
        }
        if r.u16()? != VERSION {
            return Err(malformed("unsupported wire version"));
        }
        let flags = r.u16()?;
        if flags & !(FLAG_FAILED | FLAG_TABLE_APART) != 0 {
            return Err(malformed("unknown header flags"));
        }
        let packed_bytes = r.u64()?;
        let stream_bytes = r.u64()?;
        let inline_bytes = r.u64()?;
        let seq_base = r.u64()?;
        let zcopy_threshold = r.u64()?;
        let runs = r.u64()?;
        let zero_copy_count = r.u64()?;
        if zcopy_threshold == 0 {
            return Err(malformed("zero-copy threshold of zero"));
        }
        if inline_bytes > stream_bytes
            || inline_bytes > MAX_INLINE_BYTES as u64
            || stream_bytes - inline_bytes > (usize::MAX - TRAILER_BYTES) as u64
            || packed_bytes > stream_bytes
        {
            return Err(malformed("inconsistent sizes"));
        }
        let plan = WirePlan {
            shape: Shape::new(packed_bytes, []),
            zcopy_threshold,
            zero_copy_count,
            stream_bytes,
            inline_bytes,
            seq_base,
            failed: flags & FLAG_FAILED != 0,
            table_apart: flags & FLAG_TABLE_APART != 0,
        };
        // Sequence numbers must not wrap (the sender reserved them).
        let private = (plan.table_messages() + plan.body_messages()).checked_add(zero_copy_count);
        if private.and_then(|p| seq_base.checked_add(p)).is_none() {
            return Err(malformed("sequence numbers overflow"));
        }
        Ok((plan, runs))
    }

    /// Decodes a lead message: the whole plan and where its inline stream bytes start, or,
    /// when the region table travels apart, the plan so far (see [`WirePlan::decode_table`]).
    pub(crate) fn decode_lead(lead: &[u8]) -> Result<Lead> {
        if lead.len() > LEAD_MAX {
            return Err(malformed("lead message longer than the protocol allows"));
        }
        let (mut plan, runs) = WirePlan::decode_header(lead)?;
        let rest = &lead[HEADER_BYTES..];
        if plan.table_apart {
            if rest.len() as u64 != plan.inline_bytes {
                return Err(malformed("inconsistent sizes"));
            }
            return Ok(Lead::TableApart { plan, runs });
        }
        if runs > (rest.len() / RUN_BYTES) as u64 {
            return Err(malformed("region table longer than the message"));
        }
        let table = runs as usize * RUN_BYTES;
        if (rest.len() - table) as u64 != plan.inline_bytes {
            return Err(malformed("inconsistent sizes"));
        }
        plan.decode_table(runs, &rest[..table])?;
        Ok(Lead::Complete {
            plan,
            inline_at: HEADER_BYTES + table,
        })
    }

    /// Decodes a lead whose region table is inside it: the plan and where its inline stream
    /// bytes start.
    #[cfg(test)]
    pub(crate) fn decode(lead: &[u8]) -> Result<(WirePlan, usize)> {
        match WirePlan::decode_lead(lead)? {
            Lead::Complete { plan, inline_at } => Ok((plan, inline_at)),
            Lead::TableApart { .. } => Err(malformed("region table expected in the lead")),
        }
    }

    /// Fills the shape of a plan decoded from a header with its `runs` region runs, and checks
    /// them against the header's sizes.
    pub(crate) fn decode_table(&mut self, runs: u64, table: &[u8]) -> Result<()> {
        if runs.checked_mul(RUN_BYTES as u64) != Some(table.len() as u64) {
            return Err(malformed("region table of the wrong length"));
        }
        let mut r = Reader { buf: table, pos: 0 };
        let mut shape = Shape::new(self.shape.packed_bytes, []);
        let (mut count, mut region_bytes) = (0usize, 0u64);
        for _ in 0..runs {
            let word = r.u64()?;
            let n = r.u64()?;
            let elem = ElementType::from_code((word >> ELEM_SHIFT) as u8)
                .ok_or_else(|| malformed("unknown element type"))?;
            if n > MAX_RUN {
                return Err(malformed("absurd region count"));
            }
            // The whole message's regions, not only each run's: runs of equal regions merge
            // into one, which must stay within the bound too.
            count = count
                .checked_add(n as usize)
                .filter(|&c| c as u64 <= MAX_RUN)
                .ok_or_else(|| malformed("absurd region count"))?;
            let region = RegionShape {
                bytes: word & BYTES_MASK,
                elem,
            };
            region_bytes = region
                .bytes
                .checked_mul(n)
                .and_then(|b| b.checked_add(region_bytes))
                .ok_or_else(|| malformed("sizes overflow"))?;
            shape.push_run(region, n as usize);
        }
        let (coalesced, zero_copy_count) = shape
            .split(self.zcopy_threshold)
            .ok_or_else(|| malformed("sizes overflow"))?;
        if shape.packed_bytes.checked_add(coalesced) != Some(self.stream_bytes)
            || shape.packed_bytes.checked_add(region_bytes).is_none()
            || zero_copy_count != self.zero_copy_count
        {
            return Err(malformed("inconsistent sizes"));
        }
        self.shape = shape;
        Ok(())
    }
}

fn malformed(why: &str) -> Error {
    Error::InvalidDatatype(format!("malformed custom message: {why}"))
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let bytes = self.buf.get(self.pos..self.pos + N).ok_or_else(|| {
            Error::InvalidDatatype("malformed custom message: header cut short".into())
        })?;
        self.pos += N;
        Ok(bytes.try_into().unwrap_or([0; N]))
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.take()?))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take()?))
    }
}
