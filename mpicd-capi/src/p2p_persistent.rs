//! Persistent point-to-point requests: MPI_Send_init, MPI_Bsend_init, MPI_Ssend_init,
//! MPI_Rsend_init, MPI_Recv_init and their MPI-4 `_c` forms. Each makes an inactive persistent
//! request (see [`crate::requests`]) whose every MPI_Start posts the operation anew, with the
//! arguments and the datatype as they were at init (the datatype handle may be freed
//! meanwhile). Any datatype works: predefined, derived and custom. A ready-mode send is a
//! standard one (as MPI_Rsend is); a buffered one copies the message into the attached buffer
//! at each start and is complete at once (see [`crate::bsend`]).

use crate::abi::*;
use crate::bsend;
use crate::comms::{errh, run_on};
use crate::env::{out, require};
use crate::p2p::{
    check_peer, count_of, dtype_for, recv_tag, send_tag, start_recv_as, start_send_as,
};
use crate::p2p::{Incoming, Outgoing};
use crate::requests::{insert_persistent_work, Work, WorkStarter};
use crate::types::Dtype;
use mpicd::SendMode;
use std::ffi::{c_int, c_void};

/// How a persistent send sends.
#[derive(Clone, Copy)]
enum Mode {
    Standard,
    Synchronous,
    Buffered,
}

/// Shared body of the persistent sends.
///
/// # Safety
/// MPI's rules for a persistent send's buffer: valid while the request lives, unchanged while
/// it is active.
unsafe fn send_init(
    name: &'static str,
    m: Outgoing,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    mode: Mode,
) -> c_int {
    run_on(name, comm, |c| {
        require(request, "request pointer")?;
        count_of(m.count)?;
        send_tag(m.tag)?;
        check_peer(&c, m.dest, false)?;
        let start: WorkStarter = match mode {
            Mode::Buffered => {
                let ty = bsend::packable(m.datatype)?;
                let key = comm as usize;
                // SAFETY: the buffer is valid at each start (MPI's rules above).
                Box::new(move || unsafe { bsend::bsend(&c, key, m, &ty) }.map(|()| Work::done()))
            }
            Mode::Standard | Mode::Synchronous => {
                let dtype = dtype_for(m.datatype, m.dest)?;
                let how = match mode {
                    Mode::Synchronous => SendMode::Synchronous,
                    _ => SendMode::Standard,
                };
                // SAFETY: as above, until each started operation completes.
                Box::new(move || unsafe { start_send_as(&c, m, &dtype, how) }.map(Work::core))
            }
        };
        out(request, insert_persistent_work(start, errh(comm), None))
    })
}

/// Shared body of MPI_Recv_init(_c).
///
/// # Safety
/// MPI's rules for a persistent receive's buffer: valid while the request lives, untouched
/// while it is active.
unsafe fn recv_init(
    name: &'static str,
    m: Incoming,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    run_on(name, comm, |c| {
        require(request, "request pointer")?;
        let count = count_of(m.count)?;
        recv_tag(m.tag)?;
        check_peer(&c, m.source, true)?;
        let dtype = dtype_for(m.datatype, m.source)?;
        let custom_count = matches!(dtype, Dtype::Custom(_)).then_some(count);
        // SAFETY: as above, until each started receive completes.
        let start: WorkStarter =
            Box::new(move || unsafe { start_recv_as(&c, m, &dtype) }.map(|(r, _)| Work::core(r)));
        out(
            request,
            insert_persistent_work(start, errh(comm), custom_count),
        )
    })
}

/// A persistent standard-mode send: inactive until MPI_Start, which sends anew each time.
#[no_mangle]
pub unsafe extern "C" fn MPI_Send_init(
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
    unsafe { send_init("Send_init", m, comm, request, Mode::Standard) }
}

/// [`MPI_Send_init`] with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Send_init_c(
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
    unsafe { send_init("Send_init_c", m, comm, request, Mode::Standard) }
}

/// A persistent buffered send: each MPI_Start copies the message into the attached buffer
/// and completes at once.
#[no_mangle]
pub unsafe extern "C" fn MPI_Bsend_init(
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
    unsafe { send_init("Bsend_init", m, comm, request, Mode::Buffered) }
}

/// [`MPI_Bsend_init`] with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Bsend_init_c(
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
    unsafe { send_init("Bsend_init_c", m, comm, request, Mode::Buffered) }
}

/// A persistent synchronous send: each started send completes once the receive matched it.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ssend_init(
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
    unsafe { send_init("Ssend_init", m, comm, request, Mode::Synchronous) }
}

/// [`MPI_Ssend_init`] with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ssend_init_c(
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
    unsafe { send_init("Ssend_init_c", m, comm, request, Mode::Synchronous) }
}

/// A persistent ready-mode send (a standard send in mpicd).
#[no_mangle]
pub unsafe extern "C" fn MPI_Rsend_init(
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
    unsafe { send_init("Rsend_init", m, comm, request, Mode::Standard) }
}

/// [`MPI_Rsend_init`] with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rsend_init_c(
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
    unsafe { send_init("Rsend_init_c", m, comm, request, Mode::Standard) }
}

/// A persistent receive: inactive until MPI_Start, which posts it anew each time.
#[no_mangle]
pub unsafe extern "C" fn MPI_Recv_init(
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
    unsafe { recv_init("Recv_init", m, comm, request) }
}

/// [`MPI_Recv_init`] with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Recv_init_c(
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
    unsafe { recv_init("Recv_init_c", m, comm, request) }
}
