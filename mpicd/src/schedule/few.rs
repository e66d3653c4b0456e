//! One-round algorithms for few members and short messages: every member sends what each other
//! member needs straight to it, all messages at once, then reduces what it received locally in
//! rank order (so every member computes the same bytes, whatever the op, commutative or not).
//! Each member sends p - 1 messages instead of ⌈log2 p⌉, in one round instead of ⌈log2 p⌉ or
//! more: with few members and short messages the rounds cost the time (each one a wait for
//! another process, and a context switch where processes outnumber cores), not the messages.
//! [`super::select`] picks them.

use super::{Buf, Builder, Xfer};
use smallvec::SmallVec;

/// Buffers or messages, one or two per member: inline for few members.
type Few<T> = SmallVec<[T; 8]>;

/// Reduces the `parts` (one per member, in rank order, none overlapping `into`) into `into`.
fn reduce_in_order(b: &mut Builder, parts: &[Buf], into: Buf) {
    let Some((&first, rest)) = parts.split_first() else {
        return;
    };
    b.copy(first, into);
    for &part in rest {
        b.combine(into, part);
    }
}

/// Barrier in one round: every member signals every other and hears from each.
pub fn barrier_linear(b: &mut Builder) {
    let (rank, size) = (b.rank(), b.size());
    let token = b.temp(0);
    let mut xfers = Few::new();
    for r in (0..size).filter(|&r| r != rank) {
        xfers.push(Xfer::Recv {
            from: r,
            buf: token,
        });
        xfers.push(Xfer::Send { to: r, buf: token });
    }
    b.exchange_all(&xfers);
}

/// Barrier through member 0: every other member signals it, then it releases them all (two
/// rounds, member 0 leaving first).
pub fn barrier_fan(b: &mut Builder) {
    let (rank, size) = (b.rank(), b.size());
    let token = b.temp(0);
    if rank != 0 {
        b.sendrecv(token, 0, token, 0);
        return;
    }
    let all = |x: fn(i32, Buf) -> Xfer| (1..size).map(|r| x(r, token)).collect::<Few<Xfer>>();
    b.exchange_all(&all(|from, buf| Xfer::Recv { from, buf }));
    b.exchange_all(&all(|to, buf| Xfer::Send { to, buf }));
}

/// Allreduce of `buf` in place in one round: every member sends its operand to every other,
/// then reduces the p operands in rank order.
pub fn allreduce_linear(b: &mut Builder, buf: Buf) {
    let (rank, size) = (b.rank(), b.size());
    if size == 1 {
        return;
    }
    let len = buf.len();
    let all = b.temp(len * size as usize);
    let parts: Few<Buf> = (0..size as usize).map(|i| all.part(i * len, len)).collect();
    let mut xfers = Few::new();
    for r in (0..size).filter(|&r| r != rank) {
        xfers.push(Xfer::Recv {
            from: r,
            buf: parts[r as usize],
        });
        xfers.push(Xfer::Send { to: r, buf });
    }
    // The own operand is copied while the messages travel (it is only read by the sends).
    b.post_all(&xfers);
    b.copy(buf, parts[rank as usize]);
    b.wait();
    reduce_in_order(b, &parts, buf);
}

/// Reduction of every member's `send` into `recv` at `root` in one round: the root receives
/// every operand and reduces them in rank order.
pub fn reduce_linear(b: &mut Builder, send: Buf, recv: Option<Buf>, root: i32) {
    let (rank, size) = (b.rank(), b.size());
    if rank != root {
        b.send(root, send);
        return;
    }
    let len = send.len();
    let recv = recv.unwrap_or_else(|| b.temp(len));
    let all = b.temp(len * size as usize);
    let parts: Few<Buf> = (0..size as usize).map(|i| all.part(i * len, len)).collect();
    let xfers: Few<Xfer> = (0..size)
        .filter(|&r| r != rank)
        .map(|r| Xfer::Recv {
            from: r,
            buf: parts[r as usize],
        })
        .collect();
    b.post_all(&xfers);
    b.copy(send, parts[rank as usize]);
    b.wait();
    reduce_in_order(b, &parts, recv);
}

/// Reduce-scatter in one round: member i gets block i of every member's `send` (`blocks`:
/// offset and length of each member's block) and reduces them in rank order into `recv`.
pub fn reduce_scatter_linear(b: &mut Builder, send: Buf, recv: Buf, blocks: &[(usize, usize)]) {
    let (rank, size) = (b.rank(), b.size());
    let (_, mine) = blocks[rank as usize];
    let all = b.temp(mine * size as usize);
    let parts: Few<Buf> = (0..size as usize)
        .map(|i| all.part(i * mine, mine))
        .collect();
    let mut xfers = Few::new();
    for r in (0..size).filter(|&r| r != rank) {
        let (o, n) = blocks[r as usize];
        xfers.push(Xfer::Recv {
            from: r,
            buf: parts[r as usize],
        });
        xfers.push(Xfer::Send {
            to: r,
            buf: send.part(o, n),
        });
    }
    let (o, n) = blocks[rank as usize];
    b.post_all(&xfers);
    b.copy(send.part(o, n), parts[rank as usize]);
    b.wait();
    reduce_in_order(b, &parts, recv);
}
