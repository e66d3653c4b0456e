//! The stream of a custom-typed message: the packed part followed by the coalesced small
//! regions. [`StreamWriter`] produces it on the sender, piece by piece, from the pack callback
//! and region memory; [`StreamReader`] consumes it on the receiver, in order, into the unpack
//! callback and the receiver's regions.
//!
//! Both walk the region list with a cursor (region index and bytes done in it), skipping the
//! zero-copy regions, so a message costs no per-region bookkeeping beyond the list the type
//! provides. The writer walks the sender's own regions; the reader walks the sender's region
//! runs (from the lead) and the receiver's regions in lockstep: a coalesced region occupies the
//! sender's length in the stream, which the receive checked to fit the receiver's region.

use super::{PackState, RawRegion, RawRegionMut, Shape, UnpackState};
use crate::error::{Error, Result};
use std::ptr;

/// Copies `n` bytes from `src` to `dst`; regions of a few bytes are copied inline, without a
/// call to `memcpy`.
///
/// # Safety
/// `src` must be readable and `dst` writable for `n` bytes, and the two must not overlap.
#[inline(always)]
unsafe fn copy_bytes(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: every access below stays within the first `n` bytes of `src` and `dst` (the
    // pairs of loads and stores overlap each other, never the other buffer).
    unsafe {
        if n > 32 {
            ptr::copy_nonoverlapping(src, dst, n);
        } else if n >= 16 {
            let a = ptr::read_unaligned(src as *const u128);
            let b = ptr::read_unaligned(src.add(n - 16) as *const u128);
            ptr::write_unaligned(dst as *mut u128, a);
            ptr::write_unaligned(dst.add(n - 16) as *mut u128, b);
        } else if n >= 8 {
            let a = ptr::read_unaligned(src as *const u64);
            let b = ptr::read_unaligned(src.add(n - 8) as *const u64);
            ptr::write_unaligned(dst as *mut u64, a);
            ptr::write_unaligned(dst.add(n - 8) as *mut u64, b);
        } else if n >= 4 {
            let a = ptr::read_unaligned(src as *const u32);
            let b = ptr::read_unaligned(src.add(n - 4) as *const u32);
            ptr::write_unaligned(dst as *mut u32, a);
            ptr::write_unaligned(dst.add(n - 4) as *mut u32, b);
        } else if n > 0 {
            let (a, b, c) = (*src, *src.add(n / 2), *src.add(n - 1));
            *dst = a;
            *dst.add(n / 2) = b;
            *dst.add(n - 1) = c;
        }
    }
}

/// The region list of one operation, kept by the engine until the operation completes.
#[derive(Debug)]
pub(crate) struct RegionList<T>(pub(crate) Vec<T>);

impl<T> Default for RegionList<T> {
    fn default() -> Self {
        RegionList(Vec::new())
    }
}

// SAFETY: the pointers point into memory that the operation's state keeps alive and that only
// the engine (under its mutex) touches while the operation runs.
unsafe impl Send for RegionList<RawRegion> {}
// SAFETY: as above.
unsafe impl Send for RegionList<RawRegionMut> {}

impl<T> std::ops::Deref for RegionList<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

fn out_of_order(offset: u64, expected: u64) -> Error {
    Error::Transport(format!("stream piece at {offset}, expected {expected}"))
}

fn past_the_regions() -> Error {
    Error::Transport("stream longer than its coalesced regions".into())
}

/// Produces the sender's stream.
pub(crate) struct StreamWriter {
    packed_bytes: u64,
    zcopy_threshold: u64,
    /// Stream offset of the next coalesced byte.
    at: u64,
    /// The run of the shape that byte belongs to, its region (an index into the list), and
    /// how many bytes of that region are already in the stream.
    run: usize,
    region: usize,
    offset: usize,
}

impl StreamWriter {
    /// A writer for a stream of `packed_bytes` packed bytes followed by the regions shorter
    /// than `zcopy_threshold`.
    pub(crate) fn new(packed_bytes: u64, zcopy_threshold: u64) -> StreamWriter {
        StreamWriter {
            packed_bytes,
            zcopy_threshold,
            at: packed_bytes,
            run: 0,
            region: 0,
            offset: 0,
        }
    }

    /// Fills all of `dst` with the stream from `offset` (the caller never asks past the end).
    /// Pieces beyond the packed part must follow each other without gaps. `regions` is the
    /// sender's region list and `shape` its shape, the same at every call; a region whose
    /// length differs from its shape's is an error (nothing is read past a region).
    pub(crate) fn fill(
        &mut self,
        state: &mut dyn PackState,
        shape: &Shape,
        regions: &[RawRegion],
        offset: u64,
        dst: &mut [u8],
    ) -> Result<()> {
        let mut done = 0usize;
        while done < dst.len() && offset + (done as u64) < self.packed_bytes {
            let at = offset + done as u64;
            let want = ((self.packed_bytes - at) as usize).min(dst.len() - done);
            let used = state.pack(at, &mut dst[done..done + want])?;
            if used == 0 || used > want {
                return Err(Error::Callback {
                    callback: "pack",
                    code: crate::error::class::ERR_OTHER,
                });
            }
            done += used;
        }
        let rest = &mut dst[done..];
        if rest.is_empty() {
            return Ok(());
        }
        let rest_offset = offset + done as u64;
        if rest_offset != self.at {
            return Err(out_of_order(rest_offset, self.at));
        }
        let (out, len) = (rest.as_mut_ptr(), rest.len());
        let runs = shape.run_slice();
        // The cursor lives in locals while bytes are copied (stores through `out` could
        // otherwise alias it, as far as the compiler knows).
        let (mut run, mut region, mut offset, mut pos) = (self.run, self.region, self.offset, 0);
        let threshold = self.zcopy_threshold;
        let walked = 'walk: loop {
            if pos == len {
                break Ok(());
            }
            let Some(r) = runs.get(run) else {
                break Err(past_the_regions());
            };
            let bytes = r.region.bytes;
            if region >= r.end || bytes == 0 || bytes >= threshold {
                // Done with this run, or nothing of it is in the stream.
                region = region.max(r.end);
                run += 1;
                continue;
            }
            let bytes = bytes as usize;
            let Some(theirs) = regions.get(region..r.end) else {
                break Err(past_the_regions());
            };
            let source = |r: &RawRegion| {
                if r.bytes == bytes {
                    Ok(r.ptr)
                } else {
                    Err(Error::InvalidDatatype(format!(
                        "a region of {} bytes where its shape says {bytes}",
                        r.bytes
                    )))
                }
            };
            let mut theirs = theirs.iter();
            if offset > 0 {
                // The rest of a region an earlier piece started.
                let Some(r) = theirs.next() else {
                    break Err(past_the_regions());
                };
                let src = match source(r) {
                    Ok(src) => src,
                    Err(e) => break Err(e),
                };
                let n = (bytes - offset).min(len - pos);
                // SAFETY: the region is readable for its `bytes` bytes (PackState's contract,
                // its length checked above) and `offset + n <= bytes`; `pos + n <= len`; a
                // region never overlaps our buffer.
                unsafe { copy_bytes(src.add(offset), out.add(pos), n) };
                pos += n;
                offset += n;
                if offset < bytes {
                    continue; // the piece ended inside this region
                }
                region += 1;
                offset = 0;
            }
            // Whole regions, as many as the piece has room for.
            let whole = ((len - pos) / bytes).min(theirs.len());
            for r in theirs.by_ref().take(whole) {
                let src = match source(r) {
                    Ok(src) => src,
                    Err(e) => break 'walk Err(e),
                };
                // SAFETY: as above, with `offset == 0` and `pos + bytes <= len`.
                unsafe { copy_bytes(src, out.add(pos), bytes) };
                pos += bytes;
            }
            region += whole;
            if pos < len {
                if let Some(r) = theirs.next() {
                    // The start of a region the piece ends in.
                    let src = match source(r) {
                        Ok(src) => src,
                        Err(e) => break Err(e),
                    };
                    offset = len - pos;
                    // SAFETY: as above, with `len - pos < bytes`.
                    unsafe { copy_bytes(src, out.add(pos), offset) };
                    pos = len;
                }
            }
        };
        (self.run, self.region, self.offset) = (run, region, offset);
        self.at += pos as u64;
        walked
    }
}

/// Consumes the receiver's stream.
pub(crate) struct StreamReader {
    packed_bytes: u64,
    zcopy_threshold: u64,
    /// Next expected stream offset (pieces arrive in order).
    next: u64,
    /// The sender's run the next coalesced byte belongs to, its region (an index into both
    /// region lists), and how many bytes of that region arrived already.
    run: usize,
    region: usize,
    offset: usize,
}

impl StreamReader {
    /// A reader for a stream of `packed_bytes` packed bytes followed by the regions (of the
    /// sender's shape) shorter than `zcopy_threshold`.
    pub(crate) fn new(packed_bytes: u64, zcopy_threshold: u64) -> StreamReader {
        StreamReader {
            packed_bytes,
            zcopy_threshold,
            next: 0,
            run: 0,
            region: 0,
            offset: 0,
        }
    }

    /// Delivers the stream piece that starts at `offset`. `shape` is the sender's shape and
    /// `regions` the receiver's regions, the same at every call.
    pub(crate) fn consume(
        &mut self,
        state: &mut dyn UnpackState,
        shape: &Shape,
        regions: &[RawRegionMut],
        offset: u64,
        src: &[u8],
    ) -> Result<()> {
        if offset != self.next {
            return Err(out_of_order(offset, self.next));
        }
        self.next += src.len() as u64;
        let packed_end = ((self.packed_bytes.saturating_sub(offset)) as usize).min(src.len());
        if packed_end > 0 {
            state.unpack(offset, &src[..packed_end])?;
        }
        let rest = &src[packed_end..];
        let (input, len) = (rest.as_ptr(), rest.len());
        let runs = shape.run_slice();
        // The cursor lives in locals while bytes are copied (stores into the regions could
        // otherwise alias it, as far as the compiler knows).
        let (mut run, mut region, mut offset, mut pos) = (self.run, self.region, self.offset, 0);
        let threshold = self.zcopy_threshold;
        let walked = 'walk: loop {
            if pos == len {
                break Ok(());
            }
            let Some(r) = runs.get(run) else {
                break Err(past_the_regions());
            };
            let bytes = r.region.bytes;
            if region >= r.end || bytes == 0 || bytes >= threshold {
                // Done with this run, or nothing of it is in the stream.
                region = region.max(r.end);
                run += 1;
                continue;
            }
            let bytes = bytes as usize;
            // This run's regions of the receiver (its length was checked against the shape).
            let Some(mine) = regions.get(region..r.end) else {
                break Err(past_the_regions());
            };
            let fits = |m: &RawRegionMut| {
                // Checked when the receive started; never write past a region.
                if m.bytes < bytes {
                    Err(Error::Truncated {
                        message_bytes: bytes as u64,
                        buffer_bytes: m.bytes as u64,
                    })
                } else {
                    Ok(m.ptr)
                }
            };
            let mut mine = mine.iter();
            if offset > 0 {
                // The rest of a region an earlier piece started.
                let Some(m) = mine.next() else {
                    break Err(past_the_regions());
                };
                let dst = match fits(m) {
                    Ok(dst) => dst,
                    Err(e) => break Err(e),
                };
                let n = (bytes - offset).min(len - pos);
                // SAFETY: the region is writable for at least `bytes` bytes (UnpackState's
                // contract, checked above) and `offset + n <= bytes`; `pos + n <= len`; a region
                // never overlaps the fragment buffer.
                unsafe { copy_bytes(input.add(pos), dst.add(offset), n) };
                pos += n;
                offset += n;
                if offset < bytes {
                    continue; // the piece ended inside this region
                }
                region += 1;
                offset = 0;
            }
            // Whole regions, as many as the piece holds.
            let whole = ((len - pos) / bytes).min(mine.len());
            for m in mine.by_ref().take(whole) {
                let dst = match fits(m) {
                    Ok(dst) => dst,
                    Err(e) => break 'walk Err(e),
                };
                // SAFETY: as above, with `offset == 0` and `pos + bytes <= len`.
                unsafe { copy_bytes(input.add(pos), dst, bytes) };
                pos += bytes;
            }
            region += whole;
            if pos < len {
                if let Some(m) = mine.next() {
                    // The start of a region the piece ends in.
                    let dst = match fits(m) {
                        Ok(dst) => dst,
                        Err(e) => break Err(e),
                    };
                    offset = len - pos;
                    // SAFETY: as above, with `len - pos < bytes`.
                    unsafe { copy_bytes(input.add(pos), dst, offset) };
                    pos = len;
                }
            }
        };
        (self.run, self.region, self.offset) = (run, region, offset);
        walked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::custom::RegionShape;
    use crate::datatype::ElementType;

    /// Packs `data` at most `step` bytes at a time, to exercise partial fills.
    struct Slow(Vec<u8>, usize);
    // SAFETY: no regions.
    unsafe impl PackState for Slow {
        fn packed_size(&mut self) -> Result<u64> {
            Ok(self.0.len() as u64)
        }
        fn pack(&mut self, offset: u64, dst: &mut [u8]) -> Result<usize> {
            let n = dst.len().min(self.1);
            dst[..n].copy_from_slice(&self.0[offset as usize..offset as usize + n]);
            Ok(n)
        }
        fn regions(&mut self) -> Result<Vec<RawRegion>> {
            Ok(vec![])
        }
    }

    struct Collect(Vec<u8>);
    // SAFETY: no regions.
    unsafe impl UnpackState for Collect {
        fn packed_capacity(&mut self) -> Result<u64> {
            Ok(u64::MAX)
        }
        fn unpack(&mut self, offset: u64, src: &[u8]) -> Result<()> {
            assert_eq!(offset as usize, self.0.len());
            self.0.extend_from_slice(src);
            Ok(())
        }
        fn regions(&mut self) -> Result<Vec<RawRegionMut>> {
            Ok(vec![])
        }
    }

    /// A tiny deterministic generator (xorshift), so the cases are reproducible.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
    }

    /// Streams `packed` and `sent` regions (zero-copy from `threshold`) through a writer cut
    /// at `cuts`, and a reader cut at `read_cuts`, into receiver regions `extra` bytes longer
    /// than the sender's (padded with 0xEE). Checks the stream, the packed part, every
    /// coalesced region, the untouched zero-copy regions and the untouched padding.
    fn check(
        packed: &[u8],
        sent: &[Vec<u8>],
        extra: &[usize],
        threshold: u64,
        cuts: &[usize],
        read_cuts: &[usize],
    ) {
        let regions: Vec<RawRegion> = sent
            .iter()
            .map(|r| RawRegion {
                ptr: r.as_ptr(),
                bytes: r.len(),
                elem: ElementType::U8,
            })
            .collect();
        let expected: Vec<u8> = packed
            .iter()
            .copied()
            .chain(
                sent.iter()
                    .filter(|r| (r.len() as u64) < threshold)
                    .flatten()
                    .copied(),
            )
            .collect();
        let shape = Shape::new(
            packed.len() as u64,
            sent.iter().map(|r| RegionShape {
                bytes: r.len() as u64,
                elem: ElementType::U8,
            }),
        );
        let mut stream = vec![0u8; expected.len()];
        let mut writer = StreamWriter::new(packed.len() as u64, threshold);
        let mut state = Slow(packed.to_vec(), 3);
        let mut at = 0;
        for &cut in cuts.iter().chain([&expected.len()]) {
            let cut = cut.clamp(at, expected.len());
            writer
                .fill(
                    &mut state,
                    &shape,
                    &regions,
                    at as u64,
                    &mut stream[at..cut],
                )
                .unwrap();
            at = cut;
        }
        assert_eq!(stream, expected, "writer, cuts {cuts:?}");

        let mut mine: Vec<Vec<u8>> = sent
            .iter()
            .zip(extra.iter().cycle())
            .map(|(r, x)| vec![0xEE; r.len() + x])
            .collect();
        let theirs: Vec<RawRegionMut> = mine
            .iter_mut()
            .map(|r| RawRegionMut {
                bytes: r.len(),
                ptr: r.as_mut_ptr(),
                elem: ElementType::U8,
            })
            .collect();
        let mut reader = StreamReader::new(packed.len() as u64, threshold);
        let mut sink = Collect(vec![]);
        let mut at = 0;
        for &cut in read_cuts.iter().chain([&expected.len()]) {
            let cut = cut.clamp(at, expected.len());
            reader
                .consume(&mut sink, &shape, &theirs, at as u64, &stream[at..cut])
                .unwrap();
            at = cut;
        }
        assert_eq!(sink.0, packed);
        for (i, (got, want)) in mine.iter().zip(sent).enumerate() {
            let n = want.len();
            if (n as u64) < threshold {
                assert_eq!(&got[..n], &want[..], "region {i}, cuts {read_cuts:?}");
            } else {
                assert!(got[..n].iter().all(|&b| b == 0xEE), "zero-copy region {i}");
            }
            assert!(got[n..].iter().all(|&b| b == 0xEE), "padding of region {i}");
        }
    }

    fn bytes(seed: u8, n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| seed.wrapping_mul(31).wrapping_add(i as u8))
            .collect()
    }

    #[test]
    fn packed_then_coalesced_across_odd_pieces() {
        let packed: Vec<u8> = (0..10).collect();
        let sent = [vec![100u8, 101, 102, 103], vec![200u8; 5]];
        check(&packed, &sent, &[0], 1 << 20, &[7, 12], &[11, 12]);
        // A reader piece that does not start where the last one ended is refused.
        let shape = Shape::new(10, []);
        let mut reader = StreamReader::new(10, 1 << 20);
        assert!(reader
            .consume(&mut Collect(vec![]), &shape, &[], 3, &[1])
            .is_err());
    }

    #[test]
    fn zero_copy_regions_interleaved_with_coalesced_ones() {
        // Zero-copy (>= 16 bytes) between, before and after coalesced ones, empty regions too.
        let sizes = [16, 3, 0, 40, 1, 8, 16, 16, 2, 0, 15, 17];
        let sent: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| bytes(i as u8, n))
            .collect();
        let coalesced: usize = sizes.iter().filter(|&&n| n < 16).sum();
        for packed_len in [0, 1, 5] {
            let packed = bytes(99, packed_len);
            let total = packed_len + coalesced;
            // Every single cut point, on both sides.
            for cut in 0..=total {
                check(&packed, &sent, &[0, 3], 16, &[cut], &[total - cut]);
            }
            // Byte by byte.
            let all: Vec<usize> = (0..total).collect();
            check(&packed, &sent, &[1], 16, &all, &all);
        }
    }

    #[test]
    fn receiver_regions_longer_than_the_senders() {
        let sent: Vec<Vec<u8>> = (0..50).map(|i| bytes(i, 8)).collect();
        check(
            &[],
            &sent,
            &[0, 1, 7, 100],
            1 << 20,
            &[5, 13, 64],
            &[8, 9, 399],
        );
    }

    #[test]
    fn random_shapes_and_fragment_boundaries() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..300 {
            let threshold = 1 + rng.below(64);
            let n = rng.below(40) as usize;
            // Runs of equal sizes, as real types produce them, mixed with odd sizes.
            let mut sent = Vec::new();
            while sent.len() < n {
                let len = rng.below(80) as usize;
                for _ in 0..1 + rng.below(6) {
                    sent.push(bytes(sent.len() as u8, len));
                }
            }
            let packed = bytes(7, rng.below(30) as usize);
            let coalesced: u64 = sent
                .iter()
                .map(|r| r.len() as u64)
                .filter(|&b| b < threshold)
                .sum();
            let total = packed.len() as u64 + coalesced;
            let cuts = |rng: &mut Rng| {
                let mut c: Vec<usize> = (0..rng.below(8))
                    .map(|_| rng.below(total + 1) as usize)
                    .collect();
                c.sort_unstable();
                c
            };
            let (w, r) = (cuts(&mut rng), cuts(&mut rng));
            let extra: Vec<usize> = (0..3).map(|_| rng.below(5) as usize).collect();
            check(&packed, &sent, &extra, threshold, &w, &r);
        }
    }

    #[test]
    fn small_copies_of_every_length() {
        let src: Vec<u8> = (0..=64).collect();
        for n in 0..=64 {
            let mut dst = vec![0xAAu8; 66];
            // SAFETY: both buffers hold at least n bytes past the offsets used.
            unsafe { copy_bytes(src.as_ptr(), dst.as_mut_ptr().add(1), n) };
            assert_eq!(&dst[1..1 + n], &src[..n], "length {n}");
            assert_eq!(dst[0], 0xAA);
            assert!(dst[1 + n..].iter().all(|&b| b == 0xAA), "length {n}");
        }
    }

    #[test]
    fn a_region_unlike_its_shape_is_refused_by_the_writer() {
        // The shape (a wrong hint) says 16 bytes; the region has 8: nothing is read past it.
        let shape = Shape::new(
            0,
            [RegionShape {
                bytes: 16,
                elem: ElementType::U8,
            }],
        );
        let data = [7u8; 8];
        let regions = [RawRegion {
            ptr: data.as_ptr(),
            bytes: 8,
            elem: ElementType::U8,
        }];
        let mut writer = StreamWriter::new(0, 1 << 20);
        let mut out = [0u8; 16];
        let e = writer
            .fill(&mut Slow(vec![], 1), &shape, &regions, 0, &mut out)
            .unwrap_err();
        assert!(matches!(e, Error::InvalidDatatype(_)), "{e}");
    }

    #[test]
    fn a_receiver_region_shorter_than_the_sender_is_refused() {
        let shape = Shape::new(
            0,
            [RegionShape {
                bytes: 8,
                elem: ElementType::U8,
            }],
        );
        let mut short = vec![0u8; 4];
        let theirs = [RawRegionMut {
            bytes: 4,
            ptr: short.as_mut_ptr(),
            elem: ElementType::U8,
        }];
        let mut reader = StreamReader::new(0, 1 << 20);
        let e = reader
            .consume(&mut Collect(vec![]), &shape, &theirs, 0, &[1; 8])
            .unwrap_err();
        assert!(matches!(e, Error::Truncated { .. }), "{e}");
        assert_eq!(short, vec![0; 4]);
    }
}
