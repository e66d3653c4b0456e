//! All-to-all: Alltoall, Alltoallv and Alltoallw. The `_c` variants take MPI_Count counts and MPI_Aint displacements.

#![allow(clippy::too_many_arguments)]

use crate::abi::*;
use crate::coll::args::{self, typed, uniform, varying_side};
use crate::coll::{Launch, Wide};
use std::ffi::{c_int, c_void};

/// A persistent request for: block i of every member sent to member i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoall_init(
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
        args::alltoall::<c_int, c_int>(
            "Alltoall_init",
            Launch::Persist(request),
            uniform(sendbuf, sendcount.wide(), sendtype),
            uniform(recvbuf, recvcount.wide(), recvtype),
            comm,
        )
    }
}

/// A persistent request for: block i of every member sent to member i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoall_init_c(
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
        args::alltoall::<c_int, c_int>(
            "Alltoall_init_c",
            Launch::Persist(request),
            uniform(sendbuf, sendcount.wide(), sendtype),
            uniform(recvbuf, recvcount.wide(), recvtype),
            comm,
        )
    }
}

/// A persistent request for: block i (of varying size) of every member sent to member i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallv_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall(
            "Alltoallv_init",
            Launch::Persist(request),
            varying_side(sendbuf, sendcounts, sdispls, sendtype),
            varying_side(recvbuf, recvcounts, rdispls, recvtype),
            comm,
        )
    }
}

/// A persistent request for: block i (of varying size) of every member sent to member i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallv_init_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall(
            "Alltoallv_init_c",
            Launch::Persist(request),
            varying_side(sendbuf, sendcounts, sdispls, sendtype),
            varying_side(recvbuf, recvcounts, rdispls, recvtype),
            comm,
        )
    }
}

/// A persistent request for: block i (its own size, datatype and byte displacement) of every member sent to member i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallw_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall(
            "Alltoallw_init",
            Launch::Persist(request),
            typed(sendbuf, sendcounts, sdispls, sendtypes),
            typed(recvbuf, recvcounts, rdispls, recvtypes),
            comm,
        )
    }
}

/// A persistent request for: block i (its own size, datatype and byte displacement) of every member sent to member i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallw_init_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall(
            "Alltoallw_init_c",
            Launch::Persist(request),
            typed(sendbuf, sendcounts, sdispls, sendtypes),
            typed(recvbuf, recvcounts, rdispls, recvtypes),
            comm,
        )
    }
}
