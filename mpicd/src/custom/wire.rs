//! The wire format of a custom-typed message and the [`WirePlan`] that decides how it travels.
//!
//! One user message is one lead message under the user's tag, then private data messages that
//! no user receive can match (see [`crate::tag`]):
//!
//! ```text
//! lead:      header | region runs | first `inline` bytes of the stream    (at most LEAD_MAX)
//! table:     region runs, only when they do not fit in the lead (private tag seq)
//! body:      the rest of the stream and an 8-byte status trailer, ONE message (the next
//!            private tag) that UCX packs and unpacks through our callbacks (a generic
//!            datatype): the stream goes from the sender's pack callback straight into UCX's
//!            transport buffers and from those into the receiver's unpack callback, in UCX's
//!            own fragments, with no buffer of ours in between
//! regions:   one contiguous message per zero-copy region (the private tags after those)
//! stream:    packed part (pack callback) | coalesced regions, in region order
//! ```
//! Which regions travel zero-copy depends on where the receiver runs (see [`Reach`]): between
//! processes of one node every region is coalesced into the stream, which UCX's shared-memory
//! transport moves faster than any zero-copy path it has (measured in
//! `bench/results/wire-options.md`); towards another node, regions from the zero-copy threshold
//! up travel as their own messages.
//!
//! A private message of zero bytes where data was expected, or a body whose trailer is not
//! zero, means the sender failed after the lead left; the receiver then completes with
//! [`Error::RemoteFailure`]. (A body cannot be cut short once UCX sends it: after a pack
//! failure the rest of it is zeros, which the receiver's unpack callback may see before the
//! trailer fails the receive.)
//!
//! The lead is never longer than [`LEAD_MAX`], and its fixed header alone tells which private
//! messages follow (`seq_base` and their number). Both are what lets a receive that is not
//! custom-typed still drain a custom message it matched by mistake (so that the sender
//! completes): a contiguous receive of at least [`LEAD_MAX`] bytes always holds a whole lead,
//! and a smaller one keeps the first [`HEADER_BYTES`] of whatever arrives (see
//! `crate::transport::RecvTarget`).
//!
//! Regions are described by run-length encoded words (`bytes | elem << 56`, then a count), so a
//! `Vec<Vec<i32>>` with equal inner lengths costs 16 bytes of header whatever its length. The
//! header carries the sender's zero-copy threshold: a region travels zero-copy exactly when its
//! length reaches it, so both sides derive every per-region decision from the runs alone and
//! nothing per region is ever stored or expanded.

use super::{RawRegion, RegionShape, Shape, ShapeRun};
use crate::datatype::ElementType;
use crate::error::{Error, Result};

const MAGIC: u32 = 0x4443_504d; // "MPCD"
const VERSION: u16 = 6;
/// Fixed part of the lead: magic, version, flags, five sizes, the run count and the number of
/// zero-copy regions.
pub(crate) const HEADER_BYTES: usize = 64;
/// The status word at the end of a body message: zero when every byte before it is the
/// sender's stream, anything else when its pack failed.
pub(crate) const TRAILER_BYTES: usize = 8;
/// The longest lead message any mpicd process sends (a protocol constant, not a tunable: a
/// receiver relies on it whatever the sender's configuration).
pub(crate) const LEAD_MAX: usize = 8192;
/// The most stream bytes a lead can carry.
pub(crate) const MAX_INLINE_BYTES: usize = LEAD_MAX - HEADER_BYTES;
/// The longest body message (trailer included) that UCX 1.13 sends eagerly here, over shared
/// memory with our 16 KiB segments (measured: 65 280-byte bodies eager, 65 544-byte ones by
/// rendezvous, a handshake more). A split lead keeps a body under it when it can.
const BODY_EAGER_MAX: u64 = 65280;
/// Header flag: the sender failed before sending data (see [`WirePlan::failure`]).
const FLAG_FAILED: u16 = 1;
/// Header flag: the region runs travel as their own private message (`seq_base`), because the
/// lead would otherwise exceed [`LEAD_MAX`].
const FLAG_TABLE_APART: u16 = 2;
const ELEM_SHIFT: u32 = 56;
const BYTES_MASK: u64 = (1 << ELEM_SHIFT) - 1;
/// Bytes of one encoded run.
pub(crate) const RUN_BYTES: usize = 16;
/// The most regions one run may announce (a guard against absurd headers).
const MAX_RUN: u64 = u32::MAX as u64;
/// Memory allowed for the body message: its UCX request, and the transport buffers UCX packs
/// and unpacks it in (UCX's memory pools, which grow once per process: measured 0.07-0.6 MiB
/// for a 256 MiB body over shm and tcp).
pub(crate) const BODY_BYTES: usize = 1 << 20;
/// Memory allowed per zero-copy region request in flight in [`CustomConfig::memory_bound`]
/// (a UCX request, and the receiver's unexpected-message descriptor; a region below UCX's
/// rendezvous threshold travels eagerly, but then it is under this size on shm and tcp).
pub(crate) const REGION_REQUEST_BYTES: usize = 4 << 10;
/// Tunables of the custom path, read from the environment once at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CustomConfig {
    /// The longest stream the lead message carries whole (`MPICD_INLINE_BYTES`, at most 8128
    /// so that the lead stays within 8 KiB). Small, so that the lead is one eager UCX message
    /// and leaves at once; a longer stream goes in the body message.
    pub inline_bytes: usize,
    /// Stream bytes the lead carries of a stream longer than `inline_bytes`
    /// (`MPICD_INLINE_SPLIT`, at most `inline_bytes`). Default 0: a body is sent anyway, and
    /// bytes in the lead would only be copied into it and out of it once more on each side
    /// (8-32 KiB messages +8-16% bandwidth against 4000). More when that keeps the body
    /// under UCX's eager limit (see [`WirePlan::choose`]).
    pub inline_split: usize,
    /// Towards another node, regions of at least this many bytes travel zero-copy as their own
    /// message; smaller ones are coalesced into the stream (`MPICD_ZCOPY_THRESHOLD`).
    pub zcopy_threshold: usize,
    /// Zero-copy region messages in flight per operation, on each side
    /// (`MPICD_ZCOPY_DEPTH`): more are posted, in order, as these complete.
    pub zcopy_depth: usize,
    /// Coalesce every region for receivers on this node (`MPICD_NODE_LOCAL=0` turns this off:
    /// every peer is then treated as remote).
    pub node_local: bool,
}

impl Default for CustomConfig {
    fn default() -> Self {
        CustomConfig {
            inline_bytes: 4000,
            inline_split: 0,
            zcopy_threshold: 256 << 10,
            zcopy_depth: 16,
            node_local: true,
        }
    }
}

impl CustomConfig {
    /// Defaults overridden by `MPICD_*` environment variables.
    pub fn from_env() -> Result<CustomConfig> {
        let mut c = CustomConfig::default();
        let read = |name: &str, value: &mut usize, min: usize, max: usize| -> Result<()> {
            if let Ok(text) = std::env::var(name) {
                let v: usize = text.trim().parse().map_err(|_| {
                    Error::InvalidArgument(format!("{name}={text} is not a number of bytes"))
                })?;
                if v < min {
                    return Err(Error::InvalidArgument(format!(
                        "{name}={v} is below the minimum {min}"
                    )));
                }
                if v > max {
                    return Err(Error::InvalidArgument(format!(
                        "{name}={v} is above the maximum {max}"
                    )));
                }
                *value = v;
            }
            Ok(())
        };
        let any = usize::MAX;
        read(
            "MPICD_INLINE_BYTES",
            &mut c.inline_bytes,
            0,
            MAX_INLINE_BYTES,
        )?;
        read(
            "MPICD_INLINE_SPLIT",
            &mut c.inline_split,
            0,
            MAX_INLINE_BYTES,
        )?;
        read("MPICD_ZCOPY_THRESHOLD", &mut c.zcopy_threshold, 1, any)?;
        read("MPICD_ZCOPY_DEPTH", &mut c.zcopy_depth, 1, any)?;
        if let Ok(text) = std::env::var("MPICD_NODE_LOCAL") {
            c.node_local = match text.trim() {
                "0" => false,
                "1" => true,
                _ => {
                    return Err(Error::InvalidArgument(format!(
                        "MPICD_NODE_LOCAL={text} is neither 0 nor 1"
                    )))
                }
            };
        }
        Ok(c)
    }

    /// The most extra memory one custom operation uses on either side, whatever the message:
    /// the lead (at most [`LEAD_MAX`] bytes), the body message (1 MiB: UCX packs and unpacks
    /// it in its own transport buffers, through our callbacks, never all of it at once), and up
    /// to `zcopy_depth` region messages in flight (their UCX requests, counted as 4 KiB each).
    /// A message with regions also keeps their list for as long as it is in flight: see
    /// [`CustomConfig::memory_bound_for`].
    pub fn memory_bound(&self) -> usize {
        LEAD_MAX + BODY_BYTES + self.zcopy_depth * REGION_REQUEST_BYTES
    }

    /// The most extra memory one custom operation uses on either side for a message of
    /// `shape`: [`CustomConfig::memory_bound`], plus the list of its regions (the pointer,
    /// length and element type of each, as the type hands them over: 24 bytes per region),
    /// plus its region table and shape (48 bytes per run of equal regions). A list is what a
    /// type describes its object with, proportional to the number of regions, never to their
    /// bytes: 2.3% of a message of 1 KiB regions, three times one of 8-byte regions.
    pub fn memory_bound_for(&self, shape: &Shape) -> usize {
        self.memory_bound()
            + shape.region_count() * REGION_ENTRY_BYTES
            + shape.run_slice().len() * (RUN_BYTES + std::mem::size_of::<ShapeRun>())
    }
}

/// Bytes of one region's entry in the region list a type hands over.
pub(crate) const REGION_ENTRY_BYTES: usize = std::mem::size_of::<RawRegion>();

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

/// Whether the receiver runs on the sender's node, which decides how regions travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Another node (or node-local plans turned off): regions travel as UCX messages of their
    /// own from the zero-copy threshold up.
    Remote,
    /// The same node: every region is coalesced into the stream.
    NodeLocal,
}

/// What a lead message tells at first sight: either the whole plan, or (when the region table
/// travels apart) a plan whose shape is still empty and the number of runs to expect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lead {
    Complete { plan: WirePlan, inline_at: usize },
    TableApart { plan: WirePlan, runs: u64 },
}

/// Bytes coalesced into the stream and number of zero-copy regions of `shape` (`None` on
/// overflow).
fn split(shape: &Shape, threshold: u64) -> Option<(u64, u64)> {
    let (mut coalesced, mut zero_copy) = (0u64, 0u64);
    for (r, n) in shape.runs() {
        if r.bytes >= threshold {
            zero_copy = zero_copy.checked_add(n as u64)?;
        } else {
            coalesced = coalesced.checked_add(r.bytes.checked_mul(n as u64)?)?;
        }
    }
    Some((coalesced, zero_copy))
}

impl WirePlan {
    /// Chooses the plan for a message. To another node, regions at or above the zero-copy
    /// threshold travel as their own contiguous messages (UCX's zero-copy rendezvous); smaller
    /// ones are cheaper to copy into the stream than to send one by one. To a process of this
    /// node every region goes into the stream: UCX's shared-memory transport moves the stream
    /// (copied in by the sender's core, out by the receiver's, in cache-sized pieces) faster
    /// than its one-copy paths at every region and message size measured.
    pub(crate) fn choose(shape: Shape, cfg: &CustomConfig, reach: Reach) -> Result<WirePlan> {
        let zcopy_threshold = match reach {
            Reach::NodeLocal => u64::MAX,
            Reach::Remote => cfg.zcopy_threshold.max(1) as u64,
        };
        let (coalesced, zero_copy_count) = split(&shape, zcopy_threshold)
            .ok_or_else(|| Error::InvalidDatatype("regions larger than 2^64 bytes".into()))?;
        let stream_bytes = shape
            .packed_bytes
            .checked_add(coalesced)
            .ok_or_else(|| Error::InvalidDatatype("message larger than 2^64 bytes".into()))?;
        if let Some(r) = shape.runs().find(|(r, _)| r.bytes > BYTES_MASK) {
            return Err(Error::InvalidDatatype(format!(
                "a region of {} bytes (at most 2^56 - 1)",
                r.0.bytes
            )));
        }
        let inline_bytes = Self::inline_bytes(stream_bytes, cfg);
        // The lead stays within LEAD_MAX: a region table too long for it goes apart (one
        // more message, only for shapes of hundreds of distinct runs).
        let table_apart = HEADER_BYTES as u64
            + (RUN_BYTES as u64).saturating_mul(shape.run_slice().len() as u64)
            + inline_bytes
            > LEAD_MAX as u64;
        Ok(WirePlan {
            shape,
            zcopy_threshold,
            zero_copy_count,
            stream_bytes,
            inline_bytes,
            seq_base: 0,
            failed: false,
            table_apart,
        })
    }

    /// Stream bytes in the lead: all of a stream of at most `inline_bytes`; of a longer one,
    /// `inline_split`, or as many as keep the body within [`BODY_EAGER_MAX`] when the lead has
    /// room for them (a body just over it would go by rendezvous: +1 us at 64 KiB).
    fn inline_bytes(stream_bytes: u64, cfg: &CustomConfig) -> u64 {
        let cap = cfg.inline_bytes.min(MAX_INLINE_BYTES) as u64;
        if stream_bytes <= cap {
            return stream_bytes;
        }
        let split = (cfg.inline_split as u64).min(cap);
        let over = (stream_bytes + TRAILER_BYTES as u64).saturating_sub(BODY_EAGER_MAX);
        if split < over && over <= cap {
            over
        } else {
            split
        }
    }

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
            shape: Shape {
                packed_bytes,
                ..Shape::default()
            },
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
        let mut shape = Shape {
            packed_bytes: self.shape.packed_bytes,
            ..Shape::default()
        };
        let (mut count, mut region_bytes) = (0usize, 0u64);
        for _ in 0..runs {
            let word = r.u64()?;
            let n = r.u64()?;
            let elem = ElementType::from_code((word >> ELEM_SHIFT) as u8)
                .ok_or_else(|| malformed("unknown element type"))?;
            if n > MAX_RUN {
                return Err(malformed("absurd region count"));
            }
            count = count
                .checked_add(n as usize)
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
        let (coalesced, zero_copy_count) =
            split(&shape, self.zcopy_threshold).ok_or_else(|| malformed("sizes overflow"))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn region(bytes: u64) -> RegionShape {
        RegionShape {
            bytes,
            elem: ElementType::I32,
        }
    }

    fn cfg(inline_bytes: usize, zcopy_threshold: usize) -> CustomConfig {
        CustomConfig {
            inline_bytes,
            inline_split: inline_bytes,
            zcopy_threshold,
            zcopy_depth: 3,
            node_local: true,
        }
    }

    fn round_trip(plan: &WirePlan) -> WirePlan {
        let mut lead = Vec::new();
        plan.encode_header(&mut lead);
        assert_eq!(lead.len() + plan.inline_bytes as usize, plan.lead_bytes());
        lead.extend(std::iter::repeat(0u8).take(plan.inline_bytes as usize));
        let (back, at) = WirePlan::decode(&lead).unwrap();
        assert_eq!(lead.len() - at, plan.inline_bytes as usize);
        back
    }

    #[test]
    fn plan_splits_regions_by_threshold_and_round_trips() {
        let regions = [region(8), region(8), region(4000), region(8)];
        let mut plan =
            WirePlan::choose(Shape::new(50, regions), &cfg(100, 1000), Reach::Remote).unwrap();
        plan.seq_base = 77;
        assert_eq!(plan.stream_bytes, 50 + 24);
        assert_eq!(plan.inline_bytes, 74);
        assert_eq!(plan.body_messages(), 0);
        assert_eq!(plan.zero_copy_count, 1);
        assert_eq!(plan.region_seq(0), 77);
        assert!(plan.is_zero_copy(4000) && !plan.is_zero_copy(8));
        assert_eq!(plan.shape.run_slice().len(), 3);
        assert_eq!(round_trip(&plan), plan);
    }

    #[test]
    fn equal_regions_compress_to_one_run() {
        let shape = Shape::new(0, std::iter::repeat(region(4096)).take(10_000));
        let plan = WirePlan::choose(shape, &CustomConfig::default(), Reach::Remote).unwrap();
        let mut lead = Vec::new();
        plan.encode_header(&mut lead);
        assert_eq!(lead.len(), HEADER_BYTES + 16);
        let back = round_trip(&plan);
        assert_eq!(back.shape.region_count(), 10_000);
        assert_eq!(back.shape.region_bytes(), 4096 * 10_000);
        assert_eq!(back.stream_bytes, 4096 * 10_000);
    }

    #[test]
    fn shape_runs_iterate_and_index() {
        let mut shape = Shape::new(3, [region(8), region(8), region(0), region(16), region(16)]);
        shape.push(region(16));
        assert_eq!(shape.region_count(), 6);
        assert_eq!(shape.regions().len(), 6);
        assert_eq!(
            shape.runs().collect::<Vec<_>>(),
            vec![(region(8), 2), (region(0), 1), (region(16), 3)]
        );
        let all: Vec<u64> = shape.regions().map(|r| r.bytes).collect();
        assert_eq!(all, vec![8, 8, 0, 16, 16, 16]);
        for (i, b) in all.iter().enumerate() {
            assert_eq!(shape.region(i).map(|r| r.bytes), Some(*b));
        }
        assert_eq!(shape.region(6), None);
        assert_eq!(shape.total_bytes(), 3 + 64);
        assert_eq!(shape, Shape::new(3, shape.regions()));
        assert_eq!(Shape::default().regions().next(), None);
    }

    #[test]
    fn zero_copy_regions_are_found_run_by_run() {
        let sizes = [8, 2000, 2000, 8, 8, 0, 5000, 999, 1000];
        let plan = WirePlan::choose(
            Shape::new(0, sizes.map(region)),
            &cfg(0, 1000),
            Reach::Remote,
        )
        .unwrap();
        let mut cursor = (0, 0);
        let found: Vec<(usize, u64)> =
            std::iter::from_fn(|| plan.next_zero_copy(&mut cursor)).collect();
        assert_eq!(found, vec![(1, 2000), (2, 2000), (6, 5000), (8, 1000)]);
        assert_eq!(found.len() as u64, plan.zero_copy_count);
        assert_eq!(plan.next_zero_copy(&mut cursor), None);
    }

    #[test]
    fn node_local_plans_coalesce_every_region() {
        let sizes = [8u64, 64, 5000, 1 << 20];
        let shape = Shape::new(10, sizes.map(region));
        let plan = WirePlan::choose(shape.clone(), &cfg(0, 1000), Reach::NodeLocal).unwrap();
        assert_eq!(plan.zero_copy_count, 0);
        assert_eq!(plan.stream_bytes, 10 + sizes.iter().sum::<u64>());
        assert_eq!(plan.region_messages(), 0);
        assert_eq!(through_the_wire(&plan), plan);
        // To another node: one message per region from the zero-copy threshold.
        let remote = WirePlan::choose(shape, &cfg(0, 1000), Reach::Remote).unwrap();
        assert_eq!((remote.zero_copy_count, remote.stream_bytes), (2, 10 + 72));
        assert_eq!(through_the_wire(&remote), remote);
    }

    #[test]
    fn the_body_carries_the_rest_of_the_stream_and_a_trailer() {
        let plan = WirePlan::choose(
            Shape::new(10 + 4096 * 2 + 5, []),
            &cfg(10, 1 << 20),
            Reach::Remote,
        )
        .unwrap();
        assert_eq!(plan.body_messages(), 1);
        assert_eq!(plan.body_bytes(), 4096 * 2 + 5);
        assert_eq!(plan.body_message_bytes(), 4096 * 2 + 5 + TRAILER_BYTES);
        assert_eq!(plan.body_seq(), plan.seq_base);
    }

    #[test]
    fn failure_lead_round_trips() {
        let mut lead = Vec::new();
        WirePlan::failure().encode_header(&mut lead);
        let (back, _) = WirePlan::decode(&lead).unwrap();
        assert!(back.failed);
        assert_eq!(back.private_messages(), 0);
    }

    /// Encodes a plan's lead and (if apart) table and decodes them as a receiver does.
    fn through_the_wire(plan: &WirePlan) -> WirePlan {
        let mut lead = Vec::new();
        plan.encode_header(&mut lead);
        lead.extend(std::iter::repeat(0u8).take(plan.inline_bytes as usize));
        assert_eq!(lead.len(), plan.lead_bytes());
        assert!(lead.len() <= LEAD_MAX, "lead of {} bytes", lead.len());
        // The header alone locates every private message.
        let (head, _) = WirePlan::decode_header(&lead[..HEADER_BYTES]).unwrap();
        assert_eq!(head.private_messages(), plan.private_messages());
        assert_eq!(head.region_seq(0), plan.region_seq(0));
        assert_eq!(head.body_seq(), plan.body_seq());
        match WirePlan::decode_lead(&lead).unwrap() {
            Lead::Complete {
                plan: back,
                inline_at,
            } => {
                assert!(!plan.table_apart);
                assert_eq!(lead.len() - inline_at, plan.inline_bytes as usize);
                back
            }
            Lead::TableApart {
                plan: mut back,
                runs,
            } => {
                assert!(plan.table_apart);
                let mut table = Vec::new();
                plan.encode_table(&mut table);
                assert_eq!(table.len(), plan.table_bytes());
                assert!(back.decode_table(runs, &table[1..]).is_err());
                back.decode_table(runs, &table).unwrap();
                back
            }
        }
    }

    #[test]
    fn long_region_tables_travel_apart_and_leads_stay_bounded() {
        // Distinct lengths: one run per region.
        for n in [0usize, 1, 10, 200, 300, 5000] {
            for inline in [0usize, 777, 4000, MAX_INLINE_BYTES] {
                let shape = Shape::new(3000, (0..n as u64).map(|i| region(4 + 4 * i)));
                let mut plan = WirePlan::choose(shape, &cfg(inline, 4096), Reach::Remote).unwrap();
                plan.seq_base = 1000;
                let apart = plan.table_apart;
                assert_eq!(
                    apart,
                    HEADER_BYTES + 16 * n + plan.inline_bytes as usize > LEAD_MAX,
                    "{n} runs, {inline} inline"
                );
                assert_eq!(plan.table_seq(), 1000);
                assert_eq!(plan.body_seq(), 1000 + apart as u64);
                assert_eq!(
                    plan.private_messages(),
                    apart as u64 + plan.body_messages() + plan.zero_copy_count
                );
                assert_eq!(through_the_wire(&plan), plan, "{n} runs, {inline} inline");
            }
        }
        // An inline size beyond the lead's room is capped, whatever the configuration says.
        let plan =
            WirePlan::choose(Shape::new(1 << 20, []), &cfg(1 << 20, 4096), Reach::Remote).unwrap();
        assert_eq!(plan.inline_bytes, MAX_INLINE_BYTES as u64);
        assert_eq!(plan.lead_bytes(), LEAD_MAX);
        assert_eq!(through_the_wire(&plan), plan);
    }

    #[test]
    fn the_lead_carries_a_short_stream_whole_and_a_split_of_a_long_one() {
        let plan = |stream: u64, inline: usize, split: usize| {
            let c = CustomConfig {
                inline_split: split,
                ..cfg(inline, 1)
            };
            WirePlan::choose(Shape::new(stream, []), &c, Reach::NodeLocal)
                .unwrap()
                .inline_bytes
        };
        assert_eq!(plan(4000, 4000, 0), 4000); // fits: the whole message is the lead
        assert_eq!(plan(4001, 4000, 0), 0); // a body anyway: all of it there
        assert_eq!(plan(9000, 4000, 100), 100);
        assert_eq!(plan(9000, 4000, 5000), 4000); // the split never exceeds the lead's room
                                                  // Just over UCX's eager limit: the lead takes the excess, the body stays eager.
        let edge = BODY_EAGER_MAX - TRAILER_BYTES as u64;
        assert_eq!(plan(edge, 4000, 0), 0);
        assert_eq!(plan(edge + 10, 4000, 0), 10);
        assert_eq!(plan(edge + 4000, 4000, 0), 4000);
        assert_eq!(plan(edge + 4001, 4000, 0), 0); // rendezvous whatever the lead takes
        let split0 = CustomConfig {
            inline_split: 0,
            ..cfg(4000, 1)
        };
        let p = WirePlan::choose(Shape::new(edge + 10, []), &split0, Reach::NodeLocal);
        assert_eq!(p.unwrap().body_message_bytes() as u64, BODY_EAGER_MAX);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(WirePlan::decode_lead(&vec![0u8; LEAD_MAX + 1]).is_err());
        assert!(WirePlan::decode_header(&[0u8; HEADER_BYTES - 1]).is_err());
        assert!(WirePlan::decode(&[]).is_err());
        assert!(WirePlan::decode(&[0x4d, 0x50, 0x43, 0x44, 3, 0]).is_err());
        let mut lead = Vec::new();
        let plan =
            WirePlan::choose(Shape::new(5, []), &CustomConfig::default(), Reach::Remote).unwrap();
        plan.encode_header(&mut lead);
        assert!(WirePlan::decode(&lead).is_err(), "inline bytes missing");

        // Runs whose sizes overflow, and absurd counts, are refused.
        let huge = Shape::new(0, [region(BYTES_MASK), region(1)]);
        let mut plan = WirePlan::choose(huge, &cfg(0, 1), Reach::Remote).unwrap();
        plan.shape = Shape::default();
        plan.shape.push_run(region(BYTES_MASK), MAX_RUN as usize);
        plan.shape.push_run(region(1), 1);
        let mut lead = Vec::new();
        plan.encode_header(&mut lead);
        assert!(WirePlan::decode(&lead).is_err(), "overflowing sizes");
        let mut lead = Vec::new();
        let mut plan = WirePlan::choose(Shape::default(), &cfg(0, 1), Reach::Remote).unwrap();
        plan.shape.push_run(region(0), MAX_RUN as usize + 1);
        plan.encode_header(&mut lead);
        assert!(WirePlan::decode(&lead).is_err(), "absurd count");
    }
}
