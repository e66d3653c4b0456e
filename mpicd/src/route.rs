//! [`Route`]: where a message goes or comes from, a communicator's context id and its group;
//! and the context ids every process reserves. Below the operations and the engine, which
//! address messages with it, and above nothing but groups.

use crate::group::Group;
use std::sync::Arc;

/// Context ids each communicator reserves: its id for point-to-point, the next one for
/// collectives, the one after for making communicators of its subgroups
/// ([`crate::Communicator::create_group`], whose tags must not meet point-to-point's).
pub(crate) const CONTEXTS_PER_COMM: u32 = 3;
/// The context of `MPI_COMM_WORLD`.
pub(crate) const WORLD_CONTEXT: u32 = 0;
/// The context of `MPI_COMM_SELF`.
pub(crate) const SELF_CONTEXT: u32 = WORLD_CONTEXT + CONTEXTS_PER_COMM;
/// The first context id a new communicator may get.
pub(crate) const FIRST_FREE_CONTEXT: u32 = SELF_CONTEXT + CONTEXTS_PER_COMM;

/// Where a message goes or comes from: a communicator's context and group.
#[derive(Clone)]
pub(crate) struct Route {
    pub context: u32,
    pub group: Arc<Group>,
}
