//! Persistent collectives of MPI-4 (`..._init`): each returns an inactive request whose every
//! MPI_Start runs the plan written here once. Info hints are accepted and not used.
//! [`moves`] and [`alltoalls`]: the collectives that move data; [`reductions`]: the barrier and
//! the reductions.

mod alltoalls;
mod moves;
mod reductions;
