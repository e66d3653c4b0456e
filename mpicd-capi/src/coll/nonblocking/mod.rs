//! Non-blocking collectives (`MPI_I...`): each starts its plan and returns its request; progress
//! advances it, in any completion call.
//! [`moves`]: the collectives that move data; [`reductions`]: the barrier and the reductions.

mod moves;
mod reductions;
