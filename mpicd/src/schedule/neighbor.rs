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
