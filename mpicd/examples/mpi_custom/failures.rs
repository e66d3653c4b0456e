//! Cases where a callback fails on either side, receives truncate, and every operation frees
//! its state exactly once; and the progress of custom operations nobody waits on.

use crate::common::CaseResult;
use crate::states::*;
use crate::types::*;
use crate::{check_truncated, exchange_each, follow_up_arrives, next_prev, stream_point};
use crate::{wait_each, Outcome};
use mpicd::custom::{PackState, SendParts, UnpackState};
use mpicd::{Communicator, CustomSend, Error, SendMode, PROC_NULL};
use std::sync::Arc;

/// Callback failures on the sender before any data left: the send fails at once, the receiver
/// sees nothing but the next message.
pub fn sender_fails_before_data(w: &Communicator) -> CaseResult {
    let (next, prev) = next_prev(w);
    let life = Arc::new(Lifetimes::default());
    // Each failed send still sends a lead that says so: the matching receive fails with
    // RemoteFailure instead of waiting for a message that never comes.
    let mut doomed: Vec<Collected> = (0..4).map(|_| Collected::with_capacity(3000)).collect();
    mpicd::scope(|s| -> CaseResult {
        let mut doomed_reqs = doomed
            .iter_mut()
            .map(|c| w.irecv_custom(s, c, prev, 26))
            .collect::<mpicd::Result<Vec<_>>>()?;
        for fail in [
            SendFailure::PackedSize,
            SendFailure::Regions,
            SendFailure::PackAt(0),
            SendFailure::PackZeroAt(0),
        ] {
            let state = InjectedSend::new(1, 5000, 10, fail, &life);
            match w.isend_state(state, next, 26, SendMode::Standard) {
                Ok(req) => {
                    let e = req.wait();
                    check!(e.is_err(), "send with {fail:?} succeeded");
                }
                Err(e) => {
                    if fail != SendFailure::PackZeroAt(0) {
                        check!(
                            e == injected(match fail {
                                SendFailure::PackedSize => "packed_size",
                                SendFailure::Regions => "regions",
                                _ => "pack",
                            }),
                            "{fail:?} reported as {e}"
                        );
                    }
                }
            }
        }
        // parts() failing: the safe API's version of the same.
        struct NoParts;
        impl CustomSend for NoParts {
            fn parts(&self) -> mpicd::Result<SendParts<'_>> {
                Err(injected("parts"))
            }
        }
        check!(w.send_custom(&NoParts, next, 26) == Err(injected("parts")));
        for outcome in mpicd::wait_all_outcomes(&mut doomed_reqs) {
            check!(
                outcome == Err(Error::RemoteFailure),
                "receive of a failed send: {outcome:?}"
            );
        }
        Ok(())
    })?;
    let mut inc = Collected::with_capacity(3000);
    let good = Generated::new(w.rank() as u64 + 900, 3000);
    mpicd::scope(|s| -> CaseResult {
        let r = w.irecv_custom(s, &mut inc, prev, 26)?;
        check!(
            life.counts() == (4, 4),
            "states made/freed {:?}",
            life.counts()
        );
        let mut reqs = vec![r, w.isend_custom(s, &good, next, 26)?];
        let st = mpicd::wait_all(&mut reqs)?.remove(0);
        check!(st.source == prev && st.bytes == Some(3000));
        Ok(())
    })?;
    check!(
        inc.data == gen_vec(prev as u64 + 900, 3000),
        "the receiver got something else than the next good message"
    );
    Ok(())
}

/// A pack failure after the lead and some fragments left: the sender gets its error, the
/// receiver completes with RemoteFailure (no hang), and the tag stays usable.
pub fn sender_fails_after_data(w: &Communicator) -> CaseResult {
    let (next, prev) = next_prev(w);
    let life = Arc::new(Lifetimes::default());
    let cases = [
        (SendFailure::PackAt(stream_point(3) + 5), 0usize),
        (SendFailure::PackAt(stream_point(0)), 20_000), // with a zero-copy region
        (SendFailure::PackZeroAt(stream_point(7) + 1), 0),
        (SendFailure::PackAt(stream_point(19) + 4000), 3), // the last fragment
    ];
    let len = stream_point(20) - 7;
    for (k, (fail, region_len)) in cases.into_iter().enumerate() {
        let tag = 27;
        let mut inc = Collected::with_capacity(len as usize);
        let (rstate, seen) = CountedRecv::new(len, region_len, false, &life);
        let outcome = mpicd::scope(|s| {
            let reqs = vec![
                if k % 2 == 0 {
                    w.irecv_custom(s, &mut inc, prev, tag)?
                } else {
                    w.irecv_state(rstate, prev, tag)?
                },
                w.isend_state(
                    InjectedSend::new(k as u64, len, region_len, fail, &life),
                    next,
                    tag,
                    SendMode::Standard,
                )?,
            ];
            Ok::<_, Error>(wait_each(reqs))
        })?;
        let (recv, send) = (outcome[0].clone(), outcome[1].clone());
        drop(seen);
        match fail {
            SendFailure::PackAt(_) => check!(
                send == Err(injected("pack")),
                "{fail:?}: sender got {send:?}"
            ),
            _ => check!(send.is_err(), "{fail:?}: sender got {send:?}"),
        }
        check!(
            recv == Err(Error::RemoteFailure),
            "{fail:?}: receiver got {recv:?}"
        );
        follow_up_arrives(w, tag, 500 + k as u64)?;
    }
    let (made, freed) = life.counts();
    check!(made == freed, "states made {made}, freed {freed}");
    Ok(())
}

/// An unpack failure on the receiver: the receiver gets that error, the sender completes, and
/// the next message on the tag arrives intact.
pub fn receiver_fails(w: &Communicator) -> CaseResult {
    let tag = 28;
    let len = stream_point(10) as usize + 123;
    for fail_at in [
        0u64,
        100,
        stream_point(0),
        stream_point(4) + 3,
        len as u64 - 1,
    ] {
        let out = Generated::new(7, len);
        let mut inc = Collected {
            fail_at: Some(fail_at),
            ..Collected::with_capacity(len)
        };
        let outcome = exchange_each(w, &out, &mut inc, tag)?;
        check!(
            outcome[0] == Err(injected("unpack")),
            "receiver failing at {fail_at} got {:?}",
            outcome[0]
        );
        check!(outcome[1].is_ok(), "sender got {:?}", outcome[1]);
        follow_up_arrives(w, tag, 600 + fail_at)?;
    }
    // resize refusing the shape (a Vec<Vec<u8>> offered i32 regions).
    let out = ragged(1, &[3, 40_000]);
    let mut wrong: Vec<Vec<u8>> = Vec::new();
    let outcome = exchange_each(w, &out, &mut wrong, tag)?;
    check!(
        matches!(outcome[0], Err(Error::InvalidDatatype(_))),
        "wrong element type got {:?}",
        outcome[0]
    );
    check!(outcome[1].is_ok());
    follow_up_arrives(w, tag, 700)?;
    Ok(())
}

pub fn truncation(w: &Communicator) -> CaseResult {
    let tag = 29;
    // Packed part larger than the capacity: nothing reaches unpack.
    for len in [10usize, 5000, 100_000] {
        let out = Generated::new(1, len);
        let mut inc = Collected::with_capacity(len - 1);
        let outcome = exchange_each(w, &out, &mut inc, tag)?;
        check_truncated(
            w,
            tag,
            &outcome,
            &format!("{len} packed bytes into {}", len - 1),
        )?;
        check!(
            inc.calls == 0 && inc.data.is_empty(),
            "unpack called on truncation"
        );
        follow_up_arrives(w, tag, 800 + len as u64)?;
    }
    // A region longer than the receiver's (coalesced, then zero-copy), and more regions than the
    // receiver has: truncation, and the guards around the receiver's regions are intact.
    for (sent, mine) in [
        (vec![3usize, 10, 4], vec![3usize, 9, 4]),
        (vec![3, 20_000, 4], vec![3, 19_999, 4]),
        (vec![3, 10, 4], vec![3, 10]),
        (vec![30_000, 30_000, 30_000], vec![30_000, 30_000]),
    ] {
        let out = ragged(2, &sent);
        let mut inc = Guarded::new(&mine, 16);
        let outcome = exchange_each(w, &out, &mut inc, tag)?;
        check_truncated(w, tag, &outcome, &format!("{sent:?} into {mine:?}"))?;
        check!(
            inc.guards_intact(&[]),
            "{sent:?} into {mine:?} wrote into the buffer"
        );
        follow_up_arrives(w, tag, 900 + sent[1] as u64)?;
    }
    Ok(())
}

/// Receives through `recv` from `prev` while sending through `send` to `next` (standard
/// mode), completed together: the outcomes, the receive's first.
fn exchange_states(
    w: &Communicator,
    recv: Box<dyn UnpackState>,
    send: Box<dyn PackState>,
    tag: i32,
) -> mpicd::Result<Vec<Outcome>> {
    let (next, prev) = next_prev(w);
    let reqs = vec![
        w.irecv_state(recv, prev, tag)?,
        w.isend_state(send, next, tag, SendMode::Standard)?,
    ];
    Ok(wait_each(reqs))
}

/// Every operation frees its state exactly once, however it ends.
pub fn state_freed_once(w: &Communicator) -> CaseResult {
    let (next, prev) = next_prev(w);
    let life = Arc::new(Lifetimes::default());
    let tag = 30;
    let len = stream_point(5) + 11;

    // Success, with a region.
    let (rs, seen) = CountedRecv::new(len, 9000, false, &life);
    let mut reqs = vec![
        w.irecv_state(rs, prev, tag)?,
        w.isend_state(
            InjectedSend::new(w.rank() as u64, len, 9000, SendFailure::Never, &life),
            next,
            tag,
            SendMode::Synchronous,
        )?,
    ];
    mpicd::wait_all(&mut reqs)?;
    drop(reqs);
    check!(
        life.counts() == (2, 2),
        "after success: {:?}",
        life.counts()
    );
    {
        let seen = seen.lock().map_err(|_| "poisoned")?;
        check!(
            seen.packed == gen_vec(prev as u64, len as usize),
            "packed part damaged"
        );
        check!(
            seen.region == ragged(prev as u64, &[9000])[0],
            "region damaged"
        );
    }

    // A send failing before data: one state, freed when the failed send completes; its
    // receiver is told (RemoteFailure) by the failure lead.
    let failed = w
        .isend_state(
            InjectedSend::new(0, len, 1, SendFailure::PackedSize, &life),
            next,
            tag,
            SendMode::Standard,
        )
        .and_then(|r| r.wait());
    check!(failed.is_err());
    let mut told = Collected::with_capacity(len as usize);
    let outcome = w.recv_custom(&mut told, prev, tag);
    check!(outcome == Err(Error::RemoteFailure), "{outcome:?}");
    check!(
        life.counts() == (3, 3),
        "after a failed post: {:?}",
        life.counts()
    );

    // Truncation and an unpack failure on the receiver.
    for (capacity, fail_unpack) in [(len - 1, false), (len, true)] {
        let (rs, _seen) = CountedRecv::new(capacity, 9000, fail_unpack, &life);
        let sent = InjectedSend::new(1, len, 9000, SendFailure::Never, &life);
        let outcome = exchange_states(w, rs, sent, tag)?;
        check!(outcome[0].is_err() && outcome[1].is_ok(), "{outcome:?}");
    }
    check!(
        life.counts() == (7, 7),
        "after receiver failures: {:?}",
        life.counts()
    );

    // A sender failing after data flowed.
    let (rs, _seen) = CountedRecv::new(len, 9000, false, &life);
    let failing = SendFailure::PackAt(stream_point(2));
    let sent = InjectedSend::new(1, len, 9000, failing, &life);
    let outcome = exchange_states(w, rs, sent, tag)?;
    check!(
        outcome[0] == Err(Error::RemoteFailure) && outcome[1].is_err(),
        "{outcome:?}"
    );
    check!(
        life.counts() == (9, 9),
        "after a sender failure: {:?}",
        life.counts()
    );

    // A matched probe receive through a state.
    let s = w.isend_state(
        InjectedSend::new(2, len, 9000, SendFailure::Never, &life),
        next,
        tag,
        SendMode::Standard,
    )?;
    let (msg, _) = w.mprobe(prev, tag)?;
    let (rs, seen) = CountedRecv::new(len, 9000, false, &life);
    let r = msg.irecv_state(rs)?;
    let outcome = wait_each(vec![r, s]);
    check!(outcome.iter().all(|o| o.is_ok()), "{outcome:?}");
    check!(seen.lock().map_err(|_| "poisoned")?.packed == gen_vec(2, len as usize));
    check!(
        life.counts() == (11, 11),
        "after a matched receive: {:?}",
        life.counts()
    );

    // PROC_NULL: nothing to do, the state is freed at once.
    w.isend_state(
        InjectedSend::new(3, len, 1, SendFailure::Never, &life),
        PROC_NULL,
        tag,
        SendMode::Standard,
    )?
    .wait()?;
    let (rs, _seen) = CountedRecv::new(len, 1, false, &life);
    w.irecv_state(rs, PROC_NULL, tag)?.wait()?;
    check!(
        life.counts() == (13, 13),
        "after PROC_NULL: {:?}",
        life.counts()
    );
    Ok(())
}

/// MPI's progress rule: a pending custom receive must advance while this process is blocked in
/// another call (here a blocking custom send whose data the receive has to take). Needs the
/// engine to progress custom-typed operations nobody is waiting on.
pub fn independent_progress(w: &Communicator) -> CaseResult {
    let (next, prev) = next_prev(w);
    let me = w.rank();
    let len = stream_point(30);
    // Blocking send to self with the receive posted first.
    let out = Generated::new(1, len as usize);
    let mut inc = Collected::with_capacity(len as usize);
    mpicd::scope(|s| {
        let r = w.irecv_custom(s, &mut inc, me, 31)?;
        w.send_custom(&out, me, 31)?;
        r.wait()
    })?;
    check!(inc.data == gen_vec(1, len as usize), "self message damaged");
    // sendrecv in a ring, written the usual way: post the receive, blocking send, wait.
    let out = Recs::<16384>::new(me as u64, 4);
    let mut inc = Recs::<16384>::empty();
    mpicd::scope(|s| {
        let r = w.irecv_custom(s, &mut inc, prev, 32)?;
        w.send_custom(&out, next, 32)?;
        r.wait()
    })?;
    check!(inc.recs == Recs::<16384>::new(prev as u64, 4).recs);
    // Wait on the receive before the send.
    let out = Generated::new(me as u64, len as usize);
    let mut inc = Collected::with_capacity(len as usize);
    mpicd::scope(|s| {
        let r = w.irecv_custom(s, &mut inc, prev, 33)?;
        let sent = w.isend_custom(s, &out, next, 33)?;
        r.wait()?;
        sent.wait()
    })?;
    check!(inc.data == gen_vec(prev as u64, len as usize));
    Ok(())
}
