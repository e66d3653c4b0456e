//! The plans of the collectives on inter-communicators, from their C arguments (MPI-4.1
//! section 6.2.2): `args.rs` and `plans.rs` hand a call here when its communicator is an
//! inter-communicator. A rooted collective's root is MPI_ROOT at the root, MPI_PROC_NULL at
//! the other members of its group, and the root's rank in the remote group elsewhere; the
//! arrays of counts, displacements and datatypes of gather(v), scatter(v), allgather(v) and
//! alltoall(v,w) have one entry per member of the remote group, reduce_scatter's one per
//! member of the local group. MPI_IN_PLACE is not allowed (MPI_ERR_ARG), nor are custom
//! datatypes (MPI_ERR_TYPE), nor scans (MPI_ERR_COMM). The algorithms are the core's
//! ([`mpicd::schedule::inter`]).
//!
//! # Safety
//! Every function here is `unsafe`: its pointers must be what MPI requires of the call.

use super::args::Side;
use super::plans::reduction;
use super::writer::{Arg, Each, Layout, Writer};
use super::Wide;
use crate::abi::*;
use crate::blocks::in_place;
use crate::errors::{fail, CResult};
use mpicd::schedule::inter::{self, Root};
use mpicd::schedule::{Buf, Plan};
use mpicd::Communicator;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

/// Where the root is, from the `root` argument.
fn root_of(c: &Communicator, root: c_int) -> CResult<Root> {
    let remote = c.remote_group().map_or(0, |g| g.size());
    match root {
        MPI_ROOT => Ok(Root::Here),
        MPI_PROC_NULL => Ok(Root::Idle),
        r if (0..remote).contains(&r) => Ok(Root::Remote(r)),
        r => Err(fail(
            MPI_ERR_ROOT,
            format!(
                "invalid root {r} on an inter-communicator (MPI_ROOT, MPI_PROC_NULL or a rank \
                 of the remote group of {remote})"
            ),
        )),
    }
}

/// Fails for MPI_IN_PLACE, which no collective takes on an inter-communicator.
fn not_in_place(p: *const c_void) -> CResult<()> {
    match in_place(p) {
        true => Err(fail(
            MPI_ERR_ARG,
            "MPI_IN_PLACE is not allowed on an inter-communicator",
        )),
        false => Ok(()),
    }
}

/// Fails for a custom datatype among `dtypes`.
fn not_custom(dtypes: &[MPI_Datatype]) -> CResult<()> {
    match dtypes
        .iter()
        .any(|&d| super::objects::custom_type(d).is_some())
    {
        true => Err(fail(
            MPI_ERR_TYPE,
            "collectives on inter-communicators do not take custom datatypes",
        )),
        false => Ok(()),
    }
}

/// A buffer the collective reads.
unsafe fn input(w: &mut Writer, a: Arg) -> CResult<Buf> {
    not_in_place(a.p)?;
    not_custom(&[a.dtype])?;
    // SAFETY: forwarded.
    unsafe { w.input(a) }
}

/// A buffer the collective writes.
unsafe fn output(w: &mut Writer, a: Arg) -> CResult<Buf> {
    not_in_place(a.p)?;
    not_custom(&[a.dtype])?;
    // SAFETY: forwarded.
    unsafe { w.output(a) }
}

/// One block per member of the remote group: a uniform count, counts and element
/// displacements, or (`dtypes` not null) counts, byte displacements and datatypes.
unsafe fn remote_layout<C: Wide, D: Wide>(c: &Communicator, side: &Side<C, D>) -> CResult<Layout> {
    not_in_place(side.buf)?;
    let n = c.remote_group().map_or(0, |g| g.size()) as usize;
    // SAFETY: MPI requires one entry per member of the remote group in each array.
    let layout = unsafe {
        if !side.dtypes.is_null() {
            Layout::typed(
                side.buf,
                wide(side.counts, n, "counts")?,
                wide(side.displs, n, "displacements")?,
                (0..n).map(|i| *side.dtypes.add(i)).collect(),
            )
        } else if side.counts.is_null() && side.displs.is_null() {
            Layout::uniform(side.buf, n, side.count, side.dtype)?
        } else {
            let (counts, displs) = (
                wide(side.counts, n, "counts")?,
                wide(side.displs, n, "displacements")?,
            );
            Layout::varying(side.buf, counts, displs, side.dtype)?
        }
    };
    not_custom(&layout.dtypes)?;
    Ok(layout)
}

/// `n` entries of a C array, widened.
unsafe fn wide<T: Wide>(p: *const T, n: usize, what: &str) -> CResult<Each<i64>> {
    if n > 0 && p.is_null() {
        return Err(fail(MPI_ERR_ARG, format!("null array of {what}")));
    }
    // SAFETY: forwarded: `n` entries at `p`.
    Ok((0..n).map(|i| unsafe { *p.add(i) }.wide()).collect())
}

/// Every block of a layout, read or written.
unsafe fn blocks(w: &mut Writer, l: &Layout, read: bool) -> CResult<Vec<Buf>> {
    (0..l.counts.len())
        .map(|i| {
            // SAFETY: forwarded.
            unsafe {
                match read {
                    true => w.input(l.arg(i)),
                    false => w.output(l.arg(i)),
                }
            }
        })
        .collect()
}

pub(crate) fn barrier(c: &Communicator) -> CResult<Arc<Plan>> {
    let mut w = Writer::new(c);
    inter::barrier(&mut w.b);
    w.finish()
}

pub(crate) unsafe fn bcast(c: &Communicator, a: Arg, root: c_int) -> CResult<Arc<Plan>> {
    let root = root_of(c, root)?;
    let mut w = Writer::new(c);
    // SAFETY: MPI's rules for the buffer (significant only where it is read or written).
    let buf = unsafe {
        match root {
            Root::Here => input(&mut w, a)?,
            Root::Idle => w.b.temp(0),
            Root::Remote(_) => output(&mut w, a)?,
        }
    };
    inter::bcast(&mut w.b, buf, root);
    w.finish()
}

pub(crate) unsafe fn reduce(
    c: &Communicator,
    send: Arg,
    recv: Arg,
    op: MPI_Op,
    root: c_int,
) -> CResult<Arc<Plan>> {
    let root = root_of(c, root)?;
    let mut w = Writer::new(c);
    // SAFETY: MPI's rules for the buffers.
    let buf = unsafe {
        match root {
            Root::Here => {
                w.b.reduce_with(reduction(op, recv.dtype)?);
                output(&mut w, recv)?
            }
            Root::Idle => w.b.temp(0),
            Root::Remote(_) => {
                w.b.reduce_with(reduction(op, send.dtype)?);
                input(&mut w, send)?
            }
        }
    };
    inter::reduce(&mut w.b, buf, root);
    w.finish()
}

pub(crate) unsafe fn allreduce(
    c: &Communicator,
    send: Arg,
    recv: Arg,
    op: MPI_Op,
) -> CResult<Arc<Plan>> {
    let mut w = Writer::new(c);
    w.b.reduce_with(reduction(op, recv.dtype)?);
    // SAFETY: MPI's rules for the buffers.
    let (send, recv) = unsafe { (input(&mut w, send)?, output(&mut w, recv)?) };
    inter::allreduce(&mut w.b, send, recv);
    w.finish()
}

/// Reduce_scatter(_block): `counts` has one entry per member of the local group, whose member
/// i gets `counts[i]` elements of the reduction of the remote group's vectors.
pub(crate) unsafe fn reduce_scatter(
    c: &Communicator,
    sendbuf: *const c_void,
    recvbuf: *const c_void,
    counts: &[i64],
    dtype: MPI_Datatype,
    op: MPI_Op,
) -> CResult<Arc<Plan>> {
    let elem = crate::blocks::Elem::of(dtype)?;
    let bytes: Vec<usize> = counts
        .iter()
        .map(|&n| elem.packed(n))
        .collect::<CResult<_>>()?;
    let total: i64 = counts.iter().sum();
    let mine = counts.get(c.rank() as usize).copied().unwrap_or(0);
    let mut w = Writer::new(c);
    w.b.reduce_with(reduction(op, dtype)?);
    // SAFETY: MPI's rules for the buffers.
    let (send, recv) = unsafe {
        (
            input(&mut w, Arg::new(sendbuf, total, dtype))?,
            output(&mut w, Arg::new(recvbuf, mine, dtype))?,
        )
    };
    inter::reduce_scatter(&mut w.b, send, recv, &bytes);
    w.finish()
}

/// Scan and Exscan: MPI defines none on inter-communicators.
pub(crate) fn scan() -> CResult<Arc<Plan>> {
    Err(fail(
        MPI_ERR_COMM,
        "MPI_Scan and MPI_Exscan are not defined on inter-communicators",
    ))
}

/// A side of a gather, scatter or allgather: a uniform count (`counts` and `displs` null) or
/// counts and displacements in elements.
fn side<C, D>(
    buf: *const c_void,
    count: i64,
    counts: *const C,
    displs: *const D,
    dtype: MPI_Datatype,
) -> Side<C, D> {
    Side {
        buf,
        count,
        counts,
        displs,
        dtype,
        dtypes: std::ptr::null(),
    }
}

/// Gather and Gatherv (`recvcounts`/`displs` null for Gather; the receive side is read at the
/// root only).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gather<C: Wide, D: Wide>(
    c: &Communicator,
    send: Arg,
    recvbuf: *const c_void,
    recvcount: i64,
    recvcounts: *const C,
    displs: *const D,
    recvtype: MPI_Datatype,
    root: c_int,
) -> CResult<Arc<Plan>> {
    let recv = &side(recvbuf, recvcount, recvcounts, displs, recvtype);
    let root = root_of(c, root)?;
    let mut w = Writer::new(c);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let (mine, at_root) = match root {
            Root::Here => (
                w.b.temp(0),
                blocks(&mut w, &remote_layout(c, recv)?, false)?,
            ),
            Root::Idle => (w.b.temp(0), Vec::new()),
            Root::Remote(_) => (input(&mut w, send)?, Vec::new()),
        };
        inter::gather(&mut w.b, mine, &at_root, root);
    }
    w.finish()
}

/// Scatter and Scatterv (`sendcounts`/`displs` null for Scatter; the send side is read at the
/// root only).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatter<C: Wide, D: Wide>(
    c: &Communicator,
    sendbuf: *const c_void,
    sendcount: i64,
    sendcounts: *const C,
    displs: *const D,
    sendtype: MPI_Datatype,
    recv: Arg,
    root: c_int,
) -> CResult<Arc<Plan>> {
    let send = &side(sendbuf, sendcount, sendcounts, displs, sendtype);
    let root = root_of(c, root)?;
    let mut w = Writer::new(c);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let (from_root, mine) = match root {
            Root::Here => (blocks(&mut w, &remote_layout(c, send)?, true)?, w.b.temp(0)),
            Root::Idle => (Vec::new(), w.b.temp(0)),
            Root::Remote(_) => (Vec::new(), output(&mut w, recv)?),
        };
        inter::scatter(&mut w.b, &from_root, mine, root);
    }
    w.finish()
}

/// Allgather and Allgatherv (`recvcounts`/`displs` null for Allgather).
pub(crate) unsafe fn allgather<C: Wide, D: Wide>(
    c: &Communicator,
    send: Arg,
    recvbuf: *const c_void,
    recvcount: i64,
    recvcounts: *const C,
    displs: *const D,
    recvtype: MPI_Datatype,
) -> CResult<Arc<Plan>> {
    let recv = &side(recvbuf, recvcount, recvcounts, displs, recvtype);
    let mut w = Writer::new(c);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let mine = input(&mut w, send)?;
        let got = blocks(&mut w, &remote_layout(c, recv)?, false)?;
        inter::allgather(&mut w.b, mine, &got);
    }
    w.finish()
}

/// Alltoall, Alltoallv and Alltoallw.
pub(crate) unsafe fn alltoall<C: Wide, D: Wide>(
    c: &Communicator,
    send: &Side<C, D>,
    recv: &Side<C, D>,
) -> CResult<Arc<Plan>> {
    let mut w = Writer::new(c);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let out = blocks(&mut w, &remote_layout(c, send)?, true)?;
        let inc = blocks(&mut w, &remote_layout(c, recv)?, false)?;
        inter::alltoall(&mut w.b, &out, &inc);
    }
    w.finish()
}
