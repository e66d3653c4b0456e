//! What the datatype benchmarks of mpicd (`datatypes`) and of its peer rsmpi
//! (`bench/rsmpi`, `rsmpi-datatypes`) share, so that both measure the same thing: the four
//! datatypes of the paper's section V.A, their test patterns, the message sizes, the timing
//! schedule, result lines and peak-memory readings. Plain Rust without any MPI: the rsmpi crate
//! includes this file by path.

use std::str::FromStr;
use std::time::Instant;

/// Messages in flight per bandwidth window (OSU's default).
pub const WINDOW: usize = 64;

/// Default sub-vector size of double-vec, in bytes (the paper's figure 2).
pub const SUBVEC_BYTES: usize = 1024;

/// Elements in the array of struct-vec.
pub const STRUCT_VEC_LEN: usize = 2048;

/// Reads `-x VALUE` style options; exits with a usage line on a malformed value.
pub fn option<T: FromStr>(args: &[String], flag: &str, default: T) -> T {
    match args.iter().position(|a| a == flag) {
        None => default,
        Some(i) => match args.get(i + 1).and_then(|v| v.parse().ok()) {
            Some(v) => v,
            None => {
                eprintln!("option {flag} needs a value of the right type");
                std::process::exit(2);
            }
        },
    }
}

/// Whether a bare flag (`--smoke`) is present.
pub fn flag(args: &[String], name: &str) -> bool {
    args.iter().any(|a| a == name)
}

/// The kind (`-k`, default double-vec) and the test (`-t`, default latency), which must be one
/// of `tests`; exits with a usage line on an unknown one.
pub fn kind_and_test(args: &[String], tests: &[&str]) -> (Kind, String) {
    let kind_name: String = option(args, "-k", "double-vec".to_string());
    let Some(kind) = Kind::parse(&kind_name) else {
        eprintln!("unknown kind {kind_name}");
        std::process::exit(2);
    };
    let test: String = option(args, "-t", "latency".to_string());
    if !tests.contains(&test.as_str()) {
        eprintln!("unknown test {test}: one of {}", tests.join(", "));
        std::process::exit(2);
    }
    (kind, test)
}

/// The message sizes of a run: powers of two from `--min` to `--max` (by default the kind's
/// smallest size and `default_max`), or a few small ones for a smoke run.
pub fn run_sizes(args: &[String], kind: Kind, smoke: bool, default_max: usize) -> Vec<usize> {
    let (min, max) = if smoke {
        (kind.min_size(), (kind.min_size() * 8).max(512 << 10))
    } else {
        (
            option(args, "--min", kind.min_size()),
            option(args, "--max", default_max),
        )
    };
    sizes(min.max(kind.min_size()), max)
}

/// Prints one result line: `RESULT <impl> <metric> <bytes> <value>`.
pub fn report(implementation: &str, metric: &str, bytes: usize, value: f64) {
    println!("RESULT {implementation} {metric} {bytes} {value:.3}");
}

/// The four datatypes of the paper's Rust evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `Vec<Vec<i32>>` with sub-vectors of a fixed size.
    DoubleVec,
    /// `#[repr(C)] { a, b, c: i32, d: f64, data: [i32; 2048] }` (4-byte gap after c).
    StructVec,
    /// `#[repr(C)] { a, b, c: i32, d: f64 }` (4-byte gap after c).
    StructSimple,
    /// `#[repr(C)] { a, b: i32, c: f64 }` (no gap).
    StructSimpleNoGap,
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::DoubleVec,
        Kind::StructVec,
        Kind::StructSimple,
        Kind::StructSimpleNoGap,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::DoubleVec => "double-vec",
            Kind::StructVec => "struct-vec",
            Kind::StructSimple => "struct-simple",
            Kind::StructSimpleNoGap => "struct-simple-no-gap",
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Bytes of one element that carry data (the gap excluded): what every method must move.
    pub fn payload_per_element(self) -> usize {
        match self {
            Kind::DoubleVec => 4,
            Kind::StructVec => 20 + 4 * STRUCT_VEC_LEN,
            Kind::StructSimple => 20,
            Kind::StructSimpleNoGap => 16,
        }
    }

    /// Nominal bytes per element, which turns a message size into an element count: the in-memory
    /// size for the simple structs, the array for struct-vec (as in the paper: "for size 32K there
    /// are four elements"), an i32 for double-vec.
    pub fn nominal_per_element(self) -> usize {
        match self {
            Kind::DoubleVec => 4,
            Kind::StructVec => 4 * STRUCT_VEC_LEN,
            Kind::StructSimple => 24,
            Kind::StructSimpleNoGap => 16,
        }
    }

    /// Smallest message size (a power of two) that holds one element.
    pub fn min_size(self) -> usize {
        self.nominal_per_element().next_power_of_two().max(8)
    }

    /// Elements (structs, or i32s for double-vec) in a message of nominal size `size`.
    pub fn count(self, size: usize) -> usize {
        (size / self.nominal_per_element()).max(1)
    }

    /// Bytes of data a message of nominal size `size` carries (the bandwidth numerator).
    pub fn payload(self, size: usize) -> usize {
        self.count(size) * self.payload_per_element()
    }
}

/// Sub-vector lengths (in i32s) of a double-vec message of `size` bytes: `size / subvec`
/// sub-vectors of `subvec` bytes, or a single one of `size` bytes when the message is smaller
/// than one sub-vector (the paper's rule).
pub fn double_vec_shape(size: usize, subvec_bytes: usize) -> Vec<usize> {
    let ints = (size / 4).max(1);
    let per = (subvec_bytes / 4).max(1);
    if ints <= per {
        vec![ints]
    } else {
        vec![per; ints / per]
    }
}

/// Powers of two from `min` to `max` inclusive.
pub fn sizes(min: usize, max: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut s = min.next_power_of_two();
    while s <= max {
        out.push(s);
        s *= 2;
    }
    out
}

/// The test value at linear position `i` of a message (distinct for nearby `i`, never all
/// zero, so a missing or misplaced element is caught).
pub fn value(i: usize) -> i32 {
    (i as u32).wrapping_mul(2_654_435_761).rotate_left(7) as i32 ^ 0x5a5a_5a5a
}

/// The double of element `i` of the structs.
pub fn dvalue(i: usize) -> f64 {
    i as f64 * 0.5 + 0.25
}

/// A struct type of the benchmarks: element `i` of its test pattern, and the zero value a
/// receiver starts from.
pub trait Pattern: Sized {
    const ZERO: Self;
    fn pattern(i: usize) -> Self;
}

/// Defines the three struct types of the paper (Listings 6-8) with extra attributes on the types
/// (the rsmpi crate adds `#[derive(Equivalence)]`) and on struct-vec's array field (serde needs
/// a helper for arrays longer than 32), and their [`Pattern`]s.
#[macro_export]
macro_rules! define_structs {
    (types: [$(#[$m:meta])*], array: [$(#[$d:meta])*]) => {
        /// Listing 6: scalars worth packing and an array worth sending as a region.
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq)]
        $(#[$m])*
        pub struct StructVec {
            pub a: i32,
            pub b: i32,
            pub c: i32,
            pub d: f64,
            $(#[$d])*
            pub data: [i32; $crate::shared::STRUCT_VEC_LEN],
        }

        /// Listing 7: scalars only, with a 4-byte gap between c and d.
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Default)]
        $(#[$m])*
        pub struct StructSimple {
            pub a: i32,
            pub b: i32,
            pub c: i32,
            pub d: f64,
        }

        /// Listing 8: no gap.
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Default)]
        $(#[$m])*
        pub struct StructSimpleNoGap {
            pub a: i32,
            pub b: i32,
            pub c: f64,
        }

        impl $crate::shared::Pattern for StructVec {
            const ZERO: StructVec = StructVec {
                a: 0, b: 0, c: 0, d: 0.0, data: [0; $crate::shared::STRUCT_VEC_LEN],
            };
            fn pattern(i: usize) -> StructVec {
                let mut s = StructVec {
                    a: $crate::shared::value(4 * i),
                    b: $crate::shared::value(4 * i + 1),
                    c: $crate::shared::value(4 * i + 2),
                    d: $crate::shared::dvalue(i),
                    data: [0; $crate::shared::STRUCT_VEC_LEN],
                };
                for (j, x) in s.data.iter_mut().enumerate() {
                    *x = $crate::shared::value(i * $crate::shared::STRUCT_VEC_LEN + j + 7);
                }
                s
            }
        }

        impl $crate::shared::Pattern for StructSimple {
            const ZERO: StructSimple = StructSimple { a: 0, b: 0, c: 0, d: 0.0 };
            fn pattern(i: usize) -> StructSimple {
                StructSimple {
                    a: $crate::shared::value(4 * i),
                    b: $crate::shared::value(4 * i + 1),
                    c: $crate::shared::value(4 * i + 2),
                    d: $crate::shared::dvalue(i),
                }
            }
        }

        impl $crate::shared::Pattern for StructSimpleNoGap {
            const ZERO: StructSimpleNoGap = StructSimpleNoGap { a: 0, b: 0, c: 0.0 };
            fn pattern(i: usize) -> StructSimpleNoGap {
                StructSimpleNoGap {
                    a: $crate::shared::value(4 * i),
                    b: $crate::shared::value(4 * i + 1),
                    c: $crate::shared::dvalue(i),
                }
            }
        }
    };
}

/// A double-vec message of the given shape filled with the test pattern.
pub fn double_vec_pattern(shape: &[usize]) -> Vec<Vec<i32>> {
    let mut at = 0;
    shape
        .iter()
        .map(|&n| {
            let v = (at..at + n).map(value).collect();
            at += n;
            v
        })
        .collect()
}

/// Whether `v` holds the test pattern of `shape`.
pub fn double_vec_ok(v: &[Vec<i32>], shape: &[usize]) -> bool {
    v.len() == shape.len() && {
        let mut at = 0;
        v.iter().zip(shape).all(|(s, &n)| {
            let ok = s.len() == n && s.iter().enumerate().all(|(j, &x)| x == value(at + j));
            at += n;
            ok
        })
    }
}

/// Timing parameters: each size is warmed up, then timed `reps` times with an iteration count
/// that makes one repetition last about `target` seconds; the best repetition counts (noise
/// only ever slows a run down).
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    pub target: f64,
    pub reps: usize,
    pub min_iters: usize,
    pub max_iters: usize,
    /// Warm-up iterations (before the iteration count is chosen).
    pub warmup: usize,
}

impl Schedule {
    /// Latency: `BENCH_TARGET` seconds per repetition (default 0.05), 5 repetitions (short
    /// repetitions, the best of which counts, ride out a busy machine's preemptions better than
    /// long ones), and 2..100000 round trips.
    pub fn latency(args: &[String]) -> Schedule {
        Schedule {
            target: option(args, "--target", env_f64("BENCH_TARGET", 0.05)),
            reps: option(args, "--reps", 5),
            min_iters: 2,
            max_iters: 100_000,
            warmup: option(args, "--warmup", 10),
        }
    }

    /// Bandwidth: windows of [`WINDOW`] messages.
    pub fn bandwidth(args: &[String]) -> Schedule {
        Schedule {
            target: option(args, "--target", env_f64("BENCH_TARGET", 0.05)),
            reps: option(args, "--reps", 5),
            min_iters: 1,
            max_iters: 10_000,
            warmup: option(args, "--warmup", 1),
        }
    }

    /// The schedule of `test`: bandwidth's for `bandwidth`, latency's for the others; a smoke
    /// run's for a smoke run.
    pub fn of_test(args: &[String], test: &str, smoke: bool) -> Schedule {
        let schedule = if test == "bandwidth" {
            Schedule::bandwidth(args)
        } else {
            Schedule::latency(args)
        };
        if smoke {
            schedule.smoke()
        } else {
            schedule
        }
    }

    /// Smoke runs: one iteration, no repetition (correctness only).
    pub fn smoke(self) -> Schedule {
        Schedule {
            target: 0.0,
            reps: 1,
            min_iters: 1,
            max_iters: 1,
            warmup: 1,
        }
    }

    /// Runs the schedule: `run(n)` does `n` iterations and returns their duration in seconds
    /// (rank 0's count), `agree(n)` gives every rank rank 0's `n` (the iteration count and the
    /// number of repetitions are rank 0's choice, so that the ranks agree). Returns the best seconds per
    /// iteration. A repetition that would take far longer than `target` is done once.
    pub fn measure<E>(
        &self,
        mut run: impl FnMut(usize) -> Result<f64, E>,
        mut agree: impl FnMut(usize) -> Result<usize, E>,
    ) -> Result<f64, E> {
        let warm = run(self.warmup.max(1))?;
        let per = (warm / self.warmup.max(1) as f64).max(1e-9);
        let n = ((self.target / per) as usize).clamp(self.min_iters, self.max_iters);
        let reps = if per * n as f64 > 4.0 * self.target.max(0.05) {
            1
        } else {
            self.reps.max(1)
        };
        // Both from rank 0: the ranks' own warm-up times differ.
        let n = agree(n)?;
        let reps = agree(reps)?;
        let mut best = f64::INFINITY;
        for _ in 0..reps {
            best = best.min(run(n)? / n as f64);
        }
        Ok(best)
    }
}

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Seconds since `start`.
pub fn secs(start: Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

/// The peak resident set size of this process (`VmHWM` of /proc/self/status), in bytes.
pub fn peak_rss() -> Option<usize> {
    status_kib("VmHWM:").map(|k| k * 1024)
}

/// The current resident set size (`VmRSS`), in bytes.
pub fn current_rss() -> Option<usize> {
    status_kib("VmRSS:").map(|k| k * 1024)
}

/// Resets the peak resident set size to the current one (Linux >= 4.0: `5` written to
/// /proc/self/clear_refs). Returns false where that is not possible.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn status_kib(field: &str) -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_counts() {
        assert_eq!(double_vec_shape(8, 1024), vec![2]);
        assert_eq!(double_vec_shape(1024, 1024), vec![256]);
        assert_eq!(double_vec_shape(4096, 1024), vec![256; 4]);
        assert_eq!(Kind::StructVec.count(32 << 10), 4);
        assert_eq!(Kind::StructSimple.count(24), 1);
        assert_eq!(Kind::StructSimple.payload(48), 40);
        assert_eq!(sizes(8, 64), vec![8, 16, 32, 64]);
        assert_eq!(Kind::StructVec.min_size(), 8192);
        assert_eq!(Kind::StructSimple.min_size(), 32);
    }

    #[test]
    fn patterns_check() {
        let shape = double_vec_shape(4096, 1024);
        let mut v = double_vec_pattern(&shape);
        assert!(double_vec_ok(&v, &shape));
        v[3][5] ^= 1;
        assert!(!double_vec_ok(&v, &shape));
    }

    #[test]
    fn peak_rss_reads() {
        assert!(peak_rss().unwrap() > 0);
        assert!(current_rss().unwrap() > 0);
    }
}
