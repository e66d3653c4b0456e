//! Shared helpers of the multi-rank test programs: checks that report the rank and the line,
//! and a runner that prints one line per case and exits non-zero on any failure.

#![allow(dead_code)]

use std::time::Instant;

/// Fails the current case with a message naming the rank.
#[macro_export]
macro_rules! check {
    ($cond:expr) => {
        if !$cond {
            return Err(format!("check failed at line {}: {}", line!(), stringify!($cond)).into());
        }
    };
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!("check failed at line {}: {}", line!(), format!($($fmt)+)).into());
        }
    };
}

pub type CaseResult = Result<(), Box<dyn std::error::Error>>;

/// A test case's body.
pub type CaseFn<'a> = &'a dyn Fn(&mpicd::Communicator) -> CaseResult;

/// Runs named cases in order, each followed by a barrier; exits 1 if any failed.
pub fn run(world: &mpicd::Communicator, cases: &[(&str, CaseFn<'_>)]) -> bool {
    let mut ok = true;
    for (name, case) in cases {
        let start = Instant::now();
        let outcome = case(world);
        if let Err(e) = &outcome {
            eprintln!("[rank {}] FAIL {name}: {e}", world.rank());
            ok = false;
        } else if world.rank() == 0 {
            println!(
                "  ok {name} ({:.1} ms)",
                start.elapsed().as_secs_f64() * 1e3
            );
        }
        if let Err(e) = world.barrier() {
            eprintln!("[rank {}] barrier after {name} failed: {e}", world.rank());
            return false;
        }
    }
    ok
}

/// A deterministic byte pattern for message `seed`.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| ((i as u64).wrapping_mul(31).wrapping_add(seed * 7) % 251) as u8)
        .collect()
}

/// Finalizes and exits: 0 only if every case passed (`ok`) and finalize succeeded.
pub fn finish(mpi: mpicd::Runtime, ok: bool) -> ! {
    let fin = mpi.finalize();
    if let Err(e) = &fin {
        eprintln!("finalize: {e}");
    }
    std::process::exit(if ok && fin.is_ok() { 0 } else { 1 });
}

/// The whole program of a test made only of cases: init, the cases, finalize, exit.
pub fn main(cases: &[(&str, CaseFn<'_>)]) -> ! {
    let mpi = mpicd::init().expect("init");
    let ok = run(&mpi.world(), cases);
    finish(mpi, ok)
}
