//! The C ABI of mpicd (`libmpi`): handle tables, argument checks, error classes and the C adapter
//! for custom datatypes. This crate only translates; all MPI logic lives in `mpicd`.
//!
//! The functions arrive with the "C ABI" issue; the crate exists now so that the workspace layout
//! is settled.
