//! The wire format of a custom-typed message and the [`WirePlan`] that decides how it travels.
//!
//! One user message is one lead message under the user's tag, then private data messages that
//! no user receive can match (see [`crate::tag`]):
//!
//! ```text
//! lead:      header | region runs | first `inline` bytes of the stream
//! fragments: the rest of the stream, `fragment` bytes each (private tags seq, seq+1, ...)
//! regions:   one contiguous message per zero-copy region (the private tags that follow)
//! stream:    packed part (pack callback) | small regions coalesced, in region order
//! ```
//! Between two processes of one node the regions are *pulled* instead (see
//! [`crate::custom::pull`]): the lead names the sender's pid and where its region list lies,
//! the receiver reads the regions straight from the sender's memory (one kernel copy, up to
//! 1024 regions per system call), then sends one empty reply that lets the sender complete.
//! A private message of zero bytes where data was expected means the sender failed after the
//! lead left; the receiver then completes with [`Error::RemoteFailure`].
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
const VERSION: u16 = 3;
/// Fixed part of the lead: magic, version, flags, six sizes, the run count and the pull source.
pub(crate) const HEADER_BYTES: usize = 80;
/// Header flag: the sender failed before sending data (see [`WirePlan::failure`]).
const FLAG_FAILED: u16 = 1;
/// Header flag: the zero-copy regions are pulled by the receiver (see [`PullSource`]).
const FLAG_PULL: u16 = 2;
const ELEM_SHIFT: u32 = 56;
const BYTES_MASK: u64 = (1 << ELEM_SHIFT) - 1;
/// Bytes of one encoded run.
const RUN_BYTES: usize = 16;
/// The most regions one run may announce (a guard against absurd headers).
const MAX_RUN: u64 = u32::MAX as u64;
/// The smallest fragment cut for pipelining: just under UCX's eager limit on shm and tcp
/// (8 KiB segments), so that such a fragment travels as one eager message, without the
/// rendezvous round trip.
const SMALL_FRAGMENT: u64 = 8000;
/// How many fragments a stream is cut into at least (see [`fragment_size`]).
const FRAGMENTS_PER_STREAM: u64 = 8;
/// Memory allowed per zero-copy region request in flight in [`CustomConfig::memory_bound`]
/// (a UCX request, and the receiver's unexpected-message descriptor; a region below UCX's
/// rendezvous threshold travels eagerly, but then it is under this size on shm and tcp).
pub(crate) const REGION_REQUEST_BYTES: usize = 4 << 10;
/// Regions are pulled only when at least this many bytes would be: a pull costs the receiver two
/// system calls and the sender a reply round trip, more than copying a small stream.
pub(crate) const PULL_MIN_BYTES: u64 = 64 << 10;
/// Memory a receive uses while pulling regions: a batch of the sender's region descriptors and
/// the iovec lists of one system call (see [`crate::custom::pull`]).
pub(crate) const PULL_BYTES: usize = 64 << 10;

/// Tunables of the custom path, read from the environment once at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CustomConfig {
    /// Stream bytes carried in the lead message (`MPICD_INLINE_BYTES`). Small, so that the lead
    /// is one eager UCX message and leaves at once: the receiver prepares while the sender
    /// packs the fragments.
    pub inline_bytes: usize,
    /// Largest fragment message (`MPICD_FRAGMENT_BYTES`). A short stream is cut in smaller
    /// fragments, in 8 at least but none under 8000 bytes, so that its packing and unpacking
    /// overlap.
    pub fragment_bytes: usize,
    /// Fragments in flight per operation (`MPICD_PIPELINE_DEPTH`).
    pub pipeline_depth: usize,
    /// Regions of at least this many bytes travel zero-copy as their own message; smaller ones
    /// are coalesced into the stream (`MPICD_ZCOPY_THRESHOLD`).
    pub zcopy_threshold: usize,
    /// Zero-copy region messages in flight per operation, on each side
    /// (`MPICD_ZCOPY_DEPTH`): more are posted, in order, as these complete.
    pub zcopy_depth: usize,
    /// Between processes of one node, regions of at least this many bytes are pulled by the
    /// receiver from the sender's memory; smaller ones are coalesced (`MPICD_PULL_THRESHOLD`).
    pub pull_threshold: usize,
}

impl Default for CustomConfig {
    fn default() -> Self {
        CustomConfig {
            inline_bytes: 4000,
            fragment_bytes: 256 << 10,
            pipeline_depth: 4,
            zcopy_threshold: 32 << 10,
            zcopy_depth: 16,
            pull_threshold: 1 << 10,
        }
    }
}

impl CustomConfig {
    /// Defaults overridden by `MPICD_*` environment variables.
    pub fn from_env() -> Result<CustomConfig> {
        let mut c = CustomConfig::default();
        let read = |name: &str, value: &mut usize, min: usize| -> Result<()> {
            if let Ok(text) = std::env::var(name) {
                let v: usize = text.trim().parse().map_err(|_| {
                    Error::InvalidArgument(format!("{name}={text} is not a number of bytes"))
                })?;
                if v < min {
                    return Err(Error::InvalidArgument(format!(
                        "{name}={v} is below the minimum {min}"
                    )));
                }
                *value = v;
            }
            Ok(())
        };
        read("MPICD_INLINE_BYTES", &mut c.inline_bytes, 0)?;
        read("MPICD_FRAGMENT_BYTES", &mut c.fragment_bytes, 4096)?;
        read("MPICD_PIPELINE_DEPTH", &mut c.pipeline_depth, 1)?;
        read("MPICD_ZCOPY_THRESHOLD", &mut c.zcopy_threshold, 1)?;
        read("MPICD_ZCOPY_DEPTH", &mut c.zcopy_depth, 1)?;
        read("MPICD_PULL_THRESHOLD", &mut c.pull_threshold, 1)?;
        Ok(c)
    }

    /// The most extra memory one custom operation uses on either side: the lead, the
    /// fragments in flight, and up to `zcopy_depth` zero-copy region messages in flight
    /// (their UCX requests; counted as 4 KiB each) or the buffers of a pull (64 KiB). Not
    /// counted: the region table (16 bytes per run of equal regions, in the lead) and the
    /// region list the type itself provides.
    pub fn memory_bound(&self) -> usize {
        HEADER_BYTES
            + self.inline_bytes
            + self.pipeline_depth * self.fragment_bytes
            + (self.zcopy_depth * REGION_REQUEST_BYTES).max(PULL_BYTES)
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
    /// Stream bytes inside the lead message.
    pub inline_bytes: u64,
    pub fragment_bytes: u64,
    /// First private sequence number of this message.
    pub seq_base: u64,
    /// The sender's callbacks failed before any data could be sent: the lead carries nothing
    /// but this flag, and the receive fails with `RemoteFailure`.
    pub failed: bool,
    /// Set when the receiver pulls the zero-copy regions from the sender's memory.
    pub pull: Option<PullSource>,
}

/// Where a receiver on the sender's node reads the zero-copy regions: the sender's pid and its
/// list of [`RawRegion`](super::RawRegion)s (`count` entries of `stride` bytes at `table`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PullSource {
    pub pid: u32,
    pub stride: u32,
    pub table: u64,
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

/// Fragments of a short stream are cut small, so that the receiver starts unpacking while the
/// sender still packs (a pipeline even for a 40 KB message), but never below
/// [`SMALL_FRAGMENT`]: the stream after the lead is cut in [`FRAGMENTS_PER_STREAM`] pieces at
/// least, each at most `fragment_bytes`.
fn fragment_size(rest: u64, cfg: &CustomConfig) -> u64 {
    rest.div_ceil(FRAGMENTS_PER_STREAM)
        .max(SMALL_FRAGMENT)
        .min(cfg.fragment_bytes.max(1) as u64)
}

impl WirePlan {
    /// Chooses the plan for a message: regions at or above the zero-copy threshold travel as
    /// their own contiguous messages (UCX's zero-copy rendezvous); smaller ones are cheaper to
    /// copy into the stream than to send one by one. With a `pull` source (a receiver on this
    /// node), regions from the lower pull threshold up are read by the receiver instead.
    pub(crate) fn choose(
        shape: Shape,
        cfg: &CustomConfig,
        pull: Option<PullSource>,
    ) -> Result<WirePlan> {
        let pull_threshold = cfg.pull_threshold.max(1) as u64;
        let pull = pull.filter(|_| {
            let pulled = shape.runs().filter(|(r, _)| r.bytes >= pull_threshold);
            let bytes = pulled.fold(0u64, |sum, (r, n)| {
                sum.saturating_add(r.bytes.saturating_mul(n as u64))
            });
            bytes >= PULL_MIN_BYTES
        });
        let zcopy_threshold = match pull {
            Some(_) => pull_threshold,
            None => cfg.zcopy_threshold.max(1) as u64,
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
        let inline_bytes = stream_bytes.min(cfg.inline_bytes as u64);
        Ok(WirePlan {
            shape,
            zcopy_threshold,
            zero_copy_count,
            stream_bytes,
            inline_bytes,
            fragment_bytes: fragment_size(stream_bytes - inline_bytes, cfg),
            seq_base: 0,
            failed: false,
            pull: pull.filter(|_| zero_copy_count > 0),
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
            fragment_bytes: 1,
            seq_base: 0,
            failed: true,
            pull: None,
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

    /// Number of fragment messages after the lead.
    pub(crate) fn fragments(&self) -> u64 {
        (self.stream_bytes - self.inline_bytes).div_ceil(self.fragment_bytes.max(1))
    }

    /// Length of fragment `i`.
    pub(crate) fn fragment_len(&self, i: u64) -> usize {
        let start = self.inline_bytes + i * self.fragment_bytes;
        (self.stream_bytes - start).min(self.fragment_bytes) as usize
    }

    /// Stream offset where fragment `i` starts.
    pub(crate) fn fragment_offset(&self, i: u64) -> u64 {
        self.inline_bytes + i * self.fragment_bytes
    }

    /// Sequence number of the k-th zero-copy region message.
    pub(crate) fn region_seq(&self, k: u64) -> u64 {
        self.seq_base + self.fragments() + k
    }

    /// Number of zero-copy region messages (none when the regions are pulled).
    pub(crate) fn region_messages(&self) -> u64 {
        match self.pull {
            Some(_) => 0,
            None => self.zero_copy_count,
        }
    }

    /// Private sequence numbers this message uses.
    pub(crate) fn private_messages(&self) -> u64 {
        self.fragments() + self.region_messages()
    }

    /// Sequence number of the receiver's reply after a pull.
    pub(crate) fn reply_seq(&self) -> u64 {
        self.seq_base
    }

    /// Bytes of the lead message.
    pub(crate) fn lead_bytes(&self) -> usize {
        HEADER_BYTES + RUN_BYTES * self.shape.run_slice().len() + self.inline_bytes as usize
    }

    /// Encodes the lead header and region runs (the inline stream bytes follow).
    pub(crate) fn encode_header(&self, out: &mut Vec<u8>) {
        let runs = self.shape.run_slice();
        out.reserve(HEADER_BYTES + RUN_BYTES * runs.len());
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.extend_from_slice(&VERSION.to_le_bytes());
        let mut flags: u16 = if self.failed { FLAG_FAILED } else { 0 };
        if self.pull.is_some() {
            flags |= FLAG_PULL;
        }
        out.extend_from_slice(&flags.to_le_bytes());
        for v in [
            self.shape.packed_bytes,
            self.stream_bytes,
            self.inline_bytes,
            self.fragment_bytes,
            self.seq_base,
            self.zcopy_threshold,
            runs.len() as u64,
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
        for run in runs {
            let word = run.region.bytes | ((run.region.elem.code() as u64) << ELEM_SHIFT);
            out.extend_from_slice(&word.to_le_bytes());
            out.extend_from_slice(&(run.count as u64).to_le_bytes());
        }
    }

    /// Decodes a lead message: the plan and where its inline stream bytes start.
    pub(crate) fn decode(lead: &[u8]) -> Result<(WirePlan, usize)> {
        let bad = |why: &str| Error::InvalidDatatype(format!("malformed custom message: {why}"));
        let mut r = Reader { buf: lead, pos: 0 };
        if r.u32()? != MAGIC {
            return Err(bad("not an mpicd custom-typed message"));
        }
        if r.u16()? != VERSION {
            return Err(bad("unsupported wire version"));
        }
        let flags = r.u16()?;
        let packed_bytes = r.u64()?;
        let stream_bytes = r.u64()?;
        let inline_bytes = r.u64()?;
        let fragment_bytes = r.u64()?;
        let seq_base = r.u64()?;
        let zcopy_threshold = r.u64()?;
        let nruns = r.u64()?;
        let pull = PullSource {
            pid: r.u32()?,
            stride: r.u32()?,
            table: r.u64()?,
        };
        if nruns > ((lead.len() - r.pos) / RUN_BYTES) as u64 {
            return Err(bad("region table longer than the message"));
        }
        if zcopy_threshold == 0 {
            return Err(bad("zero-copy threshold of zero"));
        }
        let mut shape = Shape {
            packed_bytes,
            ..Shape::default()
        };
        let (mut count, mut region_bytes) = (0usize, 0u64);
        for _ in 0..nruns {
            let word = r.u64()?;
            let n = r.u64()?;
            let elem = ElementType::from_code((word >> ELEM_SHIFT) as u8)
                .ok_or_else(|| bad("unknown element type"))?;
            if n > MAX_RUN {
                return Err(bad("absurd region count"));
            }
            count = count
                .checked_add(n as usize)
                .ok_or_else(|| bad("absurd region count"))?;
            let region = RegionShape {
                bytes: word & BYTES_MASK,
                elem,
            };
            region_bytes = region
                .bytes
                .checked_mul(n)
                .and_then(|b| b.checked_add(region_bytes))
                .ok_or_else(|| bad("sizes overflow"))?;
            shape.push_run(region, n as usize);
        }
        let (coalesced, zero_copy_count) =
            split(&shape, zcopy_threshold).ok_or_else(|| bad("sizes overflow"))?;
        if packed_bytes.checked_add(coalesced) != Some(stream_bytes)
            || packed_bytes.checked_add(region_bytes).is_none()
            || inline_bytes > stream_bytes
            || (fragment_bytes == 0 && stream_bytes > inline_bytes)
            || (lead.len() - r.pos) as u64 != inline_bytes
        {
            return Err(bad("inconsistent sizes"));
        }
        let plan = WirePlan {
            shape,
            zcopy_threshold,
            zero_copy_count,
            stream_bytes,
            inline_bytes,
            fragment_bytes,
            seq_base,
            failed: flags & FLAG_FAILED != 0,
            pull: (flags & FLAG_PULL != 0).then_some(pull),
        };
        // Sequence numbers must not wrap (the sender reserved them).
        let private = plan.fragments().checked_add(plan.region_messages());
        if private.and_then(|p| seq_base.checked_add(p)).is_none() {
            return Err(bad("sequence numbers overflow"));
        }
        Ok((plan, r.pos))
    }
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
            fragment_bytes: 4096,
            pipeline_depth: 2,
            zcopy_threshold,
            zcopy_depth: 3,
            pull_threshold: 16,
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
        let mut plan = WirePlan::choose(Shape::new(50, regions), &cfg(100, 1000), None).unwrap();
        plan.seq_base = 77;
        assert_eq!(plan.stream_bytes, 50 + 24);
        assert_eq!(plan.inline_bytes, 74);
        assert_eq!(plan.fragments(), 0);
        assert_eq!(plan.zero_copy_count, 1);
        assert_eq!(plan.region_seq(0), 77);
        assert!(plan.is_zero_copy(4000) && !plan.is_zero_copy(8));
        assert_eq!(plan.shape.run_slice().len(), 3);
        assert_eq!(round_trip(&plan), plan);
    }

    #[test]
    fn equal_regions_compress_to_one_run() {
        let shape = Shape::new(0, std::iter::repeat(region(4096)).take(10_000));
        let plan = WirePlan::choose(shape, &CustomConfig::default(), None).unwrap();
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
        let plan = WirePlan::choose(Shape::new(0, sizes.map(region)), &cfg(0, 1000), None).unwrap();
        let mut cursor = (0, 0);
        let found: Vec<(usize, u64)> =
            std::iter::from_fn(|| plan.next_zero_copy(&mut cursor)).collect();
        assert_eq!(found, vec![(1, 2000), (2, 2000), (6, 5000), (8, 1000)]);
        assert_eq!(found.len() as u64, plan.zero_copy_count);
        assert_eq!(plan.next_zero_copy(&mut cursor), None);
    }

    #[test]
    fn fragments_cover_the_stream() {
        let plan =
            WirePlan::choose(Shape::new(10 + 4096 * 2 + 5, []), &cfg(10, 1 << 20), None).unwrap();
        assert_eq!(plan.fragments(), 3);
        assert_eq!(plan.fragment_len(2), 5);
        assert_eq!(plan.fragment_offset(1), 10 + 4096);
    }

    #[test]
    fn pulled_regions_use_the_pull_threshold_and_no_messages() {
        let source = PullSource {
            pid: 4242,
            stride: 24,
            table: 0xdead_beef,
        };
        let sizes = [8, 100, 100, PULL_MIN_BYTES];
        let mut plan = WirePlan::choose(
            Shape::new(0, sizes.map(region)),
            &cfg(0, 1000),
            Some(source),
        )
        .unwrap();
        plan.seq_base = 9;
        assert_eq!(plan.zero_copy_count, 3);
        assert_eq!(plan.stream_bytes, 8);
        assert_eq!(plan.private_messages(), plan.fragments());
        assert_eq!(plan.reply_seq(), 9);
        assert_eq!(round_trip(&plan), plan);
        // Too little to pull: no pull, so no reply either.
        let few = Shape::new(0, [region(8), region(PULL_MIN_BYTES - 1)]);
        let plan = WirePlan::choose(few, &cfg(0, 1000), Some(source)).unwrap();
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

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(WirePlan::decode(&[]).is_err());
        assert!(WirePlan::decode(&[0x4d, 0x50, 0x43, 0x44, 2, 0]).is_err());
        let mut lead = Vec::new();
        let plan = WirePlan::choose(Shape::new(5, []), &CustomConfig::default(), None).unwrap();
        plan.encode_header(&mut lead);
        assert!(WirePlan::decode(&lead).is_err(), "inline bytes missing");

        // Runs whose sizes overflow, and absurd counts, are refused.
        let huge = Shape::new(0, [region(BYTES_MASK), region(1)]);
        let mut plan = WirePlan::choose(huge, &cfg(0, 1), None).unwrap();
        plan.shape = Shape::default();
        plan.shape.push_run(region(BYTES_MASK), MAX_RUN as usize);
        plan.shape.push_run(region(1), 1);
        let mut lead = Vec::new();
        plan.encode_header(&mut lead);
        assert!(WirePlan::decode(&lead).is_err(), "overflowing sizes");
        let mut lead = Vec::new();
        let mut plan = WirePlan::choose(Shape::default(), &cfg(0, 1), None).unwrap();
        plan.shape.push_run(region(0), MAX_RUN as usize + 1);
        plan.encode_header(&mut lead);
        assert!(WirePlan::decode(&lead).is_err(), "absurd count");
    }
}
