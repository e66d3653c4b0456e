//! The collectives as the callers write them into a plan: one function each, which picks the
//! algorithm ([`super::select`]) from what every member knows alike (so that all pick the
//! same) and writes it. Buffers are bytes; `None` for a send buffer means "in place". A blocking
//! collective among members of one node may go through its shared memory instead
//! ([`super::node`]).

use super::algorithms as alg;
use super::few;
use super::node;
use super::scans;
use super::select::{choose, Algorithm, Collective, Shape};
use super::{Buf, Builder};
use crate::reduction::Order;
use smallvec::SmallVec;

fn shape(b: &Builder, bytes: usize) -> Shape {
    Shape {
        bytes,
        members: b.size(),
        commutative: b.reduction().map(|r| r.order) != Some(Order::Ranks),
    }
}

pub fn barrier(b: &mut Builder) {
    if node::barrier(b) {
        return;
    }
    match choose(Collective::Barrier, shape(b, 0)) {
        Algorithm::Linear => few::barrier_linear(b),
        Algorithm::Fan => few::barrier_fan(b),
        _ => alg::barrier(b),
    }
}

pub fn bcast(b: &mut Builder, buf: Buf, root: i32) {
    if node::bcast(b, buf, root) {
        return;
    }
    match choose(Collective::Bcast, shape(b, buf.len())) {
        Algorithm::ScatterAllgather => alg::bcast_scatter_allgather(b, buf, root),
        Algorithm::Linear => alg::bcast_linear(b, buf, root),
        _ => alg::bcast_binomial(b, buf, root),
    }
}

/// Reduces every member's `send` into `recv` at `root` (`recv` is only read at the root,
/// where it may be `send` itself).
pub fn reduce(b: &mut Builder, send: Buf, recv: Option<Buf>, root: i32) {
    if node::reduce(b, send, recv, root) {
        return;
    }
    match choose(Collective::Reduce, shape(b, send.len())) {
        Algorithm::Linear => few::reduce_linear(b, send, recv, root),
        _ => alg::reduce_binomial(b, send, recv, root),
    }
}

/// Reduces every member's operand (`send`, or `buf` in place) into `buf` on every member.
pub fn allreduce(b: &mut Builder, send: Option<Buf>, buf: Buf) {
    if node::allreduce(b, send, buf) {
        return;
    }
    if let Some(send) = send {
        b.copy(send, buf);
    }
    match choose(Collective::Allreduce, shape(b, buf.len())) {
        Algorithm::Ring => alg::allreduce_ring(b, buf),
        Algorithm::Rabenseifner => alg::allreduce_rabenseifner(b, buf),
        Algorithm::Linear => few::allreduce_linear(b, buf),
        _ => alg::allreduce_recursive_doubling(b, buf),
    }
}

/// Reduces every member's `send` (the blocks of every member end to end, `counts[i]` bytes for
/// member i) and leaves block `rank` of the result in `recv`.
pub fn reduce_scatter(b: &mut Builder, send: Buf, recv: Buf, counts: &[usize]) {
    let mut offset = 0;
    let blocks: SmallVec<[(usize, usize); 8]> = counts
        .iter()
        .map(|&n| {
            offset += n;
            (offset - n, n)
        })
        .collect();
    if node::reduce_scatter(b, send, recv, &blocks) {
        return;
    }
    let rank = b.rank() as usize;
    let algorithm = choose(Collective::ReduceScatter, shape(b, send.len()));
    if algorithm == Algorithm::Linear {
        return few::reduce_scatter_linear(b, send, recv, &blocks);
    }
    let acc = b.temp(send.len());
    match algorithm {
        Algorithm::Ring => {
            b.copy(send, acc);
            alg::reduce_scatter_ring(b, acc, &blocks);
            let (o, n) = blocks[rank];
            b.copy(acc.part(o, n), recv);
        }
        _ => {
            let at_root = (rank == 0).then_some(acc);
            alg::reduce_binomial(b, send, at_root, 0);
            let parts: Vec<Buf> = blocks.iter().map(|&(o, n)| acc.part(o, n)).collect();
            alg::scatter_linear(b, at_root.map(|_| &parts[..]), recv, 0);
        }
    }
}

/// Prefix reduction in rank order into `recv` (`exclusive`: without this member's operand;
/// member 0's `recv` is then untouched).
pub fn scan(b: &mut Builder, send: Option<Buf>, recv: Buf, exclusive: bool) {
    if node::scan(b, send, recv, exclusive) {
        return;
    }
    let send = send.unwrap_or(recv);
    match choose(Collective::Scan, shape(b, recv.len())) {
        Algorithm::Chain => scans::chain(b, send, recv, exclusive),
        _ => scans::recursive_doubling(b, send, recv, exclusive),
    }
}

/// Gathers every member's `mine` into `blocks` at `root` (`mine` `None`: in place at the
/// root). `uniform`: every block has the same length, which every member knows.
pub fn gather(
    b: &mut Builder,
    mine: Option<Buf>,
    blocks: Option<&[Buf]>,
    root: i32,
    uniform: bool,
) {
    let own = blocks.map(|bl| bl[b.rank() as usize]);
    let Some(mine) = mine.or(own) else {
        return;
    };
    if node::gather(b, mine, blocks, root, uniform) {
        return;
    }
    let binomial =
        uniform && choose(Collective::Gather, shape(b, mine.len())) == Algorithm::Binomial;
    if binomial {
        alg::gather_binomial(b, mine, blocks, root);
    } else {
        alg::gather_linear(b, mine, blocks, root);
    }
}

/// Scatters `blocks` from `root` into every member's `mine` (`None`: in place at the root).
pub fn scatter(
    b: &mut Builder,
    blocks: Option<&[Buf]>,
    mine: Option<Buf>,
    root: i32,
    uniform: bool,
) {
    let own = blocks.map(|bl| bl[b.rank() as usize]);
    let Some(mine) = mine.or(own) else {
        return;
    };
    if node::scatter(b, blocks, mine, root, uniform) {
        return;
    }
    let binomial =
        uniform && choose(Collective::Gather, shape(b, mine.len())) == Algorithm::Binomial;
    if binomial {
        alg::scatter_binomial(b, blocks, mine, root);
    } else {
        alg::scatter_linear(b, blocks, mine, root);
    }
}

/// Every member's block into `blocks` on every member (`mine` `None`: already in place).
pub fn allgather(b: &mut Builder, mine: Option<Buf>, blocks: &[Buf]) {
    if node::allgather(b, mine, blocks) {
        return;
    }
    let total: usize = blocks.iter().map(|x| x.len()).sum();
    let each = total / blocks.len().max(1);
    match choose(Collective::Allgather, shape(b, each)) {
        Algorithm::Ring => alg::allgather_ring(b, blocks, mine),
        _ => alg::allgather_linear(b, blocks, mine),
    }
}

/// `send[i]` to member i, `recv[i]` from member i (`uniform`: every block of every member has
/// one size, as in MPI_Alltoall). Members may choose differently among the algorithms by
/// message (both send one message per pair).
pub fn alltoall(b: &mut Builder, send: &[Buf], recv: &[Buf], uniform: bool) {
    if node::alltoall(b, send, recv, uniform) {
        return;
    }
    let largest = send.iter().map(|x| x.len()).max().unwrap_or(0);
    match choose(Collective::Alltoall, shape(b, largest)) {
        Algorithm::Pairwise => alg::alltoall_pairwise(b, send, recv),
        _ => alg::alltoall_linear(b, send, recv),
    }
}
