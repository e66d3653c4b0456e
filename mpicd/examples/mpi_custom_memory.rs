//! Peak memory of custom-typed and derived-typed transfers, measured on both sides.
//!
//! 1. A 256 MiB packed-only message: the sender's pack callback generates the bytes, the
//!    receiver's unpack callback checks them as they arrive, so the payload itself is never in
//!    memory. The growth of peak RSS (VmHWM, reset through /proc/self/clear_refs before the
//!    transfer) must stay under `CustomConfig::memory_bound()` plus an allowance for the allocator
//!    and UCX (`ALLOWANCE`).
//! 2. A 256 MiB zero-copy region (`Vec<u8>`): both buffers are allocated and touched before the
//!    measurement, so the growth is what the transfer itself costs: no copy of the region.
//! 3. Only with `MPICD_BIG_TEST=1`: a region larger than 4 GiB (`MPICD_BIG_TEST_BYTES`, default
//!    4 GiB + 4097 bytes) received into an empty `Vec<u8>` that resizes to it: 64-bit sizes end to
//!    end. It needs about twice that much free memory on the machine (one copy per rank), so it
//!    is skipped by default and says so.
//!
//! 4. A strided vector (every other f64) of 8 and of 64 MiB of data, sent and received with a
//!    derived datatype: packed and placed fragment by fragment, so the growth must stay within
//!    `DERIVED_LIMIT` (2 MiB), whatever the message's size.
//!
//! The numbers are printed by both ranks (`peak RSS growth`); the configuration comes from the
//! `MPICD_*` environment variables like everywhere else.
// mpi-test: ranks=2 timeout=300

#[path = "common/mod.rs"]
mod common;

use common::CaseResult;
use mpicd::custom::RegionShape;
use mpicd::custom::{CustomRecv, CustomSend, RecvParts, SendParts};
use mpicd::{Communicator, CustomConfig, Datatype, ElementType, Shape};
use std::time::Instant;

/// A named test case, as `common::run` takes them.
type Case<'a> = (&'a str, &'a dyn Fn(&Communicator) -> CaseResult);

/// Room for the allocator, UCX's own buffers and the test's bookkeeping.
const ALLOWANCE: u64 = 8 << 20;
const PACKED_BYTES: u64 = 256 << 20;
const REGION_BYTES: usize = 256 << 20;
/// Extra peak memory a derived-typed transfer may take on either side.
const DERIVED_LIMIT: u64 = 2 << 20;

/// A `/proc/self/status` field in bytes.
fn status_bytes(field: &str) -> Result<u64, String> {
    let text = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    let line = text
        .lines()
        .find(|l| l.starts_with(field))
        .ok_or_else(|| format!("no {field} in /proc/self/status"))?;
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("unreadable {line}"))?;
    Ok(kb * 1024)
}

/// Resets the peak RSS to the current RSS (Linux >= 4.0); returns the peak after the reset.
fn reset_peak() -> Result<u64, String> {
    // Without the reset the measured growth can only be smaller than the truth (the earlier
    // peak hides part of it), so a failure here is reported, not ignored.
    std::fs::write("/proc/self/clear_refs", "5")
        .map_err(|e| format!("cannot reset peak RSS: {e}"))?;
    status_bytes("VmHWM:")
}

/// Runs `transfer` between a barrier and a measurement; returns the peak RSS growth.
fn measure(w: &Communicator, transfer: impl FnOnce() -> CaseResult) -> Result<u64, String> {
    w.barrier().map_err(|e| e.to_string())?;
    let before = reset_peak()?;
    transfer().map_err(|e| e.to_string())?;
    let after = status_bytes("VmHWM:")?;
    Ok(after.saturating_sub(before))
}

/// Eight bytes of the pattern at word index `i`.
fn word(i: u64) -> u64 {
    (i ^ 0x5555_0000_AAAA).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Byte `i` of the pattern.
fn byte(i: u64) -> u8 {
    (word(i / 8) >> (8 * (i % 8))) as u8
}

/// Writes the pattern for stream offset `offset` into `dst`.
fn fill(offset: u64, dst: &mut [u8]) {
    if offset % 8 == 0 && dst.len() % 8 == 0 {
        for (k, chunk) in dst.chunks_exact_mut(8).enumerate() {
            chunk.copy_from_slice(&word(offset / 8 + k as u64).to_le_bytes());
        }
    } else {
        for (k, b) in dst.iter_mut().enumerate() {
            *b = byte(offset + k as u64);
        }
    }
}

/// Number of bytes of `src` that differ from the pattern at `offset`.
fn mismatches(offset: u64, src: &[u8]) -> u64 {
    if offset % 8 == 0 && src.len() % 8 == 0 {
        src.chunks_exact(8)
            .enumerate()
            .filter(|(k, c)| *c != word(offset / 8 + *k as u64).to_le_bytes())
            .count() as u64
    } else {
        src.iter()
            .enumerate()
            .filter(|(k, b)| **b != byte(offset + *k as u64))
            .count() as u64
    }
}

/// A packed part of `len` pattern bytes, generated as the engine asks.
struct PatternSend {
    len: u64,
}

impl CustomSend for PatternSend {
    fn parts(&self) -> mpicd::Result<SendParts<'_>> {
        Ok(SendParts::new().packed(self.len as usize, |offset, dst| {
            fill(offset, dst);
            Ok(dst.len())
        }))
    }
}

/// Checks the pattern as it arrives; keeps only counters.
#[derive(Default)]
struct PatternCheck {
    capacity: u64,
    received: u64,
    bad: u64,
    out_of_order: u64,
}

impl CustomRecv for PatternCheck {
    fn parts(&mut self) -> mpicd::Result<RecvParts<'_>> {
        let (received, bad, out_of_order) =
            (&mut self.received, &mut self.bad, &mut self.out_of_order);
        Ok(
            RecvParts::new().packed(self.capacity as usize, move |offset, src| {
                if offset != *received {
                    *out_of_order += 1;
                }
                *bad += mismatches(offset, src);
                *received = offset + src.len() as u64;
                Ok(())
            }),
        )
    }
}

/// Prints this rank's peak RSS growth for `what` and checks it against `limit`.
fn within_limit(w: &Communicator, what: &str, growth: u64, limit: u64) -> CaseResult {
    println!(
        "    [rank {}] {what}: peak RSS growth {:.2} MiB (limit {:.2} MiB)",
        w.rank(),
        growth as f64 / (1 << 20) as f64,
        limit as f64 / (1 << 20) as f64
    );
    check!(
        growth <= limit,
        "peak RSS grew by {growth} bytes for {what}, over the bound {limit}"
    );
    Ok(())
}

fn packed_256_mib(w: &Communicator) -> CaseResult {
    let cfg = CustomConfig::from_env()?;
    let limit = cfg.memory_bound() as u64 + ALLOWANCE;
    let mut check = PatternCheck {
        capacity: PACKED_BYTES,
        ..PatternCheck::default()
    };
    let start = Instant::now();
    let growth = measure(w, || {
        if w.rank() == 0 {
            w.send_custom(&PatternSend { len: PACKED_BYTES }, 1, 1)?;
        } else if w.rank() == 1 {
            let st = w.recv_custom(&mut check, 0, 1)?;
            check!(st.bytes == Some(PACKED_BYTES), "status {st:?}");
        }
        Ok(())
    })?;
    let secs = start.elapsed().as_secs_f64();
    if w.rank() == 1 {
        check!(
            check.received == PACKED_BYTES,
            "{} bytes arrived",
            check.received
        );
        check!(
            check.bad == 0,
            "{} words differ from the pattern",
            check.bad
        );
        check!(check.out_of_order == 0, "unpack offsets out of order");
    }
    if w.rank() == 0 {
        println!(
            "    config {cfg:?}: memory_bound {} bytes; {:.0} MiB/s",
            cfg.memory_bound(),
            256.0 / secs
        );
    }
    within_limit(w, "256 MiB packed", growth, limit)
}

fn region_256_mib(w: &Communicator) -> CaseResult {
    let cfg = CustomConfig::from_env()?;
    let limit = cfg.memory_bound() as u64 + ALLOWANCE;
    // Both buffers exist and are touched before the measurement.
    let mut buf = vec![0u8; REGION_BYTES];
    if w.rank() == 0 {
        fill(0, &mut buf);
    } else {
        buf.fill(0xFF);
    }
    let growth = measure(w, || {
        if w.rank() == 0 {
            w.send_custom(&buf, 1, 2)?;
        } else if w.rank() == 1 {
            let st = w.recv_custom(&mut buf, 0, 2)?;
            check!(st.bytes == Some(REGION_BYTES as u64), "status {st:?}");
        }
        Ok(())
    })?;
    if w.rank() == 1 {
        check!(buf.len() == REGION_BYTES);
        check!(mismatches(0, &buf) == 0, "the region arrived damaged");
    }
    within_limit(w, "256 MiB zero-copy region", growth, limit)
}

/// Many regions just above the zero-copy threshold (their own messages, but small enough that
/// UCX may send them eagerly): the transfer must not buffer them all at the receiver.
fn many_zero_copy_regions(w: &Communicator) -> CaseResult {
    let cfg = CustomConfig::from_env()?;
    let (count, len) = (1024usize, cfg.zcopy_threshold.max(8));
    let shape = Shape::new(
        0,
        (0..count).map(|_| RegionShape {
            bytes: len as u64,
            elem: ElementType::Byte,
        }),
    );
    let limit = cfg.memory_bound_for(&shape) as u64 + ALLOWANCE;
    let mut bufs: Vec<Vec<u8>> = (0..count)
        .map(|i| {
            let mut b = vec![0u8; len];
            if w.rank() == 0 {
                fill((i * len) as u64, &mut b);
            } else {
                b.fill(0xFF);
            }
            b
        })
        .collect();
    let growth = measure(w, || {
        if w.rank() == 0 {
            w.send_custom(&bufs, 1, 4)?;
        } else if w.rank() == 1 {
            w.recv_custom(&mut bufs, 0, 4)?;
        }
        Ok(())
    })?;
    if w.rank() == 1 {
        for (i, b) in bufs.iter().enumerate() {
            check!(
                b.len() == len && mismatches((i * len) as u64, b) == 0,
                "region {i} damaged"
            );
        }
    }
    let what = format!("{count} zero-copy regions of {len} bytes");
    within_limit(w, &what, growth, limit)
}

/// Every other f64 of a buffer twice the data's size, as one derived-typed message.
fn strided_vectors(w: &Communicator) -> CaseResult {
    for data_mib in [8usize, 64] {
        let n = (data_mib << 20) / 8;
        let ty = Datatype::vector(n as u64, 1, 2, &Datatype::of(ElementType::F64))?;
        let mut buf: Vec<f64> = if w.rank() == 0 {
            (0..2 * n).map(|i| i as f64).collect()
        } else {
            vec![-1.0; 2 * n]
        };
        let growth = measure(w, || {
            if w.rank() == 0 {
                w.send_typed(&buf, 1, &ty, 1, 5)?;
            } else if w.rank() == 1 {
                let st = w.recv_typed(&mut buf, 1, &ty, 0, 5)?;
                check!(st.bytes == Some((n * 8) as u64), "status {st:?}");
            }
            Ok(())
        })?;
        if w.rank() == 1 {
            let bad = (0..2 * n)
                .filter(|&i| buf[i] != if i % 2 == 0 { i as f64 } else { -1.0 })
                .count();
            check!(
                bad == 0,
                "{bad} of {} doubles wrong after the strided receive",
                2 * n
            );
        }
        let what = format!("{data_mib} MiB strided vector (derived datatype)");
        within_limit(w, &what, growth, DERIVED_LIMIT)?;
    }
    Ok(())
}

fn region_over_4_gib(w: &Communicator) -> CaseResult {
    let bytes: usize = std::env::var("MPICD_BIG_TEST_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or((4 << 30) + 4097);
    let secs = |t: Instant| t.elapsed().as_secs_f64();
    if w.rank() == 0 {
        let t = Instant::now();
        let mut buf = vec![0u8; bytes];
        fill(0, &mut buf);
        let filled = secs(t);
        w.barrier()?;
        let t = Instant::now();
        w.send_custom(&buf, 1, 3)?;
        println!(
            "    [rank 0] {bytes} bytes: fill {filled:.1} s, send {:.1} s",
            secs(t)
        );
    } else if w.rank() == 1 {
        w.barrier()?;
        // An empty vector: it resizes to the incoming length (a 64-bit size).
        let mut buf: Vec<u8> = Vec::new();
        let t = Instant::now();
        let st = w.recv_custom(&mut buf, 0, 3)?;
        let received = secs(t);
        check!(st.bytes == Some(bytes as u64), "status {st:?}");
        check!(buf.len() == bytes, "received {} bytes", buf.len());
        let t = Instant::now();
        check!(mismatches(0, &buf) == 0, "the big region arrived damaged");
        println!(
            "    [rank 1] {bytes} bytes as one region: receive (with resize) {received:.1} s, \
             check {:.1} s",
            secs(t)
        );
    } else {
        w.barrier()?;
    }
    Ok(())
}

fn main() {
    let mpi = mpicd::init().expect("init");
    let world = mpi.world();
    if world.size() < 2 {
        eprintln!("mpi_custom_memory needs 2 ranks");
        std::process::exit(1);
    }
    let mut cases: Vec<Case> = vec![
        ("256 MiB packed message: bounded memory", &packed_256_mib),
        ("256 MiB zero-copy region: no copy", &region_256_mib),
        ("many small zero-copy regions", &many_zero_copy_regions),
        (
            "strided vectors of 8 and 64 MiB: bounded memory",
            &strided_vectors,
        ),
    ];
    if std::env::var("MPICD_BIG_TEST").is_ok_and(|v| v == "1") {
        cases.push(("region over 4 GiB (64-bit sizes)", &region_over_4_gib));
    } else if world.rank() == 0 {
        println!("  skipped: region over 4 GiB (set MPICD_BIG_TEST=1; needs ~9 GiB free)");
    }
    let ok = common::run(&world, &cases);
    common::finish(mpi, ok)
}
