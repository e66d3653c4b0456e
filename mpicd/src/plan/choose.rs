//! Choosing how a message travels: [`choose`] turns a shape into a [`WirePlan`], by the
//! tunables of [`CustomConfig`] and where the receiver runs ([`Reach`]); and the memory a
//! custom operation may use, whatever the plan.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::plan::RawRegion;
use crate::wire::{
    Shape, ShapeRun, WirePlan, BYTES_MASK, HEADER_BYTES, LEAD_MAX, MAX_INLINE_BYTES, RUN_BYTES,
    TRAILER_BYTES,
};

/// The longest body message (trailer included) that UCX 1.13 sends eagerly over shared memory
/// with the 16 KiB segments mpicd sets (found by sending bodies of growing length; see
/// `bench/results/wire-options.md`). A split lead keeps a body under it when it can, since a
/// longer one costs a rendezvous handshake.
pub(crate) const BODY_EAGER_MAX: u64 = 65280;
/// Memory allowed for the body message: its UCX request, and the transport buffers UCX packs
/// and unpacks it in (UCX's memory pools, which grow once per process and stay well below
/// this; the benchmark checks peak memory against the bound).
pub(crate) const BODY_BYTES: usize = 1 << 20;
/// Memory allowed per zero-copy region request in flight in [`CustomConfig::memory_bound`]
/// (a UCX request, and the receiver's unexpected-message descriptor; a region below UCX's
/// rendezvous threshold travels eagerly, but then it is under this size on shm and tcp).
pub(crate) const REGION_REQUEST_BYTES: usize = 4 << 10;
/// The plan's tunables: the custom path's rows of the configuration table ([`crate::config`]),
/// read once at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CustomConfig {
    /// The longest stream the lead message carries whole (`MPICD_INLINE_BYTES`, at most 8128
    /// so that the lead stays within 8 KiB). Small, so that the lead is one eager UCX message
    /// and leaves at once; a longer stream goes in the body message.
    pub inline_bytes: usize,
    /// Stream bytes the lead carries of a stream longer than `inline_bytes`
    /// (`MPICD_INLINE_SPLIT`, at most `inline_bytes`). Default 0: a body is sent anyway, and
    /// bytes in the lead would only be copied into it and out of it once more on each side.
    /// More when that keeps the body
    /// under UCX's eager limit (see [`choose`]).
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
    /// The defaults of the configuration table ([`crate::config`]).
    fn default() -> Self {
        CustomConfig::from(&Config::default())
    }
}

impl From<&Config> for CustomConfig {
    fn from(c: &Config) -> Self {
        CustomConfig {
            inline_bytes: c.inline_bytes,
            inline_split: c.inline_split,
            zcopy_threshold: c.zcopy_threshold,
            zcopy_depth: c.zcopy_depth,
            node_local: c.node_local,
        }
    }
}

impl CustomConfig {
    /// The configuration table's values, overridden by `MPICD_*` environment variables
    /// ([`Config::from_env`]).
    pub fn from_env() -> Result<CustomConfig> {
        Config::from_env().map(|c| CustomConfig::from(&c))
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
    /// bytes: small beside a message of large regions, larger than one of 8-byte regions.
    pub fn memory_bound_for(&self, shape: &Shape) -> usize {
        self.memory_bound()
            + shape.region_count() * REGION_ENTRY_BYTES
            + shape.run_slice().len() * (RUN_BYTES + std::mem::size_of::<ShapeRun>())
    }
}

/// Bytes of one region's entry in the region list a type hands over.
pub(crate) const REGION_ENTRY_BYTES: usize = std::mem::size_of::<RawRegion>();

/// Whether the receiver runs on the sender's node, which decides how regions travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Another node (or node-local plans turned off): regions travel as UCX messages of their
    /// own from the zero-copy threshold up.
    Remote,
    /// The same node: regions are coalesced into the stream, except in a message shorter
    /// than [`LOCAL_APART_BELOW`], whose regions from [`APART_FROM`] travel apart.
    NodeLocal,
    /// The same node, where processes outnumber cores: regions from [`APART_FROM`] up travel
    /// as their own messages, which the receiver reads alone (UCX's cma rendezvous), since a
    /// stream through the shared-memory segments moves only while both processes run (as
    /// `config::LOCAL_STREAM` says of contiguous messages).
    NodeShared,
}

/// Smallest region that travels as its own message on this node, where one does
/// ([`Reach::NodeShared`], and [`LOCAL_APART_BELOW`]): UCX's rendezvous threshold
/// (`UCX_RNDV_THRESH`, set by mpicd), so that each such region is read by the receiver in one
/// copy, never sent eagerly. (A gather of one 64-96 KiB region per member, 3 / 4 ranks on 2
/// cores: 19.7 / 30.1 us coalesced, 13.9 / 17.4 us apart; `bench/coll/gather_shapes.c`.)
pub(crate) const APART_FROM: u64 = 64 << 10;

/// A message to a process of this node shorter than this sends its regions from [`APART_FROM`]
/// apart even where both processes have a core: the receiver's one cma read of a lone region
/// beats the body's rendezvous and the start of its two-copy pipeline, which pays off only in
/// longer messages (2 ranks, one region a message: `gather_shapes` 64 / 256 KiB 10.4 / 29.7 ->
/// 6.6 / 17.2 us, `regions` ping-pong 128 / 256 KiB 7.7 / 8.5 -> 8.6 / 10.0 GB/s; a 1 MiB region
/// 166 -> 204 us apart, and 4 MiB of 256 KiB regions 12.0 -> 10.1 GB/s, so they stay in the
/// stream).
pub(crate) const LOCAL_APART_BELOW: u64 = 512 << 10;

/// Chooses the plan for a message. To another node, regions at or above the zero-copy
/// threshold travel as their own contiguous messages (UCX's zero-copy rendezvous); smaller
/// ones are cheaper to copy into the stream than to send one by one. To a process of this
/// node the regions of a message of [`LOCAL_APART_BELOW`] and more go into the stream: UCX's
/// shared-memory transport moves the stream (copied in by the sender's core, out by the
/// receiver's, in cache-sized pieces) faster than its one-copy paths (see
/// `bench/results/wire-options.md`), unless processes outnumber cores there
/// ([`Reach::NodeShared`]).
pub(crate) fn choose(shape: Shape, cfg: &CustomConfig, reach: Reach) -> Result<WirePlan> {
    let zcopy_threshold = match reach {
        Reach::NodeLocal if shape.total_bytes() < LOCAL_APART_BELOW => APART_FROM,
        Reach::NodeLocal => u64::MAX,
        Reach::NodeShared => APART_FROM,
        Reach::Remote => cfg.zcopy_threshold.max(1) as u64,
    };
    let (coalesced, zero_copy_count) = shape
        .split(zcopy_threshold)
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
    let inline_bytes = inline_bytes(stream_bytes, cfg);
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
/// room for them (a body just over it would go by rendezvous, one handshake more).
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
