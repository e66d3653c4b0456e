//! A peer that the network loses, while its process lives on, is reported: each of two ranks,
//! on two "nodes" (network namespaces) whose link is cut, must see its receive from the other
//! fail with `ProcFailed` within 10 s, through UCX's endpoint error alone (no local process
//! check can see a process of another node), and a send to it fail at once.
//!
//! Run by `tests/run-unreachable-test.sh`, which makes the two namespaces, starts the ranks
//! and cuts the link once both printed `CONNECTED` (or, with `kill`, kills rank 1: then rank 0
//! alone reports); it then creates CUT_FILE. Not an mpi_* program: without the namespaces there
//! is no link to cut.
//!
//! usage: peer_unreachable CUT_FILE

use mpicd::Error;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// How soon the loss must be reported.
const LIMIT: Duration = Duration::from_secs(10);

fn main() {
    let cut_file = std::env::args()
        .nth(1)
        .expect("usage: peer_unreachable CUT_FILE");
    let mpi = mpicd::init().expect("init");
    let world = mpi.world();
    assert_eq!(world.size(), 2, "run with 2 ranks");
    let rank = world.rank();
    let peer = 1 - rank;
    // Connect both ways, as a real exchange would.
    let mut b = [0u8; 4];
    world
        .sendrecv(&[1u8; 4], peer, 0, &mut b, peer, 0)
        .expect("exchange");
    println!("rank {rank} CONNECTED");
    std::io::stdout().flush().expect("flush");
    let wait_start = Instant::now();
    while !Path::new(&cut_file).exists() {
        assert!(
            wait_start.elapsed() < Duration::from_secs(60),
            "no cut after 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let start = Instant::now();
    let outcome = world.recv(&mut b, peer, 1);
    let took = start.elapsed();
    println!("rank {rank}: receive from the lost peer: {outcome:?} after {took:?}");
    let ok = matches!(outcome, Err(Error::ProcFailed { rank: r }) if r == peer) && took < LIMIT;
    let send = world.send(&[0u8; 4], peer, 2);
    println!("rank {rank}: send to the lost peer: {send:?}");
    let ok = ok && matches!(send, Err(Error::ProcFailed { rank: r }) if r == peer);
    println!(
        "rank {rank} {}",
        if ok {
            "PEER-UNREACHABLE-OK"
        } else {
            "PEER-UNREACHABLE-WRONG"
        }
    );
    std::io::stdout().flush().expect("flush");
    let fin = mpi.finalize();
    println!("rank {rank}: finalize: {fin:?}");
    std::process::exit(if ok { 0 } else { 1 });
}
