//! Blocking collectives of predefined datatypes through the node's memory, straight from the
//! C arguments ([`mpicd::schedule::NodeCollective`]): no writer, no builder. Each function
//! gives `None` when its call does not qualify (another datatype, a buffer in place where that
//! is not allowed, overlapping buffers, an invalid argument, no agreed area, too large), and
//! the caller then takes the writer's way, which reports what is invalid. Taking this way or
//! not depends only on what every member passes alike (counts, datatypes' sizes, the root),
//! and on the communicator's area, which all members share.
//!
//! # Safety
//! Every function here is `unsafe`: its pointers must be what MPI requires of the call.

use super::combine::reduction;
use crate::abi::*;
use crate::blocks::in_place;
use crate::errors::CResult;
use crate::types;
use mpicd::schedule::select::Collective;
use mpicd::Communicator;
use std::ffi::{c_int, c_void};

/// Bytes of `count` elements of predefined `dtype`, if both are valid.
fn bytes_of(count: i64, dtype: MPI_Datatype) -> Option<usize> {
    let size = types::basic(dtype)?.size;
    usize::try_from(count)
        .ok()?
        .checked_mul(size)
        .filter(|&n| n <= isize::MAX as usize)
}

/// `len` bytes at `p` (not MPI_IN_PLACE, not null unless empty).
///
/// # Safety
/// `p` addresses `len` readable bytes (the caller's promise to MPI).
unsafe fn input<'a>(p: *const c_void, len: usize) -> Option<&'a [u8]> {
    match (len, p.is_null() || in_place(p)) {
        (0, _) => Some(&[]),
        (_, true) => None,
        // SAFETY: the caller's promise.
        _ => Some(unsafe { std::slice::from_raw_parts(p as *const u8, len) }),
    }
}

/// `len` writable bytes at `p`, as [`input`] (no other buffer of the call overlaps them:
/// checked with [`apart`] where two could).
///
/// # Safety
/// As for [`input`], writable, and untouched by anyone else during the call.
unsafe fn output<'a>(p: *mut c_void, len: usize) -> Option<&'a mut [u8]> {
    match (len, p.is_null() || in_place(p)) {
        (0, _) => Some(&mut []),
        (_, true) => None,
        // SAFETY: the caller's promise.
        _ => Some(unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) }),
    }
}

/// True if `a` and `b` share no byte.
fn apart(a: &[u8], b: &[u8]) -> bool {
    let (a, b) = (a.as_ptr_range(), b.as_ptr_range());
    a.end <= b.start || b.end <= a.start
}

fn valid_root(c: &Communicator, root: c_int) -> Option<usize> {
    (0..c.size()).contains(&root).then_some(root as usize)
}

pub(super) fn barrier(c: &Communicator) -> Option<CResult<()>> {
    let op = c.node_collective(Some(Collective::Barrier), 0, 0, None)?;
    Some(op.barrier().map_err(Into::into))
}

pub(super) unsafe fn bcast(
    c: &Communicator,
    buffer: *mut c_void,
    count: i64,
    dtype: MPI_Datatype,
    root: c_int,
) -> Option<CResult<()>> {
    let (len, root) = (bytes_of(count, dtype)?, valid_root(c, root)?);
    // SAFETY: forwarded (read at the root, written elsewhere).
    let buf = unsafe { output(buffer, len) }?;
    let op = c.node_collective(Some(Collective::Bcast), len, len, Some(root))?;
    Some(op.bcast(buf, root).map_err(Into::into))
}

/// Writable result and readable operand (`None`: in place, where `in_place_ok`) of `len`
/// bytes each, if they do not overlap.
///
/// # Safety
/// As for [`input`] and [`output`].
unsafe fn operands<'a>(
    send: *const c_void,
    recv: *mut c_void,
    len: usize,
    in_place_ok: bool,
) -> Option<(Option<&'a [u8]>, &'a mut [u8])> {
    // SAFETY: forwarded.
    let recv = unsafe { output(recv, len) }?;
    let send = match in_place(send) && in_place_ok {
        true => None,
        // SAFETY: forwarded.
        false => Some(unsafe { input(send, len) }?),
    };
    send.is_none_or(|s| apart(s, recv)).then_some((send, recv))
}

pub(super) unsafe fn reduce(
    c: &Communicator,
    send: *const c_void,
    recv: *mut c_void,
    count: i64,
    dtype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
) -> Option<CResult<()>> {
    let (len, root) = (bytes_of(count, dtype)?, valid_root(c, root)?);
    let red = reduction(op, dtype).ok()?;
    let (send, recv) = match c.rank() as usize == root {
        // SAFETY: forwarded; MPI_IN_PLACE at the root: the operand is in the result buffer.
        true => {
            let (send, recv) = unsafe { operands(send, recv, len, true) }?;
            (send, Some(recv))
        }
        // SAFETY: forwarded; the result buffer is significant at the root only.
        false => (Some(unsafe { input(send, len) }?), None),
    };
    let node = c.node_collective(Some(Collective::Reduce), len, 0, Some(root))?;
    Some(node.reduce(&red, send, recv, root).map_err(Into::into))
}

/// Allreduce, Scan (`scan` Some(false)) and Exscan (Some(true)).
pub(super) unsafe fn allreduce(
    c: &Communicator,
    send: *const c_void,
    recv: *mut c_void,
    count: i64,
    dtype: MPI_Datatype,
    op: MPI_Op,
    scan: Option<bool>,
) -> Option<CResult<()>> {
    let len = bytes_of(count, dtype)?;
    let red = reduction(op, dtype).ok()?;
    // SAFETY: forwarded.
    let (send, recv) = unsafe { operands(send, recv, len, true) }?;
    let done = match scan {
        None => c.node_allreduce(&red, send, recv, types::basic(dtype)?.size)?,
        Some(exclusive) => c
            .node_collective(None, len, 0, None)?
            .scan(&red, send, recv, exclusive),
    };
    Some(done.map_err(Into::into))
}

/// Reduce_scatter_block, not in place.
pub(super) unsafe fn reduce_scatter_block(
    c: &Communicator,
    send: *const c_void,
    recv: *mut c_void,
    count: i64,
    dtype: MPI_Datatype,
    op: MPI_Op,
) -> Option<CResult<()>> {
    let len = bytes_of(count, dtype)?;
    let whole = len.checked_mul(c.size() as usize)?;
    let red = reduction(op, dtype).ok()?;
    // SAFETY: forwarded.
    let (send, recv) = unsafe { (input(send, whole)?, output(recv, len)?) };
    if !apart(send, recv) {
        return None;
    }
    let node = c.node_collective(Some(Collective::ReduceScatter), whole, 0, None)?;
    Some(
        node.reduce_scatter_block(&red, send, recv)
            .map_err(Into::into),
    )
}

/// Allgather of equal blocks (`MPI_IN_PLACE`: this member's block is in place already).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn allgather(
    c: &Communicator,
    send: *const c_void,
    scount: i64,
    stype: MPI_Datatype,
    recv: *mut c_void,
    rcount: i64,
    rtype: MPI_Datatype,
) -> Option<CResult<()>> {
    let len = bytes_of(rcount, rtype)?;
    let whole = len.checked_mul(c.size() as usize)?;
    // SAFETY: forwarded.
    let recv = unsafe { output(recv, whole) }?;
    let mine = match in_place(send) {
        true => None,
        false => {
            // SAFETY: forwarded.
            let mine = unsafe { input(send, bytes_of(scount, stype)?) }?;
            if mine.len() != len || !apart(mine, recv) {
                return None;
            }
            Some(mine)
        }
    };
    Some(c.node_allgather(mine, recv)?.map_err(Into::into))
}

/// Gather of equal blocks (`MPI_IN_PLACE` at the root: its block is in place already).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gather(
    c: &Communicator,
    send: *const c_void,
    scount: i64,
    stype: MPI_Datatype,
    recv: *mut c_void,
    rcount: i64,
    rtype: MPI_Datatype,
    root: c_int,
) -> Option<CResult<()>> {
    let root = valid_root(c, root)?;
    let here = c.rank() as usize == root;
    let (mine, all) = match here {
        true => {
            let len = bytes_of(rcount, rtype)?;
            // SAFETY: forwarded; the blocks are significant at the root only.
            let all = unsafe { output(recv, len.checked_mul(c.size() as usize)?) }?;
            let mine = match in_place(send) {
                true => None,
                // SAFETY: forwarded.
                false => Some(unsafe { input(send, bytes_of(scount, stype)?) }?),
            };
            if mine.is_some_and(|m| m.len() != len || !apart(m, all)) {
                return None;
            }
            (mine, Some(all))
        }
        // SAFETY: forwarded.
        false => (
            Some(unsafe { input(send, bytes_of(scount, stype)?) }?),
            None,
        ),
    };
    let len = mine.map_or_else(
        || all.as_ref().map_or(0, |a| a.len() / c.size() as usize),
        <[u8]>::len,
    );
    let node = c.node_collective(Some(Collective::Gather), len, len, Some(root))?;
    Some(node.gather(mine, all, root).map_err(Into::into))
}

/// Scatter of equal blocks (`MPI_IN_PLACE` at the root: its block stays in place).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn scatter(
    c: &Communicator,
    send: *const c_void,
    scount: i64,
    stype: MPI_Datatype,
    recv: *mut c_void,
    rcount: i64,
    rtype: MPI_Datatype,
    root: c_int,
) -> Option<CResult<()>> {
    let root = valid_root(c, root)?;
    let members = c.size() as usize;
    let (all, mine) = match c.rank() as usize == root {
        true => {
            let len = bytes_of(scount, stype)?;
            // SAFETY: forwarded; the blocks are significant at the root only.
            let all = unsafe { input(send, len.checked_mul(members)?) }?;
            let mine = match in_place(recv) {
                true => None,
                // SAFETY: forwarded.
                false => Some(unsafe { output(recv, bytes_of(rcount, rtype)?) }?),
            };
            if mine
                .as_deref()
                .is_some_and(|m| m.len() != len || !apart(m, all))
            {
                return None;
            }
            (Some(all), mine)
        }
        // SAFETY: forwarded.
        false => (
            None,
            Some(unsafe { output(recv, bytes_of(rcount, rtype)?) }?),
        ),
    };
    let len = mine
        .as_deref()
        .map_or_else(|| all.map_or(0, |a| a.len() / members), <[u8]>::len);
    let node = c.node_collective(Some(Collective::Gather), len * members, len, Some(root))?;
    Some(node.scatter(all, mine, root).map_err(Into::into))
}

/// Alltoall of equal blocks, not in place.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn alltoall(
    c: &Communicator,
    send: *const c_void,
    scount: i64,
    stype: MPI_Datatype,
    recv: *mut c_void,
    rcount: i64,
    rtype: MPI_Datatype,
) -> Option<CResult<()>> {
    let len = bytes_of(rcount, rtype)?;
    (bytes_of(scount, stype)? == len).then_some(())?;
    let whole = len.checked_mul(c.size() as usize)?;
    // SAFETY: forwarded.
    let (Some(send), recv) = (unsafe { operands(send, recv, whole, false) })? else {
        return None;
    };
    let node = c.node_collective(Some(Collective::Alltoall), whole, len, None)?;
    Some(node.alltoall(send, recv).map_err(Into::into))
}
