//! MPI's dynamic processes (MPI 4.1 chapter 11): ports and the connect/accept handshake that
//! makes an inter-communicator between two groups that did not share one ([`connect`]),
//! starting new jobs whose processes connect back to their parents ([`spawn`]), and the name
//! service. Processes of other jobs get ids in the engine's peer table (`engine::foreign`), so
//! the communicators made here work like any other.
//!
//! - [`procs`]: process descriptors, their byte form, and port names;
//! - [`bridge`]: groups named across jobs (`MPI_Intercomm_create` over them);
//! - [`connect`]: [`crate::Communicator::accept`], [`crate::Communicator::connect`],
//!   [`crate::Communicator::disconnect`], and the ports and name service of a
//!   [`crate::session::Session`];
//! - [`spawn`]: [`crate::Communicator::spawn`] and the parent of a spawned job.

pub(crate) mod bridge;
pub mod connect;
pub(crate) mod procs;
pub mod spawn;

pub use spawn::{connect_parent, parent_port, SpawnApp, PARENT_PORT_VAR};
