//! The node collectives' entries from a plan builder ([`super::super::collectives`]): each
//! takes the builder's buffers and, if its collective takes the node's path ([`Op::begin`]),
//! does it there with the body of [`bodies`], and says so; else the builder goes its own way.

use super::bodies::{self, Span, Spans};
use super::Op;
use crate::error::{Error, Result};
use crate::reduction::Reduction;
use crate::schedule::select::Collective;
use crate::schedule::{Buf, Builder};

/// The bytes of `buf` (`b` does its steps as they are written and has not failed: a node
/// collective began).
fn span(b: &mut Builder, buf: Buf) -> Span {
    let bytes = b.bytes_now(buf).unwrap_or_default();
    // SAFETY: a builder's memory (the caller's, lent for the collective, or its temporaries)
    // stays valid until the collective ends; the buffers of a collective that it writes
    // share no byte with its others, but for a reduction's operand, read whole first (in
    // place: the result buffer or a part of it).
    unsafe { Span::new(bytes.as_mut_ptr(), bytes.len()) }
}

fn spans(b: &mut Builder, bufs: &[Buf]) -> Spans {
    bufs.iter().map(|&x| span(b, x)).collect()
}

/// Runs `body` as node collective of `puts` bytes per member, in blocks of `block` bytes that
/// only move, with root `root` (if it has one), in `b`; false if it does not take this path.
fn run(
    b: &mut Builder,
    coll: Option<Collective>,
    sizes: (usize, usize),
    root: Option<usize>,
    body: impl FnOnce(&mut Builder, &Op) -> Result<()>,
) -> bool {
    let Some(op) = Op::begin(b, coll, sizes, root) else {
        return false;
    };
    let outcome = op.check().and_then(|()| body(b, &op));
    b.did_without_messages(outcome.err());
    true
}

/// The builder's reduction, lent to `body`.
fn with_reduction(
    b: &mut Builder,
    body: impl FnOnce(&mut Builder, &Reduction) -> Result<()>,
) -> Result<()> {
    // Taken for the collective, not cloned: no count to raise and lower.
    let red = b
        .reduction
        .take()
        .ok_or_else(|| Error::InvalidArgument("a reduction without an op".into()))?;
    let outcome = body(b, &red);
    b.reduction = Some(red);
    outcome
}

pub(in crate::schedule) fn barrier(b: &mut Builder) -> bool {
    run(b, Some(Collective::Barrier), (0, 0), None, |_, op| {
        bodies::barrier(op)
    })
}

pub(in crate::schedule) fn bcast(b: &mut Builder, buf: Buf, root: i32) -> bool {
    let sizes = (buf.len(), buf.len());
    run(
        b,
        Some(Collective::Bcast),
        sizes,
        Some(root as usize),
        |b, op| bodies::bcast(op, span(b, buf), root as usize),
    )
}

/// Reduces every member's `send` into `recv` at `root`
/// (see [`crate::schedule::collectives::reduce`]).
pub(in crate::schedule) fn reduce(
    b: &mut Builder,
    send: Buf,
    recv: Option<Buf>,
    root: i32,
) -> bool {
    let sizes = (send.len(), 0);
    run(
        b,
        Some(Collective::Reduce),
        sizes,
        Some(root as usize),
        |b, op| {
            let acc = recv.filter(|_| op.me() == root as usize);
            with_reduction(b, |b, red| {
                let (send, acc) = (span(b, send), acc.map(|x| span(b, x)));
                bodies::reduce(op, red, send, acc, 0..op.members(), 0)
            })
        },
    )
}

/// Reduces every member's operand (`send`, or `buf` in place) into `buf` on every member.
pub(in crate::schedule) fn allreduce(b: &mut Builder, send: Option<Buf>, buf: Buf) -> bool {
    run(
        b,
        Some(Collective::Allreduce),
        (buf.len(), 0),
        None,
        |b, op| {
            with_reduction(b, |b, red| {
                let (send, buf) = (span(b, send.unwrap_or(buf)), span(b, buf));
                bodies::reduce(op, red, send, Some(buf), 0..op.members(), 0)
            })
        },
    )
}

/// Prefix reduction into `recv` (`exclusive`: of the members before this one; member 0's
/// `recv` is then untouched).
pub(in crate::schedule) fn scan(
    b: &mut Builder,
    send: Option<Buf>,
    recv: Buf,
    exclusive: bool,
) -> bool {
    run(b, Some(Collective::Scan), (recv.len(), 0), None, |b, op| {
        let last = op.me() + usize::from(!exclusive);
        with_reduction(b, |b, red| {
            let (send, recv) = (span(b, send.unwrap_or(recv)), span(b, recv));
            bodies::reduce(op, red, send, Some(recv), 0..last, 0)
        })
    })
}

/// Reduces every member's `send` (blocks at `blocks`' offsets) and leaves this member's block
/// of the result in `recv`.
pub(in crate::schedule) fn reduce_scatter(
    b: &mut Builder,
    send: Buf,
    recv: Buf,
    blocks: &[(usize, usize)],
) -> bool {
    run(
        b,
        Some(Collective::ReduceScatter),
        (send.len(), 0),
        None,
        |b, op| {
            let (at, _) = blocks[op.me()];
            with_reduction(b, |b, red| {
                let (send, recv) = (span(b, send), span(b, recv));
                bodies::reduce(op, red, send, Some(recv), 0..op.members(), at)
            })
        },
    )
}

/// Every member's block into `blocks` (`mine` `None`: already in place), blocks of one size.
pub(in crate::schedule) fn allgather(b: &mut Builder, mine: Option<Buf>, blocks: &[Buf]) -> bool {
    let len = blocks.first().map_or(0, |x| x.len());
    if blocks.iter().any(|x| x.len() != len) {
        return false;
    }
    run(b, Some(Collective::Allgather), (len, len), None, |b, op| {
        let mine = mine.map(|x| span(b, x));
        bodies::allgather(op, mine, &spans(b, blocks))
    })
}

/// `send[j]` to member j, `recv[j]` from member j, every block of one size on every member
/// (`uniform`: the caller knows it).
pub(in crate::schedule) fn alltoall(
    b: &mut Builder,
    send: &[Buf],
    recv: &[Buf],
    uniform: bool,
) -> bool {
    let len = send.first().map_or(0, |x| x.len());
    if !uniform {
        return false;
    }
    let puts = (len * send.len(), len);
    run(b, Some(Collective::Alltoall), puts, None, |b, op| {
        bodies::alltoall(op, &spans(b, send), &spans(b, recv), len)
    })
}

/// Gathers every member's `mine` into `blocks` at `root`, blocks of one size (`uniform`).
pub(in crate::schedule) fn gather(
    b: &mut Builder,
    mine: Buf,
    blocks: Option<&[Buf]>,
    root: i32,
    uniform: bool,
) -> bool {
    let len = mine.len();
    if !uniform {
        return false;
    }
    run(
        b,
        Some(Collective::Gather),
        (len, len),
        Some(root as usize),
        |b, op| {
            let blocks = blocks.map(|x| spans(b, x));
            bodies::gather(op, span(b, mine), blocks.as_deref(), root as usize)
        },
    )
}

/// Scatters `blocks` from `root` into every member's `mine`, blocks of one size (`uniform`).
pub(in crate::schedule) fn scatter(
    b: &mut Builder,
    blocks: Option<&[Buf]>,
    mine: Buf,
    root: i32,
    uniform: bool,
) -> bool {
    let len = mine.len();
    if !uniform {
        return false;
    }
    let whole = len * b.size() as usize;
    let sizes = (whole, len);
    run(
        b,
        Some(Collective::Gather),
        sizes,
        Some(root as usize),
        |b, op| {
            let blocks = blocks.map(|x| spans(b, x));
            bodies::scatter(op, blocks.as_deref(), span(b, mine), root as usize)
        },
    )
}
