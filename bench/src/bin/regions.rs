//! How should many regions travel? Ping-pong bandwidth of a message made of `count` regions of
//! `size` bytes (4 MiB in all), for the wire plans of the custom datatype and for their
//! alternatives:
//! - `custom`: the engine as configured (run it with MPICD_ZCOPY_THRESHOLD=1 to send every
//!   region zero-copy on its own, or =1000000000 to coalesce every region into the stream);
//! - `packed`: manual packing into one buffer, one contiguous message, manual unpacking;
//! - `contiguous`: one contiguous message of the same total size (the limit).
//!
//! Usage: regions -m custom|packed|contiguous [-t TOTAL] [-i ITERS] [-n NAME]. Run on 2 ranks.
//! Prints `RESULT <name> region-<size> <total bytes> <MB/s>` for sizes 8 B .. 1 MiB.

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
    let iters: usize = option(&args, "-i", 20);
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
    let mut size = 8;
    while size <= 1 << 20 {
        let count = total / size;
        let mut msg = Regions((0..count).map(|i| vec![i as u8; size]).collect());
        let mut scratch = vec![0u8; count * size];
        round_trip(&w, &method, &mut msg, &mut scratch)?;
        let start = Instant::now();
        for _ in 0..iters {
            round_trip(&w, &method, &mut msg, &mut scratch)?;
        }
        let secs = start.elapsed().as_secs_f64();
        if w.rank() == 0 {
            report(
                &name,
                &format!("region-{size}"),
                count * size,
                (2 * iters * count * size) as f64 / secs / 1e6,
            );
        }
        size *= 8;
    }
    mpi.finalize()
}
