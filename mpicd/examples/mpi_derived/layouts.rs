//! Where the bytes of derived-typed messages go: vectors against contiguous elements, struct
//! slices, a subarray halo exchange, large strided vectors, counts stepping by the extent.

use crate::common::CaseResult;
use crate::{cell, f64_type, particle, ring, val, Cell, Particle, COLS, ROWS};
use mpicd::{Communicator, Datatype, ElementType, Equivalence, Order, SendMode};

pub fn matrix_column(w: &Communicator) -> CaseResult {
    let (next, prev) = ring(w);
    let rank = w.rank();
    let m: Vec<f64> = (0..ROWS * COLS)
        .map(|k| val(rank, k / COLS, k % COLS))
        .collect();
    let col = Datatype::vector(ROWS as u64, 1, COLS as i64, &f64_type())?;
    check!(col.size() == ROWS as u64 * 8 && col.extent() == ((ROWS - 1) * COLS + 1) as i64 * 8);
    // Column 5 goes out as a column and arrives as contiguous elements.
    let mut got = vec![0.0f64; ROWS];
    let st = mpicd::scope(|s| {
        let r = w.irecv(s, &mut got, prev, 1)?;
        w.send_typed(&m[5..], 1, &col, next, 1)?;
        r.wait()
    })?;
    check!(st.bytes == Some(ROWS as u64 * 8) && st.count_of(&col) == Some(1));
    check!(
        (0..ROWS).all(|i| got[i] == val(prev, i, 5)),
        "column as contiguous"
    );
    // The reverse: contiguous elements land in column 7, and nothing else moves.
    let line: Vec<f64> = (0..ROWS).map(|i| -val(rank, i, 0)).collect();
    let mut mine = m.clone();
    mpicd::scope(|s| {
        let r = w.irecv_typed(s, &mut mine[7..], 1, &col, prev, 2)?;
        w.send(&line, next, 2)?;
        r.wait()
    })?;
    for (k, (a, b)) in mine.iter().zip(&m).enumerate() {
        let want = if k % COLS == 7 {
            -val(prev, k / COLS, 0)
        } else {
            *b
        };
        check!(*a == want, "element {k}: {a} instead of {want}");
    }
    // Three neighbouring columns at once: a column resized to one element's extent, count 3.
    let one = Datatype::resized(&col, 0, 8)?;
    let mut three = vec![0.0f64; 3 * ROWS];
    mpicd::scope(|s| {
        let r = w.irecv(s, &mut three, prev, 3)?;
        w.send_typed(&m[10..], 3, &one, next, 3)?;
        r.wait()
    })?;
    let want = (0..3).flat_map(|c| (0..ROWS).map(move |i| val(prev, i, 10 + c)));
    check!(three.iter().copied().eq(want), "three columns");
    Ok(())
}

pub fn struct_slices(w: &Communicator) -> CaseResult {
    let (next, prev) = ring(w);
    let packed = Particle::equivalent_datatype().size() as usize;
    check!(packed == 1 + 24 + 2 + 4 && std::mem::size_of::<Particle>() == 40);
    // 0 values, a few, and 100 000 (3 MB of fields: a rendezvous message).
    for (tag, n) in [(10, 0usize), (11, 5), (12, 100_000)] {
        let out: Vec<Particle> = (0..n).map(|k| particle(w.rank(), k)).collect();
        let mut inc = vec![Particle::default(); n + 3];
        let st = mpicd::scope(|s| {
            let r = w.irecv_values(s, &mut inc, prev, tag)?;
            w.isend_values(s, &out, next, tag)?.wait()?;
            r.wait()
        })?;
        check!(
            st.count_values::<Particle>() == Some(n as u64)
                && st.bytes == Some((n * packed) as u64)
        );
        check!((0..n).all(|k| inc[k] == particle(prev, k)), "{n} particles");
        check!(
            inc[n..].iter().all(|p| *p == Particle::default()),
            "past the message"
        );
    }
    // The message is the fields' bytes in order: a byte receive sees them packed.
    let out: Vec<Particle> = (0..4).map(|k| particle(w.rank(), k)).collect();
    let mut bytes = vec![0u8; 4 * packed];
    mpicd::scope(|s| {
        let r = w.irecv(s, &mut bytes, prev, 13)?;
        w.send_values(&out, next, 13)?;
        r.wait()
    })?;
    for (k, b) in bytes.chunks(packed).enumerate() {
        let p = particle(prev, k);
        let mut want = vec![p.id];
        p.pos
            .iter()
            .for_each(|x| want.extend_from_slice(&x.to_ne_bytes()));
        want.extend_from_slice(&p.charge.to_ne_bytes());
        want.extend_from_slice(&p.mass.to_ne_bytes());
        check!(b == want.as_slice(), "packed particle {k}");
    }
    // Nested structs and arrays of structs, one value and a slice.
    let cells: Vec<Cell> = (0..777).map(|k| cell(w.rank(), k)).collect();
    let mut inc = vec![Cell::default(); 777];
    let mut one = Cell::default();
    mpicd::scope(|s| -> CaseResult {
        let r = w.irecv_values(s, &mut inc, prev, 14)?;
        let r1 = w.irecv_values(s, std::slice::from_mut(&mut one), prev, 15)?;
        w.send_values(&cells, next, 14)?;
        w.send_value(&cells[9], next, 15)?;
        r.wait()?;
        r1.wait()?;
        Ok(())
    })?;
    check!(
        (0..777).all(|k| inc[k] == cell(prev, k)) && one == cell(prev, 9),
        "cells"
    );
    Ok(())
}

/// A halo exchange along a ring: each rank's (NY + 2) x (NX + 2 * H) grid sends its outer
/// H interior columns to its neighbours and receives theirs into its H-wide halos.
pub fn halo_exchange(w: &Communicator) -> CaseResult {
    const NY: u64 = 40;
    const NX: u64 = 33;
    const H: u64 = 2;
    let (next, prev) = ring(w);
    let rank = w.rank();
    let (ny, nx) = ((NY + 2) as usize, (NX + 2 * H) as usize);
    let sizes = [NY + 2, NX + 2 * H];
    let block = |col: u64| Datatype::subarray(&sizes, &[NY, H], &[1, col], Order::C, &f64_type());
    let (send_right, send_left) = (block(NX)?, block(H)?);
    let (halo_left, halo_right) = (block(0)?, block(NX + H)?);
    check!(halo_left.extent() == (ny * nx * 8) as i64 && halo_left.size() == NY * H * 8);
    let mut grid = vec![-1.0f64; ny * nx];
    for i in 1..=NY as usize {
        for j in H as usize..(NX + H) as usize {
            grid[i * nx + j] = val(rank, i, j);
        }
    }
    let before = grid.clone();
    // Rightwards into the left halos, then leftwards into the right halos.
    for (tag, send, to, halo, from) in [
        (20, &send_right, next, &halo_left, prev),
        (21, &send_left, prev, &halo_right, next),
    ] {
        mpicd::scope(|s| -> CaseResult {
            let r = w.irecv_typed(s, &mut grid, 1, halo, from, tag)?;
            w.isend_typed(s, &before, 1, send, to, tag)?.wait()?;
            r.wait()?;
            Ok(())
        })?;
    }
    for i in 0..ny {
        for j in 0..nx {
            let inner = (1..=NY as usize).contains(&i);
            let want = match j as u64 {
                j2 if inner && j2 < H => val(prev, i, j + NX as usize),
                j2 if inner && j2 >= NX + H => val(next, i, j - NX as usize),
                _ => before[i * nx + j],
            };
            check!(grid[i * nx + j] == want, "grid ({i}, {j})");
        }
    }
    Ok(())
}

/// Strided vectors of 8 and 64 MiB of data: strided to strided, strided to contiguous, and
/// contiguous to strided (blocks of 3 every 5 elements at the largest size).
pub fn large_vectors(w: &Communicator) -> CaseResult {
    let (next, prev) = ring(w);
    // The last two are a few long runs (64 KiB), the shape that might go as UCX iov ranges; on
    // UCX 1.13 the packed stream was measured faster for them too (see bench/README.md).
    for (tag, mib, block, stride) in [
        (30, 8u64, 1u64, 2i64),
        (31, 64, 3, 5),
        (32, 4, 8192, 16384),
        (33, 1, 8192, 8200),
    ] {
        let count = (mib << 20 >> 3) / block;
        let n = count * block; // f64s of data
        let ty = Datatype::vector(count, block, stride, &f64_type())?;
        let span = count as usize * stride as usize;
        let fill = |r: i32| -> Vec<f64> { (0..span).map(|k| r as f64 * 1e9 + k as f64).collect() };
        let out = fill(w.rank());
        let strided_want = |k: usize| {
            let sel = (k % stride as usize) < block as usize;
            if sel {
                prev as f64 * 1e9 + k as f64
            } else {
                -2.0
            }
        };
        let mut inc = vec![-2.0f64; span];
        mpicd::scope(|s| -> CaseResult {
            let r = w.irecv_typed(s, &mut inc, 1, &ty, prev, tag)?;
            w.send_typed(&out, 1, &ty, next, tag)?;
            r.wait()?;
            Ok(())
        })?;
        check!(
            (0..span).all(|k| inc[k] == strided_want(k)),
            "{mib} MiB strided to strided"
        );
        let mut flat = vec![0.0f64; n as usize];
        mpicd::scope(|s| -> CaseResult {
            let r = w.irecv(s, &mut flat, prev, tag)?;
            w.send_typed(&out, 1, &ty, next, tag)?;
            r.wait()?;
            Ok(())
        })?;
        let picked = (0..span).filter(|k| (k % stride as usize) < block as usize);
        check!(picked
            .clone()
            .map(|k| prev as f64 * 1e9 + k as f64)
            .eq(flat.iter().copied()));
        let mut back = vec![-2.0f64; span];
        mpicd::scope(|s| -> CaseResult {
            let r = w.irecv_typed(s, &mut back, 1, &ty, prev, tag)?;
            let mine: Vec<f64> = picked.map(|k| w.rank() as f64 * 1e9 + k as f64).collect();
            w.send(&mine, next, tag)?;
            r.wait()?;
            Ok(())
        })?;
        check!(
            (0..span).all(|k| back[k] == strided_want(k)),
            "{mib} MiB contiguous to strided"
        );
    }
    Ok(())
}

/// Counts above 1 step by the extent, wherever the lower bound is: elements 0 and 2 of every
/// 6 i32s, as a type of lower bound -8 and extent 24; and, through the raw calls, a type whose
/// data lies before the buffer's address.
pub fn count_steps_by_extent(w: &Communicator) -> CaseResult {
    let (next, prev) = ring(w);
    let int = Datatype::of(ElementType::I32);
    let two = Datatype::indexed_block(1, &[0, 2], &int)?;
    let ty = Datatype::resized(&two, -8, 24)?;
    check!((ty.lb(), ty.extent(), ty.true_lb(), ty.true_extent()) == (-8, 24, 0, 12));
    let out: Vec<i32> = (0..30).map(|k| w.rank() * 1000 + k).collect();
    let mut inc = vec![-1i32; 30];
    let mut flat = [0i32; 10];
    let st = mpicd::scope(|s| -> mpicd::Result<mpicd::Status> {
        let r = w.irecv_typed(s, &mut inc, 5, &ty, prev, 40)?;
        let r2 = w.irecv(s, &mut flat, prev, 41)?;
        w.send_typed(&out[..28], 4, &ty, next, 40)?;
        w.send_typed(&out, 5, &ty, next, 41)?;
        r2.wait()?;
        r.wait()
    })?;
    check!(st.count_of(&ty) == Some(4), "4 of 5 instances: {st:?}");
    for (k, x) in inc.iter().enumerate() {
        let want = if k < 24 && k % 6 % 2 == 0 && k % 6 < 4 {
            prev * 1000 + k as i32
        } else {
            -1
        };
        check!(*x == want, "element {k}: {x} instead of {want}");
    }
    let want = (0..5)
        .flat_map(|i| [6 * i, 6 * i + 2])
        .map(|k| prev * 1000 + k);
    check!(flat.iter().copied().eq(want));
    // Data at -8 and -4 bytes from the address given, 3 instances 16 bytes apart.
    let neg = Datatype::hindexed(&[2], &[-8], &int)?;
    let neg = Datatype::resized(&neg, -8, 16)?;
    let mut sent = [0i32; 6];
    mpicd::scope(|s| -> CaseResult {
        let r = w.irecv(s, &mut sent, prev, 42)?;
        let at = out[2..].as_ptr().cast();
        // SAFETY: 3 instances from element 2 reach elements 0..10 of `out`, which outlives the
        // wait just below.
        let q = unsafe { w.isend_typed_raw(at, 3, &neg, next, 42, SendMode::Standard)? };
        q.wait()?;
        r.wait()?;
        Ok(())
    })?;
    let mut raw = [-1i32; 14];
    let at = raw[2..].as_mut_ptr().cast();
    // SAFETY: as above, into elements 0..10 of `raw`, not touched until the wait below.
    let r = unsafe { w.irecv_typed_raw(at, 3, &neg, prev, 43)? };
    w.send(&sent, next, 43)?;
    r.wait()?;
    check!(
        sent == [0, 1, 4, 5, 8, 9].map(|k| prev * 1000 + k),
        "negative lb out: {sent:?}"
    );
    let back = [0, 1, -1, -1, 4, 5, -1, -1, 8, 9, -1, -1, -1, -1];
    let p2 = (prev + w.size() - 1) % w.size();
    check!(
        raw == back.map(|k| if k < 0 { -1 } else { p2 * 1000 + k }),
        "negative lb in: {raw:?}"
    );
    Ok(())
}
