//! The plans of the collectives, several algorithms each, written for one member by a
//! [`Builder`]. Every function takes the communicator's members in rank order; a tree rooted at
//! `root` numbers members relative to it (`vr`, "virtual rank"). Block buffers are given per
//! member; a block may be empty. Which algorithm runs is [`super::select`]'s choice.

use super::{Buf, Builder, Xfer};
use smallvec::SmallVec;

/// Communicator rank of virtual rank `vr` in a tree rooted at `root`.
fn absolute(vr: i32, root: i32, size: i32) -> i32 {
    (vr + root) % size
}

/// How many members the subtree of `vr` holds in a binomial tree of `size` (itself included).
fn subtree(vr: i32, size: i32) -> i32 {
    if vr == 0 {
        size
    } else {
        (vr & -vr).min(size - vr)
    }
}

/// Byte ranges of `parts` nearly equal parts of `len` bytes, split at multiples of `unit`.
pub(crate) fn split(len: usize, unit: usize, parts: usize) -> Vec<(usize, usize)> {
    let unit = unit.max(1);
    let units = len / unit;
    let (each, extra) = (units / parts, units % parts);
    let mut offset = 0;
    (0..parts)
        .map(|i| {
            let n = (each + usize::from(i < extra)) * unit;
            let n = if i == parts - 1 { len - offset } else { n };
            let range = (offset, n);
            offset += n;
            range
        })
        .collect()
}

/// Dissemination barrier: in round k, signal rank + 2^k and hear from rank - 2^k.
pub fn barrier(b: &mut Builder) {
    let (rank, size) = (b.rank(), b.size());
    let token = b.temp(0);
    let mut distance = 1;
    while distance < size {
        let (to, from) = ((rank + distance) % size, (rank - distance).rem_euclid(size));
        b.sendrecv(token, to, token, from);
        distance *= 2;
    }
}

/// Binomial-tree broadcast of `buf` from `root` (⌈log2 p⌉ rounds).
pub fn bcast_binomial(b: &mut Builder, buf: Buf, root: i32) {
    let (rank, size) = (b.rank(), b.size());
    let vr = (rank - root).rem_euclid(size);
    let mut mask = 1;
    while mask < size {
        if vr & mask != 0 {
            b.recv(absolute(vr - mask, root, size), buf);
            break;
        }
        mask <<= 1;
    }
    let mut sends = Vec::new();
    mask >>= 1;
    while mask > 0 {
        if vr + mask < size {
            let to = absolute(vr + mask, root, size);
            sends.push(Xfer::Send { to, buf });
        }
        mask >>= 1;
    }
    b.exchange(sends);
}

/// Broadcast straight from the root: it sends every member the buffer at once (one hop for
/// every member: short buffers, few members).
pub fn bcast_linear(b: &mut Builder, buf: Buf, root: i32) {
    let (rank, size) = (b.rank(), b.size());
    if rank != root {
        b.recv(root, buf);
        return;
    }
    let sends: SmallVec<[Xfer; 8]> = (0..size)
        .filter(|&r| r != root)
        .map(|to| Xfer::Send { to, buf })
        .collect();
    b.exchange_all(&sends);
}

/// Broadcast of a long `buf`: a binomial scatter of p pieces, then a ring allgather of them
/// (each member sends about 2 len bytes however many members there are).
pub fn bcast_scatter_allgather(b: &mut Builder, buf: Buf, root: i32) {
    let (rank, size) = (b.rank(), b.size());
    let vr = (rank - root).rem_euclid(size);
    let pieces: Vec<Buf> = split(buf.len(), 1, size as usize)
        .into_iter()
        .map(|(o, n)| buf.part(o, n))
        .collect();
    // The pieces of virtual ranks first..last, as one buffer.
    let span = |first: i32, last: i32| {
        let (start, end) = (pieces[first as usize], pieces[last as usize - 1]);
        buf.part(
            start.offset - buf.offset,
            end.offset + end.len - start.offset,
        )
    };
    let mine = subtree(vr, size);
    if vr != 0 {
        let parent = absolute(vr - (vr & -vr), root, size);
        b.recv(parent, span(vr, vr + mine));
    }
    let mut sends = Vec::new();
    let mut mask = 1;
    while mask < mine {
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if vr + mask < size && mask < mine {
            let last = (vr + 2 * mask).min(size).min(vr + mine);
            let to = absolute(vr + mask, root, size);
            sends.push(Xfer::Send {
                to,
                buf: span(vr + mask, last),
            });
        }
        mask >>= 1;
    }
    b.exchange(sends);
    let (next, prev) = (
        absolute((vr + 1) % size, root, size),
        absolute((vr - 1).rem_euclid(size), root, size),
    );
    for k in 0..size - 1 {
        let out = pieces[(vr - k).rem_euclid(size) as usize];
        let into = pieces[(vr - k - 1).rem_euclid(size) as usize];
        b.sendrecv(out, next, into, prev);
    }
}

/// Binomial-tree reduction of every member's `send` into `recv` at `root`. A non-commutative
/// op reduces on a tree rooted at 0, whose partial results cover ranges of ranks in order,
/// and the result goes on to `root`.
pub fn reduce_binomial(b: &mut Builder, send: Buf, recv: Option<Buf>, root: i32) {
    let (rank, size) = (b.rank(), b.size());
    let ordered = b.reduction().map(|r| r.order) == Some(crate::reduction::Order::Ranks);
    let tree_root = if ordered { 0 } else { root };
    let vr = (rank - tree_root).rem_euclid(size);
    // A member that receives nothing (a leaf: odd, or the last) sends its operand as it is,
    // without a temporary (2 ranks, 1 MiB: the copy and two zeroed temporaries were most of
    // the leaf's time, which the root waited for).
    let gets = vr & 1 == 0 && vr + 1 < size;
    let acc = match recv {
        Some(recv) if rank == tree_root => recv,
        _ if !gets => send,
        _ => b.temp(send.len()),
    };
    // A commutative op lets the first partial result arrive in `acc` itself, the own operand
    // combined into it after (one pass over the buffer fewer: 2 ranks, 1 MiB, 124 -> 100 us).
    let mut first = !ordered && acc != send;
    if acc != send && !first {
        b.copy(send, acc);
    }
    let mut inc = None;
    let mut mask = 1;
    while mask < size {
        if vr & mask != 0 {
            b.send(absolute(vr - mask, tree_root, size), acc);
            break;
        }
        if vr + mask < size {
            let from = absolute(vr + mask, tree_root, size);
            if first {
                b.recv(from, acc);
                b.merge(acc, send, false);
                first = false;
            } else {
                let into = match inc {
                    Some(into) => into,
                    None => *inc.insert(b.temp(send.len())),
                };
                b.recv(from, into);
                b.merge(acc, into, false);
            }
        }
        mask <<= 1;
    }
    if first {
        // A lone member: nothing arrived.
        b.copy(send, acc);
    }
    if tree_root != root {
        if rank == tree_root {
            b.send(root, acc);
        } else if let (Some(recv), true) = (recv, rank == root) {
            b.recv(tree_root, recv);
        }
    }
}

/// Recursive-doubling allreduce of `buf` in place (⌈log2 p⌉ exchanges of the whole buffer;
/// with p not a power of two, the first 2(p - 2^k) members pair up first). Partial results
/// from lower ranks go first, so a non-commutative op reduces in rank order.
pub fn allreduce_recursive_doubling(b: &mut Builder, buf: Buf) {
    let rank = b.rank();
    let inc = b.temp(buf.len());
    let fold = Fold::of(b.size());
    if let Some(newrank) = fold.fold_in(b, buf, inc) {
        let mut mask = 1;
        while mask < fold.pof2 {
            let peer = fold.real(newrank ^ mask);
            b.sendrecv(buf, peer, inc, peer);
            b.merge(buf, inc, peer < rank);
            mask <<= 1;
        }
    }
    fold.fold_out(b, buf);
}

/// The largest power of two p' <= p members, and how the first 2(p - p') of them pair up so
/// that p' take part: the even member of each leading pair hands its operand to the odd one
/// ([`Fold::fold_in`]) and gets the result back at the end ([`Fold::fold_out`]).
struct Fold {
    pof2: i32,
    rem: i32,
}

impl Fold {
    fn of(size: i32) -> Fold {
        let mut pof2 = 1;
        while pof2 * 2 <= size {
            pof2 *= 2;
        }
        Fold {
            pof2,
            rem: size - pof2,
        }
    }

    /// Folds the leading pairs' operands into `buf` (the even member's first, so a
    /// non-commutative op keeps rank order); this member's rank among the p' that take part,
    /// `None` for one that handed its operand over.
    fn fold_in(&self, b: &mut Builder, buf: Buf, inc: Buf) -> Option<i32> {
        let rank = b.rank();
        if rank >= 2 * self.rem {
            return Some(rank - self.rem);
        }
        if rank % 2 == 0 {
            b.send(rank + 1, buf);
            return None;
        }
        b.recv(rank - 1, inc);
        b.merge(buf, inc, true);
        Some(rank / 2)
    }

    /// The member that takes part as the `n`-th.
    fn real(&self, n: i32) -> i32 {
        if n < self.rem {
            n * 2 + 1
        } else {
            n + self.rem
        }
    }

    /// Hands the result back to the members that handed their operand over.
    fn fold_out(&self, b: &mut Builder, buf: Buf) {
        let rank = b.rank();
        if rank < 2 * self.rem {
            if rank % 2 == 1 {
                b.send(rank - 1, buf);
            } else {
                b.recv(rank + 1, buf);
            }
        }
    }
}

/// Ring reduce-scatter of `acc` in place (commutative ops only): `acc`'s blocks travel round
/// the ring, each member adding its operand, p - 1 steps; afterwards member r's block r of
/// `acc` holds the reduction of everyone's block r.
pub fn reduce_scatter_ring(b: &mut Builder, acc: Buf, blocks: &[(usize, usize)]) {
    let (rank, size) = (b.rank(), b.size());
    let block = |i: i32| {
        let (o, n) = blocks[i.rem_euclid(size) as usize];
        acc.part(o, n)
    };
    let largest = blocks.iter().map(|&(_, n)| n).max().unwrap_or(0);
    let inc = b.temp(largest);
    let (next, prev) = ((rank + 1) % size, (rank - 1).rem_euclid(size));
    for k in 0..size - 1 {
        let into = block(rank - k - 2);
        let inc = inc.part(0, into.len());
        b.sendrecv(block(rank - k - 1), next, inc, prev);
        b.combine(into, inc);
    }
}

/// Ring allreduce of `buf` in place (commutative ops only): a ring reduce-scatter of p
/// blocks, then a ring allgather of them; each member sends about 2 len bytes.
pub fn allreduce_ring(b: &mut Builder, buf: Buf) {
    let size = b.size() as usize;
    let unit = b.reduction().map_or(1, |r| r.unit);
    let blocks = split(buf.len(), unit, size);
    reduce_scatter_ring(b, buf, &blocks);
    let parts: Vec<Buf> = blocks.iter().map(|&(o, n)| buf.part(o, n)).collect();
    allgather_ring(b, &parts, None);
}

/// Rabenseifner's allreduce of `buf` in place (commutative ops only): a reduce-scatter by
/// recursive halving, then an allgather by recursive doubling, over the largest power of two
/// p' <= p members: 2 log2 p' steps (against the ring's 2(p - 1)) moving about 2 len bytes.
/// With p not a power of two, the first 2(p - p') members pair up first, as in
/// [`allreduce_recursive_doubling`].
pub fn allreduce_rabenseifner(b: &mut Builder, buf: Buf) {
    let inc = b.temp(buf.len());
    let fold = Fold::of(b.size());
    let pof2 = fold.pof2;
    if let Some(me) = fold.fold_in(b, buf, inc) {
        let unit = b.reduction().map_or(1, |r| r.unit);
        let blocks = split(buf.len(), unit, pof2 as usize);
        // The bytes of blocks lo..hi.
        let window = |lo: i32, hi: i32| {
            let start = blocks[lo as usize].0;
            let (o, n) = blocks[hi as usize - 1];
            buf.part(start, o + n - start)
        };
        // Halving: each step keeps half the window, the partner the other half, and each adds
        // the other's operand to the half it keeps; the window ends as block `me`.
        let (mut lo, mut hi) = (0, pof2);
        let mut d = pof2 / 2;
        while d >= 1 {
            let peer = fold.real(me ^ d);
            let mid = lo + (hi - lo) / 2;
            let (keep, give) = match me & d {
                0 => ((lo, mid), (mid, hi)),
                _ => ((mid, hi), (lo, mid)),
            };
            let keep_buf = window(keep.0, keep.1);
            let into = inc.part(0, keep_buf.len());
            b.sendrecv(window(give.0, give.1), peer, into, peer);
            b.combine(keep_buf, into);
            (lo, hi) = keep;
            d /= 2;
        }
        // Doubling: partners swap their reduced windows, which sit side by side.
        let mut d = 1;
        while d < pof2 {
            let peer = fold.real(me ^ d);
            let theirs = match me & d {
                0 => (hi, hi + d),
                _ => (lo - d, lo),
            };
            b.sendrecv(window(lo, hi), peer, window(theirs.0, theirs.1), peer);
            (lo, hi) = (lo.min(theirs.0), hi.max(theirs.1));
            d *= 2;
        }
    }
    fold.fold_out(b, buf);
}

/// Ring allgather: p - 1 steps each pass one block on to the next member. Member r's block is
/// `mine`, copied into `blocks[r]` while the first step travels, or (`None`) already there.
pub fn allgather_ring(b: &mut Builder, blocks: &[Buf], mine: Option<Buf>) {
    let (rank, size) = (b.rank(), b.size());
    let (next, prev) = ((rank + 1) % size, (rank - 1).rem_euclid(size));
    let own = blocks[rank as usize];
    for k in 0..size - 1 {
        let out = match (k, mine) {
            (0, Some(mine)) => mine,
            _ => blocks[(rank - k).rem_euclid(size) as usize],
        };
        let into = blocks[(rank - k - 1).rem_euclid(size) as usize];
        let xfers = vec![
            Xfer::Recv {
                from: prev,
                buf: into,
            },
            Xfer::Send { to: next, buf: out },
        ];
        if k == 0 && mine.is_some() {
            b.post(xfers);
            b.copy(out, own);
        } else {
            b.exchange(xfers);
        }
    }
    if let (1, Some(mine)) = (size, mine) {
        b.copy(mine, own);
    }
}

/// Allgather in one round: every member sends its block to every other and receives theirs
/// (for short blocks: one latency). The block is `mine`, copied into `blocks[rank]` while the
/// messages travel, or (`None`) already there.
pub fn allgather_linear(b: &mut Builder, blocks: &[Buf], mine: Option<Buf>) {
    let (rank, size) = (b.rank(), b.size());
    let own = mine.unwrap_or(blocks[rank as usize]);
    let mut xfers: SmallVec<[Xfer; 8]> = SmallVec::new();
    for k in 1..size {
        let from = (rank - k).rem_euclid(size);
        xfers.push(Xfer::Recv {
            from,
            buf: blocks[from as usize],
        });
    }
    for k in 1..size {
        xfers.push(Xfer::Send {
            to: (rank + k) % size,
            buf: own,
        });
    }
    b.post_all(&xfers);
    b.copy(own, blocks[rank as usize]);
}

/// Gather straight to the root: every member sends its block; the root receives them all at
/// once into `blocks` (any sizes, as gatherv).
pub fn gather_linear(b: &mut Builder, mine: Buf, blocks: Option<&[Buf]>, root: i32) {
    let (rank, size) = (b.rank(), b.size());
    match blocks {
        Some(blocks) if rank == root => {
            let xfers = (0..size)
                .filter(|&r| r != rank)
                .map(|r| Xfer::Recv {
                    from: r,
                    buf: blocks[r as usize],
                })
                .collect();
            b.post(xfers);
            b.copy(mine, blocks[rank as usize]);
        }
        _ => b.send(root, mine),
    }
}

/// Binomial-tree gather of equal blocks of `len` bytes: each member collects its subtree's
/// blocks in a temporary, in virtual rank order, and passes them up at once.
pub fn gather_binomial(b: &mut Builder, mine: Buf, blocks: Option<&[Buf]>, root: i32) {
    let (rank, size) = (b.rank(), b.size());
    let n = mine.len();
    let vr = (rank - root).rem_euclid(size);
    let span = subtree(vr, size);
    let collected = b.temp(span as usize * n);
    b.copy(mine, collected.part(0, n));
    let mut recvs = Vec::new();
    let mut mask = 1;
    while mask < span {
        if vr + mask < size {
            let count = mask.min(size - vr - mask) as usize;
            recvs.push(Xfer::Recv {
                from: absolute(vr + mask, root, size),
                buf: collected.part(mask as usize * n, count * n),
            });
        }
        mask <<= 1;
    }
    b.exchange(recvs);
    if vr != 0 {
        b.send(absolute(vr - (vr & -vr), root, size), collected);
    } else if let Some(blocks) = blocks {
        for i in 0..size {
            let to = blocks[absolute(i, root, size) as usize];
            b.copy(collected.part(i as usize * n, n), to);
        }
    }
}

/// Scatter straight from the root: it sends every member its block at once (any sizes, as
/// scatterv).
pub fn scatter_linear(b: &mut Builder, blocks: Option<&[Buf]>, mine: Buf, root: i32) {
    let (rank, size) = (b.rank(), b.size());
    match blocks {
        Some(blocks) if rank == root => {
            let xfers = (0..size)
                .filter(|&r| r != rank)
                .map(|r| Xfer::Send {
                    to: r,
                    buf: blocks[r as usize],
                })
                .collect();
            b.post(xfers);
            b.copy(blocks[rank as usize], mine);
        }
        _ => b.recv(root, mine),
    }
}

/// Binomial-tree scatter of equal blocks of `len` bytes: each member receives its subtree's
/// blocks at once and passes on its children's.
pub fn scatter_binomial(b: &mut Builder, blocks: Option<&[Buf]>, mine: Buf, root: i32) {
    let (rank, size) = (b.rank(), b.size());
    let n = mine.len();
    let vr = (rank - root).rem_euclid(size);
    let span = subtree(vr, size);
    let held = b.temp(span as usize * n);
    if vr == 0 {
        if let Some(blocks) = blocks {
            for i in 0..size {
                let from = blocks[absolute(i, root, size) as usize];
                b.copy(from, held.part(i as usize * n, n));
            }
        }
    } else {
        b.recv(absolute(vr - (vr & -vr), root, size), held);
    }
    let mut sends = Vec::new();
    let mut mask = 1;
    while mask < span {
        if vr + mask < size {
            let count = mask.min(size - vr - mask) as usize;
            sends.push(Xfer::Send {
                to: absolute(vr + mask, root, size),
                buf: held.part(mask as usize * n, count * n),
            });
        }
        mask <<= 1;
    }
    b.exchange(sends);
    b.copy(held.part(0, n), mine);
}

/// All-to-all in one round: every message started at once (short blocks, few members).
pub fn alltoall_linear(b: &mut Builder, send: &[Buf], recv: &[Buf]) {
    let (rank, size) = (b.rank(), b.size());
    let mut xfers: SmallVec<[Xfer; 8]> = SmallVec::new();
    for k in 1..size {
        let from = (rank - k).rem_euclid(size);
        xfers.push(Xfer::Recv {
            from,
            buf: recv[from as usize],
        });
    }
    for k in 1..size {
        let to = (rank + k) % size;
        xfers.push(Xfer::Send {
            to,
            buf: send[to as usize],
        });
    }
    // The own block is copied while the messages travel.
    b.post_all(&xfers);
    b.copy(send[rank as usize], recv[rank as usize]);
}

/// Pairwise all-to-all: p - 1 rounds, in round k sending to rank + k and receiving from
/// rank - k.
pub fn alltoall_pairwise(b: &mut Builder, send: &[Buf], recv: &[Buf]) {
    let (rank, size) = (b.rank(), b.size());
    for k in 1..size {
        let (to, from) = ((rank + k) % size, (rank - k).rem_euclid(size));
        let xfers = vec![
            Xfer::Recv {
                from,
                buf: recv[from as usize],
            },
            Xfer::Send {
                to,
                buf: send[to as usize],
            },
        ];
        if k == 1 {
            // The own block is copied while the first round travels.
            b.post(xfers);
            b.copy(send[rank as usize], recv[rank as usize]);
        } else {
            b.exchange(xfers);
        }
    }
    if size == 1 {
        b.copy(send[0], recv[0]);
    }
}
