//! The peer of mpicd's `datatypes` benchmark: the same OSU-style latency and bandwidth tests
//! with rsmpi (crate `mpi`) on Open MPI, for the methods
//!
//! - `ddt`: the struct types sent with the derived datatype `#[derive(Equivalence)]` builds
//!   (an MPI struct type of the fields, gaps left out); not for double-vec, which MPI datatypes
//!   cannot describe;
//! - `bytes`: raw bytes of the same payload, one contiguous message (for double-vec the paper's
//!   "rsmpi-bytes-baseline").
//!
//! Same types, sizes, schedule, test patterns and output lines as `datatypes` (the shared code
//! is `bench/src/shared.rs`, included here by path). Every received message is checked.
//!
//! Usage: rsmpi-datatypes -k KIND -t latency|bandwidth [-m ddt,bytes] [--min B] [--max B]
//!        [--smoke] [--target SECS] [--reps N]
//! Output: `RESULT rsmpi-<method> <kind>.<test> <bytes> <value>`. Run on 2 ranks with Open MPI's
//! mpirun.

#[path = "../../src/shared.rs"]
#[allow(dead_code)]
mod shared;

use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Equivalence;
use shared::{
    double_vec_shape, flag, kind_and_test, option, report, run_sizes, secs, value, Kind, Pattern,
    Schedule, SUBVEC_BYTES, WINDOW,
};
use std::time::Instant;

define_structs!(types: [#[derive(Equivalence)]], array: []);

const TAG: i32 = 1;
const ACK: i32 = 2;
const AGREE: i32 = 3;

/// A message: a slice of equivalent elements, the same on both ranks (rank 0 sends the
/// pattern; rank 1 compares with it).
struct Bench<'w, T: Equivalence + Copy + PartialEq> {
    w: &'w SimpleCommunicator,
    peer: i32,
    msg: Vec<T>,
    zero: T,
    recv: Vec<Vec<T>>,
}

impl<'w, T: Equivalence + Copy + PartialEq> Bench<'w, T> {
    fn new(w: &'w SimpleCommunicator, msg: Vec<T>, zero: T, slots: usize) -> Self {
        let n = msg.len();
        Bench {
            w,
            peer: 1 - w.rank(),
            msg,
            zero,
            recv: vec![vec![zero; n]; slots],
        }
    }

    fn clear(&mut self) {
        for r in &mut self.recv {
            r.fill(self.zero);
        }
    }

    fn round_trip(&mut self) {
        let p = self.w.process_at_rank(self.peer);
        if self.w.rank() == 0 {
            p.send_with_tag(&self.msg[..], TAG);
            p.receive_into_with_tag(&mut self.recv[0][..], TAG);
        } else {
            p.receive_into_with_tag(&mut self.recv[0][..], TAG);
            p.send_with_tag(&self.recv[0][..], TAG);
        }
    }

    fn window(&mut self) {
        let p = self.w.process_at_rank(self.peer);
        if self.w.rank() == 0 {
            mpi::request::scope(|scope| {
                let reqs: Vec<_> = (0..WINDOW)
                    .map(|_| p.immediate_send_with_tag(scope, &self.msg[..], TAG))
                    .collect();
                for r in reqs {
                    r.wait();
                }
            });
            let mut ack = [0u8; 4];
            p.receive_into_with_tag(&mut ack[..], ACK);
        } else {
            mpi::request::scope(|scope| {
                let reqs: Vec<_> = self
                    .recv
                    .iter_mut()
                    .map(|r| p.immediate_receive_into_with_tag(scope, &mut r[..], TAG))
                    .collect();
                for r in reqs {
                    r.wait();
                }
            });
            p.send_with_tag(&[0u8; 4][..], ACK);
        }
    }
}

fn agree(w: &SimpleCommunicator, n: usize) -> Result<usize, ()> {
    let mut v = n as u64;
    if w.rank() == 0 {
        w.process_at_rank(1).send_with_tag(&v, AGREE);
    } else {
        w.process_at_rank(0).receive_into_with_tag(&mut v, AGREE);
    }
    Ok(v as usize)
}

fn timed(mut f: impl FnMut(), n: usize) -> Result<f64, ()> {
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    Ok(secs(start))
}

fn fail(what: &str, w: &SimpleCommunicator) -> ! {
    eprintln!(
        "rsmpi-datatypes: verification failed: {what} (rank {})",
        w.rank()
    );
    w.abort(1)
}

/// Measures one method at one size and checks the data; returns µs (latency) or MB/s.
fn measure<T: Equivalence + Copy + PartialEq>(
    w: &SimpleCommunicator,
    test: &str,
    schedule: &Schedule,
    msg: Vec<T>,
    zero: T,
    payload: usize,
) -> f64 {
    if test == "latency" {
        let mut b = Bench::new(w, msg, zero, 1);
        let per = schedule
            .measure(|n| timed(|| b.round_trip(), n), |n| agree(w, n))
            .unwrap();
        b.clear();
        b.round_trip();
        if b.recv[0] != b.msg {
            fail("ping-pong", w);
        }
        per * 1e6 / 2.0
    } else {
        let slots = if w.rank() == 1 { WINDOW } else { 1 };
        let mut b = Bench::new(w, msg, zero, slots);
        let per = schedule
            .measure(|n| timed(|| b.window(), n), |n| agree(w, n))
            .unwrap();
        b.clear();
        b.window();
        if w.rank() == 1 && b.recv.iter().any(|r| *r != b.msg) {
            fail("bandwidth window", w);
        }
        (WINDOW * payload) as f64 / per / 1e6
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (kind, test) = kind_and_test(&args, &["latency", "bandwidth"]);
    let smoke = flag(&args, "--smoke");
    let default_methods = if kind == Kind::DoubleVec {
        "bytes"
    } else {
        "ddt,bytes"
    };
    let methods: Vec<String> = option(&args, "-m", default_methods.to_string())
        .split(',')
        .filter(|m| !(kind == Kind::DoubleVec && *m == "ddt"))
        .map(str::to_string)
        .collect();
    let default_max = if test == "latency" { 4 << 20 } else { 8 << 20 };
    let schedule = Schedule::of_test(&args, &test, smoke);
    let subvec: usize = option(&args, "-s", SUBVEC_BYTES);

    let universe = mpi::initialize().expect("MPI init");
    let w = universe.world();
    if w.size() != 2 {
        eprintln!("rsmpi-datatypes needs exactly 2 ranks (got {})", w.size());
        std::process::exit(2);
    }
    for size in run_sizes(&args, kind, smoke, default_max) {
        let payload = kind.payload(size);
        for method in &methods {
            let count = kind.count(size);
            let v = match (method.as_str(), kind) {
                ("bytes", Kind::DoubleVec) => {
                    // The same total bytes as the double-vec message, contiguous.
                    let n: usize = double_vec_shape(size, subvec).iter().sum::<usize>() * 4;
                    let msg: Vec<u8> = (0..n).map(|i| value(i) as u8).collect();
                    measure(&w, &test, &schedule, msg, 0u8, payload)
                }
                ("bytes", _) => {
                    let msg: Vec<u8> = (0..payload).map(|i| value(i) as u8).collect();
                    measure(&w, &test, &schedule, msg, 0u8, payload)
                }
                ("ddt", Kind::StructVec) => {
                    let msg: Vec<StructVec> = (0..count).map(StructVec::pattern).collect();
                    measure(&w, &test, &schedule, msg, StructVec::ZERO, payload)
                }
                ("ddt", Kind::StructSimple) => {
                    let msg: Vec<StructSimple> = (0..count).map(StructSimple::pattern).collect();
                    measure(&w, &test, &schedule, msg, StructSimple::default(), payload)
                }
                ("ddt", Kind::StructSimpleNoGap) => {
                    let msg: Vec<StructSimpleNoGap> =
                        (0..count).map(StructSimpleNoGap::pattern).collect();
                    measure(
                        &w,
                        &test,
                        &schedule,
                        msg,
                        StructSimpleNoGap::default(),
                        payload,
                    )
                }
                (m, _) => {
                    eprintln!("unknown method {m}");
                    std::process::exit(2);
                }
            };
            if w.rank() == 0 {
                report(
                    &format!("rsmpi-{method}"),
                    &format!("{}.{test}", kind.name()),
                    size,
                    v,
                );
            }
        }
    }
}
