//! The MPI profiling interface: every exported `MPI_X` function also answers as `PMPI_X`
//! (`MPIX_X` as `PMPIX_X`), so that a tool (mpiP, Score-P, a user's wrapper) can define `MPI_X`
//! itself, before libmpi in the link order or through `LD_PRELOAD`, and call `PMPI_X` to reach
//! mpicd.
//!
//! Nothing here is written by hand per function: `build.rs` finds every
//! `#[no_mangle] pub [unsafe] extern "C" fn MPI_*` in `src/` and writes `$OUT_DIR/pmpi.rs`, one
//! naked `PMPI_X` whose single instruction jumps to `MPI_X` (arguments, variadic ones too, and
//! the result pass through untouched, whatever the signature). In `libmpi.so` the jump is bound
//! inside the library (`-Bsymbolic-functions`, build.rs), so it reaches mpicd's `MPI_X` even
//! when a tool defines one. `scripts/install.sh` turns the installed `libmpi.a` around (the
//! function under `PMPI_X`, a weak `MPI_X` that jumps to it), so that a tool's `MPI_X` replaces
//! the archive's at static link time. `mpi.h` declares the `PMPI_` prototypes
//! (`tests/header.rs` writes them from the `MPI_` ones).

/// The tail jump of a `PMPI_` entry point to the function named `$f`, for `naked_asm!`.
#[cfg(target_arch = "x86_64")]
macro_rules! pmpi_jump {
    ($f:literal) => {
        concat!("jmp ", $f, "@PLT")
    };
}

/// The tail jump of a `PMPI_` entry point to the function named `$f`, for `naked_asm!`.
#[cfg(target_arch = "aarch64")]
macro_rules! pmpi_jump {
    ($f:literal) => {
        concat!("b ", $f)
    };
}

/// The tail jump of a `PMPI_` entry point to the function named `$f`, for `naked_asm!`.
#[cfg(target_arch = "riscv64")]
macro_rules! pmpi_jump {
    ($f:literal) => {
        concat!("tail ", $f)
    };
}

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
compile_error!("the PMPI_ entry points need a tail jump for this architecture (src/pmpi.rs)");

include!(concat!(env!("OUT_DIR"), "/pmpi.rs"));
