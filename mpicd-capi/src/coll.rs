//! Collective calls on predefined and derived datatypes: Barrier, Bcast, Reduce, Allreduce,
//! Scan, Exscan, Gather(v), Scatter(v), Allgather(v), Alltoall(v), with MPI_IN_PLACE. The algorithms are the
//! core's (`mpicd::collective`); this module checks arguments, maps ops and lays out buffers
//! ([`crate::blocks`]). Reductions ([`crate::reductions`]): the predefined ops on predefined
//! types and on derived types made of one, complex sums and products, MINLOC/MAXLOC on the
//! value-index pair types.

use crate::abi::*;
use crate::blocks::{in_place, Block, Blocks, Counts, Elem};
use crate::comms::run_on;
use crate::errors::{fail, CResult};
use crate::reductions::Reduction;
use mpicd::collective;
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

/// Blocks until every member has called it.
#[no_mangle]
pub unsafe extern "C" fn MPI_Barrier(comm: MPI_Comm) -> c_int {
    run_on("Barrier", comm, |c| c.barrier().map_err(Into::into))
}

/// Broadcasts from `root`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    run_on("Bcast", comm, |c| {
        check_root(&c, root)?;
        let elem = Elem::of(datatype)?;
        let root_sends = c.rank() == root;
        // SAFETY: MPI requires `count` elements at `buffer`.
        unsafe {
            elem.staged(buffer, count as i64, root_sends, |buf| {
                collective::bcast(&c, buf, root).map_err(Into::into)
            })
        }
    })
}

/// Reduces to `root`; MPI_IN_PLACE as the root's sendbuf takes its recvbuf.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn MPI_Reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    run_on("Reduce", comm, |c| {
        check_root(&c, root)?;
        let elem = Elem::of(datatype)?;
        let red = Reduction::of(op, datatype, &elem)?;
        let combine = |acc: &mut [u8], inc: &[u8]| red.combine(acc, inc);
        let count = count as i64;
        if c.rank() != root {
            // SAFETY: MPI requires `count` elements at sendbuf.
            let send = unsafe { elem.read(sendbuf, count) }?;
            return collective::reduce_by(&c, &send, None, root, &combine, red.order())
                .map_err(Into::into);
        }
        let send = if in_place(sendbuf) {
            // SAFETY: MPI requires `count` elements at the root's recvbuf.
            unsafe { elem.read(recvbuf, count) }?.into_owned()
        } else {
            // SAFETY: MPI requires `count` elements at sendbuf.
            unsafe { elem.read(sendbuf, count) }?.into_owned()
        };
        // SAFETY: MPI requires `count` elements at recvbuf, distinct from sendbuf.
        unsafe {
            elem.staged(recvbuf, count, false, |recv| {
                collective::reduce_by(&c, &send, Some(recv), root, &combine, red.order())
                    .map_err(Into::into)
            })
        }
    })
}

/// Reduces; every member gets the result. MPI_IN_PLACE as sendbuf takes recvbuf.
#[no_mangle]
pub unsafe extern "C" fn MPI_Allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    run_on("Allreduce", comm, |c| {
        let elem = Elem::of(datatype)?;
        let red = Reduction::of(op, datatype, &elem)?;
        let count = count as i64;
        let send = if in_place(sendbuf) {
            None
        } else {
            // SAFETY: MPI requires `count` elements at sendbuf, distinct from recvbuf.
            Some(unsafe { elem.read(sendbuf, count) }?.into_owned())
        };
        // SAFETY: MPI requires `count` elements at recvbuf.
        unsafe {
            elem.staged(recvbuf, count, send.is_none(), |buf| {
                if let Some(send) = &send {
                    buf.copy_from_slice(send);
                }
                collective::allreduce_by(&c, buf, &|acc, inc| red.combine(acc, inc), red.order())
                    .map_err(Into::into)
            })
        }
    })
}

/// Shared body of Scan and Exscan.
///
/// # Safety
/// Buffers as MPI_Scan requires.
unsafe fn scan(
    c: &Communicator,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    kind: collective::Scan,
) -> CResult<()> {
    let elem = Elem::of(datatype)?;
    let red = Reduction::of(op, datatype, &elem)?;
    let count = count as i64;
    let from = if in_place(sendbuf) {
        recvbuf as *const c_void
    } else {
        sendbuf
    };
    // SAFETY: MPI requires `count` elements at sendbuf (or recvbuf, in place).
    let mut mine = unsafe { elem.read(from, count) }?.into_owned();
    collective::scan_by(c, &mut mine, &|acc, inc| red.combine(acc, inc), kind)?;
    if kind == collective::Scan::Exclusive && c.rank() == 0 {
        // Nothing precedes member 0: its recvbuf is left as it was.
        return Ok(());
    }
    // SAFETY: MPI requires `count` writable elements at recvbuf.
    unsafe { elem.write(recvbuf, count, &mine) }
}

/// Inclusive prefix reduction: member r gets the reduction of members 0..=r, in rank order.
/// MPI_IN_PLACE as sendbuf takes recvbuf.
#[no_mangle]
pub unsafe extern "C" fn MPI_Scan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: buffers as MPI requires.
    run_on("Scan", comm, |c| unsafe {
        scan(
            &c,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            collective::Scan::Inclusive,
        )
    })
}

/// Exclusive prefix reduction: member r > 0 gets the reduction of members 0..r; member 0's
/// recvbuf is left as it was (MPI leaves it undefined; MPICH and its tests leave it too).
#[no_mangle]
pub unsafe extern "C" fn MPI_Exscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: buffers as MPI requires.
    run_on("Exscan", comm, |c| unsafe {
        scan(
            &c,
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            collective::Scan::Exclusive,
        )
    })
}

/// Shared body of Gather and Gatherv.
///
/// # Safety
/// Buffers and arrays as MPI_Gather(v) requires.
unsafe fn gather(c: &Communicator, send: Block, recv: Blocks, root: c_int) -> CResult<()> {
    check_root(c, root)?;
    let at_root = c.rank() == root;
    let layout = if at_root {
        // SAFETY: forwarded from the caller.
        Some(unsafe { recv.layout(c.size() as usize) }?)
    } else {
        None
    };
    let mine = match (&layout, in_place(send.buf) && at_root) {
        // SAFETY: the root's own block of recvbuf.
        (Some(l), true) => unsafe { l.block(recv.buf, root as usize) }?,
        // SAFETY: MPI requires `sendcount` elements at sendbuf.
        _ => unsafe { send.bytes() }?,
    };
    let pieces = collective::gather(c, &mine, root)?;
    if let (Some(l), Some(pieces)) = (layout, pieces) {
        let skip = in_place(send.buf).then_some(root as usize);
        // SAFETY: MPI requires the root's recvbuf to hold every block.
        unsafe { l.scatter_into(recv.buf, &pieces, skip) }?;
    }
    Ok(())
}

/// Gathers equal blocks at `root`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn MPI_Gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let send = Block::new(sendbuf, sendcount, sendtype);
    let recv = Blocks::new(recvbuf, Counts::Uniform(recvcount), recvtype);
    // SAFETY: buffers as MPI requires.
    run_on("Gather", comm, |c| unsafe { gather(&c, send, recv, root) })
}

/// Gathers blocks of varying sizes at `root`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn MPI_Gatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let send = Block::new(sendbuf, sendcount, sendtype);
    let recv = Blocks::new(recvbuf, Counts::Varying(recvcounts, displs), recvtype);
    // SAFETY: buffers and arrays as MPI requires.
    run_on("Gatherv", comm, |c| unsafe { gather(&c, send, recv, root) })
}

/// Shared body of Scatter and Scatterv.
///
/// # Safety
/// Buffers and arrays as MPI_Scatter(v) requires.
unsafe fn scatter(c: &Communicator, send: Blocks, recv: Block, root: c_int) -> CResult<()> {
    check_root(c, root)?;
    let at_root = c.rank() == root;
    let blocks: Option<Vec<_>> = if at_root {
        // SAFETY: forwarded from the caller.
        let l = unsafe { send.layout(c.size() as usize) }?;
        let mut all = Vec::with_capacity(c.size() as usize);
        for i in 0..c.size() as usize {
            // SAFETY: MPI requires the root's sendbuf to hold every block.
            all.push(unsafe { l.block(send.buf, i) }?);
        }
        Some(all)
    } else {
        None
    };
    let pieces: Option<Vec<&[u8]>> = blocks.as_ref().map(|b| b.iter().map(|p| &p[..]).collect());
    let mine = collective::scatter(c, pieces.as_deref(), root)?;
    if at_root && in_place(recv.buf) {
        return Ok(());
    }
    // SAFETY: MPI requires `recvcount` elements at recvbuf.
    unsafe { recv.write(&mine) }
}

/// Scatters equal blocks from `root`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn MPI_Scatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let send = Blocks::new(sendbuf, Counts::Uniform(sendcount), sendtype);
    let recv = Block::new(recvbuf, recvcount, recvtype);
    // SAFETY: buffers as MPI requires.
    run_on("Scatter", comm, |c| unsafe {
        scatter(&c, send, recv, root)
    })
}

/// Scatters blocks of varying sizes from `root`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn MPI_Scatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    let send = Blocks::new(sendbuf, Counts::Varying(sendcounts, displs), sendtype);
    let recv = Block::new(recvbuf, recvcount, recvtype);
    // SAFETY: buffers and arrays as MPI requires.
    run_on("Scatterv", comm, |c| unsafe {
        scatter(&c, send, recv, root)
    })
}

/// Shared body of Allgather and Allgatherv.
///
/// # Safety
/// Buffers and arrays as MPI_Allgather(v) requires.
unsafe fn allgather(c: &Communicator, send: Block, recv: Blocks) -> CResult<()> {
    // SAFETY: forwarded from the caller.
    let l = unsafe { recv.layout(c.size() as usize) }?;
    let mine = if in_place(send.buf) {
        // SAFETY: this rank's block of recvbuf.
        unsafe { l.block(recv.buf, c.rank() as usize) }?.into_owned()
    } else {
        // SAFETY: MPI requires `sendcount` elements at sendbuf.
        unsafe { send.bytes() }?.into_owned()
    };
    let pieces = collective::allgather(c, &mine)?;
    // SAFETY: MPI requires recvbuf to hold every block.
    unsafe { l.scatter_into(recv.buf, &pieces, None) }
}

/// Every member gets every member's block.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn MPI_Allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    let send = Block::new(sendbuf, sendcount, sendtype);
    let recv = Blocks::new(recvbuf, Counts::Uniform(recvcount), recvtype);
    // SAFETY: buffers as MPI requires.
    run_on("Allgather", comm, |c| unsafe { allgather(&c, send, recv) })
}

/// Every member gets every member's block, of varying sizes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn MPI_Allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    let send = Block::new(sendbuf, sendcount, sendtype);
    let recv = Blocks::new(recvbuf, Counts::Varying(recvcounts, displs), recvtype);
    // SAFETY: buffers and arrays as MPI requires.
    run_on("Allgatherv", comm, |c| unsafe { allgather(&c, send, recv) })
}

/// Shared body of Alltoall and Alltoallv.
///
/// # Safety
/// Buffers and arrays as MPI_Alltoall(v) requires.
unsafe fn alltoall(c: &Communicator, send: Blocks, recv: Blocks) -> CResult<()> {
    let n = c.size() as usize;
    if !in_place(send.buf) {
        // Each block one typed message (in place when it is one run), whatever the datatypes:
        // the choice must be the same on every member, and each may use other types.
        // SAFETY: forwarded from the caller.
        let (out, inc) = unsafe { (send.typed(n)?, recv.typed(n)?) };
        // SAFETY: MPI requires the blocks to be valid and the receive blocks disjoint.
        return unsafe { mpicd::collective_typed::alltoall_typed(c, &out, &inc) }
            .map_err(Into::into);
    }
    // SAFETY: forwarded from the caller.
    let recv_layout = unsafe { recv.layout(n) }?;
    let blocks: Vec<_> = if in_place(send.buf) {
        // SAFETY: MPI requires recvbuf to hold every block.
        unsafe { recv_layout.copy_blocks(recv.buf) }?
            .into_iter()
            .map(std::borrow::Cow::Owned)
            .collect()
    } else {
        // SAFETY: forwarded from the caller.
        let send_layout = unsafe { send.layout(n) }?;
        // SAFETY: MPI requires sendbuf to hold every block.
        (0..n)
            .map(|i| unsafe { send_layout.block(send.buf, i) })
            .collect::<CResult<_>>()?
    };
    let outgoing: Vec<&[u8]> = blocks.iter().map(|b| &b[..]).collect();
    let mut incoming: Vec<Vec<u8>> = recv_layout.lens.iter().map(|&l| vec![0u8; l]).collect();
    let mut slots: Vec<&mut [u8]> = incoming.iter_mut().map(|v| &mut v[..]).collect();
    collective::alltoall(c, &outgoing, &mut slots)?;
    // SAFETY: MPI requires recvbuf to hold every block.
    unsafe { recv_layout.scatter_into(recv.buf, &incoming, None) }
}

/// Each member sends block i to member i.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn MPI_Alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    let send = Blocks::new(sendbuf, Counts::Uniform(sendcount), sendtype);
    let recv = Blocks::new(recvbuf, Counts::Uniform(recvcount), recvtype);
    // SAFETY: buffers as MPI requires.
    run_on("Alltoall", comm, |c| unsafe { alltoall(&c, send, recv) })
}

/// Each member sends block i (of varying size) to member i.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn MPI_Alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    let send = Blocks::new(sendbuf, Counts::Varying(sendcounts, sdispls), sendtype);
    let recv = Blocks::new(recvbuf, Counts::Varying(recvcounts, rdispls), recvtype);
    // SAFETY: buffers and arrays as MPI requires.
    run_on("Alltoallv", comm, |c| unsafe { alltoall(&c, send, recv) })
}
