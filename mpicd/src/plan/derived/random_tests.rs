//! Random nested types of every constructor: the compiled plan's walker against the constructor
//! tree's own walk (`for_each_basic`), sizes, true bounds and `contiguous_at`.

use super::tests::{ch, double, int, mem};
use super::*;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `lo..hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo) as u64) as i64
    }

    fn list(&mut self, n: i64, lo: i64, hi: i64) -> Vec<i64> {
        (0..self.range(0, n)).map(|_| self.range(lo, hi)).collect()
    }
}

/// A random type of at most `depth` levels of constructors over 1-, 4- and 8-byte elements.
fn random_type(r: &mut Rng, depth: u32) -> Datatype {
    let leaf = [ch(), int(), double()][r.range(0, 3) as usize].clone();
    if depth == 0 || r.range(0, 5) == 0 {
        return leaf;
    }
    let old = random_type(r, depth - 1);
    let u = |v: Vec<i64>| -> Vec<u64> { v.into_iter().map(|x| x as u64).collect() };
    let made = match r.range(0, 11) {
        0 => Datatype::contiguous(r.range(0, 4) as u64, &old),
        1 => Datatype::vector(
            r.range(0, 4) as u64,
            r.range(0, 3) as u64,
            r.range(-4, 5),
            &old,
        ),
        2 => Datatype::hvector(
            r.range(0, 4) as u64,
            r.range(0, 3) as u64,
            r.range(-40, 41),
            &old,
        ),
        3 | 4 => {
            let lens = u(r.list(4, 0, 3));
            let disps: Vec<i64> = lens.iter().map(|_| r.range(-3, 7)).collect();
            match r.range(0, 2) {
                0 => Datatype::indexed(&lens, &disps, &old),
                _ => {
                    let bytes: Vec<i64> = disps.iter().map(|d| d * 5).collect();
                    Datatype::hindexed(&lens, &bytes, &old)
                }
            }
        }
        5 => Datatype::indexed_block(r.range(0, 3) as u64, &r.list(4, -3, 7), &old),
        6 => Datatype::hindexed_block(r.range(0, 3) as u64, &r.list(4, -30, 60), &old),
        7 => {
            let n = r.range(0, 4);
            let types: Vec<Datatype> = (0..n).map(|_| random_type(r, depth - 1)).collect();
            let lens: Vec<u64> = types.iter().map(|_| r.range(0, 3) as u64).collect();
            let disps: Vec<i64> = types.iter().map(|_| r.range(-24, 64)).collect();
            Datatype::structure(&lens, &disps, &types)
        }
        8 => Datatype::resized(&old, r.range(-16, 16), r.range(0, 48)),
        9 => {
            let sizes = [r.range(1, 4), r.range(1, 5)];
            let sub = sizes.map(|n| r.range(0, n + 1));
            let starts = [0, 1].map(|i| r.range(0, sizes[i] - sub[i] + 1) as u64);
            let (sizes, sub) = (sizes.map(|n| n as u64), sub.map(|n| n as u64));
            let order = if r.range(0, 2) == 0 {
                Order::C
            } else {
                Order::Fortran
            };
            Datatype::subarray(&sizes, &sub, &starts, order, &old)
        }
        _ => Ok(Datatype::dup(&old)),
    };
    made.expect("a valid constructor call")
}

/// The walker against the constructor tree: for random types and counts, the bytes packed (in
/// random pieces) are those `for_each_basic` names, in its order; unpacking puts them back in
/// the same places; the size and the true bounds are those of the bytes named; and a type
/// that claims to be one contiguous run is.
#[test]
fn the_walker_agrees_with_the_constructor_tree() {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..20_000 {
        let ty = random_type(&mut r, 5);
        let count = r.range(0, 6) as u64;
        // Where the constructor tree puts the data, relative to the buffer's address (a dry
        // run: nothing is touched), and memory around it.
        const PROBE: usize = 1 << 40;
        let mut spans = Vec::new();
        TypedBuf::new(PROBE as *const u8, count, &ty).for_each_basic(|p, n, b| {
            spans.push((
                p as usize as i64 - PROBE as i64,
                (n as usize * b.size) as i64,
            ));
        });
        let dlo = spans.iter().map(|s| s.0).min().unwrap_or(0);
        let dhi = spans.iter().map(|s| s.0 + s.1).max().unwrap_or(0);
        // What the safe calls check (`typed::check_within`) covers the data, at any count.
        let reach = (count as i64 - 1) * ty.extent();
        let tlo = ty.true_lb() + reach.min(0);
        let thi = ty.true_lb() + ty.true_extent() + reach.max(0);
        assert!(
            spans.is_empty() || (tlo <= dlo && dhi <= thi),
            "case {case}: outside the check"
        );
        let (lo, hi) = (dlo.min(0), dhi.max(0));
        let (base, len) = ((-lo) as usize + 8, (hi - lo) as usize + 16);
        let m = mem(len);
        let buf = TypedBuf::new(m[base..].as_ptr(), count, &ty);
        let want: Vec<usize> = spans
            .iter()
            .flat_map(|&(at, n)| (base as i64 + at) as usize..(base as i64 + at + n) as usize)
            .collect();
        assert_eq!(
            buf.packed_size(),
            want.len() as u64,
            "case {case}: size of {ty:?}"
        );
        if count == 1 && !want.is_empty() {
            let (min, max) = (want.iter().min().unwrap(), want.iter().max().unwrap());
            let tlb = (*min as i64 - base as i64, *max as i64 + 1 - base as i64);
            assert_eq!(
                tlb,
                (ty.true_lb(), ty.true_lb() + ty.true_extent()),
                "case {case}: true bounds of {:#?}",
                ty.constructor()
            );
        }
        if let Some(d) = ty.contiguous_at(count) {
            let start = (base as i64 + d) as usize;
            assert!(
                want.iter().copied().eq(start..start + want.len()),
                "case {case}: not one run"
            );
        }
        let mut packed = Vec::new();
        while packed.len() < want.len() {
            let mut piece = vec![0u8; r.range(1, 40) as usize];
            // SAFETY: every byte the type map names is inside `m`.
            let n = unsafe { buf.pack(packed.len() as u64, &mut piece) };
            assert!(n > 0, "case {case}: the walker stopped early");
            packed.extend_from_slice(&piece[..n]);
        }
        let expected: Vec<u8> = want.iter().map(|&i| m[i]).collect();
        assert_eq!(
            packed, expected,
            "case {case}: packed bytes of {ty:?} x {count}"
        );
        // Unpack distinct bytes into zeroed memory in random pieces; the oracle scatters them
        // in the same (type-map) order, so even overlapping maps agree.
        let fresh: Vec<u8> = (0..want.len()).map(|i| (i % 251 + 1) as u8).collect();
        let (mut got, mut oracle) = (vec![0u8; len], vec![0u8; len]);
        let out = TypedBuf::new(got[base..].as_mut_ptr(), count, &ty);
        let mut at = 0;
        while at < fresh.len() {
            let n = (r.range(1, 40) as usize).min(fresh.len() - at);
            // SAFETY: every byte the type map names is inside `got`.
            assert_eq!(unsafe { out.unpack(at as u64, &fresh[at..at + n]) }, n);
            at += n;
        }
        for (i, &b) in want.iter().zip(&fresh) {
            oracle[*i] = b;
        }
        assert_eq!(
            got, oracle,
            "case {case}: unpacked bytes of {ty:?} x {count}"
        );
    }
}
