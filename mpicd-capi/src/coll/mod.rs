//! The collective calls: every MPI-4 collective on intra- and inter-communicators in its
//! blocking, non-blocking (`MPI_I...`) and persistent (`..._init`, started by MPI_Start) forms,
//! each with its large-count `_c` variant. All three forms of a collective write the same plan
//! ([`plans`]) from the same arguments ([`args`]); they differ only in how it is launched
//! ([`Launch`]): run to completion now, started with a request, or kept in a persistent
//! request that starts a run of it at each MPI_Start.
//!
//! - [`args`]: one function per collective over C arguments widened to 64 bits;
//! - [`plans`]: the plans, buffers named and MPI_IN_PLACE resolved;
//! - [`node`]: the short way of blocking collectives of predefined types through the node's
//!   memory, when a communicator has an area;
//! - [`combine`]: the reduction a collective applies;
//! - [`objects`]: the plans of collectives over custom datatypes;
//! - [`inter`]: the plans on inter-communicators (one early `if` in `args` or `plans` per
//!   collective hands them there);
//! - [`blocking`], [`nonblocking`], [`persistent`]: the exported functions;
//! - `neighbor` and [`neighbor_calls`]: the neighbourhood collectives of a topology.

mod args;
pub mod blocking;
mod combine;
mod inter;
mod neighbor;
pub mod neighbor_calls;
pub mod neighbor_calls_c;
mod node;
pub mod nonblocking;
mod objects;
pub mod persistent;
mod plans;
mod writer;

use crate::abi::*;
use crate::comms::{errh, run_on};
use crate::env::{out, require};
use crate::errors::fail;
use crate::requests::{insert, insert_persistent};
use mpicd::schedule::Plan;
use mpicd::Communicator;
use std::ffi::c_int;
use std::sync::Arc;

/// How a collective's plan runs.
#[derive(Clone, Copy)]
pub(crate) enum Launch {
    /// Blocking: run to completion before returning.
    Now,
    /// Non-blocking: started, its request stored at the pointer.
    Start(*mut MPI_Request),
    /// Persistent: an inactive request stored at the pointer, started by MPI_Start.
    Persist(*mut MPI_Request),
}

/// What writing a collective gave: a plan to launch, or the collective itself, done (a
/// blocking one written directly: see [`writer::Writer`]).
pub(crate) enum Written {
    Plan(Arc<Plan>),
    Done,
}

/// Writes the plan of a collective on `comm` and launches it as `how` says.
pub(crate) fn launch(
    name: &'static str,
    comm: MPI_Comm,
    how: Launch,
    plan: impl FnOnce(&Communicator) -> crate::errors::CResult<Arc<Plan>>,
) -> c_int {
    launch_written(name, comm, how, |c, _| plan(c).map(Written::Plan))
}

/// Writes a collective on `comm` and launches it as `how` says; `write` is told whether it
/// may do the collective as it writes it (blocking: `true`) rather than write a plan.
pub(crate) fn launch_written(
    name: &'static str,
    comm: MPI_Comm,
    how: Launch,
    write: impl FnOnce(&Communicator, bool) -> crate::errors::CResult<Written>,
) -> c_int {
    run_on(name, comm, |c| {
        if let Launch::Start(r) | Launch::Persist(r) = how {
            require(r, "request pointer")?;
        }
        let plan = match write(&c, matches!(how, Launch::Now))? {
            Written::Plan(plan) => plan,
            Written::Done if matches!(how, Launch::Now) => return Ok(()),
            Written::Done => {
                return Err(fail(
                    MPI_ERR_INTERN,
                    "a non-blocking collective was done when written",
                ))
            }
        };
        match how {
            Launch::Now => {
                // SAFETY: MPI's rules for the arguments hold until the call returns, and the run
                // completes before it does.
                let run = unsafe { c.start_plan(&plan) }?;
                run.wait().map(drop).map_err(Into::into)
            }
            Launch::Start(r) => {
                // SAFETY: MPI's rules for a non-blocking collective: the buffers stay valid and
                // untouched until the request completes.
                let req = unsafe { c.start_plan(&plan) }?;
                out(r, insert(req, errh(comm), None))
            }
            Launch::Persist(r) => {
                let c = Arc::clone(&c);
                // SAFETY: MPI's rules for a persistent collective: the buffers stay valid while
                // the request lives, untouched while it is active, and it is started again only
                // once complete.
                let start = Box::new(move || unsafe { c.start_plan(&plan) });
                out(r, insert_persistent(start, errh(comm)))
            }
        }
    })
}

/// A C count or displacement widened to 64 bits.
pub(crate) trait Wide: Copy {
    fn wide(self) -> i64;
}

impl Wide for c_int {
    fn wide(self) -> i64 {
        self as i64
    }
}

impl Wide for MPI_Count {
    fn wide(self) -> i64 {
        self
    }
}

impl Wide for MPI_Aint {
    fn wide(self) -> i64 {
        self as i64
    }
}
