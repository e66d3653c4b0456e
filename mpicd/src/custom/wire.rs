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
//! A private message of zero bytes where data was expected means the sender failed after the
//! lead left; the receiver then completes with [`Error::RemoteFailure`].
//!
//! Regions are described by run-length encoded words (`bytes | elem << 56 | zero_copy << 63`),
//! so a `Vec<Vec<i32>>` with equal inner lengths costs 16 bytes of header whatever its length.

use super::{RegionShape, Shape};
use crate::datatype::ElementType;
use crate::error::{Error, Result};

const MAGIC: u32 = 0x4443_504d; // "MPCD"
const VERSION: u16 = 1;
/// Fixed part of the lead: magic, version, flags, five sizes and the run count.
pub(crate) const HEADER_BYTES: usize = 56;
const ZERO_COPY_BIT: u64 = 1 << 63;
/// Header flag: the sender failed before sending data (see [`WirePlan::failure`]).
const FLAG_FAILED: u16 = 1;
const ELEM_SHIFT: u32 = 56;
const BYTES_MASK: u64 = (1 << ELEM_SHIFT) - 1;

/// Tunables of the custom path, read from the environment once at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CustomConfig {
    /// Stream bytes carried in the lead message (`MPICD_INLINE_BYTES`).
    pub inline_bytes: usize,
    /// Bytes per fragment message (`MPICD_FRAGMENT_BYTES`).
    pub fragment_bytes: usize,
    /// Fragments in flight per operation (`MPICD_PIPELINE_DEPTH`).
    pub pipeline_depth: usize,
    /// Regions of at least this many bytes travel zero-copy as their own message; smaller ones
    /// are coalesced into the stream (`MPICD_ZCOPY_THRESHOLD`).
    pub zcopy_threshold: usize,
}

impl Default for CustomConfig {
    fn default() -> Self {
        CustomConfig {
            inline_bytes: 16 << 10,
            fragment_bytes: 256 << 10,
            pipeline_depth: 4,
            zcopy_threshold: 32 << 10,
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
        Ok(c)
    }

    /// The most extra memory one custom operation uses on either side, not counting the region
    /// table (16 bytes per run of equal regions): lead plus fragments in flight.
    pub fn memory_bound(&self) -> usize {
        HEADER_BYTES + self.inline_bytes + self.pipeline_depth * self.fragment_bytes
    }
}

/// How one message travels: which regions go zero-copy, how the stream is cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WirePlan {
    pub packed_bytes: u64,
    /// Per region: its shape and whether it travels as its own zero-copy message.
    pub regions: Vec<(RegionShape, bool)>,
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
}

impl WirePlan {
    /// Chooses the plan for a message: regions at or above the zero-copy threshold travel as
    /// their own contiguous messages (UCX's zero-copy rendezvous); smaller ones are cheaper to
    /// copy into the stream than to send one by one.
    pub(crate) fn choose(
        packed_bytes: u64,
        regions: &[RegionShape],
        cfg: &CustomConfig,
    ) -> WirePlan {
        let regions: Vec<(RegionShape, bool)> = regions
            .iter()
            .map(|r| (*r, r.bytes >= cfg.zcopy_threshold as u64))
            .collect();
        let coalesced: u64 = regions
            .iter()
            .filter(|(_, zc)| !zc)
            .map(|(r, _)| r.bytes)
            .sum();
        let stream_bytes = packed_bytes + coalesced;
        WirePlan {
            packed_bytes,
            regions,
            stream_bytes,
            inline_bytes: stream_bytes.min(cfg.inline_bytes as u64),
            fragment_bytes: cfg.fragment_bytes as u64,
            seq_base: 0,
            failed: false,
        }
    }

    /// The plan of a message whose sender failed before any data left: an empty lead that
    /// tells the receiver so, instead of leaving it waiting for a message that never comes.
    pub(crate) fn failure() -> WirePlan {
        WirePlan {
            packed_bytes: 0,
            regions: Vec::new(),
            stream_bytes: 0,
            inline_bytes: 0,
            fragment_bytes: 1,
            seq_base: 0,
            failed: true,
        }
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

    /// Indices of the zero-copy regions, in order; the k-th uses sequence
    /// `seq_base + fragments() + k`.
    pub(crate) fn zero_copy_regions(&self) -> impl Iterator<Item = usize> + '_ {
        self.regions
            .iter()
            .enumerate()
            .filter(|(_, (_, zc))| *zc)
            .map(|(i, _)| i)
    }

    /// Private sequence numbers this message uses.
    pub(crate) fn private_messages(&self) -> u64 {
        self.fragments() + self.zero_copy_regions().count() as u64
    }

    /// The shape the receiver learns.
    pub(crate) fn shape(&self) -> Shape {
        Shape {
            packed_bytes: self.packed_bytes,
            regions: self.regions.iter().map(|(r, _)| *r).collect(),
        }
    }

    /// Encodes the lead header and region runs (the inline stream bytes follow).
    pub(crate) fn encode_header(&self, out: &mut Vec<u8>) {
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for (r, zc) in &self.regions {
            let word = r.bytes
                | ((r.elem.code() as u64) << ELEM_SHIFT)
                | if *zc { ZERO_COPY_BIT } else { 0 };
            match runs.last_mut() {
                Some((w, n)) if *w == word => *n += 1,
                _ => runs.push((word, 1)),
            }
        }
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.extend_from_slice(&VERSION.to_le_bytes());
        let flags: u16 = if self.failed { FLAG_FAILED } else { 0 };
        out.extend_from_slice(&flags.to_le_bytes());
        out.extend_from_slice(&self.packed_bytes.to_le_bytes());
        out.extend_from_slice(&self.stream_bytes.to_le_bytes());
        out.extend_from_slice(&self.inline_bytes.to_le_bytes());
        out.extend_from_slice(&self.fragment_bytes.to_le_bytes());
        out.extend_from_slice(&self.seq_base.to_le_bytes());
        out.extend_from_slice(&(runs.len() as u64).to_le_bytes());
        for (word, n) in runs {
            out.extend_from_slice(&word.to_le_bytes());
            out.extend_from_slice(&n.to_le_bytes());
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
        let nruns = r.u64()?;
        if nruns > (lead.len() / 16) as u64 {
            return Err(bad("region table longer than the message"));
        }
        let mut regions = Vec::new();
        for _ in 0..nruns {
            let word = r.u64()?;
            let n = r.u64()?;
            let elem = ElementType::from_code(((word & !ZERO_COPY_BIT) >> ELEM_SHIFT) as u8)
                .ok_or_else(|| bad("unknown element type"))?;
            let shape = RegionShape {
                bytes: word & BYTES_MASK,
                elem,
            };
            if n > u32::MAX as u64 {
                return Err(bad("absurd region count"));
            }
            regions.extend(std::iter::repeat((shape, word & ZERO_COPY_BIT != 0)).take(n as usize));
        }
        let plan = WirePlan {
            packed_bytes,
            regions,
            stream_bytes,
            inline_bytes,
            fragment_bytes,
            seq_base,
            failed: flags & FLAG_FAILED != 0,
        };
        let coalesced: u64 = plan
            .regions
            .iter()
            .filter(|(_, zc)| !zc)
            .map(|(r, _)| r.bytes)
            .sum();
        if plan.stream_bytes != packed_bytes + coalesced
            || inline_bytes > stream_bytes
            || (fragment_bytes == 0 && stream_bytes > inline_bytes)
            || lead.len() - r.pos != inline_bytes as usize
        {
            return Err(bad("inconsistent sizes"));
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

    #[test]
    fn plan_splits_regions_by_threshold_and_round_trips() {
        let cfg = CustomConfig {
            inline_bytes: 100,
            fragment_bytes: 4096,
            pipeline_depth: 2,
            zcopy_threshold: 1000,
        };
        let regions = [region(8), region(8), region(4000), region(8)];
        let mut plan = WirePlan::choose(50, &regions, &cfg);
        plan.seq_base = 77;
        assert_eq!(plan.stream_bytes, 50 + 24);
        assert_eq!(plan.inline_bytes, 74);
        assert_eq!(plan.fragments(), 0);
        assert_eq!(plan.zero_copy_regions().collect::<Vec<_>>(), vec![2]);
        let mut lead = Vec::new();
        plan.encode_header(&mut lead);
        lead.extend(std::iter::repeat(0u8).take(74));
        let (back, at) = WirePlan::decode(&lead).unwrap();
        assert_eq!(back, plan);
        assert_eq!(lead.len() - at, 74);
    }

    #[test]
    fn equal_regions_compress_to_one_run() {
        let cfg = CustomConfig::default();
        let regions = vec![region(4096); 10_000];
        let plan = WirePlan::choose(0, &regions, &cfg);
        let mut lead = Vec::new();
        plan.encode_header(&mut lead);
        assert_eq!(lead.len(), HEADER_BYTES + 16);
        let (back, _) =
            WirePlan::decode(&[lead, vec![0; plan.inline_bytes as usize]].concat()).unwrap();
        assert_eq!(back.regions.len(), 10_000);
    }

    #[test]
    fn fragments_cover_the_stream() {
        let cfg = CustomConfig {
            inline_bytes: 10,
            fragment_bytes: 4096,
            pipeline_depth: 2,
            zcopy_threshold: 1 << 20,
        };
        let plan = WirePlan::choose(10 + 4096 * 2 + 5, &[], &cfg);
        assert_eq!(plan.fragments(), 3);
        assert_eq!(plan.fragment_len(2), 5);
        assert_eq!(plan.fragment_offset(1), 10 + 4096);
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
        assert!(WirePlan::decode(&[0x4d, 0x50, 0x43, 0x44, 1, 0]).is_err());
        let mut lead = Vec::new();
        WirePlan::choose(5, &[], &CustomConfig::default()).encode_header(&mut lead);
        assert!(WirePlan::decode(&lead).is_err(), "inline bytes missing");
    }
}
