//! How should many regions travel? Ping-pong bandwidth of a message made of `count` regions of
//! `size` bytes (`TOTAL` bytes in all, 4 MiB by default), for the wire plans of the custom
//! datatype and for their alternatives:
//! - `custom`: the engine as configured (its plans are forced with the MPICD_* knobs, see
//!   `bench/wire-options.sh`: MPICD_NODE_LOCAL=0 for the plan between nodes, with
//!   MPICD_ZCOPY_THRESHOLD=1 to send every region on its own, or =1000000000 to coalesce
//!   every region into the stream);
//! - `packed`: manual packing into one buffer, one contiguous message, manual unpacking;
//! - `contiguous`: one contiguous message of the same total size (the limit).
//!
//! Usage: regions -m custom|packed|contiguous [-t TOTAL] [-i ITERS] [-T SECONDS] [-w WINDOWS]
//! [-n NAME] [-s SIZES]. Run on 2 ranks. Each size is timed in WINDOWS windows (default 1) of
//! ITERS round trips (default 20) and the fastest window counts; with `-T`, a window runs as many
//! round trips (at least 3) as fit in about SECONDS / WINDOWS, estimated from one timed round
//! trip. SIZES is a comma-separated list of region sizes in bytes (default
//! 8,64,512,4096,32768,262144,1048576). Prints `RESULT <name> region-<size> <total bytes> <MB/s>`
//! per size. The received regions are checked after the warm-up round trip (except for
//! `contiguous`, which does not touch them).

use mpicd::{Communicator, CustomRecv, CustomSend, RecvParts, Result, SendParts};
use mpicd_bench::{option, report};
use std::time::Instant;

/// A message of equal-sized byte regions.
struct Regions(Vec<Vec<u8>>);

impl CustomSend for Regions {
    fn parts(&self) -> Result<SendParts<'_>> {
        Ok(SendParts::new().regions(self.0.iter().map(|r| &r[..])))
    }
}

impl CustomRecv for Regions {
    fn parts(&mut self) -> Result<RecvParts<'_>> {
        Ok(RecvParts::new().regions(self.0.iter_mut().map(|r| &mut r[..])))
    }
    /// The receiver knows the shape (as the hand-packing receiver does): its parts are built
    /// when the receive is posted, not after the message's shape arrived.
    fn resizes(&self) -> bool {
        false
    }
}

/// The byte region `i` carries.
fn pattern(i: usize) -> u8 {
    (i % 251) as u8 + 1
}

fn round_trip(
    w: &Communicator,
    method: &str,
    msg: &mut Regions,
    scratch: &mut Vec<u8>,
) -> Result<()> {
    let peer = 1 - w.rank();
    let sending = |w: &Communicator, msg: &Regions, scratch: &mut Vec<u8>| -> Result<()> {
        match method {
            "custom" => w.send_custom(msg, peer, 1),
            "packed" => {
                scratch.clear();
                for r in &msg.0 {
                    scratch.extend_from_slice(r);
                }
                w.send(&scratch[..], peer, 1)
            }
            _ => w.send(&scratch[..], peer, 1),
        }
    };
    let receiving = |w: &Communicator, msg: &mut Regions, scratch: &mut Vec<u8>| -> Result<()> {
        match method {
            "custom" => w.recv_custom(msg, peer, 1).map(drop),
            "packed" => {
                w.recv(&mut scratch[..], peer, 1)?;
                let mut at = 0;
                for r in &mut msg.0 {
                    let n = r.len();
                    r.copy_from_slice(&scratch[at..at + n]);
                    at += n;
                }
                Ok(())
            }
            _ => w.recv(&mut scratch[..], peer, 1).map(drop),
        }
    };
    if w.rank() == 0 {
        sending(w, msg, scratch)?;
        receiving(w, msg, scratch)
    } else {
        receiving(w, msg, scratch)?;
        sending(w, msg, scratch)
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let method: String = option(&args, "-m", "custom".to_string());
    let name: String = option(&args, "-n", method.clone());
    let total: usize = option(&args, "-t", 4 << 20);
    let fixed_iters: usize = option(&args, "-i", 20);
    let target_secs: f64 = option(&args, "-T", 0.0);
    let windows: usize = option(&args, "-w", 1usize).max(1);
    let sizes: String = option(
        &args,
        "-s",
        "8,64,512,4096,32768,262144,1048576".to_string(),
    );
    let sizes: Vec<usize> = sizes
        .split(',')
        .map(|s| s.trim().parse().ok().filter(|&n| n > 0))
        .collect::<Option<_>>()
        .unwrap_or_else(|| {
            eprintln!("-s needs a comma-separated list of positive region sizes");
            std::process::exit(2);
        });
    if !["custom", "packed", "contiguous"].contains(&method.as_str()) {
        eprintln!("unknown method {method}: use custom, packed or contiguous");
        std::process::exit(2);
    }
    let mpi = mpicd::init()?;
    let w = mpi.world();
    if w.size() != 2 {
        eprintln!("regions needs exactly 2 ranks");
        std::process::exit(2);
    }
    for size in sizes {
        let count = (total / size).max(1);
        // Rank 0 holds the pattern, rank 1 zeros: after one round trip both must hold it.
        let fill = |i: usize| if w.rank() == 0 { pattern(i) } else { 0 };
        let mut msg = Regions((0..count).map(|i| vec![fill(i); size]).collect());
        let mut scratch = vec![0u8; count * size];
        round_trip(&w, &method, &mut msg, &mut scratch)?;
        if method != "contiguous" {
            for (i, r) in msg.0.iter().enumerate() {
                if r.iter().any(|&b| b != pattern(i)) {
                    eprintln!("rank {}: region {i} of {size} bytes is wrong", w.rank());
                    std::process::exit(1);
                }
            }
        }
        let iters = if target_secs > 0.0 {
            // Rank 0 times one round trip and tells rank 1 how many to run.
            let start = Instant::now();
            round_trip(&w, &method, &mut msg, &mut scratch)?;
            let window = target_secs / windows as f64;
            let mut n = [(window / start.elapsed().as_secs_f64()).ceil().max(3.0) as u64];
            if w.rank() == 0 {
                w.send(&n, 1, 2)?;
            } else {
                w.recv(&mut n, 0, 2)?;
            }
            n[0] as usize
        } else {
            fixed_iters
        };
        // The fastest of `windows` timed windows counts (the machine is shared: a window that
        // another process slowed down says nothing about the wire plan).
        let mut secs = f64::INFINITY;
        for _ in 0..windows {
            let start = Instant::now();
            for _ in 0..iters {
                round_trip(&w, &method, &mut msg, &mut scratch)?;
            }
            secs = secs.min(start.elapsed().as_secs_f64());
        }
        if w.rank() == 0 {
            report(
                &name,
                &format!("region-{size}"),
                count * size,
                (2 * iters * count * size) as f64 / secs / 1e6,
            );
        }
    }
    mpi.finalize()
}
