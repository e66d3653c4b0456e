//! Requests forgotten inside a scope cannot outlive their buffers. When the scope returns, a
//! forgotten receive has been cancelled (the peer's next message goes to the next receive, and
//! the forgotten buffer keeps its bytes) and a forgotten send has completed (its buffer can be
//! overwritten at once, and the receiver still gets what was sent). Finalize then finds nothing
//! pending: the scope also released what it finished.
// mpi-test: ranks=2

#[path = "common/mod.rs"]
mod common;

use common::{pattern, CaseResult};
use mpicd::Communicator;
use std::mem::ManuallyDrop;
use std::time::Duration;

/// Sizes sent eagerly and by rendezvous.
const SIZES: [usize; 3] = [8, 100_000, 4 << 20];
const UNTOUCHED: u8 = 0xA5;
const READY_TAG: i32 = 1;

/// Tells rank 0 that rank 1's scope has returned.
fn ready(w: &Communicator) -> mpicd::Result<()> {
    w.send(&[0u8], 0, READY_TAG)
}

fn wait_ready(w: &Communicator) -> mpicd::Result<()> {
    w.recv(&mut [0u8], 1, READY_TAG).map(drop)
}

/// Rank 1 forgets a receive, rank 0 then sends two messages: the first must reach rank 1's
/// next receive, not the forgotten buffer.
fn forgotten_receive(w: &Communicator) -> CaseResult {
    for (i, &len) in SIZES.iter().enumerate() {
        let tag = 10 + i as i32;
        let (first, second) = (pattern(i as u64, len), pattern(i as u64 + 100, len));
        if w.rank() == 1 {
            let mut forgotten = vec![UNTOUCHED; len];
            mpicd::scope(|s| {
                // Forgotten (never dropped): its drop would have cancelled it.
                let _request = ManuallyDrop::new(w.irecv(s, &mut forgotten, 0, tag)?);
                Ok::<_, mpicd::Error>(())
            })?;
            ready(w)?;
            let mut inc = vec![0u8; len];
            w.recv(&mut inc, 0, tag)?;
            check!(
                inc == first,
                "{len} bytes: the forgotten receive took the next message"
            );
            w.recv(&mut inc, 0, tag)?;
            check!(inc == second, "{len} bytes: second message damaged");
            check!(
                forgotten.iter().all(|&b| b == UNTOUCHED),
                "{len} bytes: written after its scope returned"
            );
        } else if w.rank() == 0 {
            wait_ready(w)?;
            w.send(&first, 1, tag)?;
            w.send(&second, 1, tag)?;
        }
    }
    Ok(())
}

/// The same with a custom-typed receive (a dynamic `Vec<Vec<i32>>`, resized by a receive that
/// runs): the forgotten value is left as it was.
fn forgotten_custom_receive(w: &Communicator) -> CaseResult {
    let before = vec![vec![-1i32; 3]; 2];
    let message = vec![vec![7i32; 50_000], vec![8; 3], vec![9; 20_000]];
    let tag = 20;
    if w.rank() == 1 {
        let mut forgotten = before.clone();
        mpicd::scope(|s| {
            // Forgotten (never dropped).
            let _request = ManuallyDrop::new(w.irecv_custom(s, &mut forgotten, 0, tag)?);
            Ok::<_, mpicd::Error>(())
        })?;
        ready(w)?;
        let mut inc: Vec<Vec<i32>> = Vec::new();
        w.recv_custom(&mut inc, 0, tag)?;
        check!(inc == message, "the forgotten receive took the message");
        check!(forgotten == before, "written after its scope returned");
    } else if w.rank() == 0 {
        wait_ready(w)?;
        w.send_custom(&message, 1, tag)?;
    }
    Ok(())
}

/// Rank 0 forgets a send and overwrites its buffer as soon as the scope returns; rank 1 posts
/// its receive late, so that a send the scope had not finished would be read after the
/// overwrite.
fn forgotten_send(w: &Communicator) -> CaseResult {
    for (i, &len) in SIZES.iter().enumerate() {
        let tag = 30 + i as i32;
        let sent = pattern(i as u64 + 200, len);
        if w.rank() == 0 {
            let mut out = sent.clone();
            mpicd::scope(|s| {
                // Forgotten (never dropped): the scope waits for it.
                let _request = ManuallyDrop::new(w.isend(s, &out, 1, tag)?);
                Ok::<_, mpicd::Error>(())
            })?;
            out.fill(0);
        } else if w.rank() == 1 {
            std::thread::sleep(Duration::from_millis(200));
            let mut inc = vec![UNTOUCHED; len];
            w.recv(&mut inc, 0, tag)?;
            check!(
                inc == sent,
                "{len} bytes: the send read its buffer after its scope"
            );
        }
    }
    Ok(())
}

fn main() {
    common::main(&[
        ("a forgotten receive is cancelled", &forgotten_receive),
        (
            "a forgotten custom receive is cancelled",
            &forgotten_custom_receive,
        ),
        ("a forgotten send is completed", &forgotten_send),
    ])
}
