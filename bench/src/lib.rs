//! Shared pieces of the mpicd benchmarks: command-line options and result lines in the format
//! the comparison scripts read (`RESULT <impl> <metric> <bytes> <value>`).

use std::str::FromStr;

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

/// Prints one result line.
pub fn report(implementation: &str, metric: &str, bytes: usize, value: f64) {
    println!("RESULT {implementation} {metric} {bytes} {value:.3}");
}
