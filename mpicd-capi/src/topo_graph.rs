//! The graph topology calls (MPI_Graph_*, MPI_Graphdims_get) and the distributed graph calls
//! (MPI_Dist_graph_*), over the helpers of `topo.rs`. A graph is the same on every process;
//! a distributed graph is each process's own in- and out-edges: MPI_Dist_graph_create, where
//! any process may name any edge, gathers every process's edges so that each finds its own.

use crate::abi::*;
use crate::comms::run_on;
use crate::env::{new_comm_out, out};
use crate::errors::{fail, CResult};
use crate::topo::{array, length, make, require_intra, topology, write_array};
use mpicd::topology::{DistGraph, Graph, Topology};
use mpicd::Communicator;
use std::ffi::c_int;

/// The graph of `comm` (MPI_ERR_TOPOLOGY if it has none).
fn graph(comm: MPI_Comm) -> CResult<Graph> {
    match topology(comm).as_deref() {
        Some(Topology::Graph(g)) => Ok(g.clone()),
        _ => Err(fail(
            MPI_ERR_TOPOLOGY,
            "the communicator has no graph topology",
        )),
    }
}

/// The distributed graph of `comm` (MPI_ERR_TOPOLOGY if it has none).
fn dist_graph(comm: MPI_Comm) -> CResult<DistGraph> {
    match topology(comm).as_deref() {
        Some(Topology::DistGraph(g)) => Ok(g.clone()),
        _ => Err(fail(
            MPI_ERR_TOPOLOGY,
            "the communicator has no distributed graph topology",
        )),
    }
}

/// A graph from C arguments, checked against `c`'s size.
unsafe fn read_graph(
    c: &Communicator,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
) -> CResult<Graph> {
    let n = length(nnodes, "nnodes")?;
    if nnodes > c.size() {
        return Err(fail(
            MPI_ERR_ARG,
            format!("{nnodes} nodes for {} processes", c.size()),
        ));
    }
    // SAFETY: MPI requires `nnodes` entries of index.
    let index = unsafe { array(index, n, "index") }?;
    if index.windows(2).any(|w| w[1] < w[0]) || index.first().is_some_and(|&i| i < 0) {
        return Err(fail(MPI_ERR_ARG, "the index array decreases"));
    }
    let m = index.last().map_or(0, |&m| m as usize);
    // SAFETY: MPI requires index[nnodes - 1] edges.
    let edges = unsafe { array(edges, m, "edges") }?;
    if let Some(e) = edges.iter().find(|&&e| !(0..nnodes).contains(&e)) {
        return Err(fail(
            MPI_ERR_ARG,
            format!("edge to {e} outside the {nnodes} nodes"),
        ));
    }
    Ok(Graph { index, edges })
}

/// A rank of `c`, checked.
fn check_rank(c: &Communicator, rank: c_int) -> CResult<()> {
    match (0..c.size()).contains(&rank) {
        true => Ok(()),
        false => Err(fail(MPI_ERR_RANK, format!("invalid rank {rank}"))),
    }
}

/// A communicator of the first `nnodes` processes of `comm_old` carrying a graph
/// (collective); the others get MPI_COMM_NULL.
#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_create(
    comm_old: MPI_Comm,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    reorder: c_int,
    comm_graph: *mut MPI_Comm,
) -> c_int {
    let _ = reorder;
    run_on("Graph_create", comm_old, |c| {
        new_comm_out(comm_graph, "comm_graph")?;
        require_intra(&c, "MPI_Graph_create")?;
        // SAFETY: MPI's rules for the arrays.
        let g = unsafe { read_graph(&c, nnodes, index, edges) }?;
        out(comm_graph, make(&c, comm_old, nnodes, Topology::Graph(g))?)
    })
}

/// The rank this process would have in a graph of `nnodes` nodes (MPI_UNDEFINED beyond).
#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_map(
    comm: MPI_Comm,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    run_on("Graph_map", comm, |c| {
        require_intra(&c, "MPI_Graph_map")?;
        // SAFETY: MPI's rules for the arrays.
        unsafe { read_graph(&c, nnodes, index, edges) }?;
        out(
            newrank,
            if c.rank() < nnodes {
                c.rank()
            } else {
                MPI_UNDEFINED
            },
        )
    })
}

/// The number of nodes and edges of `comm`'s graph.
#[no_mangle]
pub unsafe extern "C" fn MPI_Graphdims_get(
    comm: MPI_Comm,
    nnodes: *mut c_int,
    nedges: *mut c_int,
) -> c_int {
    run_on("Graphdims_get", comm, |_| {
        let g = graph(comm)?;
        out(nnodes, g.index.len() as c_int)?;
        out(nedges, g.edges.len() as c_int)
    })
}

/// The index and edges of `comm`'s graph (`maxindex` and `maxedges` entries at most).
#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_get(
    comm: MPI_Comm,
    maxindex: c_int,
    maxedges: c_int,
    index: *mut c_int,
    edges: *mut c_int,
) -> c_int {
    run_on("Graph_get", comm, |_| {
        let g = graph(comm)?;
        let ni = length(maxindex, "maxindex")?.min(g.index.len());
        let ne = length(maxedges, "maxedges")?.min(g.edges.len());
        // SAFETY: MPI requires `maxindex` and `maxedges` entries.
        unsafe {
            write_array(index, &g.index[..ni], "index")?;
            write_array(edges, &g.edges[..ne], "edges")
        }
    })
}

/// The number of neighbours of `rank` in `comm`'s graph.
#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_neighbors_count(
    comm: MPI_Comm,
    rank: c_int,
    nneighbors: *mut c_int,
) -> c_int {
    run_on("Graph_neighbors_count", comm, |c| {
        let g = graph(comm)?;
        check_rank(&c, rank)?;
        out(nneighbors, g.neighbors(rank).len() as c_int)
    })
}

/// The neighbours of `rank` in `comm`'s graph (`maxneighbors` at most).
#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_neighbors(
    comm: MPI_Comm,
    rank: c_int,
    maxneighbors: c_int,
    neighbors: *mut c_int,
) -> c_int {
    run_on("Graph_neighbors", comm, |c| {
        let g = graph(comm)?;
        check_rank(&c, rank)?;
        let all = g.neighbors(rank);
        let n = length(maxneighbors, "maxneighbors")?.min(all.len());
        // SAFETY: MPI requires `maxneighbors` entries.
        unsafe { write_array(neighbors, &all[..n], "neighbors") }
    })
}

/// Ranks of `c` read from a C array, checked.
unsafe fn ranks(c: &Communicator, p: *const c_int, n: usize, what: &str) -> CResult<Vec<c_int>> {
    // SAFETY: forwarded.
    let r = unsafe { array(p, n, what) }?;
    if let Some(bad) = r.iter().find(|&&x| !(0..c.size()).contains(&x)) {
        return Err(fail(MPI_ERR_RANK, format!("invalid rank {bad} in {what}")));
    }
    Ok(r)
}

/// `n` weights, or none for MPI_UNWEIGHTED (and `n` = 0 or MPI_WEIGHTS_EMPTY).
unsafe fn weights(p: *const c_int, n: usize, what: &str) -> CResult<Option<Vec<c_int>>> {
    if std::ptr::eq(p, MPI_UNWEIGHTED) {
        return Ok(None);
    }
    if n == 0 || std::ptr::eq(p, MPI_WEIGHTS_EMPTY) {
        return Ok(Some(Vec::new()));
    }
    // SAFETY: forwarded.
    let w = unsafe { array(p, n, what) }?;
    if let Some(bad) = w.iter().find(|&&x| x < 0) {
        return Err(fail(
            MPI_ERR_ARG,
            format!("negative weight {bad} in {what}"),
        ));
    }
    Ok(Some(w))
}

/// A communicator over `comm_old`'s processes (collective) whose topology is, on each
/// process, the sources it receives from and the destinations it sends to.
#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_create_adjacent(
    comm_old: MPI_Comm,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    info: MPI_Info,
    reorder: c_int,
    comm_dist_graph: *mut MPI_Comm,
) -> c_int {
    let _ = (info, reorder);
    run_on("Dist_graph_create_adjacent", comm_old, |c| {
        new_comm_out(comm_dist_graph, "comm_dist_graph")?;
        require_intra(&c, "MPI_Dist_graph_create_adjacent")?;
        let (ni, no) = (
            length(indegree, "indegree")?,
            length(outdegree, "outdegree")?,
        );
        // SAFETY: MPI requires `indegree` and `outdegree` entries in the arrays.
        let (s, sw, d, dw) = unsafe {
            (
                ranks(&c, sources, ni, "sources")?,
                weights(sourceweights, ni, "sourceweights")?,
                ranks(&c, destinations, no, "destinations")?,
                weights(destweights, no, "destweights")?,
            )
        };
        let weighted = sw.is_some() || dw.is_some();
        let topo = DistGraph {
            sources: s,
            source_weights: sw.unwrap_or_default(),
            destinations: d,
            destination_weights: dw.unwrap_or_default(),
            weighted,
        };
        out(
            comm_dist_graph,
            make(&c, comm_old, c.size(), Topology::DistGraph(topo))?,
        )
    })
}

/// A communicator over `comm_old`'s processes (collective) with the edges every process
/// names: `n` sources, source i with `degrees[i]` destinations, in order in `destinations`
/// (and `weights`). Each process learns the edges into and out of it, in the order of the
/// naming processes' ranks and of their arrays.
#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_create(
    comm_old: MPI_Comm,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    weights_: *const c_int,
    info: MPI_Info,
    reorder: c_int,
    comm_dist_graph: *mut MPI_Comm,
) -> c_int {
    let _ = (info, reorder);
    run_on("Dist_graph_create", comm_old, |c| {
        new_comm_out(comm_dist_graph, "comm_dist_graph")?;
        require_intra(&c, "MPI_Dist_graph_create")?;
        let n = length(n, "n")?;
        // SAFETY: MPI requires `n` sources and degrees, and as many destinations and weights
        // as the degrees add up to.
        let (s, deg) = unsafe {
            (
                ranks(&c, sources, n, "sources")?,
                array(degrees, n, "degrees")?,
            )
        };
        let mut total = 0usize;
        for &d in &deg {
            total = total.saturating_add(length(d, "degree")?);
        }
        // SAFETY: as above.
        let (d, w) = unsafe {
            (
                ranks(&c, destinations, total, "destinations")?,
                weights(weights_, total, "weights")?,
            )
        };
        let weighted = w.is_some();
        let w = w
            .filter(|w| w.len() == total)
            .unwrap_or_else(|| vec![1; total]);
        // Every edge as (source, destination, weight), gathered on every process.
        let mut mine = Vec::with_capacity(total * 12);
        let mut at = 0;
        for (&src, &k) in s.iter().zip(&deg) {
            for j in at..at + k as usize {
                for v in [src, d[j], w[j]] {
                    mine.extend_from_slice(&v.to_ne_bytes());
                }
            }
            at += k as usize;
        }
        let all = mpicd::collective::allgather(&c, &mine)?;
        let me = c.rank();
        let mut topo = DistGraph {
            sources: Vec::new(),
            source_weights: Vec::new(),
            destinations: Vec::new(),
            destination_weights: Vec::new(),
            weighted,
        };
        for edge in all.iter().flat_map(|b| b.chunks_exact(12)) {
            let v =
                |i: usize| c_int::from_ne_bytes([edge[i], edge[i + 1], edge[i + 2], edge[i + 3]]);
            let (src, dst, wt) = (v(0), v(4), v(8));
            if dst == me {
                topo.sources.push(src);
                topo.source_weights.push(wt);
            }
            if src == me {
                topo.destinations.push(dst);
                topo.destination_weights.push(wt);
            }
        }
        out(
            comm_dist_graph,
            make(&c, comm_old, c.size(), Topology::DistGraph(topo))?,
        )
    })
}

/// The numbers of sources and destinations of this process, and whether the graph is
/// weighted.
#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_neighbors_count(
    comm: MPI_Comm,
    indegree: *mut c_int,
    outdegree: *mut c_int,
    weighted: *mut c_int,
) -> c_int {
    run_on("Dist_graph_neighbors_count", comm, |_| {
        let g = dist_graph(comm)?;
        out(indegree, g.sources.len() as c_int)?;
        out(outdegree, g.destinations.len() as c_int)?;
        out(weighted, g.weighted as c_int)
    })
}

/// The sources and destinations of this process, with their weights unless the arrays are
/// MPI_UNWEIGHTED (`maxindegree` and `maxoutdegree` entries at most).
#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_neighbors(
    comm: MPI_Comm,
    maxindegree: c_int,
    sources: *mut c_int,
    sourceweights: *mut c_int,
    maxoutdegree: c_int,
    destinations: *mut c_int,
    destweights: *mut c_int,
) -> c_int {
    run_on("Dist_graph_neighbors", comm, |_| {
        let g = dist_graph(comm)?;
        let ni = length(maxindegree, "maxindegree")?.min(g.sources.len());
        let no = length(maxoutdegree, "maxoutdegree")?.min(g.destinations.len());
        let given = |p: *mut c_int| p != MPI_UNWEIGHTED && p != MPI_WEIGHTS_EMPTY;
        // SAFETY: MPI requires `maxindegree` and `maxoutdegree` entries.
        unsafe {
            write_array(sources, &g.sources[..ni], "sources")?;
            write_array(destinations, &g.destinations[..no], "destinations")?;
            if g.weighted && given(sourceweights) && g.source_weights.len() >= ni {
                write_array(sourceweights, &g.source_weights[..ni], "sourceweights")?;
            }
            if g.weighted && given(destweights) && g.destination_weights.len() >= no {
                write_array(destweights, &g.destination_weights[..no], "destweights")?;
            }
        }
        Ok(())
    })
}
