//! The barrier and the reductions: reduce, allreduce, reduce-scatter, scans. The `_c` variants take MPI_Count counts and MPI_Aint displacements.

#![allow(clippy::too_many_arguments)]

use crate::abi::*;
use crate::coll::args;
use crate::coll::{Launch, Wide};
use std::ffi::{c_int, c_void};
use std::ptr::null;

/// Every member has called it.
#[no_mangle]
pub unsafe extern "C" fn MPI_Barrier(comm: MPI_Comm) -> c_int {
    args::barrier("Barrier", Launch::Now, comm)
}

/// Every member's data reduced at the root.
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce(
            "Reduce",
            Launch::Now,
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

/// Every member's data reduced at the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce(
            "Reduce_c",
            Launch::Now,
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

/// Every member's data reduced, on every member.
#[no_mangle]
pub unsafe extern "C" fn MPI_Allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Allreduce",
            Launch::Now,
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

/// Every member's data reduced, on every member (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Allreduce_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Allreduce_c",
            Launch::Now,
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

/// The reduction scattered in blocks of varying sizes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce_scatter(
            "Reduce_scatter",
            Launch::Now,
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

/// The reduction scattered in blocks of varying sizes (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce_scatter(
            "Reduce_scatter_c",
            Launch::Now,
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

/// The reduction scattered in equal blocks.
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce_scatter(
            "Reduce_scatter_block",
            Launch::Now,
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

/// The reduction scattered in equal blocks (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_block_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce_scatter(
            "Reduce_scatter_block_c",
            Launch::Now,
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

/// Member r gets the reduction of members 0..=r, in rank order.
#[no_mangle]
pub unsafe extern "C" fn MPI_Scan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Scan",
            Launch::Now,
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

/// Member r gets the reduction of members 0..=r, in rank order (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Scan_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Scan_c",
            Launch::Now,
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

/// Member r > 0 gets the reduction of members 0..r, in rank order (member 0's recvbuf is left as it was).
#[no_mangle]
pub unsafe extern "C" fn MPI_Exscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Exscan",
            Launch::Now,
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

/// Member r > 0 gets the reduction of members 0..r, in rank order (member 0's recvbuf is left as it was) (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Exscan_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Exscan_c",
            Launch::Now,
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
