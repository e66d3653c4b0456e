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
//! regions:   the zero-copy regions in batches, one message per batch (the private tags after
//!            those): to another node one contiguous message per region; to a process of the
//!            same node up to `batch_entries` regions per UCX IOV message (one contiguous
//!            message when a batch holds a single region)
//! stream:    packed part (pack callback) | small regions coalesced, in region order
//! ```
//! Between two processes of one node large regions may be *pulled* instead (see
//! [`crate::custom::pull`]): the lead names the sender's pid and where its region list lies,
//! the receiver reads the regions straight from the sender's memory (one kernel copy, up to
//! 1024 regions per system call), then sends one empty reply that lets the sender complete.
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

use super::{RegionShape, Shape};
use crate::datatype::ElementType;
use crate::error::{Error, Result};

const MAGIC: u32 = 0x4443_504d; // "MPCD"
const VERSION: u16 = 5;
/// Fixed part of the lead: magic, version, flags, five sizes, the run count, the number of
/// zero-copy regions, the pull source and the region batching.
pub(crate) const HEADER_BYTES: usize = 96;
/// The status word at the end of a body message: zero when every byte before it is the
/// sender's stream, anything else when its pack failed.
pub(crate) const TRAILER_BYTES: usize = 8;
/// The longest lead message any mpicd process sends (a protocol constant, not a tunable: a
/// receiver relies on it whatever the sender's configuration).
pub(crate) const LEAD_MAX: usize = 8192;
/// The most stream bytes a lead can carry.
pub(crate) const MAX_INLINE_BYTES: usize = LEAD_MAX - HEADER_BYTES;
/// Header flag: the sender failed before sending data (see [`WirePlan::failure`]).
const FLAG_FAILED: u16 = 1;
/// Header flag: the region runs travel as their own private message (`seq_base`), because the
/// lead would otherwise exceed [`LEAD_MAX`].
const FLAG_TABLE_APART: u16 = 2;
/// Header flag: the zero-copy regions are pulled by the receiver (see [`PullSource`]).
const FLAG_PULL: u16 = 4;
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
/// Regions are pulled only when at least this many bytes would be: a pull costs the receiver two
/// system calls and the sender a reply round trip, more than copying a small stream.
pub(crate) const PULL_MIN_BYTES: u64 = 64 << 10;
/// Most regions per IOV message, on both sides: a batch's scatter/gather list (16 bytes per
/// entry) is what the engine allocates for it.
pub(crate) const IOV_MAX_ENTRIES: usize = 1024;
/// Bytes of one scatter/gather list entry (`ucp_dt_iov_t`).
const IOV_ENTRY_BYTES: usize = 16;
/// Memory a receive uses while pulling regions: a batch of the sender's region descriptors and
/// the iovec lists of one system call (see [`crate::custom::pull`]).
pub(crate) const PULL_BYTES: usize = 64 << 10;

/// Tunables of the custom path, read from the environment once at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CustomConfig {
    /// Stream bytes carried in the lead message (`MPICD_INLINE_BYTES`, at most 8096 so that
    /// the lead stays within 8 KiB). Small, so that the lead is one eager UCX message and leaves
    /// at once; a longer stream goes on in the body message.
    pub inline_bytes: usize,
    /// Regions of at least this many bytes travel zero-copy as their own message; smaller ones
    /// are coalesced into the stream (`MPICD_ZCOPY_THRESHOLD`).
    pub zcopy_threshold: usize,
    /// Zero-copy region messages in flight per operation, on each side
    /// (`MPICD_ZCOPY_DEPTH`): more are posted, in order, as these complete.
    pub zcopy_depth: usize,
    /// Between processes of one node, regions of at least this many bytes are pulled by the
    /// receiver from the sender's memory; smaller ones are coalesced (`MPICD_PULL_THRESHOLD`).
    pub pull_threshold: usize,
    /// Between processes of one node (when not pulled), regions of at least this many bytes
    /// travel in UCX IOV messages, gathered and scattered by UCX without a copy of ours;
    /// smaller ones are coalesced (`MPICD_IOV_THRESHOLD`).
    pub iov_threshold: usize,
    /// Most regions in one IOV message (`MPICD_IOV_ENTRIES`, at most 1024).
    pub iov_entries: usize,
    /// An IOV message is closed once it holds this many bytes (`MPICD_IOV_BYTES`): a single
    /// region this large goes alone, as a contiguous (zero-copy) message.
    pub iov_bytes: usize,
    /// Use the node-local plans (IOV batches, pull) for receivers on this node
    /// (`MPICD_NODE_LOCAL=0` turns them off: every peer is then treated as remote).
    pub node_local: bool,
}

impl Default for CustomConfig {
    fn default() -> Self {
        CustomConfig {
            inline_bytes: 4000,
            zcopy_threshold: 32 << 10,
            zcopy_depth: 16,
            pull_threshold: 64 << 10,
            iov_threshold: 64,
            iov_entries: 256,
            iov_bytes: 4 << 20,
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
        read("MPICD_ZCOPY_THRESHOLD", &mut c.zcopy_threshold, 1, any)?;
        read("MPICD_ZCOPY_DEPTH", &mut c.zcopy_depth, 1, any)?;
        read("MPICD_PULL_THRESHOLD", &mut c.pull_threshold, 1, any)?;
        read("MPICD_IOV_THRESHOLD", &mut c.iov_threshold, 1, any)?;
        read("MPICD_IOV_ENTRIES", &mut c.iov_entries, 1, IOV_MAX_ENTRIES)?;
        read("MPICD_IOV_BYTES", &mut c.iov_bytes, 1, u32::MAX as usize)?;
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

    /// The most extra memory one custom operation uses on either side: the lead, the body
    /// message (1 MiB: UCX packs and unpacks it in its own transport buffers, through our
    /// callbacks, never all of it at once), and up to `zcopy_depth` region messages in flight (their UCX requests, counted as 4 KiB each, and the scatter/gather lists of IOV
    /// messages) or the buffers of a pull (64 KiB). Not counted: the region table (16 bytes
    /// per run of equal regions, in the lead or a message of its own) and the region list the
    /// type itself provides.
    pub fn memory_bound(&self) -> usize {
        let iov_list = self.iov_entries.min(IOV_MAX_ENTRIES) * IOV_ENTRY_BYTES;
        HEADER_BYTES
            + self.inline_bytes.min(MAX_INLINE_BYTES)
            + BODY_BYTES
            + (self.zcopy_depth * (REGION_REQUEST_BYTES + iov_list)).max(PULL_BYTES)
    }
}

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
    /// Set when the receiver pulls the zero-copy regions from the sender's memory.
    pub pull: Option<PullSource>,
    /// How the zero-copy regions are grouped into region messages.
    pub batching: Batching,
    /// Number of region batches (each one message unless the regions are pulled).
    pub batches: u64,
}

/// How consecutive zero-copy regions are grouped into one message: a batch takes regions in
/// order until it holds `entries` regions or at least `bytes` bytes. With one entry, every
/// region is its own contiguous message; with more, a batch of several regions is one UCX IOV
/// message. Both sides derive the same batches from the region runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Batching {
    pub entries: u32,
    pub bytes: u32,
}

impl Batching {
    /// One message per region.
    pub(crate) const SINGLE: Batching = Batching {
        entries: 1,
        bytes: 1,
    };

    /// How many regions of `bytes` bytes close a batch that already holds `held` regions of
    /// `held_bytes` in all (at least one).
    fn closing(&self, held: u64, held_bytes: u64, bytes: u64) -> u64 {
        let by_count = u64::from(self.entries).saturating_sub(held).max(1);
        let room = u64::from(self.bytes).saturating_sub(held_bytes);
        let by_bytes = room.div_ceil(bytes.max(1)).max(1);
        by_count.min(by_bytes)
    }

    /// Number of batches the zero-copy regions of `shape` (those of at least `threshold`
    /// bytes) make, computed run by run.
    fn count(&self, shape: &Shape, threshold: u64) -> u64 {
        let (mut batches, mut held, mut held_bytes) = (0u64, 0u64, 0u64);
        for (r, n) in shape.runs().filter(|(r, _)| r.bytes >= threshold) {
            let mut n = n as u64;
            if held > 0 {
                let close = self.closing(held, held_bytes, r.bytes);
                if n < close {
                    held += n;
                    held_bytes = held_bytes.saturating_add(n.saturating_mul(r.bytes));
                    continue;
                }
                batches += 1;
                n -= close;
            }
            let full = self.closing(0, 0, r.bytes);
            batches += n / full;
            held = n % full;
            held_bytes = held.saturating_mul(r.bytes);
        }
        batches + u64::from(held > 0)
    }
}

/// Whether the receiver runs on the sender's node, which opens the node-local wire plans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Another node (or node-local plans turned off): regions travel as UCX messages of their
    /// own from the zero-copy threshold up.
    Remote,
    /// The same node: regions may be pulled (when the source is given) or batched in UCX IOV
    /// messages.
    NodeLocal(Option<PullSource>),
}

/// Where a receiver on the sender's node reads the zero-copy regions: the sender's pid and its
/// list of [`RawRegion`](super::RawRegion)s (`stride` bytes each, at `table`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PullSource {
    pub pid: u32,
    pub stride: u32,
    pub table: u64,
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
    /// node, regions from the (lower) IOV threshold up travel in batches, one UCX IOV message
    /// each; or, given a `pull` source, regions from the pull threshold up are read by the
    /// receiver instead, when they add up to [`PULL_MIN_BYTES`] at least.
    pub(crate) fn choose(shape: Shape, cfg: &CustomConfig, reach: Reach) -> Result<WirePlan> {
        let pull_threshold = cfg.pull_threshold.max(1) as u64;
        let pull = match reach {
            Reach::NodeLocal(pull) => pull,
            Reach::Remote => None,
        };
        let pull = pull.filter(|_| {
            let pulled = shape.runs().filter(|(r, _)| r.bytes >= pull_threshold);
            let bytes = pulled.fold(0u64, |sum, (r, n)| {
                sum.saturating_add(r.bytes.saturating_mul(n as u64))
            });
            bytes >= PULL_MIN_BYTES
        });
        let (zcopy_threshold, batching) = match (pull, reach) {
            (Some(_), _) => (pull_threshold, Batching::SINGLE),
            (None, Reach::NodeLocal(_)) => (
                cfg.iov_threshold.max(1) as u64,
                Batching {
                    entries: cfg.iov_entries.clamp(1, IOV_MAX_ENTRIES) as u32,
                    bytes: cfg.iov_bytes.clamp(1, u32::MAX as usize) as u32,
                },
            ),
            (None, Reach::Remote) => (cfg.zcopy_threshold.max(1) as u64, Batching::SINGLE),
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
        let inline_bytes = stream_bytes.min(cfg.inline_bytes.min(MAX_INLINE_BYTES) as u64);
        // The lead stays within LEAD_MAX: a region table too long for it goes apart (one
        // more message, only for shapes of hundreds of distinct runs).
        let table_apart = HEADER_BYTES as u64
            + (RUN_BYTES as u64).saturating_mul(shape.run_slice().len() as u64)
            + inline_bytes
            > LEAD_MAX as u64;
        let batches = batching.count(&shape, zcopy_threshold);
        Ok(WirePlan {
            shape,
            zcopy_threshold,
            zero_copy_count,
            stream_bytes,
            inline_bytes,
            seq_base: 0,
            failed: false,
            table_apart,
            pull,
            batching,
            batches,
        })
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
            pull: None,
            batching: Batching::SINGLE,
            batches: 0,
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

    /// The regions of the next batch at or after the cursor (see [`Batching`]), as indices and
    /// lengths, into `out` (cleared first); the cursor moves past them. Empty when none is left.
    pub(crate) fn next_batch(&self, cursor: &mut (usize, usize), out: &mut Vec<(usize, u64)>) {
        out.clear();
        let (mut held_bytes, limit) = (0u64, u64::from(self.batching.bytes));
        while out.len() < self.batching.entries as usize && held_bytes < limit {
            let Some((i, bytes)) = self.next_zero_copy(cursor) else {
                break;
            };
            out.push((i, bytes));
            held_bytes = held_bytes.saturating_add(bytes);
        }
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

    /// Sequence number of the k-th region message (batch).
    pub(crate) fn region_seq(&self, k: u64) -> u64 {
        self.seq_base + self.table_messages() + self.body_messages() + k
    }

    /// Number of region messages, one per batch (none when the regions are pulled).
    pub(crate) fn region_messages(&self) -> u64 {
        match self.pull {
            Some(_) => 0,
            None => self.batches,
        }
    }

    /// Private sequence numbers this message uses.
    pub(crate) fn private_messages(&self) -> u64 {
        self.table_messages() + self.body_messages() + self.region_messages()
    }

    /// Sequence number of the receiver's reply after a pull: the number after this message's
    /// private messages, reserved with them (see [`WirePlan::sequence_numbers`]), so that no two
    /// messages of a sender ever share a reply tag.
    pub(crate) fn reply_seq(&self) -> u64 {
        self.seq_base + self.private_messages()
    }

    /// Sequence numbers the sender reserves for this message: its private messages, and the
    /// reply when the regions are pulled.
    pub(crate) fn sequence_numbers(&self) -> u64 {
        self.private_messages() + u64::from(self.pull.is_some())
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
        if self.pull.is_some() {
            flags |= FLAG_PULL;
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
        let pull = self.pull.unwrap_or(PullSource {
            pid: 0,
            stride: 0,
            table: 0,
        });
        out.extend_from_slice(&pull.pid.to_le_bytes());
        out.extend_from_slice(&pull.stride.to_le_bytes());
        out.extend_from_slice(&pull.table.to_le_bytes());
        out.extend_from_slice(&self.batching.entries.to_le_bytes());
        out.extend_from_slice(&self.batching.bytes.to_le_bytes());
        out.extend_from_slice(&self.batches.to_le_bytes());
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
        let pull = PullSource {
            pid: r.u32()?,
            stride: r.u32()?,
            table: r.u64()?,
        };
        let batching = Batching {
            entries: r.u32()?,
            bytes: r.u32()?,
        };
        let batches = r.u64()?;
        if zcopy_threshold == 0 {
            return Err(malformed("zero-copy threshold of zero"));
        }
        if batching.entries == 0
            || batching.entries as usize > IOV_MAX_ENTRIES
            || batching.bytes == 0
            || batches > zero_copy_count
        {
            return Err(malformed("inconsistent region batches"));
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
            pull: (flags & FLAG_PULL != 0).then_some(pull),
            batching,
            batches,
        };
        // Sequence numbers must not wrap (the sender reserved them).
        let private = (plan.table_messages() + plan.body_messages())
            .checked_add(plan.region_messages())
            .and_then(|p| p.checked_add(u64::from(plan.pull.is_some())));
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
            || self.batching.count(&shape, self.zcopy_threshold) != self.batches
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
            zcopy_threshold,
            zcopy_depth: 3,
            pull_threshold: 16,
            iov_threshold: 64,
            iov_entries: 4,
            iov_bytes: 1000,
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
        let mut plan = WirePlan::choose(Shape::new(50, regions), &cfg(100, 1000), Reach::Remote).unwrap();
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
        let plan = WirePlan::choose(Shape::new(0, sizes.map(region)), &cfg(0, 1000), Reach::Remote).unwrap();
        let mut cursor = (0, 0);
        let found: Vec<(usize, u64)> =
            std::iter::from_fn(|| plan.next_zero_copy(&mut cursor)).collect();
        assert_eq!(found, vec![(1, 2000), (2, 2000), (6, 5000), (8, 1000)]);
        assert_eq!(found.len() as u64, plan.zero_copy_count);
        assert_eq!(plan.next_zero_copy(&mut cursor), None);
    }

    #[test]
    fn batches_are_counted_run_by_run_as_they_are_taken() {
        // Mixed runs, with coalesced regions between zero-copy ones.
        let sizes: Vec<u64> = [
            vec![100; 7],
            vec![8; 3],
            vec![300; 5],
            vec![2000],
            vec![64; 40],
            vec![999, 1, 500],
        ]
        .concat();
        for (entries, bytes) in [(1, 1), (4, 1000), (3, 1), (1024, u32::MAX), (2, 650)] {
            let mut plan =
                WirePlan::choose(Shape::new(0, sizes.iter().map(|&b| region(b))), &cfg(0, 1), Reach::NodeLocal(None))
                    .unwrap();
            plan.batching = Batching { entries, bytes };
            let mut cursor = (0, 0);
            let mut batch = Vec::new();
            let mut taken = Vec::new();
            loop {
                plan.next_batch(&mut cursor, &mut batch);
                if batch.is_empty() {
                    break;
                }
                let total: u64 = batch.iter().map(|b| b.1).sum();
                assert!(batch.len() <= entries as usize);
                // Only the last batch may be short of both limits.
                taken.push((batch.len(), total));
            }
            for (n, total) in &taken[..taken.len() - 1] {
                assert!(*n == entries as usize || *total >= u64::from(bytes));
            }
            assert_eq!(
                taken.len() as u64,
                plan.batching.count(&plan.shape, plan.zcopy_threshold),
                "{entries} entries, {bytes} bytes"
            );
            let regions: usize = taken.iter().map(|t| t.0).sum();
            assert_eq!(regions as u64, plan.zero_copy_count);
        }
    }

    #[test]
    fn node_local_plans_batch_regions_from_the_iov_threshold() {
        let sizes = [8u64, 64, 64, 64, 64, 64, 5000, 100];
        let shape = Shape::new(10, sizes.map(region));
        let mut plan = WirePlan::choose(shape.clone(), &cfg(0, 1000), Reach::NodeLocal(None)).unwrap();
        plan.seq_base = 3;
        assert_eq!(plan.zcopy_threshold, 64);
        assert_eq!(plan.stream_bytes, 18);
        // 4 entries at most, closed at 1000 bytes: [64 x 4], [64, 5000], [100].
        assert_eq!(plan.batches, 3);
        assert_eq!(plan.region_messages(), 3);
        assert_eq!(round_trip(&plan), plan);
        assert_eq!(through_the_wire(&plan), plan);
        // To another node: one message per region from the zero-copy threshold.
        let remote = WirePlan::choose(shape, &cfg(0, 1000), Reach::Remote).unwrap();
        assert_eq!((remote.batches, remote.batching), (1, Batching::SINGLE));
        assert_eq!(through_the_wire(&remote), remote);
        // A header whose batch count disagrees with its runs is refused.
        let mut bad = plan.clone();
        bad.batches = 2;
        let mut lead = Vec::new();
        bad.encode_header(&mut lead);
        assert!(WirePlan::decode(&lead).is_err());
    }

    #[test]
    fn the_body_carries_the_rest_of_the_stream_and_a_trailer() {
        let plan =
            WirePlan::choose(Shape::new(10 + 4096 * 2 + 5, []), &cfg(10, 1 << 20), Reach::Remote).unwrap();
        assert_eq!(plan.body_messages(), 1);
        assert_eq!(plan.body_bytes(), 4096 * 2 + 5);
        assert_eq!(plan.body_message_bytes(), 4096 * 2 + 5 + TRAILER_BYTES);
        assert_eq!(plan.body_seq(), plan.seq_base);
    }

    #[test]
    fn pulled_regions_use_the_pull_threshold_and_no_messages() {
        let source = PullSource {
            pid: 4242,
            stride: 24,
            table: 0xdead_beef,
        };
        let sizes = [8, 100, 100, PULL_MIN_BYTES];
        let shape = Shape::new(0, sizes.map(region));
        let mut plan = WirePlan::choose(shape, &cfg(0, 1000), Reach::NodeLocal(Some(source))).unwrap();
        plan.seq_base = 9;
        assert_eq!(plan.zero_copy_count, 3);
        assert_eq!(plan.stream_bytes, 8);
        assert_eq!(plan.private_messages(), plan.body_messages());
        assert_eq!(plan.reply_seq(), 9 + plan.body_messages());
        assert_eq!(plan.sequence_numbers(), plan.body_messages() + 1);
        assert_eq!(round_trip(&plan), plan);
        // Too little to pull: no pull, so no reply either.
        let few = Shape::new(0, [region(8), region(PULL_MIN_BYTES - 1)]);
        let plan = WirePlan::choose(few, &cfg(0, 1000), Reach::NodeLocal(Some(source))).unwrap();
        assert_eq!((plan.pull, plan.zero_copy_count), (None, 1));
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
        let plan = WirePlan::choose(Shape::new(1 << 20, []), &cfg(1 << 20, 4096), Reach::Remote).unwrap();
        assert_eq!(plan.inline_bytes, MAX_INLINE_BYTES as u64);
        assert_eq!(plan.lead_bytes(), LEAD_MAX);
        assert_eq!(through_the_wire(&plan), plan);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(WirePlan::decode_lead(&vec![0u8; LEAD_MAX + 1]).is_err());
        assert!(WirePlan::decode_header(&[0u8; HEADER_BYTES - 1]).is_err());
        assert!(WirePlan::decode(&[]).is_err());
        assert!(WirePlan::decode(&[0x4d, 0x50, 0x43, 0x44, 3, 0]).is_err());
        let mut lead = Vec::new();
        let plan = WirePlan::choose(Shape::new(5, []), &CustomConfig::default(), Reach::Remote).unwrap();
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
