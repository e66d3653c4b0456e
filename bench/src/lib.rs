//! Shared pieces of the mpicd benchmarks: command-line options, result lines in the format the
//! comparison scripts read (`RESULT <impl> <metric> <bytes> <value>`), and the datatypes of the
//! paper's Rust evaluation ([`messages`]) with what the rsmpi peer shares ([`shared`]).

pub mod messages;
pub mod shared;

pub use shared::{option, report};
