//! The node collectives themselves, as steps of one [`Op`] over [`Span`]s: the memory a
//! collective reads and writes, whether a builder's buffers ([`super`]'s entries from a plan
//! builder) or the caller's slices ([`super::NodeCollective`]). Each returns the collective's
//! outcome on this member.

use super::{cma, lend, mismatch, Op};
use crate::error::Result;
use crate::reduction::Reduction;
use smallvec::SmallVec;
use std::ops::Range;

/// The spans of a collective's blocks, one per member (inline for up to 8).
pub(super) type Spans = SmallVec<[Span; 8]>;

/// Bytes a node collective reads or writes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    p: *mut u8,
    len: usize,
}

impl Span {
    /// The `len` bytes at `p`.
    ///
    /// # Safety
    /// They stay valid until the collective returns, and nobody else touches them meanwhile.
    /// A span the collective writes shares no byte with any other span of it, but for a
    /// reduction's operand, which [`reduce`] reads whole before it writes (in place: the
    /// result span itself, or one that contains it).
    pub(super) unsafe fn new(p: *mut u8, len: usize) -> Span {
        Span { p, len }
    }

    pub(super) fn len(self) -> usize {
        self.len
    }

    /// Its first `n` bytes (all, if it is shorter).
    fn head(self, n: usize) -> Span {
        Span {
            p: self.p,
            len: n.min(self.len),
        }
    }

    /// Where it starts, for another process to copy to or from ([`cma`]).
    fn addr(self) -> u64 {
        self.p as u64
    }

    /// The bytes, to read (no write of the span happens while they are borrowed: the steps
    /// below read a span and write one in turn, never at once).
    fn read<'a>(self) -> &'a [u8] {
        match self.len {
            0 => &[],
            // SAFETY: valid and untouched by others (the promise of `new`).
            _ => unsafe { std::slice::from_raw_parts(self.p, self.len) },
        }
    }

    /// The bytes, to write (see [`Span::read`]).
    fn write<'a>(self) -> &'a mut [u8] {
        match self.len {
            0 => &mut [],
            // SAFETY: valid, and written by this collective alone (the promise of `new`).
            _ => unsafe { std::slice::from_raw_parts_mut(self.p, self.len) },
        }
    }

    /// Copies this span into `to`, unless they are the same bytes.
    fn copy_to(self, to: Span) -> Result<()> {
        if self.len != to.len {
            return Err(mismatch(self.len, to.len));
        }
        if self != to {
            to.write().copy_from_slice(self.read());
        }
        Ok(())
    }
}

pub(super) fn barrier(op: &Op) -> Result<()> {
    op.wait_all_arrived()
}

pub(super) fn bcast(op: &Op, buf: Span, root: usize) -> Result<()> {
    if op.single_copy() {
        return bcast_single_copy(op, buf, root);
    }
    if op.me() == root {
        op.gate()?;
        return op.put_all(buf.read());
    }
    read_area(op, root, buf)
}

/// Puts this member's operand `send`, publishes it, and leaves the reduction of members
/// `from` (each operand from `at`, as long as `acc`) in `acc`, which may be `send` itself.
pub(super) fn reduce(
    op: &Op,
    red: &Reduction,
    send: Span,
    acc: Option<Span>,
    from: Range<usize>,
    at: usize,
) -> Result<()> {
    op.gate()?;
    op.put_all(send.read())?;
    match acc {
        Some(acc) if !from.is_empty() => op.fold(red, acc.write(), from, at, send.len()),
        _ => Ok(()),
    }
}

/// Every member's block into `blocks` (`mine` `None`: already in place), blocks of one size.
pub(super) fn allgather(op: &Op, mine: Option<Span>, blocks: &[Span]) -> Result<()> {
    let me = op.me();
    let len = blocks[me].len();
    let own = mine.unwrap_or(blocks[me]);
    op.gate()?;
    if own.len() != len {
        op.publish(0);
        if op.single_copy() {
            op.done_reading(false);
        }
        return Err(mismatch(own.len(), len));
    }
    if op.single_copy() {
        return allgather_single_copy(op, own, blocks);
    }
    op.put_all(own.read())?;
    own.copy_to(blocks[me])?;
    op.each_published(me, |j| read_area(op, j, blocks[j]))
}

/// `send[j]` to member j, `recv[j]` from member j, every block `len` bytes on every member.
pub(super) fn alltoall(op: &Op, send: &[Span], recv: &[Span], len: usize) -> Result<()> {
    if op.single_copy() {
        return alltoall_single_copy(op, send, recv, len);
    }
    let me = op.me();
    let whole = len * send.len();
    op.gate()?;
    // Block j at j * len of this member's slot, but its own, which goes straight across.
    let put = send
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != me)
        .try_for_each(|(j, x)| op.put(j * len, x.read()));
    // Published even if it did not fit: the readers then fail on the size.
    op.publish(if put.is_ok() { whole } else { 0 });
    put?;
    if let Some(x) = recv.iter().find(|x| x.len() != len) {
        return Err(mismatch(x.len(), len));
    }
    send[me].copy_to(recv[me])?;
    op.each_published(me, |j| {
        op.wait(j, whole)?;
        recv[j].write().copy_from_slice(op.get(j, me * len, len));
        Ok(())
    })
}

/// Every member's `mine` into `blocks` at `root` (`None` elsewhere), blocks of one size.
pub(super) fn gather(op: &Op, mine: Span, blocks: Option<&[Span]>, root: usize) -> Result<()> {
    if op.single_copy() {
        return gather_single_copy(op, mine, blocks, root);
    }
    let len = mine.len();
    let Some(blocks) = blocks.filter(|_| op.me() == root) else {
        op.gate()?;
        return op.put_all(mine.read());
    };
    if blocks.iter().any(|x| x.len() != len) {
        return Err(mismatch(len, blocks[0].len()));
    }
    mine.copy_to(blocks[op.me()])?;
    op.each_published(root, |j| read_area(op, j, blocks[j]))
}

/// The root's `blocks` (`None` elsewhere) into every member's `mine`, blocks of one size.
pub(super) fn scatter(op: &Op, blocks: Option<&[Span]>, mine: Span, root: usize) -> Result<()> {
    if op.single_copy() {
        return scatter_single_copy(op, blocks, mine, root);
    }
    let len = mine.len();
    let whole = len * op.members();
    let Some(blocks) = blocks.filter(|_| op.me() == root) else {
        op.wait(root, whole)?;
        mine.write()
            .copy_from_slice(op.get(root, op.me() * len, len));
        return Ok(());
    };
    op.gate()?;
    if blocks.iter().any(|x| x.len() != len) {
        // The receivers fail on the size; so does the root.
        op.publish(0);
        return Err(mismatch(blocks[0].len(), len));
    }
    // Every block at its place in the root's slot but the root's own, which goes straight
    // across.
    for (j, &block) in blocks.iter().enumerate().filter(|&(j, _)| j != root) {
        op.put(j * len, block.read())?;
    }
    op.publish(whole);
    blocks[root].copy_to(mine)
}

/// A broadcast whose readers copy the root's buffer straight from its memory (one copy, no
/// message): the root lends it and returns once every reader is done with it.
fn bcast_single_copy(op: &Op, buf: Span, root: usize) -> Result<()> {
    let len = buf.len();
    let helps = op.root_helps(len);
    if op.me() == root {
        op.gate()?;
        let share = if helps { op.root_share(len) } else { 0 };
        op.lend_noting([buf.addr(), share as u64], len)?;
        // Every reader's last `share` bytes, from the readers that lent their buffers first.
        let tail = (buf.read()[len - share..].as_ptr(), share);
        let wrote = match share {
            0 => Ok(()),
            _ => op.each_published(root, |j| {
                let (pid, into) = op.lent(j, 0, len)?;
                cma::write(pid, &[tail], &[(into + (len - share) as u64, share)])
            }),
        };
        // The root's done word says that its share is written (or could not be).
        op.done_reading(wrote.is_ok());
        op.nap_while_read(len);
        return wrote.and(op.wait_returned());
    }
    if helps {
        op.gate()?;
        op.lend_noting([buf.addr()], len)?;
    }
    let read = op.lent(root, 0, len).and_then(|(pid, from)| {
        let share = op.note_word(root, 2) as usize;
        if share > len {
            return Err(mismatch(share, len));
        }
        cma::read(pid, from, buf.head(len - share).write()).map(|()| share)
    });
    op.done_reading(read.is_ok());
    match read? {
        0 => Ok(()),
        _ => op.wait_returned_by(std::iter::once(root)),
    }
}

/// Waits for member `j`'s data and copies it, as long as `into`, into `into`.
fn read_area(op: &Op, j: usize, into: Span) -> Result<()> {
    op.wait(j, into.len())?;
    into.write().copy_from_slice(op.get(j, 0, into.len()));
    Ok(())
}

/// Reads block `k` of every other member (but `skip`) into `into[j]`, in place, those that
/// have lent theirs first ([`Op::each_published`]).
fn read_each(op: &Op, into: &[Span], skip: usize, k: usize) -> Result<()> {
    op.each_published(skip, |j| op.read_lent(j, k, into[j].write()))
}

/// An allgather where every member lends its block (`own`, this member's already checked
/// to be as long as the others') and copies the others' straight from their memory.
fn allgather_single_copy(op: &Op, own: Span, blocks: &[Span]) -> Result<()> {
    let me = op.me();
    let read = op
        .lend(std::iter::once(own.read().as_ptr()), own.len())
        .and_then(|()| read_each(op, blocks, me, 0));
    // While the others may still read it: in place, `own` is `blocks[me]` and nothing moves.
    let copied = read.and_then(|()| own.copy_to(blocks[me]));
    op.done_reading(copied.is_ok());
    copied.and(op.wait_returned())
}

/// An all-to-all where every member lends its blocks for the others (`send`) and copies its
/// block of each straight from the others' memory.
fn alltoall_single_copy(op: &Op, send: &[Span], recv: &[Span], len: usize) -> Result<()> {
    let me = op.me();
    op.gate()?;
    // A block of the wrong size: lent as 0 bytes, on which the readers fail too.
    let wrong = send.iter().chain(recv).find(|x| x.len() != len);
    let lent = op.lend(
        send.iter().map(|x| x.read().as_ptr()),
        if wrong.is_none() { len } else { 0 },
    );
    // This member's own block first, while the others lend theirs.
    let copied = lent.and_then(|()| match wrong {
        Some(x) => Err(mismatch(x.len(), len)),
        None => send[me]
            .copy_to(recv[me])
            .and_then(|()| read_each(op, recv, me, me)),
    });
    op.done_reading(copied.is_ok());
    copied.and(op.wait_returned())
}

/// A gather where every member lends its block and the root copies each straight from its
/// owner's memory.
///
/// Where the root may be written to ([`lend::may_be_written`]), it lends its blocks instead
/// and every giver writes its own into the root's memory, all at once, while the root copies
/// its own: the root says which in its note.
fn gather_single_copy(op: &Op, mine: Span, blocks: Option<&[Span]>, root: usize) -> Result<()> {
    let len = mine.len();
    let Some(blocks) = blocks.filter(|_| op.me() == root) else {
        let (pid, into) = match op.lent(root, op.me(), len) {
            Ok(lent) => lent,
            Err(e) => {
                // The root's blocks are not as long as this member's (or the root failed): the
                // root fails too, whichever way it takes (this member writes nothing, and lends
                // a block of no bytes).
                op.done_reading(false);
                let _ = op.gate().and_then(|()| op.lend(std::iter::empty(), 0));
                return Err(e);
            }
        };
        if op.note_word(root, 1 + op.members()) == PUSH {
            let wrote = cma::write(pid, &[(mine.read().as_ptr(), len)], &[(into, len)]);
            op.done_reading(wrote.is_ok());
            return wrote;
        }
        op.gate()?;
        op.lend(std::iter::once(mine.read().as_ptr()), len)?;
        return op.wait_returned_by(std::iter::once(root));
    };
    op.gate()?;
    let push = lend::may_be_written();
    let wrong = blocks.iter().find(|x| x.len() != len);
    // The root's blocks, and whether the givers write them; a block of the wrong size: lent as
    // 0 bytes, on which the givers fail.
    let note = blocks
        .iter()
        .map(|x| x.addr())
        .chain([if push { PUSH } else { 0 }]);
    op.lend_noting(note, if wrong.is_none() { len } else { 0 })?;
    if let Some(x) = wrong {
        op.done_reading(false);
        return Err(mismatch(len, x.len()));
    }
    if push {
        let copied = mine.copy_to(blocks[root]);
        return copied.and(op.wait_returned());
    }
    let read = read_each(op, blocks, root, 0);
    op.done_reading(read.is_ok());
    read.and_then(|()| mine.copy_to(blocks[root]))
}

/// The last word of a gather's root's note where its givers write their blocks.
const PUSH: u64 = 1;

/// A scatter where the root lends its blocks and every member copies its own straight from
/// the root's memory.
fn scatter_single_copy(op: &Op, blocks: Option<&[Span]>, mine: Span, root: usize) -> Result<()> {
    let len = mine.len();
    let Some(blocks) = blocks.filter(|_| op.me() == root) else {
        let read = op.read_lent(root, op.me(), mine.write());
        op.done_reading(read.is_ok());
        return read;
    };
    op.gate()?;
    let wrong = blocks.iter().find(|x| x.len() != len);
    // A block of the wrong size: lent as 0 bytes, on which the readers fail.
    op.lend(
        blocks.iter().map(|x| x.read().as_ptr()),
        if wrong.is_none() { len } else { 0 },
    )?;
    // The root's own block while the others read theirs.
    let copied = match wrong {
        Some(x) => Err(mismatch(x.len(), len)),
        None => blocks[root].copy_to(mine),
    };
    copied.and(op.wait_returned())
}
