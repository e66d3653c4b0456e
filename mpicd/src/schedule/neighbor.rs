//! The neighbourhood collectives (MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v,w) and
//! their non-blocking and persistent forms) as one plan shape: every block goes to or comes
//! from one neighbour, all messages in one exchange. The caller names the blocks and the
//! neighbours (from the communicator's topology); a missing neighbour (MPI_PROC_NULL) moves
//! nothing and leaves its block untouched.
//!
//! Two messages between the same pair of processes carry the same tag, so they match in the
//! order they are posted: the sends come in the order the caller gives (a grid sends, per
//! dimension, the destination's block first: see `topology::Topology::send_order`), and the
//! receives in block order. A process that is its own neighbour copies the k-th block it
//! sends itself into the k-th block it receives from itself, without a message.

use super::{Buf, Builder, Xfer};

/// Sends each `(to, block)` of `sends` (in that order) and receives each `(from, block)` of
/// `recvs`; `None` neighbours are skipped.
pub fn exchange(b: &mut Builder, sends: &[(Option<i32>, Buf)], recvs: &[(Option<i32>, Buf)]) {
    let me = b.rank();
    let mut xfers = Vec::new();
    let mut to_self = Vec::new();
    for &(from, buf) in recvs {
        match from {
            Some(r) if r == me => to_self.push(buf),
            Some(r) => xfers.push(Xfer::Recv { from: r, buf }),
            None => {}
        }
    }
    let mut own = Vec::new();
    for &(to, buf) in sends {
        match to {
            Some(r) if r == me => own.push(buf),
            Some(r) => xfers.push(Xfer::Send { to: r, buf }),
            None => {}
        }
    }
    b.post(xfers);
    for (from, to) in own.into_iter().zip(to_self) {
        let n = from.len().min(to.len());
        b.copy(from.part(0, n), to.part(0, n));
    }
    b.wait();
}

#[cfg(test)]
mod tests {
    use super::super::{sim, Builder};
    use super::*;
    use crate::group::Group;
    use crate::route::Route;
    use crate::topology::{Cart, Topology};
    use std::sync::Arc;

    /// Runs the neighbour all-to-all of `topo` on `size` members with blocks of 3 bytes,
    /// each block sent naming its sender and its block; checks that block i of each member
    /// holds what neighbour i sent towards it, and that a missing neighbour's block is
    /// untouched.
    fn alltoall(topo: &Topology, size: i32) {
        let n = topo.neighbors(0).0.len();
        let mut sends: Vec<Vec<u8>> = (0..size)
            .map(|r| {
                (0..n * 3)
                    .map(|i| (r as usize * 16 + i / 3) as u8)
                    .collect()
            })
            .collect();
        let mut recvs: Vec<Vec<u8>> = vec![vec![0xee; n * 3]; size as usize];
        let route = Route {
            context: 0,
            group: Arc::new(Group::from_members((0..size as u32).collect())),
        };
        let plans: Vec<_> = (0..size)
            .zip(sends.iter_mut().zip(recvs.iter_mut()))
            .map(|(r, (s, v))| {
                let mut b = Builder::new(route.clone(), r, 0);
                // SAFETY: the vectors outlive the simulated run.
                let (s, v) = unsafe {
                    (
                        b.raw(s.as_mut_ptr(), s.len()),
                        b.raw(v.as_mut_ptr(), v.len()),
                    )
                };
                let (from, to) = topo.neighbors(r);
                let outs: Vec<_> = topo
                    .send_order(n)
                    .into_iter()
                    .map(|i| (to[i], s.part(i * 3, 3)))
                    .collect();
                let ins: Vec<_> = (0..n).map(|i| (from[i], v.part(i * 3, 3))).collect();
                exchange(&mut b, &outs, &ins);
                b.finish()
            })
            .collect();
        sim::run(&plans).expect("the plans run");
        for r in 0..size {
            let (from, _) = topo.neighbors(r);
            for (i, f) in from.iter().enumerate() {
                let want = match f {
                    // A grid's neighbour i sent its block i ^ 1 (the opposite direction).
                    Some(f) => (*f as usize * 16 + (i ^ 1)) as u8,
                    None => 0xee,
                };
                assert_eq!(
                    recvs[r as usize][i * 3..i * 3 + 3],
                    [want; 3],
                    "member {r} block {i}"
                );
            }
        }
    }

    #[test]
    fn grid_neighbors_match_in_order() {
        for size in 1..=6 {
            for periodic in [false, true] {
                let ring = Topology::Cart(Cart {
                    dims: vec![size],
                    periods: vec![periodic],
                });
                alltoall(&ring, size);
            }
        }
        let grid = Topology::Cart(Cart {
            dims: vec![2, 3, 1],
            periods: vec![true, false, true],
        });
        alltoall(&grid, 6);
    }
}
