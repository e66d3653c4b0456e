//! One function per collective over its C arguments, counts and displacements widened to 64
//! bits (so that a call and its `_c` variant share it), for any [`Launch`]. Arguments that MPI
//! makes significant only at the root are read only there.
//!
//! # Safety
//! Every function here is `unsafe`: its pointers must be what MPI requires of the call.

use super::writer::{Arg, Each, Layout};
use super::{launch_written, Launch, Wide, Written};
use super::{node, plans};
use crate::abi::*;
use crate::errors::{fail, CResult};
use mpicd::Communicator;
use std::ffi::{c_int, c_void};

/// The members of `c`, as an array length.
fn members(c: &Communicator) -> usize {
    c.size() as usize
}

/// None of `dtypes` is a custom type (those go through `super::objects`).
fn not_custom(dtypes: &[MPI_Datatype]) -> bool {
    dtypes
        .iter()
        .all(|&d| super::objects::custom_type(d).is_none())
}

/// A v-layout read from its C arrays.
unsafe fn varying<C: Wide, D: Wide>(
    c: &Communicator,
    p: *const c_void,
    counts: *const C,
    displs: *const D,
    dtype: MPI_Datatype,
) -> CResult<Layout> {
    let n = members(c);
    // SAFETY: MPI requires one count and displacement per member.
    let (counts, displs) = unsafe {
        (
            wide(counts, n, "counts")?,
            wide(displs, n, "displacements")?,
        )
    };
    Layout::varying(p, counts, displs, dtype)
}

/// `n` entries of a C array, widened.
unsafe fn wide<T: Wide>(p: *const T, n: usize, what: &str) -> CResult<Each<i64>> {
    if n > 0 && p.is_null() {
        return Err(fail(MPI_ERR_ARG, format!("null array of {what}")));
    }
    // SAFETY: forwarded: `n` entries at `p`.
    Ok((0..n).map(|i| unsafe { *p.add(i) }.wide()).collect())
}

/// What a blocking collective (`now`) that went the node's short way ([`node`]) gave, if it did.
fn short(now: bool, way: impl FnOnce() -> Option<CResult<()>>) -> Option<CResult<Written>> {
    match now {
        true => way().map(|r| r.map(|()| Written::Done)),
        false => None,
    }
}

pub(crate) fn barrier(name: &'static str, how: Launch, comm: MPI_Comm) -> c_int {
    launch_written(name, comm, how, |c, now| {
        if let Some(done) = short(now, || node::barrier(c)) {
            return done;
        }
        plans::barrier(c, now)
    })
}

pub(crate) unsafe fn bcast(
    name: &'static str,
    how: Launch,
    buffer: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: forwarded.
    launch_written(name, comm, how, |c, now| unsafe {
        if let Some(done) = short(now, || node::bcast(c, buffer, count, datatype, root)) {
            return done;
        }
        plans::bcast(c, Arg::new(buffer, count, datatype), root, now)
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce(
    name: &'static str,
    how: Launch,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let (send, recv) = (
        Arg::new(sendbuf, count, datatype),
        Arg::new(recvbuf, count, datatype),
    );
    // SAFETY: forwarded.
    launch_written(name, comm, how, |c, now| unsafe {
        let way = || node::reduce(c, sendbuf, recvbuf, count, datatype, op, root);
        if let Some(done) = short(now, way) {
            return done;
        }
        plans::reduce(c, send, recv, op, root, now)
    })
}

/// Allreduce, Scan (`scan` Some(false)) and Exscan (Some(true)).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allreduce(
    name: &'static str,
    how: Launch,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    scan: Option<bool>,
) -> c_int {
    let (send, recv) = (
        Arg::new(sendbuf, count, datatype),
        Arg::new(recvbuf, count, datatype),
    );
    // SAFETY: forwarded.
    launch_written(name, comm, how, |c, now| unsafe {
        let way = || node::allreduce(c, sendbuf, recvbuf, count, datatype, op, scan);
        if let Some(done) = short(now, way) {
            return done;
        }
        match scan {
            None => plans::allreduce(c, send, recv, op, now),
            Some(exclusive) => plans::scan(c, send, recv, op, exclusive, now),
        }
    })
}

/// Reduce_scatter (`counts` one per member) and Reduce_scatter_block (`block` Some).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce_scatter<C: Wide>(
    name: &'static str,
    how: Launch,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: *const C,
    block: Option<i64>,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: forwarded.
    launch_written(name, comm, how, |c, now| unsafe {
        if let Some(n) = block {
            let way = || node::reduce_scatter_block(c, sendbuf, recvbuf, n, datatype, op);
            if let Some(done) = short(now, way) {
                return done;
            }
        }
        let counts = match block {
            Some(n) => Each::from_elem(n, members(c)),
            None => wide(counts, members(c), "counts")?,
        };
        plans::reduce_scatter(c, sendbuf, recvbuf, &counts, datatype, op, now)
    })
}

/// Gather (`uniform`: `recvcount` counts every block) and Gatherv (`recvcounts`, `displs`;
/// significant at the root only, so non-roots may pass null).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gather<C: Wide, D: Wide>(
    name: &'static str,
    uniform: bool,
    how: Launch,
    send: Arg,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvcounts: *const C,
    displs: *const D,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: forwarded.
    launch_written(name, comm, how, |c, now| unsafe {
        if c.is_inter() {
            let (r, n) = (recvbuf, recvcount);
            return super::inter::gather(c, send, r, n, recvcounts, displs, recvtype, root)
                .map(super::Written::Plan);
        }
        if uniform {
            let (s, r) = (&send, (recvbuf, recvcount, recvtype));
            let way = || node::gather(c, s.p, s.count, s.dtype, r.0, r.1, r.2, root);
            if let Some(done) = short(now, way) {
                return done;
            }
        }
        let recv = match (c.rank() == root, uniform) {
            (false, _) => None,
            (true, true) => Some(Layout::uniform(recvbuf, members(c), recvcount, recvtype)?),
            (true, false) => Some(varying(c, recvbuf, recvcounts, displs, recvtype)?),
        };
        plans::gather(c, send, recv, root, uniform, now)
    })
}

/// Scatter (`uniform`: `sendcount` counts every block) and Scatterv (`sendcounts`, `displs`;
/// significant at the root only).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatter<C: Wide, D: Wide>(
    name: &'static str,
    uniform: bool,
    how: Launch,
    sendbuf: *const c_void,
    sendcount: i64,
    sendcounts: *const C,
    displs: *const D,
    sendtype: MPI_Datatype,
    recv: Arg,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: forwarded.
    launch_written(name, comm, how, |c, now| unsafe {
        if c.is_inter() {
            let (s, n) = (sendbuf, sendcount);
            return super::inter::scatter(c, s, n, sendcounts, displs, sendtype, recv, root)
                .map(super::Written::Plan);
        }
        if uniform {
            let (s, r) = ((sendbuf, sendcount, sendtype), &recv);
            let way = || node::scatter(c, s.0, s.1, s.2, r.p as _, r.count, r.dtype, root);
            if let Some(done) = short(now, way) {
                return done;
            }
        }
        let send = match (c.rank() == root, uniform) {
            (false, _) => None,
            (true, true) => Some(Layout::uniform(sendbuf, members(c), sendcount, sendtype)?),
            (true, false) => Some(varying(c, sendbuf, sendcounts, displs, sendtype)?),
        };
        plans::scatter(c, send, recv, root, uniform, now)
    })
}

/// Allgather and Allgatherv: `recvcounts`/`displs` null for Allgather.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allgather<C: Wide, D: Wide>(
    name: &'static str,
    how: Launch,
    send: Arg,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvcounts: *const C,
    displs: *const D,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: forwarded.
    launch_written(name, comm, how, |c, now| unsafe {
        if c.is_inter() {
            let (r, n) = (recvbuf, recvcount);
            return super::inter::allgather(c, send, r, n, recvcounts, displs, recvtype)
                .map(super::Written::Plan);
        }
        let equal = recvcounts.is_null() && displs.is_null();
        let way = || {
            node::allgather(
                c, send.p, send.count, send.dtype, recvbuf, recvcount, recvtype,
            )
        };
        if let Some(done) = short(now && equal, way) {
            return done;
        }
        if equal && !crate::blocks::in_place(send.p) && not_custom(&[send.dtype, recvtype]) {
            let recv = Arg::new(recvbuf, recvcount, recvtype);
            return plans::allgather_equal(c, send, recv, now);
        }
        let recv = if equal {
            Layout::uniform(recvbuf, members(c), recvcount, recvtype)?
        } else {
            varying(c, recvbuf, recvcounts, displs, recvtype)?
        };
        plans::allgather(c, send, recv, now)
    })
}

/// One side of an all-to-all: a uniform count, or arrays of counts and displacements (in
/// elements), or with `dtypes` per-block datatypes and byte displacements (Alltoallw).
pub(crate) struct Side<C, D> {
    pub buf: *const c_void,
    pub count: i64,
    pub counts: *const C,
    pub displs: *const D,
    pub dtype: MPI_Datatype,
    pub dtypes: *const MPI_Datatype,
}

impl<C: Wide, D: Wide> Side<C, D> {
    /// MPI_Alltoall's side: `count` elements of `dtype` per block.
    fn is_equal(&self) -> bool {
        self.counts.is_null() && self.displs.is_null() && self.dtypes.is_null()
    }

    unsafe fn layout(&self, c: &Communicator) -> CResult<Layout> {
        let n = members(c);
        // SAFETY: forwarded.
        unsafe {
            if !self.dtypes.is_null() {
                let dtypes = (0..n).map(|i| *self.dtypes.add(i)).collect();
                return Ok(Layout::typed(
                    self.buf,
                    wide(self.counts, n, "counts")?,
                    wide(self.displs, n, "displacements")?,
                    dtypes,
                ));
            }
            if self.counts.is_null() && self.displs.is_null() {
                return Layout::uniform(self.buf, n, self.count, self.dtype);
            }
            varying(c, self.buf, self.counts, self.displs, self.dtype)
        }
    }
}

/// Alltoall, Alltoallv and Alltoallw.
pub(crate) unsafe fn alltoall<C: Wide, D: Wide>(
    name: &'static str,
    how: Launch,
    send: Side<C, D>,
    recv: Side<C, D>,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: forwarded.
    launch_written(name, comm, how, |c, now| unsafe {
        if c.is_inter() {
            return super::inter::alltoall(c, &send, &recv).map(super::Written::Plan);
        }
        if send.is_equal() && recv.is_equal() && !crate::blocks::in_place(send.buf) {
            let (s, r) = (&send, &recv);
            let way = || node::alltoall(c, s.buf, s.count, s.dtype, r.buf as _, r.count, r.dtype);
            if let Some(done) = short(now, way) {
                return done;
            }
            if not_custom(&[send.dtype, recv.dtype]) {
                let out = Arg::new(send.buf, send.count, send.dtype);
                let inc = Arg::new(recv.buf, recv.count, recv.dtype);
                return plans::alltoall_equal(c, out, inc, now);
            }
        }
        if !recv.dtypes.is_null() || !send.dtypes.is_null() {
            let null_types = recv.dtypes.is_null()
                || (send.dtypes.is_null() && !crate::blocks::in_place(send.buf));
            if null_types {
                return Err(fail(MPI_ERR_ARG, "null array of datatypes"));
            }
        }
        let inc = recv.layout(c)?;
        let out = match crate::blocks::in_place(send.buf) {
            true => None,
            false => Some(send.layout(c)?),
        };
        let uniform = recv.counts.is_null() && recv.dtypes.is_null();
        plans::alltoall(c, out, inc, uniform, now)
    })
}

/// An all-to-all side with one count for every block.
pub(crate) fn uniform<C, D>(buf: *const c_void, count: i64, dtype: MPI_Datatype) -> Side<C, D> {
    use std::ptr::null;
    Side {
        buf,
        count,
        counts: null(),
        displs: null(),
        dtype,
        dtypes: null(),
    }
}

/// An all-to-all side with counts and displacements (in elements) per block.
pub(crate) fn varying_side<C, D>(
    buf: *const c_void,
    counts: *const C,
    displs: *const D,
    dtype: MPI_Datatype,
) -> Side<C, D> {
    Side {
        buf,
        count: 0,
        counts,
        displs,
        dtype,
        dtypes: std::ptr::null(),
    }
}

/// An all-to-all side with counts, byte displacements and datatypes per block.
pub(crate) fn typed<C, D>(
    buf: *const c_void,
    counts: *const C,
    displs: *const D,
    dtypes: *const MPI_Datatype,
) -> Side<C, D> {
    Side {
        buf,
        count: 0,
        counts,
        displs,
        dtype: MPI_DATATYPE_NULL,
        dtypes,
    }
}
