//! # mpicd
//!
//! An MPI runtime in Rust over UCX, with the **custom serialization datatype**: a type packs
//! its scattered parts and exposes its large contiguous parts as regions that travel without
//! copies, in one MPI message, with bounded memory.
//!
//! ```no_run
//! let mpi = mpicd::init()?;
//! let world = mpi.world();
//! if world.rank() == 0 {
//!     world.send(&[1.0f64, 2.0, 3.0], 1, 7)?;
//! } else if world.rank() == 1 {
//!     let mut buf = [0.0f64; 3];
//!     let status = world.recv(&mut buf, 0, 7)?;
//!     assert_eq!(status.count::<f64>(), Some(3));
//! }
//! mpi.finalize()?;
//! # Ok::<(), mpicd::Error>(())
//! ```
//!
//! Non-blocking calls that borrow buffers run inside a [`scope`], which completes every
//! operation started in it before the buffers' borrows end, so no request, not even a
//! forgotten one, outlives the memory it uses:
//!
//! ```no_run
//! let mpi = mpicd::init()?;
//! let world = mpi.world();
//! let (size, rank) = (world.size(), world.rank());
//! let out = [rank as f64; 4];
//! let mut inc = [0.0f64; 4];
//! mpicd::scope(|s| {
//!     let r = world.irecv(s, &mut inc, (rank + size - 1) % size, 1)?;
//!     world.isend(s, &out, (rank + 1) % size, 1)?.wait()?;
//!     r.wait()
//! })?;
//! # Ok::<(), mpicd::Error>(())
//! ```
//!
//! MPI's derived datatypes are [`Datatype`]s (`vector`, `subarray`, `structure`, ...), sent
//! with [`Communicator::send_typed`] and its kin; a Rust struct gets its datatype from the
//! [`equivalence!`](macro@equivalence) macro and travels with [`Communicator::send_values`]
//! (see [`mod@equivalence`]).
//!
//! Processes get their rank and their peers' addresses from PMIx (`mpirun`, `srun --mpi=pmix`,
//! `prterun`); started alone, a program is a singleton of size 1.
// The module docs describe the internals and link to them: `make doc` builds them with the
// private items, where those links resolve (it fails on any link that does not).
#![allow(rustdoc::private_intra_doc_links)]

// The layers, each importing only from the ones below it (docs/ARCHITECTURE.md):
//   foundations   config, error, tag, datatype, reduction, status, group, info, route,
//                 bootstrap, liveness, topology, tool (MPI_T: the engine bumps its counters)
//   transport     transport (UCX: worker, endpoints, requests, completion notices)
//   wire          wire (message formats)
//   plan          plan (what a datatype moves)
//   operations    ops (send and receive state machines), schedule (collective plans)
//   engine        engine (request table, progress)
//   top           request, comm, message, typed, equivalence, collective, collective_custom,
//                 collective_typed, intercomm, newcomm, session, custom, runtime, serde_api,
//                 window (one-sided communication), file (parallel I/O)
mod bootstrap;
pub mod collective;
pub mod collective_custom;
pub mod collective_typed;
pub mod comm;
pub mod config;
pub mod custom;
pub mod datatype;
pub mod dynamic;
mod engine;
pub mod equivalence;
pub mod error;
pub mod file;
#[cfg(any(feature = "fuzzing", test))]
#[doc(hidden)]
pub mod fuzzing;
pub mod group;
pub mod info;
mod intercomm;
mod launch_events;
mod liveness;
mod message;
mod newcomm;
mod ops;
mod plan;
mod reduction;
pub mod request;
mod route;
mod runtime;
pub mod schedule;
#[cfg(feature = "serde")]
pub mod serde_api;
pub mod session;
mod shm;
pub mod status;
mod tag;
pub mod tool;
pub mod topology;
mod transport;
mod typed;
mod ulfm;
mod ulfm_agree;
pub mod window;
mod wire;

pub use comm::{Communicator, SendMode};
pub use custom::{CustomConfig, CustomRecv, CustomSend, RecvParts, SendParts, Shape};
pub use datatype::{ElementType, Primitive};
pub use engine::Idle;
pub use equivalence::Equivalence;
pub use error::{Envelope, Error, IoError, Result};
pub use group::{Comparison, Group, RankRange};
pub use info::Info;
pub use message::Message;
pub use newcomm::{PendingComm, SplitType};
pub use plan::derived::{
    Basic, Constructor, Datatype, Distribution, Order, TypedBuf, DISTRIBUTE_DFLT_DARG,
};
pub use reduction::{Op, ReduceOp};
pub use request::{
    scope, test_all, test_any, test_some, wait_all, wait_all_outcomes, wait_any, wait_some,
    Request, Scope,
};
pub use runtime::{init, is_finalized, is_initialized, restart, Runtime};
#[cfg(feature = "serde")]
pub use serde_api::{MessageSerdeExt, SerdeExt};
pub use session::Session;
pub use status::Status;
pub use tag::{MessageKind, MAX_PROCESSES, TAG_UB};
pub use ulfm::{Background, PendingAgreement, PendingShrink};
pub use window::{accumulate_whole, AccumulateOp, Epoch as WindowEpoch, Flavor, LockKind, Window};

/// Receive from any source.
pub const ANY_SOURCE: i32 = -1;
/// Receive with any tag.
pub const ANY_TAG: i32 = -1;
/// The null process: operations with it complete at once and move nothing. (The value of
/// `MPI_PROC_NULL` in the MPI-5 standard ABI, so that the C layer passes ranks through.)
pub const PROC_NULL: i32 = -3;
/// "No color" in [`Communicator::split`]; "not a member" in [`Group::translate`].
pub const UNDEFINED: i32 = -32766;
