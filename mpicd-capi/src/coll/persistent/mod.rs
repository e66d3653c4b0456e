//! Persistent collectives of MPI-4 (`..._init`): each returns an inactive request whose every
//! MPI_Start runs the plan written here once. Info hints are accepted and not used.
//! [`moves`]: the collectives that move data; [`reductions`]: the barrier and the reductions.

mod moves;
mod reductions;
