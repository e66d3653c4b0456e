//! The scans' plans (`MPI_Scan`, `MPI_Exscan`), prefix reductions in rank order for any op,
//! commutative or not: a chain along the members, or recursive doubling. Which one runs is
//! [`super::select`]'s choice.

use super::{Buf, Builder};

/// Prefix reduction in rank order along the members (p - 1 hops, one after the other): member r
/// receives the reduction of members 0..r from member r - 1, combines its own operand after it,
/// and passes the result on to member r + 1. `recv` gets the reduction of members 0..=rank
/// (`exclusive`: 0..rank; member 0's `recv` is then left as it was). Any op, commutative or not.
pub fn chain(b: &mut Builder, send: Buf, recv: Buf, exclusive: bool) {
    let (rank, size) = (b.rank(), b.size());
    let last = rank + 1 == size;
    if rank == 0 {
        if !exclusive {
            b.copy(send, recv);
        }
        if !last {
            b.send(1, send);
        }
        return;
    }
    let out = match (exclusive, send == recv) {
        // The prefix arrives where the result goes; the own operand is combined after it
        // into a temporary passed on (or not at all, at the last member).
        (true, false) => {
            b.recv(rank - 1, recv);
            if last {
                return;
            }
            let pass = b.temp(send.len());
            b.copy(recv, pass);
            b.merge(pass, send, false);
            pass
        }
        // In place: the own operand is in the result, which the prefix replaces.
        (true, true) => {
            let inc = b.temp(recv.len());
            b.recv(rank - 1, inc);
            let pass = b.temp(recv.len());
            if !last {
                b.copy(inc, pass);
                b.merge(pass, recv, false);
            }
            b.copy(inc, recv);
            if last {
                return;
            }
            pass
        }
        // The prefix arrives in the result, and the own operand is combined after it.
        (false, false) => {
            b.recv(rank - 1, recv);
            b.merge(recv, send, false);
            recv
        }
        // In place: the own operand is in the result; the prefix goes first.
        (false, true) => {
            let inc = b.temp(recv.len());
            b.recv(rank - 1, inc);
            b.merge(recv, inc, true);
            recv
        }
    };
    if !last {
        b.send(rank + 1, out);
    }
}

/// Prefix reduction in rank order by recursive doubling (⌈log2 p⌉ rounds): `recv` gets the
/// reduction of members 0..=rank (`exclusive`: 0..rank; member 0's `recv` is then left as it
/// was, as MPI_Exscan leaves it undefined). Any op, commutative or not.
pub fn recursive_doubling(b: &mut Builder, send: Buf, recv: Buf, exclusive: bool) {
    let (rank, size) = (b.rank(), b.size());
    let len = send.len();
    // `partial`: the reduction of the block of members heard from, this one included.
    let partial = b.temp(len);
    b.copy(send, partial);
    let (inc, scratch) = (b.temp(len), b.temp(len));
    if !exclusive {
        b.copy(send, recv);
    }
    let mut have_lower = false;
    let mut mask = 1;
    while mask < size {
        let peer = rank ^ mask;
        if peer < size {
            b.sendrecv(partial, peer, inc, peer);
            if peer < rank {
                // A block of lower members: it goes first.
                b.copy(inc, scratch);
                b.combine(scratch, partial);
                b.copy(scratch, partial);
                if !exclusive || have_lower {
                    b.copy(inc, scratch);
                    b.combine(scratch, recv);
                    b.copy(scratch, recv);
                } else {
                    b.copy(inc, recv);
                }
                have_lower = true;
            } else {
                b.combine(partial, inc);
            }
        }
        mask <<= 1;
    }
}
