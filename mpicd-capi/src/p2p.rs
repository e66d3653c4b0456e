//! Point-to-point calls: Send, Ssend, Rsend, Isend, Issend, Irsend, Recv, Irecv, for
//! predefined datatypes (contiguous bytes), derived ones and custom datatypes (through the
//! callback adapter); their `_c` forms are in `p2p_c.rs`, Sendrecv and its kin in
//! `sendrecv.rs`, the persistent forms in `p2p_persistent.rs`, buffered mode in `bsend.rs`.

use crate::abi::*;
use crate::comms::{run_on, run_on_with};
use crate::custom::Operation;
use crate::env::{out, require};
use crate::errors::{fail, CResult};
use crate::requests::{complete_now, insert, report_now};
use crate::types::{self, byte_len, Basic, Dtype};
use mpicd::{Communicator, Request, SendMode};
use std::ffi::{c_int, c_void};

pub(crate) fn check_buf(buf: *const c_void, len: usize) -> CResult<()> {
    if buf.is_null() && len > 0 {
        return Err(fail(MPI_ERR_BUFFER, "null buffer with a non-zero count"));
    }
    Ok(())
}

pub(crate) fn send_tag(tag: c_int) -> CResult<c_int> {
    if tag < 0 {
        return Err(fail(MPI_ERR_TAG, format!("invalid send tag {tag}")));
    }
    Ok(tag)
}

// Ranks pass between the C layer and the core unchanged: the core's sentinels are the ABI's.
const _: () = assert!(
    MPI_PROC_NULL == mpicd::PROC_NULL
        && MPI_ANY_SOURCE == mpicd::ANY_SOURCE
        && MPI_UNDEFINED == mpicd::UNDEFINED
);

/// The core tag of a receive tag (MPI_ANY_TAG is -2 in the ABI, -1 in the core).
pub(crate) fn recv_tag(tag: c_int) -> CResult<c_int> {
    match tag {
        MPI_ANY_TAG => Ok(mpicd::ANY_TAG),
        t if t < 0 => Err(fail(MPI_ERR_TAG, format!("invalid receive tag {t}"))),
        t => Ok(t),
    }
}

/// Checks a peer rank of `comm` (the remote group's on an inter-communicator): a member,
/// MPI_PROC_NULL, or with `any` MPI_ANY_SOURCE.
pub(crate) fn check_peer(comm: &Communicator, rank: c_int, any: bool) -> CResult<()> {
    let size = match comm.remote_group() {
        Some(g) => g.size(),
        None => comm.size(),
    };
    let ok = (0..size).contains(&rank) || rank == MPI_PROC_NULL || (any && rank == MPI_ANY_SOURCE);
    match ok {
        true => Ok(()),
        false => Err(fail(MPI_ERR_RANK, format!("invalid rank {rank}"))),
    }
}

/// What a datatype handle stands for in a message with `peer`: with MPI_PROC_NULL, which moves
/// nothing, MPI_DATATYPE_NULL is accepted too (as MPICH and Open MPI do).
pub(crate) fn dtype_for(datatype: MPI_Datatype, peer: c_int) -> CResult<Dtype> {
    match peer == MPI_PROC_NULL && datatype == MPI_DATATYPE_NULL {
        true => types::get(MPI_BYTE),
        false => types::get(datatype),
    }
}

pub(crate) fn count_of(count: i64) -> CResult<i64> {
    if count < 0 {
        return Err(fail(MPI_ERR_COUNT, format!("negative count {count}")));
    }
    Ok(count)
}

/// What a send's C arguments describe: `count` elements of `datatype` at `buf`, for `dest`
/// with `tag`.
#[derive(Clone, Copy)]
pub(crate) struct Outgoing {
    pub buf: *const c_void,
    pub count: i64,
    pub datatype: MPI_Datatype,
    pub dest: c_int,
    pub tag: c_int,
}

// SAFETY: the buffer address is the C caller's; MPI's rules for using it (valid and unchanged
// while an operation on it is active) bind the caller whichever thread starts the operation.
unsafe impl Send for Outgoing {}

impl Outgoing {
    pub(crate) fn new(
        buf: *const c_void,
        count: impl Into<i64>,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
    ) -> Outgoing {
        let count = count.into();
        Outgoing {
            buf,
            count,
            datatype,
            dest,
            tag,
        }
    }
}

/// What a receive's C arguments describe: room for `count` elements of `datatype` at `buf`,
/// from `source` with `tag`.
#[derive(Clone, Copy)]
pub(crate) struct Incoming {
    pub buf: *mut c_void,
    pub count: i64,
    pub datatype: MPI_Datatype,
    pub source: c_int,
    pub tag: c_int,
}

// SAFETY: as for `Outgoing`: the caller's buffer, under MPI's rules whichever thread posts.
unsafe impl Send for Incoming {}

impl Incoming {
    pub(crate) fn new(
        buf: *mut c_void,
        count: impl Into<i64>,
        datatype: MPI_Datatype,
        source: c_int,
        tag: c_int,
    ) -> Incoming {
        let count = count.into();
        Incoming {
            buf,
            count,
            datatype,
            source,
            tag,
        }
    }
}

/// Starts a send.
///
/// # Safety
/// The send buffer must hold the data and stay unchanged until the request completes.
pub(crate) unsafe fn start_send(
    comm: &Communicator,
    m: Outgoing,
    mode: SendMode,
) -> CResult<Request<'static>> {
    let dtype = dtype_for(m.datatype, m.dest)?;
    // SAFETY: forwarded from the caller.
    unsafe { start_send_as(comm, m, &dtype, mode) }
}

/// Starts a send of elements of `dtype`, the type `m.datatype` stood for when it was resolved
/// (a persistent request keeps it, the handle may be freed meanwhile).
///
/// # Safety
/// As for [`start_send`].
pub(crate) unsafe fn start_send_as(
    comm: &Communicator,
    m: Outgoing,
    dtype: &Dtype,
    mode: SendMode,
) -> CResult<Request<'static>> {
    let tag = send_tag(m.tag)?;
    match dtype.clone() {
        Dtype::Basic(b) => {
            let len = basic_len(m.buf, m.count, b)?;
            // SAFETY: forwarded from the caller.
            Ok(unsafe { comm.isend_raw(m.buf as *const u8, len, m.dest, tag, mode) }?)
        }
        Dtype::Custom(t) => {
            let op = Operation::start(t, m.buf as *mut c_void, count_of(m.count)?)?;
            Ok(comm.isend_state(Box::new(op), m.dest, tag, mode)?)
        }
        Dtype::Derived(t) => {
            let count = count_of(m.count)? as u64;
            // SAFETY: forwarded from the caller.
            Ok(unsafe { comm.isend_typed_raw(m.buf as *const u8, count, &t, m.dest, tag, mode) }?)
        }
    }
}

/// Starts a receive; also returns the count a custom-typed receive reports.
///
/// # Safety
/// The receive buffer must be writable and untouched until the request completes.
pub(crate) unsafe fn start_recv(
    comm: &Communicator,
    m: Incoming,
) -> CResult<(Request<'static>, Option<i64>)> {
    let dtype = dtype_for(m.datatype, m.source)?;
    // SAFETY: forwarded from the caller.
    unsafe { start_recv_as(comm, m, &dtype) }
}

/// Starts a receive into elements of `dtype` (see [`start_send_as`]); also returns the count
/// a custom-typed receive reports.
///
/// # Safety
/// As for [`start_recv`].
pub(crate) unsafe fn start_recv_as(
    comm: &Communicator,
    m: Incoming,
    dtype: &Dtype,
) -> CResult<(Request<'static>, Option<i64>)> {
    let tag = recv_tag(m.tag)?;
    match dtype.clone() {
        Dtype::Basic(b) => {
            let len = basic_len(m.buf, m.count, b)?;
            // SAFETY: forwarded from the caller.
            let req = unsafe { comm.irecv_raw(m.buf as *mut u8, len, m.source, tag) }?;
            Ok((req, None))
        }
        Dtype::Custom(t) => {
            let count = count_of(m.count)?;
            let op = Operation::start(t, m.buf, count)?;
            Ok((comm.irecv_state(Box::new(op), m.source, tag)?, Some(count)))
        }
        Dtype::Derived(t) => {
            let count = count_of(m.count)? as u64;
            // SAFETY: forwarded from the caller.
            let req = unsafe { comm.irecv_typed_raw(m.buf as *mut u8, count, &t, m.source, tag) }?;
            Ok((req, None))
        }
    }
}

/// Shared body of the blocking sends.
///
/// # Safety
/// As for [`start_send`], for the duration of the call.
pub(crate) unsafe fn send_blocking(
    name: &'static str,
    m: Outgoing,
    comm: MPI_Comm,
    mode: SendMode,
) -> c_int {
    run_on(name, comm, |c| {
        let dtype = dtype_for(m.datatype, m.dest)?;
        if let Dtype::Basic(b) = dtype {
            // Without a request: a short message the transport takes at once just returns.
            let (tag, len) = (send_tag(m.tag)?, basic_len(m.buf, m.count, b)?);
            // SAFETY: forwarded from the caller.
            return Ok(unsafe { c.send_raw(m.buf as *const u8, len, m.dest, tag, mode) }?);
        }
        // SAFETY: forwarded from the caller.
        let req = unsafe { start_send_as(&c, m, &dtype, mode) }?;
        req.wait()?;
        Ok(())
    })
}

/// The bytes of `count` elements of basic type `b` at `buf`, checked (a null buffer only for
/// none).
fn basic_len(buf: *const c_void, count: i64, b: Basic) -> CResult<usize> {
    let len = byte_len(count, b)?;
    check_buf(buf, len)?;
    Ok(len)
}

/// Shared body of the non-blocking sends.
///
/// # Safety
/// As for [`start_send`], until the request completes.
pub(crate) unsafe fn send_started(
    name: &'static str,
    m: Outgoing,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    mode: SendMode,
) -> c_int {
    run_on_with(name, comm, |c, errh| {
        require(request, "request pointer")?;
        // SAFETY: forwarded from the caller.
        let req = unsafe { start_send(&c, m, mode) }?;
        out(request, insert(req, errh, None))
    })
}

/// Sends; returns once the buffer can be reused.
#[no_mangle]
pub unsafe extern "C" fn MPI_Send(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { send_blocking("Send", m, comm, SendMode::Standard) }
}

/// Sends; returns once the receiver has matched the message.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ssend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { send_blocking("Ssend", m, comm, SendMode::Synchronous) }
}

/// Ready-mode send (a standard send in mpicd).
#[no_mangle]
pub unsafe extern "C" fn MPI_Rsend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { send_blocking("Rsend", m, comm, SendMode::Standard) }
}

/// Starts a send; complete it with a wait or test call.
#[no_mangle]
pub unsafe extern "C" fn MPI_Isend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { send_started("Isend", m, comm, request, SendMode::Standard) }
}

/// Starts a synchronous send.
#[no_mangle]
pub unsafe extern "C" fn MPI_Issend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { send_started("Issend", m, comm, request, SendMode::Synchronous) }
}

/// Starts a ready-mode send (a standard send in mpicd).
#[no_mangle]
pub unsafe extern "C" fn MPI_Irsend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { send_started("Irsend", m, comm, request, SendMode::Standard) }
}

/// Shared body of MPI_Recv(_c).
///
/// # Safety
/// The buffer is writable for the duration of the call; `status` is MPI_STATUS_IGNORE or
/// writable.
pub(crate) unsafe fn recv_blocking(
    name: &'static str,
    m: Incoming,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    run_on(name, comm, |c| {
        let dtype = dtype_for(m.datatype, m.source)?;
        if let Dtype::Basic(b) = dtype {
            let (tag, len) = (recv_tag(m.tag)?, basic_len(m.buf, m.count, b)?);
            // SAFETY: the buffer is valid for the duration of this blocking call.
            let outcome = unsafe { c.recv_raw(m.buf as *mut u8, len, m.source, tag) };
            // SAFETY: MPI_STATUS_IGNORE or a writable status.
            return unsafe { report_now(outcome, None, status) };
        }
        // SAFETY: the buffer is valid for the duration of this blocking call.
        let (req, cc) = unsafe { start_recv_as(&c, m, &dtype) }?;
        // SAFETY: MPI_STATUS_IGNORE or a writable status.
        unsafe { complete_now(req, cc, status) }
    })
}

/// Shared body of MPI_Irecv(_c).
///
/// # Safety
/// MPI's rules for a receive buffer, until the request completes.
pub(crate) unsafe fn recv_started(
    name: &'static str,
    m: Incoming,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    run_on_with(name, comm, |c, errh| {
        require(request, "request pointer")?;
        // SAFETY: MPI requires the buffer to stay valid until completion.
        let (req, cc) = unsafe { start_recv(&c, m) }?;
        out(request, insert(req, errh, cc))
    })
}

/// Receives a message.
#[no_mangle]
pub unsafe extern "C" fn MPI_Recv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let m = Incoming::new(buf, count, datatype, source, tag);
    // SAFETY: MPI's rules for the buffer and the status.
    unsafe { recv_blocking("Recv", m, comm, status) }
}

/// Starts a receive.
#[no_mangle]
pub unsafe extern "C" fn MPI_Irecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let m = Incoming::new(buf, count, datatype, source, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { recv_started("Irecv", m, comm, request) }
}
