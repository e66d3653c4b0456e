//! The CPU cost of one message with no peer to wait for: `-n N` rounds of a receive posted to
//! oneself, a blocking send, and the receive's wait (8 bytes, the Rust API's raw path, which
//! the C library also takes). Run it under `valgrind --tool=callgrind` at two values of N: the
//! difference of the instruction counts over the difference of N is the instructions of one
//! round (bench/README.md). With `-s N`, N tests of a receive that nothing matches instead:
//! the cost of one step of a waiting loop. One rank; prints the time of a round or step.

use mpicd::Result;
use mpicd_bench::option;
use std::time::Instant;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = option(&args, "-n", 100_000);
    let spins: usize = option(&args, "-s", 0);
    let mpi = mpicd::init()?;
    let w = mpi.world();
    if spins > 0 {
        let mut inc = [0u8; 8];
        // SAFETY: the request is waited for before `inc` is read.
        let mut r = unsafe { w.irecv_raw(inc.as_mut_ptr(), inc.len(), w.rank(), 2) }?;
        let start = Instant::now();
        for _ in 0..spins {
            assert!(r.test()?.is_none(), "nothing was sent with tag 2");
        }
        let secs = start.elapsed().as_secs_f64();
        w.send(&[1u8; 8], w.rank(), 2)?;
        r.wait()?;
        println!(
            "self_cost: {spins} steps, {:.1} ns per step",
            secs / spins as f64 * 1e9
        );
        return Ok(());
    }
    let out = [7u8; 8];
    let mut inc = [0u8; 8];
    let start = Instant::now();
    for _ in 0..rounds {
        // SAFETY: the request is waited for before `inc` is touched again.
        let r = unsafe { w.irecv_raw(inc.as_mut_ptr(), inc.len(), w.rank(), 1) }?;
        w.send(&out, w.rank(), 1)?;
        r.wait()?;
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(inc, out);
    println!(
        "self_cost: {rounds} rounds, {:.1} ns per round",
        secs / rounds as f64 * 1e9
    );
    Ok(())
}
