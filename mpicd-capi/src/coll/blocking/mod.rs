//! Blocking collectives: each runs its plan to completion before returning.
//! [`moves`]: the collectives that move data; [`reductions`]: the barrier and the reductions.

mod moves;
mod reductions;
