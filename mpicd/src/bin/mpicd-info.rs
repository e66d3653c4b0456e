//! `mpicd-info`: prints mpicd's configuration with the values in effect in this environment,
//! one `NAME=value` line per `MPICD_*` variable and per UCX setting mpicd applies, then the
//! unknown `MPICD_*` variables of the environment. `--doc` adds the layer, default, values and
//! meaning of each. The text comes from `mpicd::config::render`, as `MPIX_Config_string`'s does.

use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "usage: mpicd-info [--doc]
Prints every MPICD_* variable and every UCX setting mpicd applies, with its current value.
  --doc  also the layer that reads it, its default, its values and its meaning";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let doc = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => false,
        ["--doc"] => true,
        ["-h" | "--help"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    // A closed pipe (mpicd-info | head) is not an error worth reporting.
    let _ = std::io::stdout().write_all(mpicd::config::render(doc).as_bytes());
    ExitCode::SUCCESS
}
