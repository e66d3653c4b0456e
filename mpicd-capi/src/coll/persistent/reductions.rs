//! The barrier and the reductions: reduce, allreduce, reduce-scatter, scans. The `_c` variants take MPI_Count counts and MPI_Aint displacements.

#![allow(clippy::too_many_arguments)]

use crate::abi::*;
use crate::coll::args;
use crate::coll::{Launch, Wide};
use std::ffi::{c_int, c_void};
use std::ptr::null;

/// A persistent request for: every member has called it.
#[no_mangle]
pub unsafe extern "C" fn MPI_Barrier_init(
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
    args::barrier("Barrier_init", Launch::Persist(request), comm)
}

/// A persistent request for: every member's data reduced at the root.
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce(
            "Reduce_init",
            Launch::Persist(request),
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

/// A persistent request for: every member's data reduced at the root (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_init_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce(
            "Reduce_init_c",
            Launch::Persist(request),
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

/// A persistent request for: every member's data reduced, on every member.
#[no_mangle]
pub unsafe extern "C" fn MPI_Allreduce_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Allreduce_init",
            Launch::Persist(request),
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

/// A persistent request for: every member's data reduced, on every member (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Allreduce_init_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Allreduce_init_c",
            Launch::Persist(request),
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

/// A persistent request for: the reduction scattered in blocks of varying sizes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce_scatter(
            "Reduce_scatter_init",
            Launch::Persist(request),
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

/// A persistent request for: the reduction scattered in blocks of varying sizes (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_init_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce_scatter(
            "Reduce_scatter_init_c",
            Launch::Persist(request),
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

/// A persistent request for: the reduction scattered in equal blocks.
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_block_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce_scatter(
            "Reduce_scatter_block_init",
            Launch::Persist(request),
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

/// A persistent request for: the reduction scattered in equal blocks (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_block_init_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::reduce_scatter(
            "Reduce_scatter_block_init_c",
            Launch::Persist(request),
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

/// A persistent request for: member r gets the reduction of members 0..=r, in rank order.
#[no_mangle]
pub unsafe extern "C" fn MPI_Scan_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Scan_init",
            Launch::Persist(request),
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

/// A persistent request for: member r gets the reduction of members 0..=r, in rank order (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Scan_init_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Scan_init_c",
            Launch::Persist(request),
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

/// A persistent request for: member r > 0 gets the reduction of members 0..r, in rank order (member 0's recvbuf is left as it was).
#[no_mangle]
pub unsafe extern "C" fn MPI_Exscan_init(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Exscan_init",
            Launch::Persist(request),
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

/// A persistent request for: member r > 0 gets the reduction of members 0..r, in rank order (member 0's recvbuf is left as it was) (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Exscan_init_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        args::allreduce(
            "Exscan_init_c",
            Launch::Persist(request),
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
