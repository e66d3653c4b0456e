//! The MPI-4 large-count (`_c`) forms of the point-to-point calls of `p2p.rs`: the same
//! bodies with MPI_Count counts.

use crate::abi::*;
use crate::p2p::{recv_blocking, recv_started, send_blocking, send_started, Incoming, Outgoing};
use mpicd::SendMode;
use std::ffi::{c_int, c_void};

/// [`MPI_Send`](crate::p2p::MPI_Send) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Send_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { send_blocking("Send_c", m, comm, SendMode::Standard) }
}

/// [`MPI_Ssend`](crate::p2p::MPI_Ssend) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ssend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { send_blocking("Ssend_c", m, comm, SendMode::Synchronous) }
}

/// [`MPI_Rsend`](crate::p2p::MPI_Rsend) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rsend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { send_blocking("Rsend_c", m, comm, SendMode::Standard) }
}

/// [`MPI_Isend`](crate::p2p::MPI_Isend) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Isend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { send_started("Isend_c", m, comm, request, SendMode::Standard) }
}

/// [`MPI_Issend`](crate::p2p::MPI_Issend) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Issend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { send_started("Issend_c", m, comm, request, SendMode::Synchronous) }
}

/// [`MPI_Irsend`](crate::p2p::MPI_Irsend) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Irsend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { send_started("Irsend_c", m, comm, request, SendMode::Standard) }
}

/// [`MPI_Recv`](crate::p2p::MPI_Recv) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Recv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let m = Incoming::new(buf, count, datatype, source, tag);
    // SAFETY: MPI's rules for the buffer and the status.
    unsafe { recv_blocking("Recv_c", m, comm, status) }
}

/// [`MPI_Irecv`](crate::p2p::MPI_Irecv) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Irecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let m = Incoming::new(buf, count, datatype, source, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { recv_started("Irecv_c", m, comm, request) }
}
