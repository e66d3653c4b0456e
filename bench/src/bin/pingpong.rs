//! OSU-style ping-pong of contiguous messages on mpicd: one-way latency (half the round trip)
//! and window bandwidth (64 non-blocking sends, then a 4-byte acknowledgement).
//! Options: -l SIZE -L ITERS -w WARMUP (latency), -b SIZE -B ITERS -W WARMUP (bandwidth),
//! -n NAME (implementation name in the output). Run on 2 ranks.

use mpicd::{Communicator, Result, SendMode};
use mpicd_bench::{option, report};
use std::time::Instant;

const WINDOW: usize = 64;

fn latency(w: &Communicator, size: usize, iters: usize, warmup: usize) -> Result<f64> {
    let mut buf = vec![1u8; size];
    let peer = 1 - w.rank();
    let mut start = Instant::now();
    for i in 0..warmup + iters {
        if i == warmup {
            start = Instant::now();
        }
        if w.rank() == 0 {
            w.send(&buf, peer, 1)?;
            w.recv(&mut buf, peer, 1)?;
        } else {
            w.recv(&mut buf, peer, 1)?;
            w.send(&buf, peer, 1)?;
        }
    }
    Ok(start.elapsed().as_secs_f64() * 1e6 / (2 * iters) as f64)
}

/// OSU's bandwidth test: every send of the window reads, and every receive writes, the same
/// buffer (as the Open MPI peer and ucx_perftest do), hence the raw calls.
fn bandwidth(w: &Communicator, size: usize, iters: usize, warmup: usize) -> Result<f64> {
    let peer = 1 - w.rank();
    let mut buf = vec![2u8; size];
    let ptr = buf.as_mut_ptr();
    let mut ack = [0u8; 4];
    let mut start = Instant::now();
    for i in 0..warmup + iters {
        if i == warmup {
            start = Instant::now();
        }
        // SAFETY: `buf` outlives the requests, which are all completed by wait_all; overlapping
        // receives into one buffer only make its content meaningless, which nobody reads.
        let mut reqs = (0..WINDOW)
            .map(|_| unsafe {
                if w.rank() == 0 {
                    w.isend_raw(ptr, size, peer, 2, SendMode::Standard)
                } else {
                    w.irecv_raw(ptr, size, peer, 2)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        mpicd::wait_all(&mut reqs)?;
        drop(reqs);
        if w.rank() == 0 {
            w.recv(&mut ack, peer, 3)?;
        } else {
            w.send(&ack, peer, 3)?;
        }
    }
    drop(buf);
    let bytes = (size * WINDOW * iters) as f64;
    Ok(bytes / start.elapsed().as_secs_f64() / 1e6)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let name: String = option(&args, "-n", "mpicd".to_string());
    let mpi = mpicd::init()?;
    let w = mpi.world();
    if w.size() != 2 {
        eprintln!("pingpong needs exactly 2 ranks (got {})", w.size());
        std::process::exit(2);
    }
    let lat_size = option(&args, "-l", 8usize);
    let lat = latency(
        &w,
        lat_size,
        option(&args, "-L", 10_000),
        option(&args, "-w", 1000),
    )?;
    let bw_size = option(&args, "-b", 4usize << 20);
    let bw = bandwidth(&w, bw_size, option(&args, "-B", 20), option(&args, "-W", 2))?;
    if w.rank() == 0 {
        report(&name, "latency", lat_size, lat);
        report(&name, "bandwidth", bw_size, bw);
    }
    mpi.finalize()
}
