//! Receives of the wrong kind: a contiguous receive of a custom message and the reverse (a type
//! error, the sender completes, the order of the two kinds is kept).

use crate::common::{self, CaseResult};
use crate::types::*;
use crate::{follow_up_arrives, next_prev, pair, stream_point, wait_each, Outcome};
use mpicd::{Communicator, CustomRecv, CustomSend, Error, Primitive};

/// Custom messages of every wire layout, as (what, message): lead only, fragments, zero-copy
/// regions, and a region table too long for the lead (it travels apart).
pub fn custom_layouts(seed: u64) -> Vec<(&'static str, Box<dyn CustomSend>)> {
    // Alternating lengths: one run per region, 600 runs (9600 bytes of table), plus a region
    // large enough to travel zero-copy.
    let mut long_table: Vec<usize> = (0..600).map(|i| 1 + i % 2).collect();
    long_table.push(40_000);
    vec![
        ("lead only", Box::new(Generated::new(seed, 100))),
        (
            "fragments",
            Box::new(Generated::new(seed, stream_point(5) as usize + 17)),
        ),
        (
            "zero-copy regions",
            Box::new(ragged(seed, &[3, 40_000, 5, 20_000])),
        ),
        ("region table apart", Box::new(ragged(seed, &long_table))),
    ]
}

/// A contiguous message on `tag` from `prev` to `next`, and its data checked.
pub fn contiguous_follow_up(w: &Communicator, tag: i32, seed: u64, len: usize) -> CaseResult {
    let (next, prev) = next_prev(w);
    let out = common::pattern(seed * 64 + w.rank() as u64, len);
    let mut inc = vec![0u8; len];
    let outcome = pair(|s| {
        Ok([
            w.irecv(s, &mut inc, prev, tag)?,
            w.isend(s, &out, next, tag)?,
        ])
    })?;
    check!(
        matches!(&outcome[0], Ok(st) if st.bytes == Some(len as u64)
            && st.kind == mpicd::MessageKind::Contiguous && st.source == prev),
        "contiguous follow-up on tag {tag} got {:?}",
        outcome[0]
    );
    check!(outcome[1].is_ok(), "follow-up sender got {:?}", outcome[1]);
    check!(
        inc == common::pattern(seed * 64 + prev as u64, len),
        "contiguous follow-up on tag {tag} damaged"
    );
    Ok(())
}

pub const CUSTOM_INTO_CONTIGUOUS: Error = Error::DatatypeMismatch {
    message: mpicd::MessageKind::Custom,
};
pub const CONTIGUOUS_INTO_CUSTOM: Error = Error::DatatypeMismatch {
    message: mpicd::MessageKind::Contiguous,
};

/// A contiguous receive that matches a custom-typed message fails with a datatype mismatch,
/// whatever the size of its buffer (smaller than a lead's header, between the header and the
/// longest lead, larger), and the sender completes: every private message was drained.
pub fn contiguous_receive_of_custom(w: &Communicator) -> CaseResult {
    let tag = 40;
    let (next, prev) = next_prev(w);
    for (k, (what, out)) in custom_layouts(w.rank() as u64 + 1).into_iter().enumerate() {
        for (j, size) in [0usize, 10, 71, 72, 100, 8191, 8192, 100_000]
            .into_iter()
            .enumerate()
        {
            let mut buf = vec![0xA5u8; size];
            let outcome = pair(|s| {
                Ok([
                    w.irecv(s, &mut buf, prev, tag)?,
                    w.isend_custom(s, &*out, next, tag)?,
                ])
            })?;
            check!(
                outcome[0] == Err(CUSTOM_INTO_CONTIGUOUS),
                "{what} into a {size}-byte contiguous receive got {:?}",
                outcome[0]
            );
            check!(
                outcome[1].is_ok(),
                "{what} sender (receive of {size} bytes) got {:?}",
                outcome[1]
            );
            // Nothing of it is left behind: the next messages on the tag arrive intact.
            contiguous_follow_up(w, tag, (k * 10 + j) as u64, 1 + j * 1000)?;
        }
        follow_up_arrives(w, tag, 1000 + k as u64)?;
    }
    // A blocking send.
    let out = ragged(w.rank() as u64, &[1, 50_000]);
    let received = drained_during_send(w, &mut [0i32; 4], prev, &out, next, tag)?;
    check!(received == Err(CUSTOM_INTO_CONTIGUOUS));
    contiguous_follow_up(w, tag, 2000, 8)?;
    Ok(())
}

/// A contiguous receive from `source` into `buf`, posted before the blocking custom send of
/// `out` to `dest` and never waited on while that send runs: the receive's outcome.
fn drained_during_send<T: Primitive, S: CustomSend + ?Sized>(
    w: &Communicator,
    buf: &mut [T],
    source: i32,
    out: &S,
    dest: i32,
    tag: i32,
) -> mpicd::Result<Outcome> {
    mpicd::scope(|s| {
        let r = w.irecv(s, buf, source, tag)?;
        w.send_custom(out, dest, tag)?;
        Ok(r.wait())
    })
}

/// A custom receive that matches a contiguous message fails with a datatype mismatch without
/// calling the type's callbacks, and the sender completes.
pub fn custom_receive_of_contiguous(w: &Communicator) -> CaseResult {
    let tag = 41;
    let (next, prev) = next_prev(w);
    for (i, len) in [0usize, 10, 5000, 9000, 100_000, 1 << 20]
        .into_iter()
        .enumerate()
    {
        let out = common::pattern(i as u64, len);
        let exchange = |inc: &mut dyn CustomRecv| {
            pair(|s| {
                Ok([
                    w.irecv_custom(s, inc, prev, tag)?,
                    w.isend(s, &out, next, tag)?,
                ])
            })
        };
        let mut inc = Collected::with_capacity(len + 5);
        let mut dynamic: Vec<Vec<i32>> = Vec::new();
        for receiver in [&mut inc as &mut dyn CustomRecv, &mut dynamic] {
            let outcome = exchange(receiver)?;
            check!(
                outcome[0] == Err(CONTIGUOUS_INTO_CUSTOM),
                "{len} contiguous bytes into a custom receive got {:?}",
                outcome[0]
            );
            check!(outcome[1].is_ok(), "sender got {:?}", outcome[1]);
        }
        check!(inc.calls == 0 && inc.data.is_empty(), "unpack was called");
        check!(dynamic.is_empty(), "a dynamic receive was resized");
        follow_up_arrives(w, tag, 1100 + i as u64)?;
        contiguous_follow_up(w, tag, 1100 + i as u64, len)?;
    }
    Ok(())
}

/// Contiguous and custom messages on one (communicator, source, tag) are received in the
/// order they were sent, whether their receives fit them or not.
pub fn kinds_keep_their_order(w: &Communicator) -> CaseResult {
    let tag = 42;
    let (next, prev) = next_prev(w);
    let me = w.rank() as u64;
    let a = common::pattern(me * 3, 5000);
    let b = ragged(me * 3 + 1, &[2, 30_000, 9]);
    let c = common::pattern(me * 3 + 2, 100_000);
    let (mut ia, mut ib, mut ic) = (vec![0u8; 5000], Vec::<Vec<i32>>::new(), vec![0u8; 100_000]);
    let outcome = mpicd::scope(|s| {
        let reqs = vec![
            w.irecv(s, &mut ia, prev, tag)?,
            w.irecv_custom(s, &mut ib, prev, tag)?,
            w.irecv(s, &mut ic, prev, tag)?,
            w.isend(s, &a, next, tag)?,
            w.isend_custom(s, &b, next, tag)?,
            w.isend(s, &c, next, tag)?,
        ];
        Ok::<_, Error>(wait_each(reqs))
    })?;
    check!(outcome.iter().all(Result::is_ok), "{outcome:?}");
    let p = prev as u64;
    check!(
        ia == common::pattern(p * 3, 5000),
        "first contiguous damaged"
    );
    check!(ib == ragged(p * 3 + 1, &[2, 30_000, 9]), "custom damaged");
    check!(
        ic == common::pattern(p * 3 + 2, 100_000),
        "second contiguous damaged"
    );

    // A custom message then a contiguous one, both received as contiguous: the first receive
    // gets the custom one (and fails), the second the contiguous one.
    let d = Generated::new(me, stream_point(3) as usize);
    let e = common::pattern(me + 50, 300);
    let (mut id, mut ie) = (vec![0u8; 300], vec![0u8; 300]);
    let outcome = mpicd::scope(|s| {
        let reqs = vec![
            w.irecv(s, &mut id, prev, tag)?,
            w.irecv(s, &mut ie, prev, tag)?,
            w.isend_custom(s, &d, next, tag)?,
            w.isend(s, &e, next, tag)?,
        ];
        Ok::<_, Error>(wait_each(reqs))
    })?;
    check!(
        outcome[0] == Err(CUSTOM_INTO_CONTIGUOUS),
        "{:?}",
        outcome[0]
    );
    check!(
        matches!(&outcome[1], Ok(st) if st.bytes == Some(300)),
        "{:?}",
        outcome[1]
    );
    check!(outcome[2].is_ok() && outcome[3].is_ok(), "{outcome:?}");
    check!(ie == common::pattern(prev as u64 + 50, 300));
    Ok(())
}

/// Probes see both kinds; a matched message received with the other kind of receive fails
/// with a datatype mismatch and is drained.
pub fn matched_kind_mismatch(w: &Communicator) -> CaseResult {
    let tag = 43;
    let (next, prev) = next_prev(w);
    let out = ragged(w.rank() as u64, &[7, 60_000]);
    mpicd::scope(|s| -> CaseResult {
        let sent = w.isend_custom(s, &out, next, tag)?;
        let st = w.probe(prev, tag)?;
        check!(st.kind == mpicd::MessageKind::Custom, "{st:?}");
        let (msg, _) = w.mprobe(prev, tag)?;
        let mut buf = vec![0u8; 1 << 20];
        check!(msg.recv(&mut buf) == Err(CUSTOM_INTO_CONTIGUOUS));
        sent.wait()?;
        Ok(())
    })?;

    let bytes = common::pattern(w.rank() as u64, 20_000);
    mpicd::scope(|s| -> CaseResult {
        let sent = w.isend(s, &bytes, next, tag)?;
        let (msg, st) = w.mprobe(prev, tag)?;
        check!(
            st.kind == mpicd::MessageKind::Contiguous && st.bytes == Some(20_000),
            "{st:?}"
        );
        let mut inc = Collected::with_capacity(20_000);
        check!(msg.recv_custom(&mut inc) == Err(CONTIGUOUS_INTO_CUSTOM));
        check!(inc.calls == 0);
        sent.wait()?;
        Ok(())
    })?;
    follow_up_arrives(w, tag, 1200)?;
    contiguous_follow_up(w, tag, 1200, 64)?;
    Ok(())
}

/// MPI's progress rule on a mismatch: a contiguous receive nobody waits on that took a custom
/// message must still drain it, or a blocking custom send that depends on it never returns.
pub fn mismatch_progresses_independently(w: &Communicator) -> CaseResult {
    let tag = 44;
    let (next, prev) = next_prev(w);
    // To self: the receive is posted, then a blocking send of a message with zero-copy regions.
    let out = ragged(w.rank() as u64, &[9, 40_000, 40_000]);
    let me = w.rank();
    let received = drained_during_send(w, &mut [0u8; 16], me, &out, me, tag)?;
    check!(received == Err(CUSTOM_INTO_CONTIGUOUS));
    // In a ring: every rank is blocked in its own send while its receive must drain.
    let out = Generated::new(w.rank() as u64, stream_point(20) as usize);
    let received = drained_during_send(w, &mut vec![0u8; 9000], prev, &out, next, tag)?;
    check!(received == Err(CUSTOM_INTO_CONTIGUOUS));
    contiguous_follow_up(w, tag, 1300, 9000)?;
    Ok(())
}
