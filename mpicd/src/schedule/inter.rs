//! The collectives of inter-communicators (MPI-4.1 section 6.2.2) as plans. An
//! inter-communicator joins two disjoint groups; its collectives move data between them: a
//! rooted one from or to a root in one group (which names itself [`Root::Here`], its group's
//! other members [`Root::Idle`]) and the whole other group (which names the root by its remote
//! rank, [`Root::Remote`]); the others each group's data to the other group. A plan names
//! this process's group's members by rank, as on an intra-communicator (so the algorithms of
//! [`super::algorithms`] run among them), and the remote group's with [`Builder::remote`].
//!
//! The algorithms are simple: one message per pair where data goes between every member of
//! one group and every member of the other (gather, scatter, allgather, alltoall), and where a
//! result is one vector (allreduce, reduce_scatter), a reduction within each group, an
//! exchange between the groups' rank-0 members ("leaders"), and a broadcast or scatter within
//! each group. MPI defines no scan on inter-communicators.

use super::collectives as coll;
use super::{Buf, Builder, Xfer};

/// Where the root of a rooted collective is, as a member sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    /// This member is the root (`MPI_ROOT`).
    Here,
    /// The root is another member of this member's group (`MPI_PROC_NULL`): nothing to do.
    Idle,
    /// The root is this rank of the remote group.
    Remote(i32),
}

/// Returns once every member of both groups has called it: a barrier in each group, the
/// leaders swap tokens, then each leader releases its group.
pub fn barrier(b: &mut Builder) {
    let token = b.temp(0);
    super::algorithms::barrier(b);
    if b.rank() == 0 {
        let leader = b.remote(0);
        b.sendrecv(token, leader, token, leader);
    }
    super::algorithms::bcast_binomial(b, token, 0);
}

/// The root's `buf` to every member of the remote group: the root sends it to the remote
/// group's rank 0, which broadcasts it in its group.
pub fn bcast(b: &mut Builder, buf: Buf, root: Root) {
    match root {
        Root::Here => {
            let to = b.remote(0);
            b.send(to, buf);
        }
        Root::Idle => {}
        Root::Remote(r) => {
            if b.rank() == 0 {
                let from = b.remote(r);
                b.recv(from, buf);
            }
            coll::bcast(b, buf, 0);
        }
    }
}

/// The reduction of the remote group's operands into the root's buffer: the remote group
/// reduces at its rank 0, which sends the result to the root. `buf` is where the result goes
/// at the root, a member's operand in the remote group (and unused elsewhere).
pub fn reduce(b: &mut Builder, buf: Buf, root: Root) {
    match root {
        Root::Here => {
            let from = b.remote(0);
            b.recv(from, buf);
        }
        Root::Idle => {}
        Root::Remote(r) => {
            let acc = local_reduce(b, buf);
            if let Some(acc) = acc {
                let to = b.remote(r);
                b.send(to, acc);
            }
        }
    }
}

/// Each group's operands (`send`) reduced into `recv` on every member of the other group.
pub fn allreduce(b: &mut Builder, send: Buf, recv: Buf) {
    if let Some(acc) = local_reduce(b, send) {
        let leader = b.remote(0);
        b.sendrecv(acc, leader, recv, leader);
    }
    coll::bcast(b, recv, 0);
}

/// Each group's vectors (`send`, the blocks of this group's members end to end, `counts[i]`
/// bytes for member i) reduced, and the reduction scattered among the other group: member i
/// gets block i of it in `recv` (both groups' vectors have the same length).
pub fn reduce_scatter(b: &mut Builder, send: Buf, recv: Buf, counts: &[usize]) {
    let acc = local_reduce(b, send);
    let theirs = acc.map(|acc| {
        let theirs = b.temp(acc.len());
        let leader = b.remote(0);
        b.sendrecv(acc, leader, theirs, leader);
        theirs
    });
    let mut offset = 0;
    let blocks = theirs.map(|t| {
        counts
            .iter()
            .map(|&n| {
                offset += n;
                t.part(offset - n, n)
            })
            .collect::<Vec<Buf>>()
    });
    super::algorithms::scatter_linear(b, blocks.as_deref(), recv, 0);
}

/// The remote group's blocks gathered at the root: remote member r's `mine` into
/// `blocks[r]` (any lengths, as gatherv). `mine` is read in the remote group only, `blocks`
/// at the root only (elsewhere it may be empty).
pub fn gather(b: &mut Builder, mine: Buf, blocks: &[Buf], root: Root) {
    match root {
        Root::Here => {
            let recvs = (0..b.remote_size())
                .map(|r| Xfer::Recv {
                    from: b.remote(r),
                    buf: blocks[r as usize],
                })
                .collect();
            b.exchange(recvs);
        }
        Root::Idle => {}
        Root::Remote(r) => {
            let to = b.remote(r);
            b.send(to, mine);
        }
    }
}

/// The root's `blocks[r]` into remote member r's `mine` (any lengths, as scatterv). `blocks`
/// is read at the root only (elsewhere it may be empty), `mine` written in the remote group
/// only.
pub fn scatter(b: &mut Builder, blocks: &[Buf], mine: Buf, root: Root) {
    match root {
        Root::Here => {
            let sends = (0..b.remote_size())
                .map(|r| Xfer::Send {
                    to: b.remote(r),
                    buf: blocks[r as usize],
                })
                .collect();
            b.exchange(sends);
        }
        Root::Idle => {}
        Root::Remote(r) => {
            let from = b.remote(r);
            b.recv(from, mine);
        }
    }
}

/// Every member's `mine` to every member of the other group, which gets remote member r's in
/// `blocks[r]`.
pub fn allgather(b: &mut Builder, mine: Buf, blocks: &[Buf]) {
    let sends: Vec<Buf> = vec![mine; b.remote_size() as usize];
    alltoall(b, &sends, blocks);
}

/// `send[r]` to remote member r, `recv[r]` from it.
pub fn alltoall(b: &mut Builder, send: &[Buf], recv: &[Buf]) {
    let remote = b.remote_size();
    // Each member starts with a different partner, so that no member gets every first message.
    let start = b.rank() % remote.max(1);
    let order = (0..remote).map(|k| (start + k) % remote);
    let mut xfers: Vec<Xfer> = order
        .clone()
        .map(|r| Xfer::Recv {
            from: b.remote(r),
            buf: recv[r as usize],
        })
        .collect();
    xfers.extend(order.map(|r| Xfer::Send {
        to: b.remote(r),
        buf: send[r as usize],
    }));
    b.exchange(xfers);
}

/// Reduces this group's operands `send` at its rank 0, which gets the result (a temporary);
/// `None` on the other members.
fn local_reduce(b: &mut Builder, send: Buf) -> Option<Buf> {
    let acc = (b.rank() == 0).then(|| b.temp(send.len()));
    coll::reduce(b, send, acc, 0);
    acc
}

#[cfg(test)]
mod tests;
