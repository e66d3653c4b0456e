//! Point-to-point semantics across ranks: data, statuses, wildcards, order, truncation,
//! probes, non-blocking completion calls, communicators, and argument errors.
// mpi-test: ranks=2,4

#[path = "common/mod.rs"]
mod common;

use common::{pattern, CaseResult};
use mpicd::{Communicator, Error, ANY_SOURCE, ANY_TAG, PROC_NULL, TAG_UB};

/// Posts a receive into `buf`, runs `between` (a blocking call), then waits for the receive.
fn recv_around(
    w: &Communicator,
    buf: &mut [u8],
    source: i32,
    tag: i32,
    between: impl FnOnce() -> mpicd::Result<()>,
) -> mpicd::Result<mpicd::Status> {
    mpicd::scope(|s| {
        let r = w.irecv(s, buf, source, tag)?;
        between()?;
        r.wait()
    })
}

fn ring_sizes(w: &Communicator) -> CaseResult {
    let (rank, size) = (w.rank(), w.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    for (i, len) in [0usize, 1, 7, 4096, 65_535, 65_536, 65_537, 1 << 20, 8 << 20]
        .into_iter()
        .enumerate()
    {
        let out = pattern(rank as u64 * 100 + i as u64, len);
        let mut inc = vec![0u8; len];
        let st = recv_around(w, &mut inc, prev, i as i32, || w.send(&out, next, i as i32))?;
        check!(st.source == prev && st.tag == i as i32, "status {st:?}");
        check!(st.bytes == Some(len as u64));
        check!(
            inc == pattern(prev as u64 * 100 + i as u64, len),
            "data of size {len}"
        );
    }
    Ok(())
}

fn post_recv_then_blocking_send_to_self(w: &Communicator) -> CaseResult {
    for len in [16usize, 16 << 20] {
        let out = pattern(5, len);
        let mut inc = vec![0u8; len];
        recv_around(w, &mut inc, w.rank(), 3, || w.send(&out, w.rank(), 3))?;
        check!(inc == out, "self message of {len} bytes");
    }
    Ok(())
}

fn any_source_any_tag(w: &Communicator) -> CaseResult {
    if w.rank() == 0 {
        let mut seen = vec![false; w.size() as usize];
        for _ in 1..w.size() {
            let mut v = [0i64; 2];
            let st = w.recv(&mut v, ANY_SOURCE, ANY_TAG)?;
            check!(
                st.tag == 100 + st.source,
                "tag {} from {}",
                st.tag,
                st.source
            );
            check!(v == [st.source as i64, -(st.source as i64)]);
            check!(!seen[st.source as usize]);
            seen[st.source as usize] = true;
        }
    } else {
        w.send(&[w.rank() as i64, -(w.rank() as i64)], 0, 100 + w.rank())?;
    }
    Ok(())
}

fn non_overtaking(w: &Communicator) -> CaseResult {
    let n = 60;
    let size_of = |i: usize| if i % 3 == 0 { 100_000 } else { i * 10 };
    if w.rank() == 0 {
        let bufs: Vec<Vec<u8>> = (0..n).map(|i| pattern(i as u64, size_of(i))).collect();
        mpicd::scope(|s| {
            let mut reqs = Vec::new();
            for b in &bufs {
                reqs.push(w.isend(s, b, 1, 9)?);
            }
            mpicd::wait_all(&mut reqs)
        })?;
    } else if w.rank() == 1 {
        for i in 0..n {
            let mut b = vec![0u8; 100_000];
            let st = w.recv(&mut b, 0, 9)?;
            check!(
                st.bytes == Some(size_of(i) as u64),
                "message {i} arrived out of order"
            );
            check!(b[..size_of(i)] == pattern(i as u64, size_of(i))[..]);
        }
    }
    Ok(())
}

fn truncation_is_an_error(w: &Communicator) -> CaseResult {
    if w.rank() == 0 {
        w.send(&pattern(1, 100), 1, 4)?;
        w.send(&pattern(2, 1 << 20), 1, 4)?;
        w.send(&pattern(3, 10), 1, 4)?;
    } else if w.rank() == 1 {
        for len in [100usize, 1 << 20] {
            let mut small = [0xAAu8; 64];
            let e = w.recv(&mut small[..50], 0, 4);
            check!(
                matches!(e, Err(Error::Truncated { .. })),
                "got {e:?} for {len} bytes"
            );
            check!(
                small[50..].iter().all(|b| *b == 0xAA),
                "wrote past the buffer"
            );
        }
        let mut ok = [0u8; 10];
        w.recv(&mut ok, 0, 4)?;
        check!(ok[..] == pattern(3, 10)[..]);
    }
    Ok(())
}

fn probes(w: &Communicator) -> CaseResult {
    if w.rank() == 0 {
        w.send(&pattern(7, 37), 1, 11)?;
        w.send(&pattern(8, 300_000), 1, 12)?;
    } else if w.rank() == 1 {
        let st = w.probe(0, 11)?;
        check!(st.bytes == Some(37) && st.source == 0 && st.tag == 11);
        let mut b = vec![0u8; 37];
        w.recv(&mut b, 0, 11)?;
        check!(b == pattern(7, 37));
        let (msg, st) = loop {
            if let Some(found) = w.improbe(ANY_SOURCE, ANY_TAG)? {
                break found;
            }
        };
        check!(st.bytes == Some(300_000) && st.tag == 12);
        check!(
            w.iprobe(0, 12)?.is_none(),
            "a matched message must be invisible to probes"
        );
        let mut b = vec![0u8; 300_000];
        msg.recv(&mut b)?;
        check!(b == pattern(8, 300_000));
    }
    Ok(())
}

fn proc_null(w: &Communicator) -> CaseResult {
    w.send(&[1u8], PROC_NULL, 0)?;
    let mut b = [7u8; 4];
    let st = w.recv(&mut b, PROC_NULL, 0)?;
    check!(st.source == PROC_NULL && st.tag == ANY_TAG && st.bytes == Some(0) && b == [7; 4]);
    Ok(())
}

fn sendrecv_ring(w: &Communicator) -> CaseResult {
    let (rank, size) = (w.rank(), w.size());
    let out = [rank as f64 * 1.5; 1000];
    let mut inc = [0f64; 1000];
    let prev = (rank + size - 1) % size;
    let st = w.sendrecv(&out, (rank + 1) % size, 5, &mut inc, prev, 5)?;
    check!(st.source == prev && inc == [prev as f64 * 1.5; 1000]);
    Ok(())
}

fn synchronous_and_zero_bytes(w: &Communicator) -> CaseResult {
    if w.rank() == 0 {
        w.ssend::<u8>(&[], 1, 6)?;
        w.ssend(&[1u16, 2, 3], 1, 6)?;
        // Long: UCX rendezvous (or the stream path with MPICD_LOCAL_STREAM).
        w.ssend(&pattern(6, 300_001), 1, 6)?;
    } else if w.rank() == 1 {
        let mut none: [u8; 0] = [];
        let st = w.recv(&mut none, 0, 6)?;
        check!(st.bytes == Some(0));
        let mut b = [0u16; 3];
        w.recv(&mut b, 0, 6)?;
        check!(b == [1, 2, 3]);
        let mut long = vec![0u8; 300_001];
        let st = w.recv(&mut long, 0, 6)?;
        check!(st.bytes == Some(300_001) && long == pattern(6, 300_001));
    }
    Ok(())
}

/// Starts a receive into `inc[i]` from each of `peers[i]` and a send of `out` to each, with
/// `tag`: the requests, receives first.
fn exchange_with_peers<'s, 'a>(
    w: &Communicator,
    s: &'s mpicd::Scope<'a>,
    peers: &[i32],
    inc: &'a mut [[u32; 4]],
    out: &'a [u32; 4],
    tag: i32,
) -> Result<(Vec<mpicd::Request<'s>>, Vec<mpicd::Request<'s>>), Error> {
    let mut recvs = Vec::new();
    for (p, buf) in peers.iter().zip(inc.iter_mut()) {
        recvs.push(w.irecv(s, buf, *p, tag)?);
    }
    let mut sends = Vec::new();
    for p in peers {
        sends.push(w.isend(s, out, *p, tag)?);
    }
    Ok((recvs, sends))
}

fn completion_calls(w: &Communicator) -> CaseResult {
    let (rank, size) = (w.rank(), w.size());
    let peers: Vec<i32> = (0..size).filter(|r| *r != rank).collect();
    let mut inc = vec![[0u32; 4]; peers.len()];
    let out = [rank as u32; 4];
    mpicd::scope(|s| -> CaseResult {
        let (mut recvs, mut sends) = exchange_with_peers(w, s, &peers, &mut inc, &out, 20)?;
        let mut got = 0;
        while got < peers.len() {
            if got % 2 == 0 {
                let (i, st) = mpicd::wait_any(&mut recvs)?.ok_or("no active request")?;
                check!(st.source == peers[i]);
                got += 1;
            } else {
                for (_, r) in mpicd::wait_some(&mut recvs)? {
                    r?;
                    got += 1;
                }
            }
        }
        check!(mpicd::wait_any(&mut recvs)?.is_none(), "all inactive");
        while mpicd::test_all(&mut sends)?.is_none() {}
        Ok(())
    })?;
    for (p, b) in peers.iter().zip(&inc) {
        check!(*b == [*p as u32; 4]);
    }
    Ok(())
}

/// Receives completed by `test_some` alone, called in a loop: each call must make progress
/// (MPI_Testsome does), or the loop never sees the messages arrive.
fn test_some_alone(w: &Communicator) -> CaseResult {
    let (rank, size) = (w.rank(), w.size());
    let peers: Vec<i32> = (0..size).filter(|r| *r != rank).collect();
    let mut inc = vec![[0u32; 4]; peers.len()];
    let out = [rank as u32 + 7; 4];
    mpicd::scope(|s| -> CaseResult {
        let (mut recvs, mut sends) = exchange_with_peers(w, s, &peers, &mut inc, &out, 21)?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut got = 0;
        while got < peers.len() {
            for (_, r) in mpicd::test_some(&mut recvs)? {
                r?;
                got += 1;
            }
            check!(
                std::time::Instant::now() < deadline,
                "test_some saw {got} of {} messages in 10 s",
                peers.len()
            );
        }
        while mpicd::test_all(&mut sends)?.is_none() {}
        Ok(())
    })?;
    for (p, b) in peers.iter().zip(&inc) {
        check!(*b == [*p as u32 + 7; 4]);
    }
    Ok(())
}

fn cancel_receive(w: &Communicator) -> CaseResult {
    let mut b = [0u8; 8];
    let st = mpicd::scope(|s| {
        let mut r = w.irecv(s, &mut b, ANY_SOURCE, 999)?;
        r.cancel()?;
        loop {
            if let Some(st) = r.test()? {
                return Ok::<_, Error>(st);
            }
        }
    })?;
    check!(st.cancelled);
    Ok(())
}

fn argument_errors(w: &Communicator) -> CaseResult {
    let size = w.size();
    check!(matches!(
        w.send(&[1u8], size, 0),
        Err(Error::InvalidRank { .. })
    ));
    check!(matches!(
        w.send(&[1u8], -5, 0),
        Err(Error::InvalidRank { .. })
    ));
    check!(matches!(w.send(&[1u8], 0, -3), Err(Error::InvalidTag(-3))));
    check!(matches!(
        w.send(&[1u8], 0, ANY_TAG),
        Err(Error::InvalidTag(_))
    ));
    check!(matches!(
        w.send(&[1u8], 0, TAG_UB + 1),
        Err(Error::InvalidTag(_))
    ));
    let mut b = [0u8];
    check!(matches!(
        w.recv(&mut b, size + 1, 0),
        Err(Error::InvalidRank { .. })
    ));
    check!(matches!(w.recv(&mut b, 0, -7), Err(Error::InvalidTag(-7))));
    // SAFETY: a null pointer is exactly what is being rejected; nothing is dereferenced.
    let null = unsafe { w.isend_raw(std::ptr::null(), 4, 0, 0, mpicd::SendMode::Standard) };
    check!(matches!(null, Err(Error::NullBuffer)));
    check!(matches!(mpicd::init(), Err(Error::AlreadyInitialized)));
    Ok(())
}

fn communicators(w: &Communicator) -> CaseResult {
    let (rank, size) = (w.rank(), w.size());
    let dup = w.dup()?;
    check!(dup.rank() == rank && dup.size() == size);
    // The same tag and peer on two communicators: each receive gets its own communicator's data.
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    let (mut a, mut b) = ([0i32; 1], [0i32; 1]);
    mpicd::scope(|s| {
        let ra = w.irecv(s, &mut a, prev, 1)?;
        let rb = dup.irecv(s, &mut b, prev, 1)?;
        dup.send(&[2], next, 1)?;
        w.send(&[1], next, 1)?;
        ra.wait()?;
        rb.wait()
    })?;
    check!(
        a == [1] && b == [2],
        "messages crossed communicators: {a:?} {b:?}"
    );

    // Split by parity, ordered by descending rank.
    let sub = w
        .split(rank % 2, -rank)?
        .ok_or("split returned no communicator")?;
    let members: Vec<i32> = (0..size).filter(|r| r % 2 == rank % 2).rev().collect();
    check!(sub.size() == members.len() as i32);
    check!(sub.rank() == members.iter().position(|r| *r == rank).unwrap_or(99) as i32);
    let mut total = [0i32];
    if sub.rank() == 0 {
        total[0] = rank;
        for r in 1..sub.size() {
            let mut v = [0i32];
            let st = sub.recv(&mut v, r, 0)?;
            check!(st.source == r);
            total[0] += v[0];
        }
        check!(total[0] == members.iter().sum::<i32>());
    } else {
        sub.send(&[rank], 0, 0)?;
    }
    sub.barrier()?;
    check!(w.split(mpicd::UNDEFINED, 0)?.is_none());
    let me = w.split(rank, 0)?.ok_or("singleton split")?;
    check!(me.size() == 1 && me.rank() == 0);
    sub.free();
    dup.free();
    Ok(())
}

fn threads(w: &Communicator) -> CaseResult {
    let (rank, size) = (w.rank(), w.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    std::thread::scope(|s| -> CaseResult {
        let handles: Vec<_> = (0..3)
            .map(|t| {
                s.spawn(move || -> Result<(), String> {
                    for i in 0..50 {
                        let out = [rank, t, i];
                        let mut inc = [0i32; 3];
                        w.sendrecv(&out, next, 1000 + t, &mut inc, prev, 1000 + t)
                            .map_err(|e| e.to_string())?;
                        if inc != [prev, t, i] {
                            return Err(format!("thread {t}: got {inc:?}"));
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        for h in handles {
            h.join().map_err(|_| "thread panicked")??;
        }
        Ok(())
    })
}

fn main() {
    common::main(&[
        ("ring of sizes 0 B..8 MiB", &ring_sizes),
        (
            "post receive, blocking send to self",
            &post_recv_then_blocking_send_to_self,
        ),
        ("ANY_SOURCE / ANY_TAG statuses", &any_source_any_tag),
        ("non-overtaking order", &non_overtaking),
        ("truncation", &truncation_is_an_error),
        ("probe / improbe / matched receive", &probes),
        ("PROC_NULL", &proc_null),
        ("sendrecv ring", &sendrecv_ring),
        (
            "synchronous and zero-byte sends",
            &synchronous_and_zero_bytes,
        ),
        ("waitany / waitsome / testall", &completion_calls),
        ("testsome alone, in a loop", &test_some_alone),
        ("cancel a receive", &cancel_receive),
        ("argument errors", &argument_errors),
        ("dup / split / free", &communicators),
        ("serialized use from threads", &threads),
    ])
}
