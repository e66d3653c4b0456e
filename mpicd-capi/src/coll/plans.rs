//! The plan of each collective from its C arguments, shared by the blocking, non-blocking and
//! persistent forms (and their `_c` variants): arguments checked, MPI_IN_PLACE resolved, each
//! buffer named in the plan ([`Writer`]), then the core writes the algorithm
//! ([`mpicd::schedule::collectives`]).

pub(super) use super::combine::reduction;
use super::objects;
use super::writer::{Arg, Each, Flow, Layout, Writer};
use super::Written;
use crate::abi::*;
use crate::blocks::{in_place, Elem};
use crate::errors::{fail, CResult};
use mpicd::schedule::{collectives as coll, Buf};
use mpicd::Communicator;
use std::ffi::{c_int, c_void};

fn check_root(c: &Communicator, root: c_int) -> CResult<()> {
    if (0..c.size()).contains(&root) {
        Ok(())
    } else {
        Err(fail(
            MPI_ERR_ROOT,
            format!("invalid root {root} (size {})", c.size()),
        ))
    }
}

pub(crate) fn barrier(c: &Communicator, now: bool) -> CResult<Written> {
    if c.is_inter() {
        return super::inter::barrier(c).map(Written::Plan);
    }
    let mut w = Writer::new_for(c, now);
    coll::barrier(&mut w.b);
    w.written()
}

/// # Safety
/// Buffers as MPI requires of every collective below.
pub(crate) unsafe fn bcast(c: &Communicator, a: Arg, root: c_int, now: bool) -> CResult<Written> {
    if c.is_inter() {
        // SAFETY: forwarded.
        return unsafe { super::inter::bcast(c, a, root) }.map(Written::Plan);
    }
    check_root(c, root)?;
    if let Some(t) = objects::custom_type(a.dtype) {
        return objects::bcast(c, t, a, root, now);
    }
    let mut w = Writer::new_for(c, now);
    // SAFETY: MPI's rules for the buffer.
    let buf = unsafe {
        match c.rank() == root {
            true => w.input(a),
            false => w.output(a),
        }
    }?;
    coll::bcast(&mut w.b, buf, root);
    w.written()
}

pub(crate) unsafe fn reduce(
    c: &Communicator,
    send: Arg,
    recv: Arg,
    op: MPI_Op,
    root: c_int,
    now: bool,
) -> CResult<Written> {
    if c.is_inter() {
        // SAFETY: forwarded.
        return unsafe { super::inter::reduce(c, send, recv, op, root) }.map(Written::Plan);
    }
    check_root(c, root)?;
    let mut w = Writer::new_for(c, now);
    w.b.reduce_with(reduction(op, send.dtype)?);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        if c.rank() != root {
            let send = w.input(send)?;
            coll::reduce(&mut w.b, send, None, root);
        } else if in_place(send.p) {
            let buf = w.inout(recv)?;
            coll::reduce(&mut w.b, buf, Some(buf), root);
        } else {
            let (send, recv) = (w.input(send)?, w.output(recv)?);
            coll::reduce(&mut w.b, send, Some(recv), root);
        }
    }
    w.written()
}

pub(crate) unsafe fn allreduce(
    c: &Communicator,
    send: Arg,
    recv: Arg,
    op: MPI_Op,
    now: bool,
) -> CResult<Written> {
    if c.is_inter() {
        // SAFETY: forwarded.
        return unsafe { super::inter::allreduce(c, send, recv, op) }.map(Written::Plan);
    }
    let mut w = Writer::new_for(c, now);
    w.b.reduce_with(reduction(op, recv.dtype)?);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        if in_place(send.p) {
            let buf = w.inout(recv)?;
            coll::allreduce(&mut w.b, None, buf);
        } else {
            let (send, recv) = (w.input(send)?, w.output(recv)?);
            coll::allreduce(&mut w.b, Some(send), recv);
        }
    }
    w.written()
}

/// Reduce_scatter(_block): member i gets `counts[i]` elements of the reduction.
pub(crate) unsafe fn reduce_scatter(
    c: &Communicator,
    sendbuf: *const c_void,
    recvbuf: *const c_void,
    counts: &[i64],
    dtype: MPI_Datatype,
    op: MPI_Op,
    now: bool,
) -> CResult<Written> {
    if c.is_inter() {
        // SAFETY: forwarded.
        return unsafe { super::inter::reduce_scatter(c, sendbuf, recvbuf, counts, dtype, op) }
            .map(Written::Plan);
    }
    if counts.len() != c.size() as usize {
        return Err(fail(MPI_ERR_COUNT, "one count per member is needed"));
    }
    let elem = Elem::of(dtype)?;
    let bytes: Vec<usize> = counts
        .iter()
        .map(|&n| elem.packed(n))
        .collect::<CResult<_>>()?;
    let total: i64 = counts.iter().sum();
    let mine = counts[c.rank() as usize];
    let mut w = Writer::new_for(c, now);
    w.b.reduce_with(reduction(op, dtype)?);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        if in_place(sendbuf) {
            let all = w.inout(Arg::new(recvbuf, total, dtype))?;
            let recv = all.part(0, bytes[c.rank() as usize]);
            coll::reduce_scatter(&mut w.b, all, recv, &bytes);
        } else {
            let send = w.input(Arg::new(sendbuf, total, dtype))?;
            let recv = w.output(Arg::new(recvbuf, mine, dtype))?;
            coll::reduce_scatter(&mut w.b, send, recv, &bytes);
        }
    }
    w.written()
}

pub(crate) unsafe fn scan(
    c: &Communicator,
    send: Arg,
    recv: Arg,
    op: MPI_Op,
    exclusive: bool,
    now: bool,
) -> CResult<Written> {
    if c.is_inter() {
        return super::inter::scan().map(Written::Plan);
    }
    let mut w = Writer::new_for(c, now);
    w.b.reduce_with(reduction(op, recv.dtype)?);
    // SAFETY: MPI's rules for the buffers. An exclusive scan leaves member 0's recvbuf as it
    // was: it is read first, so that its unpacking writes it back unchanged.
    unsafe {
        if in_place(send.p) {
            let buf = w.inout(recv)?;
            coll::scan(&mut w.b, None, buf, exclusive);
        } else {
            let send = w.input(send)?;
            let recv = if exclusive {
                w.inout(recv)?
            } else {
                w.output(recv)?
            };
            coll::scan(&mut w.b, Some(send), recv, exclusive);
        }
    }
    w.written()
}

/// Gather(v): `recv` is read at the root only; `uniform` for Gather.
pub(crate) unsafe fn gather(
    c: &Communicator,
    send: Arg,
    recv: Option<Layout>,
    root: c_int,
    uniform: bool,
    now: bool,
) -> CResult<Written> {
    check_root(c, root)?;
    let here = in_place(send.p) && c.rank() == root;
    if let Some(t) = objects::custom_of(send.dtype, here, recv.as_ref())? {
        return objects::gather(c, t, send, recv, root, now);
    }
    let mut w = Writer::new_for(c, now);
    let at_root = c.rank() == root;
    let here = in_place(send.p) && at_root;
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let blocks = match recv.filter(|_| at_root) {
            Some(l) => Some(w.blocks(&l, Flow::Out, here.then_some(root as usize))?),
            None => None,
        };
        let mine = if here { None } else { Some(w.input(send)?) };
        coll::gather(&mut w.b, mine, blocks.as_deref(), root, uniform);
    }
    w.written()
}

/// Scatter(v): `send` is read at the root only; `uniform` for Scatter.
pub(crate) unsafe fn scatter(
    c: &Communicator,
    send: Option<Layout>,
    recv: Arg,
    root: c_int,
    uniform: bool,
    now: bool,
) -> CResult<Written> {
    check_root(c, root)?;
    let here = in_place(recv.p) && c.rank() == root;
    if let Some(t) = objects::custom_of(recv.dtype, here, send.as_ref())? {
        return objects::scatter(c, t, send, recv, root, now);
    }
    let mut w = Writer::new_for(c, now);
    let at_root = c.rank() == root;
    let here = in_place(recv.p) && at_root;
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let blocks = match send.filter(|_| at_root) {
            Some(l) => Some(w.blocks(&l, Flow::In, None)?),
            None => None,
        };
        let mine = if here { None } else { Some(w.output(recv)?) };
        coll::scatter(&mut w.b, blocks.as_deref(), mine, root, uniform);
    }
    w.written()
}

pub(crate) unsafe fn allgather(
    c: &Communicator,
    send: Arg,
    recv: Layout,
    now: bool,
) -> CResult<Written> {
    if let Some(t) = objects::custom_of(send.dtype, in_place(send.p), Some(&recv))? {
        return objects::allgather(c, t, send, recv, now);
    }
    let mut w = Writer::new_for(c, now);
    let here = in_place(send.p);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let blocks = w.blocks(&recv, Flow::Out, here.then_some(c.rank() as usize))?;
        let mine = if here { None } else { Some(w.input(send)?) };
        coll::allgather(&mut w.b, mine, &blocks);
    }
    w.written()
}

/// MPI_Allgather of a type that is not custom, not in place: `recv.count` elements per block.
pub(crate) unsafe fn allgather_equal(
    c: &Communicator,
    send: Arg,
    recv: Arg,
    now: bool,
) -> CResult<Written> {
    let mut w = Writer::new_for(c, now);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let blocks = w.array(recv, c.size() as usize, Flow::Out)?;
        let mine = w.input(send)?;
        coll::allgather(&mut w.b, Some(mine), &blocks);
    }
    w.written()
}

/// MPI_Alltoall of types that are not custom, not in place: `count` elements per block.
pub(crate) unsafe fn alltoall_equal(
    c: &Communicator,
    send: Arg,
    recv: Arg,
    now: bool,
) -> CResult<Written> {
    let n = c.size() as usize;
    let mut w = Writer::new_for(c, now);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let out = w.array(send, n, Flow::In)?;
        let inc = w.array(recv, n, Flow::Out)?;
        coll::alltoall(&mut w.b, &out, &inc, true);
    }
    w.written()
}

/// Alltoall(v,w); `send` `None`: in place, every block sent from the receive layout.
/// `uniform`: MPI_Alltoall (every block of every member has one size).
pub(crate) unsafe fn alltoall(
    c: &Communicator,
    send: Option<Layout>,
    recv: Layout,
    uniform: bool,
    now: bool,
) -> CResult<Written> {
    let first = send.as_ref().map_or(MPI_DATATYPE_NULL, |s| s.dtypes[0]);
    if let Some(t) = objects::custom_of(first, send.is_none(), Some(&recv))? {
        return objects::alltoall(c, t, send, recv, now);
    }
    let mut w = Writer::new_for(c, now);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let (out, inc) = match send {
            Some(send) => (
                w.blocks(&send, Flow::In, None)?,
                w.blocks(&recv, Flow::Out, None)?,
            ),
            None => {
                let inc = w.blocks(&recv, Flow::InOut, None)?;
                let out: Each<Buf> = inc
                    .iter()
                    .map(|&b| {
                        let copy = w.b.temp(b.len());
                        w.b.copy(b, copy);
                        copy
                    })
                    .collect();
                (out, inc)
            }
        };
        coll::alltoall(&mut w.b, &out, &inc, uniform);
    }
    w.written()
}
