//! Unit tests of the stream writer and reader.
use super::*;
use crate::datatype::ElementType;
use crate::wire::RegionShape;

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
