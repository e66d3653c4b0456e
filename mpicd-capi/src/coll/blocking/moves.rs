//! Data movement: broadcast, gathers, scatters, all-to-alls. The `_c` variants take MPI_Count counts and MPI_Aint displacements.

#![allow(clippy::too_many_arguments)]

use crate::abi::*;
use crate::coll::args::{self, typed, uniform, varying_side};
use crate::coll::writer::Arg;
use crate::coll::{Launch, Wide};
use std::ffi::{c_int, c_void};
use std::ptr::null;

/// The root's buffer copied to every member.
#[no_mangle]
pub unsafe extern "C" fn MPI_Bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::bcast(
            "Bcast",
            Launch::Now,
            buffer,
            count.wide(),
            datatype,
            root,
            comm,
        )
    }
}

/// The root's buffer copied to every member (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Bcast_c(
    buffer: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::bcast(
            "Bcast_c",
            Launch::Now,
            buffer,
            count.wide(),
            datatype,
            root,
            comm,
        )
    }
}

/// Equal blocks gathered at the root.
#[no_mangle]
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
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::gather::<c_int, c_int>(
            "Gather",
            true,
            Launch::Now,
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

/// Equal blocks gathered at the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Gather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::gather::<c_int, c_int>(
            "Gather_c",
            true,
            Launch::Now,
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

/// Blocks of varying sizes gathered at the root.
#[no_mangle]
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
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::gather(
            "Gatherv",
            false,
            Launch::Now,
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

/// Blocks of varying sizes gathered at the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Gatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::gather(
            "Gatherv_c",
            false,
            Launch::Now,
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

/// Equal blocks scattered from the root.
#[no_mangle]
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
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::scatter::<c_int, c_int>(
            "Scatter",
            true,
            Launch::Now,
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

/// Equal blocks scattered from the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Scatter_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::scatter::<c_int, c_int>(
            "Scatter_c",
            true,
            Launch::Now,
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

/// Blocks of varying sizes scattered from the root.
#[no_mangle]
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
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::scatter(
            "Scatterv",
            false,
            Launch::Now,
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

/// Blocks of varying sizes scattered from the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Scatterv_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::scatter(
            "Scatterv_c",
            false,
            Launch::Now,
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

/// Every member's block on every member.
#[no_mangle]
pub unsafe extern "C" fn MPI_Allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allgather::<c_int, c_int>(
            "Allgather",
            Launch::Now,
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

/// Every member's block on every member (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Allgather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allgather::<c_int, c_int>(
            "Allgather_c",
            Launch::Now,
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

/// Every member's block, of varying sizes, on every member.
#[no_mangle]
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
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allgather(
            "Allgatherv",
            Launch::Now,
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

/// Every member's block, of varying sizes, on every member (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Allgatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allgather(
            "Allgatherv_c",
            Launch::Now,
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

/// Block i of every member sent to member i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall::<c_int, c_int>(
            "Alltoall",
            Launch::Now,
            uniform(sendbuf, sendcount.wide(), sendtype),
            uniform(recvbuf, recvcount.wide(), recvtype),
            comm,
        )
    }
}

/// Block i of every member sent to member i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoall_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall::<c_int, c_int>(
            "Alltoall_c",
            Launch::Now,
            uniform(sendbuf, sendcount.wide(), sendtype),
            uniform(recvbuf, recvcount.wide(), recvtype),
            comm,
        )
    }
}

/// Block i (of varying size) of every member sent to member i.
#[no_mangle]
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
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall(
            "Alltoallv",
            Launch::Now,
            varying_side(sendbuf, sendcounts, sdispls, sendtype),
            varying_side(recvbuf, recvcounts, rdispls, recvtype),
            comm,
        )
    }
}

/// Block i (of varying size) of every member sent to member i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallv_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall(
            "Alltoallv_c",
            Launch::Now,
            varying_side(sendbuf, sendcounts, sdispls, sendtype),
            varying_side(recvbuf, recvcounts, rdispls, recvtype),
            comm,
        )
    }
}

/// Block i (its own size, datatype and byte displacement) of every member sent to member i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall(
            "Alltoallw",
            Launch::Now,
            typed(sendbuf, sendcounts, sdispls, sendtypes),
            typed(recvbuf, recvcounts, rdispls, recvtypes),
            comm,
        )
    }
}

/// Block i (its own size, datatype and byte displacement) of every member sent to member i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallw_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::alltoall(
            "Alltoallw_c",
            Launch::Now,
            typed(sendbuf, sendcounts, sdispls, sendtypes),
            typed(recvbuf, recvcounts, rdispls, recvtypes),
            comm,
        )
    }
}
