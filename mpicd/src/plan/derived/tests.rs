//! Derived types against the standard's definitions: bounds, sizes, element counts, and the
//! bytes a plan packs, checked against a naive enumeration of the type map.

use super::*;

pub(super) fn int() -> Datatype {
    Datatype::of(ElementType::I32)
}

pub(super) fn double() -> Datatype {
    Datatype::of(ElementType::F64)
}

pub(super) fn ch() -> Datatype {
    Datatype::of(ElementType::I8)
}

/// Packs `count` instances of `ty` over `mem` (indexed from `base`), whole and in pieces of
/// every size from 1 to 7 bytes, and checks both against `expected` byte indices.
fn check_pack(ty: &Datatype, count: u64, mem: &[u8], base: usize, expected: &[usize]) {
    let buf = TypedBuf::new(mem[base..].as_ptr(), count, ty);
    assert_eq!(buf.packed_size(), expected.len() as u64);
    let want: Vec<u8> = expected.iter().map(|&i| mem[i]).collect();
    let mut whole = vec![0u8; expected.len() + 3];
    // SAFETY: the type map stays inside `mem`.
    let n = unsafe { buf.pack(0, &mut whole) };
    assert_eq!(n, expected.len());
    assert_eq!(&whole[..n], &want[..]);
    for piece in 1..8 {
        let mut got = Vec::new();
        let mut off = 0u64;
        while off < buf.packed_size() {
            let mut dst = vec![0u8; piece];
            // SAFETY: as above.
            let n = unsafe { buf.pack(off, &mut dst) };
            got.extend_from_slice(&dst[..n]);
            off += n as u64;
        }
        assert_eq!(got, want, "pieces of {piece}");
    }
    // Unpacking the packed bytes into zeroed memory puts each byte back where it came from.
    let back = vec![0u8; mem.len()];
    let out = TypedBuf::new(back[base..].as_ptr(), count, ty);
    for (i, chunk) in want.chunks(5).enumerate() {
        // SAFETY: the type map stays inside `back`.
        unsafe { out.unpack(i as u64 * 5, chunk) };
    }
    for &i in expected {
        assert_eq!(back[i], mem[i]);
    }
}

pub(super) fn mem(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + 3) as u8).collect()
}

fn bytes_of(range: std::ops::Range<usize>) -> Vec<usize> {
    range.collect()
}

#[test]
fn vector_of_ints_bounds_and_bytes() {
    let v = Datatype::vector(3, 2, 4, &int()).unwrap();
    assert_eq!((v.size(), v.lb(), v.extent()), (24, 0, 40));
    assert_eq!((v.true_lb(), v.true_extent()), (0, 40));
    assert_eq!(v.elements(), 6);
    assert_eq!(v.runs(), 3);
    let m = mem(200);
    let mut want = Vec::new();
    for k in 0..2 {
        for b in 0..3 {
            want.extend(bytes_of(k * 40 + b * 16..k * 40 + b * 16 + 8));
        }
    }
    check_pack(&v, 2, &m, 0, &want);
}

#[test]
fn a_dense_vector_is_one_run() {
    let v = Datatype::vector(1000, 2, 2, &int()).unwrap();
    assert_eq!(v.runs(), 1);
    assert_eq!(v.contiguous_at(5), Some(0));
    let c = Datatype::contiguous(4, &double()).unwrap();
    assert_eq!((c.size(), c.extent(), c.runs()), (32, 32, 1));
}

#[test]
fn a_huge_vector_is_a_loop_not_a_list() {
    let v = Datatype::vector(100_000_000, 1, 2, &double()).unwrap();
    assert_eq!(v.layout().len(), 1);
    assert_eq!(v.runs(), 100_000_000);
    assert_eq!(v.size(), 800_000_000);
    // A piece deep inside the stream is found by division.
    let m = [0u8; 64];
    let buf = TypedBuf::new(
        m.as_ptr(),
        1,
        &Datatype::vector(4, 1, 2, &double()).unwrap(),
    );
    let mut dst = [0u8; 8];
    // SAFETY: the four doubles are inside `m`.
    assert_eq!(unsafe { buf.pack(24, &mut dst) }, 8);
}

#[test]
fn negative_stride_and_displacements() {
    let v = Datatype::hvector(3, 1, -8, &int()).unwrap();
    assert_eq!((v.lb(), v.extent()), (-16, 20));
    let m = mem(64);
    // Instance at byte 32: ints at 32, 24, 16 (type-map order).
    let mut want = bytes_of(32..36);
    want.extend(bytes_of(24..28));
    want.extend(bytes_of(16..20));
    check_pack(&v, 1, &m, 32, &want);
    let ix = Datatype::indexed(&[1, 2], &[-1, 3], &int()).unwrap();
    assert_eq!((ix.lb(), ix.extent(), ix.size()), (-4, 24, 12));
}

#[test]
fn indexed_keeps_the_type_map_order_and_merges_touching_blocks() {
    let ix = Datatype::indexed(&[1, 1, 2], &[5, 0, 1], &int()).unwrap();
    assert_eq!(ix.runs(), 2); // [5], then [0] and [1,2] merge into one run
    let m = mem(64);
    let mut want = bytes_of(20..24);
    want.extend(bytes_of(0..12));
    check_pack(&ix, 1, &m, 0, &want);
    let ib = Datatype::indexed_block(2, &[0, 4], &ch()).unwrap();
    assert_eq!((ib.size(), ib.extent()), (4, 6));
    let hb = Datatype::hindexed_block(1, &[8, 0], &int()).unwrap();
    assert_eq!((hb.lb(), hb.extent()), (0, 12));
}

#[test]
fn struct_pads_to_alignment_unless_resized() {
    let s = Datatype::structure(&[1, 1], &[0, 8], &[double(), ch()]).unwrap();
    assert_eq!((s.size(), s.extent(), s.true_extent()), (9, 16, 9));
    assert_eq!(s.homogeneous(), None);
    assert_eq!(s.elements(), 2);
    let m = mem(64);
    let mut want = bytes_of(0..9);
    want.extend(bytes_of(16..25));
    check_pack(&s, 2, &m, 0, &want);
    let r = Datatype::resized(&s, 0, 9).unwrap();
    assert_eq!(r.extent(), 9);
    let s2 = Datatype::structure(&[1, 1], &[0, 9], &[r.clone(), ch()]).unwrap();
    assert_eq!(s2.extent(), 10); // explicit bounds inside: no padding
}

#[test]
fn resized_moves_bounds_not_data() {
    let r = Datatype::resized(&int(), -4, 12).unwrap();
    assert_eq!(
        (r.lb(), r.extent(), r.true_lb(), r.true_extent()),
        (-4, 12, 0, 4)
    );
    let m = mem(64);
    let mut want = bytes_of(0..4);
    want.extend(bytes_of(12..16));
    want.extend(bytes_of(24..28));
    check_pack(&r, 3, &m, 0, &want);
    let d = Datatype::dup(&r);
    assert_eq!((d.lb(), d.extent()), (-4, 12));
    assert!(matches!(d.constructor(), Constructor::Dup(_)));
}

#[test]
fn subarray_in_both_orders() {
    // A 4x5 array of ints, rows 1..3, columns 2..5 (C order: the last index is fastest).
    let s = Datatype::subarray(&[4, 5], &[2, 3], &[1, 2], Order::C, &int()).unwrap();
    assert_eq!((s.size(), s.lb(), s.extent()), (24, 0, 80));
    assert_eq!((s.true_lb(), s.true_extent()), (28, 32));
    let m = mem(200);
    let mut want = Vec::new();
    for r in 1..3 {
        want.extend(bytes_of((r * 5 + 2) * 4..(r * 5 + 5) * 4));
    }
    check_pack(&s, 1, &m, 0, &want);
    // Fortran order: the first index is fastest.
    let f = Datatype::subarray(&[4, 5], &[2, 3], &[1, 2], Order::Fortran, &int()).unwrap();
    let mut want = Vec::new();
    for c in 2..5 {
        want.extend(bytes_of((c * 4 + 1) * 4..(c * 4 + 3) * 4));
    }
    check_pack(&f, 1, &m, 0, &want);
    assert!(Datatype::subarray(&[4], &[3], &[2], Order::C, &int()).is_err());
}

#[test]
fn darray_block_and_cyclic() {
    // 8 elements over 2 processes, block: rank 1 owns 4..8.
    let b = Datatype::darray(
        2,
        1,
        &[8],
        &[Distribution::Block],
        &[DISTRIBUTE_DFLT_DARG],
        &[2],
        Order::C,
        &int(),
    )
    .unwrap();
    assert_eq!((b.size(), b.extent(), b.true_lb()), (16, 32, 16));
    // Cyclic(2) over 3 processes of 10 elements: rank 1 owns 2,3 and 8,9.
    let c = Datatype::darray(
        3,
        1,
        &[10],
        &[Distribution::Cyclic],
        &[2],
        &[3],
        Order::C,
        &int(),
    )
    .unwrap();
    let m = mem(64);
    let mut want = bytes_of(8..16);
    want.extend(bytes_of(32..40));
    check_pack(&c, 1, &m, 0, &want);
    // 2-D, 2x2 grid, rank 3 = coordinates (1, 1), 4x4 array, block: rows 2..4, cols 2..4.
    let g = Datatype::darray(
        4,
        3,
        &[4, 4],
        &[Distribution::Block; 2],
        &[DISTRIBUTE_DFLT_DARG; 2],
        &[2, 2],
        Order::C,
        &ch(),
    )
    .unwrap();
    let mut want = bytes_of(10..12);
    want.extend(bytes_of(14..16));
    check_pack(&g, 1, &m, 0, &want);
    assert!(Datatype::darray(
        4,
        0,
        &[4],
        &[Distribution::Block],
        &[1],
        &[4],
        Order::C,
        &ch()
    )
    .is_ok());
    assert!(Datatype::darray(
        4,
        0,
        &[8],
        &[Distribution::Block],
        &[1],
        &[4],
        Order::C,
        &ch()
    )
    .is_err());
}

#[test]
fn element_counts_of_partial_messages() {
    let s = Datatype::structure(&[1, 2], &[0, 8], &[double(), int()]).unwrap();
    assert_eq!(s.elements(), 3);
    assert_eq!(s.elements_in(16), 3);
    assert_eq!(s.elements_in(12), 2);
    assert_eq!(s.elements_in(10), 1);
    assert_eq!(s.elements_in(16 + 8), 4);
    for n in 0..12 {
        let b = s.bytes_of_elements(n);
        assert_eq!(s.elements_in(b), n, "{n} elements take {b} bytes");
    }
    let pair = Datatype::basic(Basic {
        id: 99,
        size: 8,
        align: 4,
        parts: 2,
    })
    .unwrap();
    let c = Datatype::contiguous(2, &pair).unwrap();
    assert_eq!((c.elements(), c.elements_in(12)), (4, 3));
}

#[test]
fn nested_types_and_basic_runs() {
    let inner = Datatype::vector(2, 1, 2, &int()).unwrap(); // ints at 0 and 8, extent 12
    let outer = Datatype::contiguous(3, &inner).unwrap();
    assert_eq!((outer.size(), outer.extent(), outer.runs()), (24, 36, 6));
    let m = mem(128);
    let mut want = Vec::new();
    for k in 0..3 {
        want.extend(bytes_of(k * 12..k * 12 + 4));
        want.extend(bytes_of(k * 12 + 8..k * 12 + 12));
    }
    check_pack(&outer, 1, &m, 0, &want);
    let s = Datatype::structure(&[2, 1], &[0, 16], &[int(), outer.clone()]).unwrap();
    let buf = TypedBuf::new(m.as_ptr(), 1, &s);
    let mut runs = Vec::new();
    buf.for_each_basic(|p, n, b| runs.push((p as usize - m.as_ptr() as usize, n, b.size)));
    assert_eq!(runs[0], (0, 2, 4));
    assert_eq!(runs.len(), 7);
    assert_eq!(runs[6], (16 + 24 + 8, 1, 4));
}

#[test]
fn empty_types_and_zero_counts() {
    let e = Datatype::contiguous(0, &int()).unwrap();
    assert_eq!((e.size(), e.extent(), e.elements_in(0)), (0, 0, 0));
    let m = mem(8);
    check_pack(&e, 5, &m, 0, &[]);
    let v = Datatype::vector(0, 3, 2, &int()).unwrap();
    assert_eq!(v.size(), 0);
}

#[test]
fn same_is_identity_not_equality() {
    let a = Datatype::contiguous(2, &int()).unwrap();
    let b = Datatype::contiguous(2, &int()).unwrap();
    assert!(a.same(&a.clone()));
    assert!(!a.same(&b));
    assert!(!a.same(&Datatype::dup(&a)));
}

/// The indices one coordinate owns of a dimension of `g` over `p` processes, by the standard's
/// definition of block and cyclic distributions.
fn owned(g: u64, d: Distribution, darg: i64, p: u64, c: u64) -> Vec<u64> {
    match d {
        Distribution::None => (0..g).collect(),
        Distribution::Block => {
            let b = if darg == DISTRIBUTE_DFLT_DARG {
                g.div_ceil(p)
            } else {
                darg as u64
            };
            (c * b..((c + 1) * b).min(g)).collect()
        }
        Distribution::Cyclic => {
            let k = if darg == DISTRIBUTE_DFLT_DARG {
                1
            } else {
                darg as u64
            };
            (0..g).filter(|i| (i / k) % p == c).collect()
        }
    }
}

#[test]
fn darray_type_maps_match_the_standard_for_every_rank() {
    use Distribution::*;
    let d = DISTRIBUTE_DFLT_DARG;
    /// Global sizes, distributions, distribution arguments, process grid.
    type Case = (Vec<u64>, Vec<Distribution>, Vec<i64>, Vec<u32>);
    let cases: Vec<Case> = vec![
        (vec![7, 5], vec![Block, Cyclic], vec![d, 2], vec![2, 3]),
        (vec![9, 4], vec![Cyclic, None], vec![2, d], vec![3, 1]),
        (
            vec![5, 6, 3],
            vec![Cyclic, Block, Block],
            vec![d, 4, d],
            vec![2, 2, 1],
        ),
        (vec![4, 7], vec![Block, Cyclic], vec![3, 3], vec![2, 2]),
    ];
    for (gsizes, distribs, dargs, psizes) in cases {
        let size: u32 = psizes.iter().product();
        let n = gsizes.len();
        let total: u64 = gsizes.iter().product();
        let m = mem(total as usize);
        for order in [Order::C, Order::Fortran] {
            for rank in 0..size {
                let t = Datatype::darray(
                    size,
                    rank,
                    &gsizes,
                    &distribs,
                    &dargs,
                    &psizes,
                    order,
                    &ch(),
                )
                .unwrap();
                let mut coords = vec![0u64; n];
                let mut r = rank as u64;
                for i in (0..n).rev() {
                    coords[i] = r % psizes[i] as u64;
                    r /= psizes[i] as u64;
                }
                let local: Vec<Vec<u64>> = (0..n)
                    .map(|i| {
                        owned(
                            gsizes[i],
                            distribs[i],
                            dargs[i],
                            psizes[i] as u64,
                            coords[i],
                        )
                    })
                    .collect();
                // Every local index tuple, the fastest-varying dimension last in `dims`.
                let dims: Vec<usize> = match order {
                    Order::C => (0..n).collect(),
                    Order::Fortran => (0..n).rev().collect(),
                };
                let mut tuples: Vec<Vec<u64>> = vec![vec![0; n]];
                for &k in &dims {
                    tuples = tuples
                        .into_iter()
                        .flat_map(|t| {
                            local[k].iter().map(move |&i| {
                                let mut t = t.clone();
                                t[k] = i;
                                t
                            })
                        })
                        .collect();
                }
                let offset = |t: &Vec<u64>| -> usize {
                    let (mut off, mut stride) = (0u64, 1u64);
                    for &k in dims.iter().rev() {
                        off += t[k] * stride;
                        stride *= gsizes[k];
                    }
                    off as usize
                };
                let want: Vec<usize> = tuples.iter().map(offset).collect();
                assert_eq!(t.extent() as u64, total);
                check_pack(&t, 1, &m, 0, &want);
            }
        }
    }
}

#[test]
fn true_bounds_are_those_of_the_data_only() {
    // An empty part (with or without bounds of its own) adds no data, wherever it is placed:
    // the true bounds are the int's, 20..24, not 0..24 (found by the random test below).
    let empty = Datatype::contiguous(0, &int()).unwrap();
    let marked = Datatype::resized(&empty, -4, 13).unwrap();
    for part in [empty, marked] {
        let s = Datatype::structure(&[1, 1], &[0, 20], &[part, int()]).unwrap();
        assert_eq!((s.size(), s.true_lb(), s.true_extent()), (4, 20, 4));
        let twice = Datatype::contiguous(2, &s).unwrap();
        assert_eq!(twice.true_lb(), 20);
    }
    let e = Datatype::structure(&[2], &[12], &[Datatype::contiguous(0, &int()).unwrap()]).unwrap();
    assert_eq!((e.size(), e.true_lb(), e.true_extent()), (0, 0, 0));
}
