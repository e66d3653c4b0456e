//! Cases where the data must arrive intact: every kind of custom type, shapes, probes,
//! wildcards, many operations in flight, self-sends.

use crate::common::CaseResult;
use crate::types::*;
use crate::{check_truncated, config, exchange, exchange_each, follow_up_arrives, next_prev};
use crate::{ragged_exchange, stream_point, STEP};
use mpicd::{Communicator, ElementType, Error, ANY_SOURCE, ANY_TAG};
use std::time::Instant;

// ----- the cases -----

pub fn pack_only(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    let f = stream_point(0) as usize;
    let frag = STEP;
    let sizes = [
        1,
        f - 1,
        f,
        f + 1,
        f + frag,
        f + frag + 1,
        f + 3 * frag - 1,
        12_345,
        (1 << 20) + 3,
    ];
    for (i, &len) in sizes.iter().enumerate() {
        for (j, max) in [usize::MAX, 7, 4093].into_iter().enumerate() {
            let seed = (w.rank() * 1000 + i as i32 * 10 + j as i32) as u64;
            let out = Generated {
                seed,
                len,
                max_per_call: max,
            };
            let mut inc = Collected::with_capacity(len + 5);
            let st = exchange(w, &out, &mut inc, 10)?;
            let expect_seed = (prev * 1000 + i as i32 * 10 + j as i32) as u64;
            check!(
                st.source == prev && st.tag == 10 && st.bytes == Some(len as u64),
                "status {st:?} for {len} bytes"
            );
            check!(st.kind == mpicd::MessageKind::Custom);
            check!(
                inc.data == gen_vec(expect_seed, len),
                "{len} bytes packed {max} per call arrived damaged"
            );
        }
    }
    Ok(())
}

pub fn region_only(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    // Small regions are coalesced into the stream, 80 000-byte ones travel zero-copy.
    for (i, lens) in [
        [3, 1, 40_000, 10, 0],
        [0, 0, 0, 0, 0],
        [5000, 70_001, 3, 9000, 1],
        [1, 2, 3, 4, 5],
    ]
    .into_iter()
    .enumerate()
    {
        let out = Arrays::new(w.rank() as u64 * 10 + i as u64, lens);
        let mut inc = Arrays::filled(lens, -1.0, 0xEE, -7, 0xDEAD, 0xBEEF);
        let st = exchange(w, &out, &mut inc, 11)?;
        let total: usize = lens[0] * 8 + lens[1] + lens[2] * 2 + lens[3] * 4 + lens[4] * 8;
        check!(st.bytes == Some(total as u64), "status {st:?}");
        check!(
            inc == Arrays::new(prev as u64 * 10 + i as u64, lens),
            "regions {lens:?} arrived damaged"
        );
    }
    Ok(())
}

/// A receiver may offer regions longer than the sender's: the data lands at the start of each
/// region, the rest is untouched, whether the region was coalesced or zero-copy.
pub fn receiver_regions_longer(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    let sent = [3usize, 5, 20_000, 2, 9000];
    let mine = [10usize, 5, 20_100, 4, 9001];
    let out = ragged(w.rank() as u64, &sent);
    let mut inc = Guarded::new(&mine, 3);
    let st = exchange(w, &out, &mut inc, 12)?;
    let expect = ragged(prev as u64, &sent);
    check!(st.bytes == Some(4 * sent.iter().sum::<usize>() as u64));
    for (i, e) in expect.iter().enumerate() {
        check!(
            inc.region(i)[..e.len()] == e[..],
            "region {i} ({} elements into {}) arrived damaged",
            e.len(),
            mine[i]
        );
    }
    check!(
        inc.guards_intact(&sent),
        "bytes were written past the sender's region lengths"
    );
    Ok(())
}

/// 3000 regions of mixed small sizes and one of 5 MiB in the middle: all coalesced into the
/// body between processes of one node, the large one a zero-copy message between nodes; the
/// data must arrive the same.
pub fn regions_in_many_steps(w: &Communicator) -> CaseResult {
    let mut lens: Vec<usize> = (0..3000).map(|i| [1, 255, 256, 300, 2000][i % 5]).collect();
    lens[1500] = (5 << 20) / 4 + 3; // one region over 5 MiB
    let (st, intact) = ragged_exchange(w, 40, &lens, &mut Vec::new(), 27)?;
    check!(
        st.bytes == Some(4 * lens.iter().sum::<usize>() as u64),
        "status {st:?}"
    );
    check!(intact, "3000 regions of mixed sizes arrived damaged");
    Ok(())
}

pub fn mixed_struct_vec(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    // 2048-element arrays (8 KiB, coalesced into the stream)...
    for (n, max) in [(1usize, usize::MAX), (50, usize::MAX), (37, 7)] {
        let mut out = Recs::<2048>::new(w.rank() as u64 + 1, n);
        out.max_per_call = max;
        let mut inc = Recs::<2048>::empty();
        let st = exchange(w, &out, &mut inc, 13)?;
        check!(st.bytes == Some((n * (REC_PACKED + 2048 * 4)) as u64));
        check!(
            inc.recs == Recs::<2048>::new(prev as u64 + 1, n).recs,
            "{n} struct-vec records (pack {max} per call) arrived damaged"
        );
    }
    // ... and 16384-element arrays (64 KiB, zero-copy).
    let out = Recs::<16384>::new(w.rank() as u64 + 5, 6);
    let mut inc = Recs::<16384>::empty();
    exchange(w, &out, &mut inc, 13)?;
    check!(
        inc.recs == Recs::<16384>::new(prev as u64 + 5, 6).recs,
        "zero-copy struct-vec records arrived damaged"
    );
    Ok(())
}

pub fn empty_message(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    let mut inc = Untouched {
        packed_calls: 0,
        region: vec![GUARD; 4],
    };
    let st = exchange(w, &Nothing, &mut inc, 14)?;
    check!(
        st.bytes == Some(0) && st.source == prev && st.tag == 14,
        "status {st:?}"
    );
    check!(
        inc.packed_calls == 0,
        "unpack called for an empty packed part"
    );
    check!(
        inc.region == vec![GUARD; 4],
        "an empty message wrote into a region"
    );
    // An empty Vec<Vec<i32>> (zero regions) into a receiver that had content.
    let out: Vec<Vec<i32>> = Vec::new();
    let mut inc = ragged(9, &[3, 4]);
    exchange(w, &out, &mut inc, 14)?;
    check!(inc.is_empty(), "received {} inner vectors", inc.len());
    Ok(())
}

pub fn many_small_regions(w: &Communicator) -> CaseResult {
    // 5000 regions of 8 bytes: coalesced into the stream.
    let lens = vec![2usize; 5000];
    let t = Instant::now();
    let (_, intact) = ragged_exchange(w, 0, &lens, &mut Vec::new(), 15)?;
    let regions_time = t.elapsed();
    check!(intact, "5000 small regions arrived damaged");

    // The same bytes packed by a callback, for comparison (printed, not asserted: timings are
    // benchmarks, not tests).
    let flat = Generated::new(1, 5000 * 8);
    let mut sink = Collected::with_capacity(5000 * 8);
    let t = Instant::now();
    exchange(w, &flat, &mut sink, 15)?;
    let packed_time = t.elapsed();
    if w.rank() == 0 {
        println!(
            "    5000 x 8-byte regions: {:.3} ms, same bytes packed: {:.3} ms",
            regions_time.as_secs_f64() * 1e3,
            packed_time.as_secs_f64() * 1e3
        );
    }

    // Small and large regions mixed: 2000 small ones with a zero-copy one every 400.
    let lens: Vec<usize> = (0..2000)
        .map(|i| if i % 400 == 399 { 10_000 } else { i % 3 })
        .collect();
    let (_, intact) = ragged_exchange(w, 50, &lens, &mut Vec::new(), 15)?;
    check!(intact, "small and large regions mixed arrived damaged");
    Ok(())
}

/// More zero-copy regions than the window of regions in flight (`zcopy_depth`), coalesced
/// ones between them: into a dynamic receive, into a fixed-shape one (parts taken when posted),
/// into one too short (truncation, nothing written), and from a sender that fails mid-way.
pub fn zero_copy_window(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    let tag = 31;
    let depth = config().zcopy_depth;
    let zero_copy = |i: usize| i % 3 != 2;
    let lens: Vec<usize> = (0..5 * depth + 7)
        .map(|i| if zero_copy(i) { 10_000 + i } else { i % 5 })
        .collect();
    let (_, intact) = ragged_exchange(w, 70, &lens, &mut Vec::new(), tag)?;
    check!(intact, "{} regions arrived damaged", lens.len());
    let out = ragged(w.rank() as u64 + 70, &lens);
    let expect = ragged(prev as u64 + 70, &lens);

    // Fixed shape, regions one element longer than the sender's.
    let mine: Vec<usize> = lens.iter().map(|n| n + 1).collect();
    let mut inc = FixedGuarded(Guarded::new(&mine, 2));
    let st = exchange(w, &out, &mut inc, tag)?;
    check!(st.bytes == Some(4 * lens.iter().sum::<usize>() as u64));
    for (i, e) in expect.iter().enumerate() {
        check!(
            inc.0.region(i)[..e.len()] == e[..],
            "region {i} of a fixed-shape receive arrived damaged"
        );
    }
    check!(
        inc.0.guards_intact(&lens),
        "written past the sender's lengths"
    );

    // Fixed shape, one zero-copy region late in the message one element short.
    let mut short = lens.clone();
    let victim = (4 * depth..lens.len()).find(|&i| zero_copy(i)).unwrap_or(0);
    short[victim] -= 1;
    let mut inc = FixedGuarded(Guarded::new(&short, 2));
    let outcome = exchange_each(w, &out, &mut inc, tag)?;
    check_truncated(w, tag, &outcome, "a short fixed-shape receive")?;
    check!(inc.0.guards_intact(&[]), "a truncated receive wrote");
    follow_up_arrives(w, tag, 700)?;

    // The pack callback fails while zero-copy regions are in flight.
    let copies = 4 * depth + 3;
    let len = stream_point(6) as usize;
    let failing = ManyRegions {
        seed: 5,
        len,
        fail_at: stream_point(3) + 1,
        region: ragged(6, &[10_000]).remove(0),
        copies,
    };
    let mut inc = PackedAndRegions {
        packed: Collected::with_capacity(len),
        regions: vec![vec![0; 10_000]; copies],
    };
    let outcome = exchange_each(w, &failing, &mut inc, tag)?;
    check!(
        outcome[1] == Err(injected("pack")),
        "failing sender got {:?}",
        outcome[1]
    );
    check!(
        outcome[0] == Err(Error::RemoteFailure),
        "receiver of a failing sender got {:?}",
        outcome[0]
    );
    follow_up_arrives(w, tag, 701)?;
    Ok(())
}

pub fn dynamic_vec_vec(w: &Communicator) -> CaseResult {
    let lens = [0usize, 1, 3, 0, 1000, 0, 70_000, 5, 0, 8192, 0];
    // Once into an empty vector, once into one with a different shape: ONE receive each.
    for mut inc in [Vec::new(), ragged(1, &[5; 20])] {
        let (st, intact) = ragged_exchange(w, 3, &lens, &mut inc, 16)?;
        check!(st.bytes == Some(4 * lens.iter().sum::<usize>() as u64));
        check!(intact, "ragged Vec<Vec<i32>> arrived damaged");
    }
    Ok(())
}

pub fn matched_probe_shape(w: &Communicator) -> CaseResult {
    let (next, prev) = next_prev(w);
    let lens = [4usize, 0, 50_000, 7];
    let out = ragged(w.rank() as u64 + 11, &lens);
    let recs = Recs::<2048>::new(w.rank() as u64 + 12, 3);
    let mut inc: Vec<Vec<i32>> = Vec::new();
    let mut recs_in = Recs::<2048>::empty();
    mpicd::scope(|s| -> CaseResult {
        let s1 = w.isend_custom(s, &out, next, 17)?;
        let s2 = w.isend_custom(s, &recs, next, 18)?;

        // A non-removing probe sees a custom message without a size.
        let st = w.probe(prev, 17)?;
        check!(st.kind == mpicd::MessageKind::Custom && st.source == prev && st.tag == 17);

        // mprobe: the shape is known before any buffer exists; the buffers are made from it.
        let (msg, st) = w.mprobe(prev, 17)?;
        check!(
            st.kind == mpicd::MessageKind::Custom && st.source == prev,
            "{st:?}"
        );
        let shape = msg.shape()?.ok_or("no shape for a custom message")?;
        check!(shape == shape_of_ragged(&lens), "shape {shape:?}");
        inc = shape.regions().map(|r| vec![0; r.len() as usize]).collect();
        let r1 = msg.irecv_custom(s, &mut inc)?;

        // improbe with wildcards, then a mixed type's shape.
        let (msg, st) = loop {
            if let Some(found) = w.improbe(ANY_SOURCE, ANY_TAG)? {
                break found;
            }
        };
        check!(st.source == prev && st.tag == 18, "{st:?}");
        check!(
            w.iprobe(prev, 18)?.is_none(),
            "a matched message must be invisible to probes"
        );
        let shape = msg.shape()?.ok_or("no shape")?;
        check!(shape.packed_bytes == (3 * REC_PACKED) as u64 && shape.region_count() == 3);
        check!(shape
            .regions()
            .all(|r| r.len() == 2048 && r.elem == ElementType::I32));
        let r2 = msg.irecv_custom(s, &mut recs_in)?;
        let mut reqs = vec![r1, r2, s1, s2];
        let st = mpicd::wait_all(&mut reqs)?;
        check!(st[0].source == prev && st[0].tag == 17);
        Ok(())
    })?;
    check!(
        inc == ragged(prev as u64 + 11, &lens),
        "matched receive damaged"
    );
    check!(recs_in.recs == Recs::<2048>::new(prev as u64 + 12, 3).recs);

    // A matched message dropped unreceived is drained: its sender completes, the next message
    // on the same tag arrives.
    let big = Generated::new(77, 100_000);
    mpicd::scope(|s| -> CaseResult {
        let sent = w.isend_custom(s, &big, next, 19)?;
        let (msg, _) = w.mprobe(prev, 19)?;
        drop(msg);
        sent.wait()?;
        Ok(())
    })?;
    let small = Generated::new(78, 10);
    let mut inc = Collected::with_capacity(10);
    exchange(w, &small, &mut inc, 19)?;
    check!(inc.data == gen_vec(78, 10), "message after a discarded one");
    Ok(())
}

pub fn any_source(w: &Communicator) -> CaseResult {
    let per_sender = 3;
    if w.rank() == 0 {
        let mut next_index = vec![0usize; w.size() as usize];
        for _ in 0..per_sender * (w.size() as usize - 1) {
            let mut inc: Vec<Vec<i32>> = Vec::new();
            let st = w.recv_custom(&mut inc, ANY_SOURCE, 20)?;
            let src = st.source as usize;
            check!(src != 0 && src < w.size() as usize, "{st:?}");
            let i = next_index[src];
            next_index[src] += 1;
            let lens = [i + 1, 30_000 * i, 17];
            check!(
                inc == ragged((src * 100 + i) as u64, &lens),
                "message {i} from {src} damaged or out of order"
            );
        }
    } else {
        for i in 0..per_sender {
            let lens = [i + 1, 30_000 * i, 17];
            w.send_custom(&ragged((w.rank() as usize * 100 + i) as u64, &lens), 0, 20)?;
        }
    }
    Ok(())
}

pub fn many_in_flight(w: &Communicator) -> CaseResult {
    let (next, prev) = next_prev(w);
    let n = 32;
    let size_of = |i: usize| i * i * 311;
    // Even messages are pack-only, odd ones Vec<Vec<i32>>: the i-th receive must match the i-th
    // send (non-overtaking), or the types would not fit.
    let packed_out: Vec<Generated> = (0..n)
        .map(|i| Generated::new((w.rank() as usize * 100 + i) as u64, size_of(i)))
        .collect();
    let vv_out: Vec<Vec<Vec<i32>>> = (0..n)
        .map(|i| {
            ragged(
                (w.rank() as usize * 100 + i) as u64,
                &[i, size_of(i) / 4, 3],
            )
        })
        .collect();
    let mut packed_in: Vec<Collected> = (0..n)
        .map(|i| Collected::with_capacity(size_of(i)))
        .collect();
    let mut vv_in: Vec<Vec<Vec<i32>>> = vec![Vec::new(); n];
    let statuses = mpicd::scope(|s| {
        let mut reqs = Vec::new();
        for (i, (p, v)) in packed_in.iter_mut().zip(vv_in.iter_mut()).enumerate() {
            reqs.push(if i % 2 == 0 {
                w.irecv_custom(s, p, prev, 21)?
            } else {
                w.irecv_custom(s, v, prev, 21)?
            });
        }
        for i in 0..n {
            reqs.push(if i % 2 == 0 {
                w.isend_custom(s, &packed_out[i], next, 21)?
            } else {
                w.isend_custom(s, &vv_out[i], next, 21)?
            });
        }
        mpicd::wait_all(&mut reqs)
    })?;
    for (i, st) in statuses.iter().take(n).enumerate() {
        check!(st.source == prev && st.tag == 21, "{st:?}");
        let seed = (prev as usize * 100 + i) as u64;
        if i % 2 == 0 {
            check!(
                packed_in[i].data == gen_vec(seed, size_of(i)),
                "message {i} damaged"
            );
        } else {
            check!(
                vv_in[i] == ragged(seed, &[i, size_of(i) / 4, 3]),
                "message {i} damaged"
            );
        }
    }
    Ok(())
}

pub fn to_self(w: &Communicator) -> CaseResult {
    let me = w.rank();
    let out = Recs::<16384>::new(3, 4); // zero-copy regions
    let packed = Generated::new(4, 200_000); // many fragments
    let mut inc = Recs::<16384>::empty();
    let mut sink = Collected::with_capacity(200_000);
    mpicd::scope(|s| {
        let mut reqs = vec![
            w.irecv_custom(s, &mut inc, me, 22)?,
            w.irecv_custom(s, &mut sink, me, 23)?,
            w.isend_custom(s, &packed, me, 23)?,
            w.isend_custom(s, &out, me, 22)?,
        ];
        mpicd::wait_all(&mut reqs)
    })?;
    check!(inc.recs == out.recs, "self message with regions damaged");
    check!(
        sink.data == gen_vec(4, 200_000),
        "packed self message damaged"
    );
    // A self message sent before its receive is posted (the lead and fragments wait as
    // unexpected messages).
    let small = Generated::new(5, 3000);
    let mut inc = Collected::with_capacity(3000);
    mpicd::scope(|s| {
        let sent = w.isend_custom(s, &small, me, 24)?;
        let r = w.irecv_custom(s, &mut inc, me, 24)?;
        mpicd::wait_all(&mut [sent, r])
    })?;
    check!(inc.data == gen_vec(5, 3000));
    Ok(())
}

pub fn ring_exchange(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    for round in 0..5u64 {
        let out = Recs::<2048>::new(w.rank() as u64 * 10 + round, 3 + round as usize * 7);
        let mut inc = Recs::<2048>::empty();
        let st = exchange(w, &out, &mut inc, 25)?;
        check!(st.source == prev);
        check!(
            inc.recs == Recs::<2048>::new(prev as u64 * 10 + round, 3 + round as usize * 7).recs,
            "round {round} damaged"
        );
    }
    Ok(())
}
