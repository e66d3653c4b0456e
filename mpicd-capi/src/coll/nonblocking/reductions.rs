//! The barrier and the reductions: reduce, allreduce, reduce-scatter, scans. The `_c` variants take MPI_Count counts and MPI_Aint displacements.

#![allow(clippy::too_many_arguments)]

use crate::abi::*;
use crate::coll::args;
use crate::coll::{Launch, Wide};
use std::ffi::{c_int, c_void};
use std::ptr::null;

/// Starts: every member has called it.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ibarrier(comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    args::barrier("Ibarrier", Launch::Start(request), comm)
}

/// Starts: every member's data reduced at the root.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ireduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce(
            "Ireduce",
            Launch::Start(request),
            sendbuf,
            recvbuf,
            count.wide(),
            datatype,
            op,
            root,
            comm,
        )
    }
}

/// Starts: every member's data reduced at the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Ireduce_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce(
            "Ireduce_c",
            Launch::Start(request),
            sendbuf,
            recvbuf,
            count.wide(),
            datatype,
            op,
            root,
            comm,
        )
    }
}

/// Starts: every member's data reduced, on every member.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iallreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Iallreduce",
            Launch::Start(request),
            sendbuf,
            recvbuf,
            count.wide(),
            datatype,
            op,
            comm,
            None,
        )
    }
}

/// Starts: every member's data reduced, on every member (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Iallreduce_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Iallreduce_c",
            Launch::Start(request),
            sendbuf,
            recvbuf,
            count.wide(),
            datatype,
            op,
            comm,
            None,
        )
    }
}

/// Starts: the reduction scattered in blocks of varying sizes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ireduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce_scatter(
            "Ireduce_scatter",
            Launch::Start(request),
            sendbuf,
            recvbuf,
            recvcounts,
            None,
            datatype,
            op,
            comm,
        )
    }
}

/// Starts: the reduction scattered in blocks of varying sizes (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Ireduce_scatter_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce_scatter(
            "Ireduce_scatter_c",
            Launch::Start(request),
            sendbuf,
            recvbuf,
            recvcounts,
            None,
            datatype,
            op,
            comm,
        )
    }
}

/// Starts: the reduction scattered in equal blocks.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ireduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce_scatter(
            "Ireduce_scatter_block",
            Launch::Start(request),
            sendbuf,
            recvbuf,
            null::<c_int>(),
            Some(recvcount.wide()),
            datatype,
            op,
            comm,
        )
    }
}

/// Starts: the reduction scattered in equal blocks (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Ireduce_scatter_block_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce_scatter(
            "Ireduce_scatter_block_c",
            Launch::Start(request),
            sendbuf,
            recvbuf,
            null::<c_int>(),
            Some(recvcount.wide()),
            datatype,
            op,
            comm,
        )
    }
}

/// Starts: member r gets the reduction of members 0..=r, in rank order.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Iscan",
            Launch::Start(request),
            sendbuf,
            recvbuf,
            count.wide(),
            datatype,
            op,
            comm,
            Some(false),
        )
    }
}

/// Starts: member r gets the reduction of members 0..=r, in rank order (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Iscan_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Iscan_c",
            Launch::Start(request),
            sendbuf,
            recvbuf,
            count.wide(),
            datatype,
            op,
            comm,
            Some(false),
        )
    }
}

/// Starts: member r > 0 gets the reduction of members 0..r, in rank order (member 0's recvbuf is left as it was).
#[no_mangle]
pub unsafe extern "C" fn MPI_Iexscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Iexscan",
            Launch::Start(request),
            sendbuf,
            recvbuf,
            count.wide(),
            datatype,
            op,
            comm,
            Some(true),
        )
    }
}

/// Starts: member r > 0 gets the reduction of members 0..r, in rank order (member 0's recvbuf is left as it was) (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Iexscan_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Iexscan_c",
            Launch::Start(request),
            sendbuf,
            recvbuf,
            count.wide(),
            datatype,
            op,
            comm,
            Some(true),
        )
    }
}
