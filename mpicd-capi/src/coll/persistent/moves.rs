//! Data movement: broadcast, gathers, scatters (all-to-alls: [`super::alltoalls`]). The `_c` variants take MPI_Count counts and MPI_Aint displacements.

#![allow(clippy::too_many_arguments)]

use crate::abi::*;
use crate::coll::args;
use crate::coll::writer::Arg;
use crate::coll::{Launch, Wide};
use std::ffi::{c_int, c_void};
use std::ptr::null;

/// A persistent request for: the root's buffer copied to every member.
#[no_mangle]
pub unsafe extern "C" fn MPI_Bcast_init(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::bcast(
            "Bcast_init",
            Launch::Persist(request),
            buffer,
            count.wide(),
            datatype,
            root,
            comm,
        )
    }
}

/// A persistent request for: the root's buffer copied to every member (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Bcast_init_c(
    buffer: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::bcast(
            "Bcast_init_c",
            Launch::Persist(request),
            buffer,
            count.wide(),
            datatype,
            root,
            comm,
        )
    }
}

/// A persistent request for: equal blocks gathered at the root.
#[no_mangle]
pub unsafe extern "C" fn MPI_Gather_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::gather::<c_int, c_int>(
            "Gather_init",
            true,
            Launch::Persist(request),
            Arg::new(sendbuf, sendcount.wide(), sendtype),
            recvbuf,
            recvcount.wide(),
            null(),
            null(),
            recvtype,
            root,
            comm,
        )
    }
}

/// A persistent request for: equal blocks gathered at the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Gather_init_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::gather::<c_int, c_int>(
            "Gather_init_c",
            true,
            Launch::Persist(request),
            Arg::new(sendbuf, sendcount.wide(), sendtype),
            recvbuf,
            recvcount.wide(),
            null(),
            null(),
            recvtype,
            root,
            comm,
        )
    }
}

/// A persistent request for: blocks of varying sizes gathered at the root.
#[no_mangle]
pub unsafe extern "C" fn MPI_Gatherv_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::gather(
            "Gatherv_init",
            false,
            Launch::Persist(request),
            Arg::new(sendbuf, sendcount.wide(), sendtype),
            recvbuf,
            0,
            recvcounts,
            displs,
            recvtype,
            root,
            comm,
        )
    }
}

/// A persistent request for: blocks of varying sizes gathered at the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Gatherv_init_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::gather(
            "Gatherv_init_c",
            false,
            Launch::Persist(request),
            Arg::new(sendbuf, sendcount.wide(), sendtype),
            recvbuf,
            0,
            recvcounts,
            displs,
            recvtype,
            root,
            comm,
        )
    }
}

/// A persistent request for: equal blocks scattered from the root.
#[no_mangle]
pub unsafe extern "C" fn MPI_Scatter_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::scatter::<c_int, c_int>(
            "Scatter_init",
            true,
            Launch::Persist(request),
            sendbuf,
            sendcount.wide(),
            null(),
            null(),
            sendtype,
            Arg::new(recvbuf, recvcount.wide(), recvtype),
            root,
            comm,
        )
    }
}

/// A persistent request for: equal blocks scattered from the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Scatter_init_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::scatter::<c_int, c_int>(
            "Scatter_init_c",
            true,
            Launch::Persist(request),
            sendbuf,
            sendcount.wide(),
            null(),
            null(),
            sendtype,
            Arg::new(recvbuf, recvcount.wide(), recvtype),
            root,
            comm,
        )
    }
}

/// A persistent request for: blocks of varying sizes scattered from the root.
#[no_mangle]
pub unsafe extern "C" fn MPI_Scatterv_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::scatter(
            "Scatterv_init",
            false,
            Launch::Persist(request),
            sendbuf,
            0,
            sendcounts,
            displs,
            sendtype,
            Arg::new(recvbuf, recvcount.wide(), recvtype),
            root,
            comm,
        )
    }
}

/// A persistent request for: blocks of varying sizes scattered from the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Scatterv_init_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::scatter(
            "Scatterv_init_c",
            false,
            Launch::Persist(request),
            sendbuf,
            0,
            sendcounts,
            displs,
            sendtype,
            Arg::new(recvbuf, recvcount.wide(), recvtype),
            root,
            comm,
        )
    }
}

/// A persistent request for: every member's block on every member.
#[no_mangle]
pub unsafe extern "C" fn MPI_Allgather_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allgather::<c_int, c_int>(
            "Allgather_init",
            Launch::Persist(request),
            Arg::new(sendbuf, sendcount.wide(), sendtype),
            recvbuf,
            recvcount.wide(),
            null(),
            null(),
            recvtype,
            comm,
        )
    }
}

/// A persistent request for: every member's block on every member (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Allgather_init_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allgather::<c_int, c_int>(
            "Allgather_init_c",
            Launch::Persist(request),
            Arg::new(sendbuf, sendcount.wide(), sendtype),
            recvbuf,
            recvcount.wide(),
            null(),
            null(),
            recvtype,
            comm,
        )
    }
}

/// A persistent request for: every member's block, of varying sizes, on every member.
#[no_mangle]
pub unsafe extern "C" fn MPI_Allgatherv_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allgather(
            "Allgatherv_init",
            Launch::Persist(request),
            Arg::new(sendbuf, sendcount.wide(), sendtype),
            recvbuf,
            0,
            recvcounts,
            displs,
            recvtype,
            comm,
        )
    }
}

/// A persistent request for: every member's block, of varying sizes, on every member (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Allgatherv_init_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allgather(
            "Allgatherv_init_c",
            Launch::Persist(request),
            Arg::new(sendbuf, sendcount.wide(), sendtype),
            recvbuf,
            0,
            recvcounts,
            displs,
            recvtype,
            comm,
        )
    }
}
