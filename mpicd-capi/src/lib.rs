//! The C ABI of mpicd (`libmpi`): handle tables, argument checks, error classes and the C adapter
//! for custom datatypes. This crate only translates; all MPI logic lives in `mpicd`.
//!
//! Every `extern "C"` function runs its body through [`errors::run`], which catches panics and
//! applies the error handler; `include/mpi.h` is generated from these modules by cbindgen.
// The module docs describe the internals and link to them: `make doc` builds them with the
// private items, where those links resolve (it fails on any link that does not).
#![allow(rustdoc::private_intra_doc_links)]
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]
#![allow(clippy::missing_safety_doc)]

pub mod abi;
pub mod abi_fortran;
pub mod attrs;
mod blocks;
pub mod bsend;
pub mod bsend_session;
pub mod coll;
pub mod comm_dup;
pub mod comm_from_group;
pub mod comms;
pub mod config;
pub mod custom;
mod detached;
pub mod dynamic;
pub mod dynamic_spawn;
pub mod env;
pub mod errcodes;
pub mod errhandlers;
pub mod errors;
pub mod file;
pub mod fint;
pub mod groups;
mod handles;
pub mod info;
pub mod intercomm;
pub mod memory;
pub mod p2p;
pub mod p2p_c;
pub mod p2p_persistent;
mod pinned;
mod pmpi;
pub mod probe;
mod reductions;
pub mod request_status;
pub mod requests;
pub mod sendrecv;
pub mod sessions;
pub mod status;
pub mod topo;
pub mod topo_graph;
pub mod types;
// The tool information interface (MPI_T).
pub mod abi_file;
pub mod abi_tool;
pub mod tool;
pub mod tool_cvar;
pub mod tool_event;
pub mod tool_pvar;
pub mod ulfm;
pub mod userops;
pub mod win;
