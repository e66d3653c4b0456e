//! The plans of the neighbourhood collectives (MPI_Neighbor_allgather(v),
//! MPI_Neighbor_alltoall(v,w), in every form) from their C arguments: the communicator's
//! topology (`topo.rs`) gives this process's sources (receive block i from the i-th) and
//! destinations (send block i to the i-th), the [`Writer`] names the blocks, and
//! [`mpicd::schedule::neighbor::exchange`] writes the messages. The exported functions are in
//! `neighbor_calls.rs`.
//!
//! # Safety
//! Every function here is `unsafe`: its pointers must be what MPI requires of the call.

use super::writer::{Arg, Each, Layout, Writer};
use super::{launch, Launch, Wide};
use crate::abi::*;
use crate::errors::{fail, CResult};
use crate::topo::{array, topology};
use mpicd::schedule::{neighbor, Buf, Plan};
use mpicd::topology::Topology;
use mpicd::Communicator;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

/// The blocks of one side of a neighbourhood collective, as the C arguments give them.
#[derive(Clone, Copy)]
pub(crate) enum Side<C, D> {
    /// The same block for every neighbour (the send side of an allgather).
    Same(Arg),
    /// `count` elements of `dtype` per neighbour, one block after the other.
    Uniform(*const c_void, i64, MPI_Datatype),
    /// A count and a displacement (in elements) per neighbour.
    Varying(*const c_void, *const C, *const D, MPI_Datatype),
    /// A count, a byte displacement and a datatype per neighbour.
    Typed(*const c_void, *const C, *const D, *const MPI_Datatype),
}

/// `n` entries of a C array, widened.
unsafe fn wide<T: Wide>(p: *const T, n: usize, what: &str) -> CResult<Each<i64>> {
    // SAFETY: forwarded.
    Ok(unsafe { array(p, n, what) }?
        .into_iter()
        .map(Wide::wide)
        .collect())
}

impl<C: Wide, D: Wide> Side<C, D> {
    /// One argument per neighbour of `n`.
    unsafe fn args(self, n: usize) -> CResult<Vec<Arg>> {
        // SAFETY (all arms): MPI requires one entry per neighbour in each array.
        let layout = match self {
            Side::Same(a) => return Ok(vec![a; n]),
            Side::Uniform(p, count, dtype) => Layout::uniform(p, n, count, dtype)?,
            Side::Varying(p, counts, displs, dtype) => unsafe {
                Layout::varying(
                    p,
                    wide(counts, n, "counts")?,
                    wide(displs, n, "displs")?,
                    dtype,
                )?
            },
            Side::Typed(p, counts, displs, dtypes) => unsafe {
                Layout::typed(
                    p,
                    wide(counts, n, "counts")?,
                    wide(displs, n, "displs")?,
                    array(dtypes, n, "datatypes")?.into(),
                )
            },
        };
        Ok((0..n).map(|i| layout.arg(i)).collect())
    }
}

/// The topology of `comm`, which a neighbourhood collective needs.
fn topo_of(comm: MPI_Comm) -> CResult<Arc<Topology>> {
    topology(comm).ok_or_else(|| {
        fail(
            MPI_ERR_TOPOLOGY,
            "a neighbourhood collective needs a communicator with a topology",
        )
    })
}

/// The plan: block i of `send` to destination i, block i of `recv` from source i.
unsafe fn plan<C: Wide, D: Wide, E: Wide, F: Wide>(
    c: &Communicator,
    comm: MPI_Comm,
    send: Side<C, D>,
    recv: Side<E, F>,
) -> CResult<Arc<Plan>> {
    let topo = topo_of(comm)?;
    let (sources, destinations) = topo.neighbors(c.rank());
    let mut w = Writer::new(c);
    // SAFETY: MPI's rules for the buffers of a collective.
    unsafe {
        let ins = recv.args(sources.len())?;
        let recvs: Vec<(Option<i32>, Buf)> = sources
            .iter()
            .zip(ins)
            .map(|(&s, a)| Ok((s, w.output(a)?)))
            .collect::<CResult<_>>()?;
        let outs: Vec<Buf> = match send {
            // One buffer, named once, for every destination.
            Side::Same(a) => vec![w.input(a)?; destinations.len()],
            _ => send
                .args(destinations.len())?
                .into_iter()
                .map(|a| w.input(a))
                .collect::<CResult<_>>()?,
        };
        let sends: Vec<(Option<i32>, Buf)> = topo
            .send_order(destinations.len())
            .into_iter()
            .map(|i| (destinations[i], outs[i]))
            .collect();
        neighbor::exchange(&mut w.b, &sends, &recvs);
    }
    w.finish()
}

/// Launches the neighbourhood collective of `send` and `recv` on `comm`.
pub(crate) unsafe fn run<C: Wide, D: Wide, E: Wide, F: Wide>(
    name: &'static str,
    how: Launch,
    send: Side<C, D>,
    recv: Side<E, F>,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: forwarded: the arguments are what MPI requires of the call.
    launch(name, comm, how, |c| unsafe { plan(c, comm, send, recv) })
}

/// The send side of an allgather: one block for every destination.
pub(crate) fn same(p: *const c_void, count: i64, dtype: MPI_Datatype) -> Side<c_int, c_int> {
    Side::Same(Arg::new(p, count, dtype))
}

/// A side of uniform blocks.
pub(crate) fn uniform(p: *const c_void, count: i64, dtype: MPI_Datatype) -> Side<c_int, c_int> {
    Side::Uniform(p, count, dtype)
}
