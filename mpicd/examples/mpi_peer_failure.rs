//! A peer that dies does not leave the others hanging: rank 1 exits abruptly, and rank 0's
//! receive from it fails with `ProcFailed` within seconds, as do its sends, plain and custom
//! (custom messages whose body and regions the dead receiver never takes).
// mpi-test: ranks=2 modes=shm,tcp,remote pass=PEER-FAILURE-OK

use mpicd::Error;
use std::time::{Duration, Instant};

fn main() {
    let mpi = mpicd::init().expect("init");
    let world = mpi.world();
    // Connect both ways first, as a real exchange would.
    let mut b = [0u8; 4];
    let peer = 1 - world.rank();
    world
        .sendrecv(&[1u8; 4], peer, 0, &mut b, peer, 0)
        .expect("exchange");
    // Custom messages that rank 1 never takes: large regions (zero-copy messages between
    // nodes) and many 1 KiB regions (coalesced into the body).
    let rows: Vec<Vec<i32>> = vec![vec![7; 1 << 16]; 4];
    let small_rows: Vec<Vec<i32>> = vec![vec![8; 256]; 4096];
    let ok = mpicd::scope(|s| {
        let pending_custom = (world.rank() == 0).then(|| {
            [
                world.isend_custom(s, &rows, 1, 3).expect("isend"),
                world.isend_custom(s, &small_rows, 1, 4).expect("isend"),
            ]
        });
        world.barrier().expect("barrier");
        if world.rank() == 1 {
            // Die without finalizing, like a crash.
            std::process::exit(0);
        }
        let start = Instant::now();
        let outcome = world.recv(&mut b, 1, 1);
        let took = start.elapsed();
        println!("receive from the dead peer: {outcome:?} after {took:?}");
        let ok =
            matches!(outcome, Err(Error::ProcFailed { rank: 1 })) && took < Duration::from_secs(10);
        // Sends to it fail too, at once.
        let send = world.send(&[0u8; 4], 1, 2);
        println!("send to the dead peer: {send:?}");
        let ok = ok && matches!(send, Err(Error::ProcFailed { rank: 1 }));
        let custom = pending_custom.map(|reqs| reqs.map(|r| r.wait()));
        println!("custom sends posted while the peer lived: {custom:?}");
        ok && custom.is_some_and(|c| {
            c.iter()
                .all(|r| matches!(r, Err(Error::ProcFailed { rank: 1 })))
        })
    });
    // mpirun ends the job because rank 1 exited without finalizing: report before that.
    println!(
        "{}",
        if ok {
            "PEER-FAILURE-OK"
        } else {
            "PEER-FAILURE-WRONG"
        }
    );
    let fin = mpi.finalize();
    println!("finalize: {fin:?}");
    std::process::exit(if ok { 0 } else { 1 });
}
