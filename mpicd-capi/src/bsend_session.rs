//! The MPI 4.1 session buffers: `MPI_Session_attach_buffer`, `_detach_buffer`,
//! `_flush_buffer`, `_iflush_buffer` and the `_c` forms. A buffered send on a communicator
//! deriving from a session (made from a group of its process sets, or from such a
//! communicator) that has no buffer of its own uses its session's (see [`crate::bsend`]);
//! `MPI_Session_finalize` waits for those sends and detaches the buffer.

use crate::abi::*;
use crate::bsend::{attach, detach, flush, report, Owner};
use crate::env::{out, require};
use crate::requests::{insert_work, Work};
use crate::sessions::{errh, run_on};
use std::ffi::{c_int, c_void};

/// Attaches `buffer` of `size` bytes (or MPI_BUFFER_AUTOMATIC) for the buffered sends on the
/// communicators deriving from `session` that have no buffer of their own (MPI 4.1).
/// MPI_ERR_BUFFER if the session has one already.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_attach_buffer(
    session: MPI_Session,
    buffer: *mut c_void,
    size: c_int,
) -> c_int {
    run_on("Session_attach_buffer", session, |_| {
        attach(Owner::Session(session as usize), buffer, size.into())
    })
}

/// [`MPI_Session_attach_buffer`] with an MPI_Count size.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_attach_buffer_c(
    session: MPI_Session,
    buffer: *mut c_void,
    size: MPI_Count,
) -> c_int {
    run_on("Session_attach_buffer_c", session, |_| {
        attach(Owner::Session(session as usize), buffer, size)
    })
}

/// Waits for the buffered sends from `session`'s buffer, then detaches it: its address at
/// `*(void **)buffer_addr` and its size at `*size` (MPI_ERR_BUFFER if none is attached).
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_detach_buffer(
    session: MPI_Session,
    buffer_addr: *mut c_void,
    size: *mut c_int,
) -> c_int {
    run_on("Session_detach_buffer", session, |_| {
        report(detach(Owner::Session(session as usize))?, buffer_addr, size)
    })
}

/// [`MPI_Session_detach_buffer`] with an MPI_Count size.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_detach_buffer_c(
    session: MPI_Session,
    buffer_addr: *mut c_void,
    size: *mut MPI_Count,
) -> c_int {
    run_on("Session_detach_buffer_c", session, |_| {
        report(detach(Owner::Session(session as usize))?, buffer_addr, size)
    })
}

/// Waits until the buffered sends from `session`'s buffer have completed.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_flush_buffer(session: MPI_Session) -> c_int {
    run_on("Session_flush_buffer", session, |_| {
        flush(Some(Owner::Session(session as usize)));
        Ok(())
    })
}

/// A request that completes once the buffered sends from `session`'s buffer have.
#[no_mangle]
pub unsafe extern "C" fn MPI_Session_iflush_buffer(
    session: MPI_Session,
    request: *mut MPI_Request,
) -> c_int {
    run_on("Session_iflush_buffer", session, |_| {
        require(request, "request pointer")?;
        let work = Work::Flush(Owner::Session(session as usize));
        out(request, insert_work(work, errh(session), None))
    })
}
