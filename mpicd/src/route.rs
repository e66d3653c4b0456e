//! [`Route`]: where a message goes or comes from, a communicator's context id and its group;
//! and the context ids every process reserves. Below the operations and the engine, which
//! address messages with it, and above nothing but groups.

use crate::group::Group;
use std::sync::Arc;

/// The context of `MPI_COMM_WORLD`. Each communicator uses its id for point-to-point and the
/// next one for collectives.
pub(crate) const WORLD_CONTEXT: u32 = 0;
/// The context of `MPI_COMM_SELF`.
pub(crate) const SELF_CONTEXT: u32 = 2;
/// The first context id a new communicator may get.
pub(crate) const FIRST_FREE_CONTEXT: u32 = 4;

/// Where a message goes or comes from: a communicator's context and group.
#[derive(Clone)]
pub(crate) struct Route {
    pub context: u32,
    pub group: Arc<Group>,
}
