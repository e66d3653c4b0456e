//! Point-to-point calls: Send, Ssend, Rsend, Isend, Issend, Irsend, Recv, Irecv, Sendrecv,
//! Sendrecv_replace, for predefined datatypes (contiguous bytes) and custom datatypes (through
//! the callback adapter).

use crate::abi::*;
use crate::comms::{errh, run_on};
use crate::custom::Operation;
use crate::env::{out, require};
use crate::errors::{fail, CResult};
use crate::requests::{complete_now, insert, outcome_to_c};
use crate::types::{self, byte_len, Dtype};
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

/// The core tag of a receive tag (MPI_ANY_TAG is -31 in the ABI, -1 in the core).
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
unsafe fn start_send(
    comm: &Communicator,
    m: Outgoing,
    mode: SendMode,
) -> CResult<Request<'static>> {
    let dtype = types::get(m.datatype)?;
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
            let len = byte_len(m.count, b)?;
            check_buf(m.buf, len)?;
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
unsafe fn start_recv(comm: &Communicator, m: Incoming) -> CResult<(Request<'static>, Option<i64>)> {
    let dtype = types::get(m.datatype)?;
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
            let len = byte_len(m.count, b)?;
            check_buf(m.buf, len)?;
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
unsafe fn send_blocking(name: &'static str, m: Outgoing, comm: MPI_Comm, mode: SendMode) -> c_int {
    run_on(name, comm, |c| {
        // SAFETY: forwarded from the caller.
        let req = unsafe { start_send(&c, m, mode) }?;
        req.wait()?;
        Ok(())
    })
}

/// Shared body of the non-blocking sends.
///
/// # Safety
/// As for [`start_send`], until the request completes.
unsafe fn send_started(
    name: &'static str,
    m: Outgoing,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    mode: SendMode,
) -> c_int {
    run_on(name, comm, |c| {
        require(request, "request pointer")?;
        // SAFETY: forwarded from the caller.
        let req = unsafe { start_send(&c, m, mode) }?;
        out(request, insert(req, errh(comm), None))
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
    run_on("Recv", comm, |c| {
        // SAFETY: the buffer is valid for the duration of this blocking call.
        let (req, cc) = unsafe { start_recv(&c, m) }?;
        // SAFETY: MPI_STATUS_IGNORE or a writable status.
        unsafe { complete_now(req, cc, status) }
    })
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
    run_on("Irecv", comm, |c| {
        require(request, "request pointer")?;
        // SAFETY: MPI requires the buffer to stay valid until completion.
        let (req, cc) = unsafe { start_recv(&c, m) }?;
        out(request, insert(req, errh(comm), cc))
    })
}

/// Sends and receives at once (no deadlock whatever the order of the peers).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn MPI_Sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let incoming = Incoming::new(recvbuf, recvcount, recvtype, source, recvtag);
    let outgoing = Outgoing::new(sendbuf, sendcount, sendtype, dest, sendtag);
    run_on("Sendrecv", comm, |c| {
        // SAFETY: both buffers are valid for the duration of this blocking call.
        let (recv, cc) = unsafe { start_recv(&c, incoming) }?;
        // SAFETY: as above.
        let send = unsafe { start_send(&c, outgoing, SendMode::Standard) };
        let send = match send {
            Ok(s) => s,
            Err(f) => {
                let _ = recv.cancel();
                return Err(f);
            }
        };
        let mut outcomes = mpicd::wait_all_outcomes(&mut [recv, send]).into_iter();
        let received = outcomes.next().unwrap_or(Err(mpicd::Error::InvalidRequest));
        outcomes
            .next()
            .unwrap_or(Err(mpicd::Error::InvalidRequest))?;
        let (s, failure) = outcome_to_c(received, cc);
        if let Some(f) = failure {
            return Err(f);
        }
        // SAFETY: MPI_STATUS_IGNORE or a writable status.
        unsafe { crate::status::store(status, s) };
        Ok(())
    })
}

/// Sends the buffer and replaces it with the received message (predefined and derived types;
/// the message is received into a buffer of its data's size, then placed).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn MPI_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    run_on("Sendrecv_replace", comm, |c| {
        let elem = crate::blocks::Elem::of(datatype)?;
        let len = elem.packed(count as i64)?;
        let mut incoming = vec![0u8; len];
        let tag = recv_tag(recvtag)?;
        // SAFETY: `incoming` outlives the request, which is waited for below.
        let recv = unsafe { c.irecv_raw(incoming.as_mut_ptr(), len, source, tag) }?;
        let outgoing = Outgoing::new(buf, count, datatype, dest, sendtag);
        // SAFETY: `buf` is valid for this blocking call.
        let send = unsafe { start_send(&c, outgoing, SendMode::Standard) }?;
        let received = recv.wait();
        send.wait()?;
        let got = received?;
        let n = (got.bytes.unwrap_or(0) as usize).min(len);
        // SAFETY: `buf` holds `count` elements, sent and no longer in use.
        unsafe { elem.write(buf, count as i64, &incoming[..n]) }?;
        // SAFETY: MPI_STATUS_IGNORE or a writable status.
        unsafe { crate::status::store(status, crate::status::from_core(&got, None)) };
        Ok(())
    })
}
