//! How derived-typed messages behave: truncation, matched probes, synchronous mode, and
//! among the other kinds of message (custom, to self, wildcards, cancels, the null process).

use crate::common::CaseResult;
use crate::{f64_type, particle, ring, val, Particle, COLS, ROWS};
use mpicd::{Communicator, Datatype, Error, SendMode};

const SYNC: SendMode = SendMode::Synchronous;

/// A message longer than the receive type fails with Truncated, and the bytes outside the type
/// map stay as they were (small and rendezvous sizes).
pub fn truncation(w: &Communicator) -> CaseResult {
    let (next, prev) = ring(w);
    for (tag, n) in [(50, 40u64), (51, 300_000)] {
        let every_other = Datatype::vector(n, 1, 2, &f64_type())?;
        let out = vec![7.5f64; n as usize + 1];
        let mut inc = vec![-3.0f64; 2 * n as usize];
        let got = mpicd::scope(|s| {
            let r = w.irecv_typed(s, &mut inc, 1, &every_other, prev, tag)?;
            w.send(&out, next, tag)?;
            r.wait()
        });
        check!(
            matches!(got, Err(Error::Truncated { .. })),
            "{n}: got {got:?}"
        );
        check!(
            inc.iter().skip(1).step_by(2).all(|x| *x == -3.0),
            "{n}: outside the type map"
        );
    }
    // The ring still works afterwards, through a Particle receive of exactly the size sent.
    let mut p = Particle::default();
    mpicd::scope(|s| {
        let r = w.irecv_values(s, std::slice::from_mut(&mut p), prev, 52)?;
        w.send_value(&particle(w.rank(), 3), next, 52)?;
        r.wait()
    })?;
    check!(p == particle(prev, 3));
    Ok(())
}

/// A matched probe learns the packed size and receives through a derived type.
pub fn matched_probe(w: &Communicator) -> CaseResult {
    let (next, prev) = ring(w);
    let n = 1000 + w.rank() as usize;
    let out: Vec<Particle> = (0..n).map(|k| particle(w.rank(), k)).collect();
    let m: Vec<f64> = (0..ROWS * COLS)
        .map(|k| val(w.rank(), k / COLS, k % COLS))
        .collect();
    let col = Datatype::vector(ROWS as u64, 1, COLS as i64, &f64_type())?;
    mpicd::scope(|s| -> CaseResult {
        let q = w.isend_values(s, &out, next, 60)?;
        let q2 = w.isend_typed(s, &m[3..], 1, &col, next, 61)?;
        let (msg, st) = w.mprobe(prev, 60)?;
        let count = st.count_values::<Particle>().ok_or("not whole particles")? as usize;
        check!(count == 1000 + prev as usize, "probed {count}");
        let mut inc = vec![Particle::default(); count];
        msg.recv_values(&mut inc)?;
        check!(
            (0..count).all(|k| inc[k] == particle(prev, k)),
            "probed particles"
        );
        let (msg, st) = w.mprobe(prev, 61)?;
        check!(st.bytes == Some(ROWS as u64 * 8));
        let mut mine = vec![0.0f64; ROWS * COLS];
        msg.recv_typed(&mut mine[1..], 1, &col)?;
        check!(
            (0..ROWS).all(|i| mine[i * COLS + 1] == val(prev, i, 3)),
            "probed column"
        );
        check!(
            mine.iter()
                .enumerate()
                .all(|(k, x)| k % COLS == 1 || *x == 0.0),
            "outside"
        );
        q.wait()?;
        q2.wait()?;
        Ok(())
    })
}

/// A synchronous derived-typed send does not complete before its receive is posted.
pub fn synchronous(w: &Communicator) -> CaseResult {
    let (next, prev) = ring(w);
    let m: Vec<f64> = (0..ROWS * COLS)
        .map(|k| val(w.rank(), k / COLS, k % COLS))
        .collect();
    let col = Datatype::vector(ROWS as u64, 1, COLS as i64, &f64_type())?;
    // SAFETY: `m` outlives the request, which is waited for below.
    let mut q = unsafe { w.isend_typed_raw(m.as_ptr().cast(), 1, &col, next, 70, SYNC)? };
    // The receiver posts only once it has our go-ahead: until then the send must be pending.
    let (start, mut early) = (std::time::Instant::now(), false);
    while !early && start.elapsed() < std::time::Duration::from_millis(30) {
        early = q.test()?.is_some();
    }
    w.send(&[1u8], next, 71)?;
    w.recv(&mut [0u8], prev, 71)?;
    let mut got = vec![0.0f64; ROWS];
    w.recv(&mut got, prev, 70)?;
    q.wait()?;
    check!(
        !early,
        "the synchronous send completed before its receive was posted"
    );
    check!(
        (0..ROWS).all(|i| got[i] == val(prev, i, 0)),
        "synchronous column"
    );
    // The safe forms: issend_values in a scope, ssend_values blocking.
    let ps: Vec<Particle> = (0..9).map(|k| particle(w.rank(), k)).collect();
    let mut inc = vec![Particle::default(); 9];
    mpicd::scope(|s| -> CaseResult {
        let r = w.irecv_values(s, &mut inc, prev, 72)?;
        w.issend_values(s, &ps, next, 72)?.wait()?;
        r.wait()?;
        Ok(())
    })?;
    check!((0..9).all(|k| inc[k] == particle(prev, k)), "issend_values");
    mpicd::scope(|s| {
        let r = w.irecv_values(s, &mut inc, prev, 73)?;
        w.ssend_values(&ps[..4], next, 73)?;
        r.wait()
    })?;
    check!((0..4).all(|k| inc[k] == particle(prev, k)), "ssend_values");
    Ok(())
}

/// Derived-typed messages among the other kinds: to self, from any source, against custom
/// messages either way (refused, and the sender completes), cancelled, forgotten in a scope,
/// and with the null process.
pub fn kinds_and_cancels(w: &Communicator) -> CaseResult {
    let (next, prev) = ring(w);
    let col = Datatype::vector(ROWS as u64, 1, COLS as i64, &f64_type())?;
    let m: Vec<f64> = (0..ROWS * COLS)
        .map(|k| val(w.rank(), k / COLS, k % COLS))
        .collect();
    // To self, received into another column through ANY_SOURCE, then ANY_TAG (other ranks
    // send other tags meanwhile).
    let mut mine = vec![0.0f64; ROWS * COLS];
    for (source, tag) in [(mpicd::ANY_SOURCE, 80), (w.rank(), mpicd::ANY_TAG)] {
        let st = mpicd::scope(|s| {
            let r = w.irecv_typed(s, &mut mine[4..], 1, &col, source, tag)?;
            w.send_typed(&m[2..], 1, &col, w.rank(), 80)?;
            r.wait()
        })?;
        check!(st.source == w.rank() && st.tag == 80 && st.bytes == Some(ROWS as u64 * 8));
        check!(
            (0..ROWS).all(|i| mine[i * COLS + 4] == val(w.rank(), i, 2)),
            "to self"
        );
    }
    // A custom message into a derived-typed receive, and the reverse: both refused.
    let ragged: Vec<Vec<i32>> = vec![(0..70_000).collect(), vec![1, 2, 3]];
    let mut ps = vec![Particle::default(); 4];
    let got = mpicd::scope(|s| {
        let r = w.irecv_values(s, &mut ps, prev, 81)?;
        w.send_custom(&ragged, next, 81)?;
        r.wait()
    });
    check!(
        matches!(got, Err(Error::DatatypeMismatch { .. })),
        "custom into typed: {got:?}"
    );
    let mut back: Vec<Vec<i32>> = Vec::new();
    let out: Vec<Particle> = (0..4).map(|k| particle(w.rank(), k)).collect();
    let got = mpicd::scope(|s| {
        let r = w.irecv_custom(s, &mut back, prev, 82)?;
        w.send_values(&out, next, 82)?;
        r.wait()
    });
    check!(
        matches!(got, Err(Error::DatatypeMismatch { .. })),
        "typed into custom: {got:?}"
    );
    // A cancelled receive and a forgotten one leave their buffers as they were.
    let mut idle = vec![Particle::default(); 3];
    let st = mpicd::scope(|s| {
        let r = w.irecv_values(s, &mut idle, prev, 83)?;
        r.cancel()?;
        r.wait()
    })?;
    check!(st.cancelled, "cancel: {st:?}");
    mpicd::scope(|s| -> CaseResult {
        let _forgotten = std::mem::ManuallyDrop::new(w.irecv_values(s, &mut idle, prev, 84)?);
        let _too = std::mem::ManuallyDrop::new(w.irecv_typed(s, &mut mine, 1, &col, prev, 84)?);
        Ok(())
    })?;
    check!(
        idle.iter().all(|p| *p == Particle::default()),
        "cancelled receives wrote"
    );
    // The null process: done at once, nothing moves.
    w.send_values(&out, mpicd::PROC_NULL, 85)?;
    let st = w.recv_values(&mut idle, mpicd::PROC_NULL, 85)?;
    check!(st.source == mpicd::PROC_NULL && st.count_values::<Particle>() == Some(0));
    // The ring still works.
    let mut p = Particle::default();
    mpicd::scope(|s| {
        let r = w.irecv_values(s, std::slice::from_mut(&mut p), prev, 86)?;
        w.send_value(&particle(w.rank(), 6), next, 86)?;
        r.wait()
    })?;
    check!(p == particle(prev, 6));
    Ok(())
}
