//! Data movement: broadcast, gathers, scatters, all-to-alls. The `_c` variants take MPI_Count counts and MPI_Aint displacements.

#![allow(clippy::too_many_arguments)]

use crate::abi::*;
use crate::coll::args::{self, typed, uniform, varying_side};
use crate::coll::writer::Arg;
use crate::coll::{Launch, Wide};
use std::ffi::{c_int, c_void};
use std::ptr::null;

/// Starts: the root's buffer copied to every member.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ibcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::bcast(
            "Ibcast",
            Launch::Start(request),
            buffer,
            count.wide(),
            datatype,
            root,
            comm,
        )
    }
}

/// Starts: the root's buffer copied to every member (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Ibcast_c(
    buffer: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::bcast(
            "Ibcast_c",
            Launch::Start(request),
            buffer,
            count.wide(),
            datatype,
            root,
            comm,
        )
    }
}

/// Starts: equal blocks gathered at the root.
#[no_mangle]
pub unsafe extern "C" fn MPI_Igather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::gather::<c_int, c_int>(
            "Igather",
            true,
            Launch::Start(request),
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

/// Starts: equal blocks gathered at the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Igather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::gather::<c_int, c_int>(
            "Igather_c",
            true,
            Launch::Start(request),
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

/// Starts: blocks of varying sizes gathered at the root.
#[no_mangle]
pub unsafe extern "C" fn MPI_Igatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::gather(
            "Igatherv",
            false,
            Launch::Start(request),
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

/// Starts: blocks of varying sizes gathered at the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Igatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::gather(
            "Igatherv_c",
            false,
            Launch::Start(request),
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

/// Starts: equal blocks scattered from the root.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iscatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::scatter::<c_int, c_int>(
            "Iscatter",
            true,
            Launch::Start(request),
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

/// Starts: equal blocks scattered from the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Iscatter_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::scatter::<c_int, c_int>(
            "Iscatter_c",
            true,
            Launch::Start(request),
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

/// Starts: blocks of varying sizes scattered from the root.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iscatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::scatter(
            "Iscatterv",
            false,
            Launch::Start(request),
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

/// Starts: blocks of varying sizes scattered from the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Iscatterv_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::scatter(
            "Iscatterv_c",
            false,
            Launch::Start(request),
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

/// Starts: every member's block on every member.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iallgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allgather::<c_int, c_int>(
            "Iallgather",
            Launch::Start(request),
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

/// Starts: every member's block on every member (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Iallgather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allgather::<c_int, c_int>(
            "Iallgather_c",
            Launch::Start(request),
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

/// Starts: every member's block, of varying sizes, on every member.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iallgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allgather(
            "Iallgatherv",
            Launch::Start(request),
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

/// Starts: every member's block, of varying sizes, on every member (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Iallgatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allgather(
            "Iallgatherv_c",
            Launch::Start(request),
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

/// Starts: block i of every member sent to member i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ialltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall::<c_int, c_int>(
            "Ialltoall",
            Launch::Start(request),
            uniform(sendbuf, sendcount.wide(), sendtype),
            uniform(recvbuf, recvcount.wide(), recvtype),
            comm,
        )
    }
}

/// Starts: block i of every member sent to member i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Ialltoall_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall::<c_int, c_int>(
            "Ialltoall_c",
            Launch::Start(request),
            uniform(sendbuf, sendcount.wide(), sendtype),
            uniform(recvbuf, recvcount.wide(), recvtype),
            comm,
        )
    }
}

/// Starts: block i (of varying size) of every member sent to member i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ialltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall(
            "Ialltoallv",
            Launch::Start(request),
            varying_side(sendbuf, sendcounts, sdispls, sendtype),
            varying_side(recvbuf, recvcounts, rdispls, recvtype),
            comm,
        )
    }
}

/// Starts: block i (of varying size) of every member sent to member i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Ialltoallv_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall(
            "Ialltoallv_c",
            Launch::Start(request),
            varying_side(sendbuf, sendcounts, sdispls, sendtype),
            varying_side(recvbuf, recvcounts, rdispls, recvtype),
            comm,
        )
    }
}

/// Starts: block i (its own size, datatype and byte displacement) of every member sent to member i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ialltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall(
            "Ialltoallw",
            Launch::Start(request),
            typed(sendbuf, sendcounts, sdispls, sendtypes),
            typed(recvbuf, recvcounts, rdispls, recvtypes),
            comm,
        )
    }
}

/// Starts: block i (its own size, datatype and byte displacement) of every member sent to member i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Ialltoallw_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall(
            "Ialltoallw_c",
            Launch::Start(request),
            typed(sendbuf, sendcounts, sdispls, sendtypes),
            typed(recvbuf, recvcounts, rdispls, recvtypes),
            comm,
        )
    }
}
