//! The large-count (`_c`) forms of the exported neighbourhood collectives (see
//! `neighbor_calls.rs`): counts are MPI_Count, displacements MPI_Aint.

use super::neighbor::{run, same, uniform, Side};
use super::Launch;
use crate::abi::*;
use std::ffi::{c_int, c_void};

/// Blocking: the same block sent to every destination, one block received from each source (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_allgather_c(
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
        run(
            "Neighbor_allgather_c",
            Launch::Now,
            same(sendbuf, sendcount, sendtype),
            uniform(recvbuf, recvcount, recvtype),
            comm,
        )
    }
}

/// Blocking: the same block sent to every destination, a block of its own size received from each source (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_allgatherv_c(
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
        run(
            "Neighbor_allgatherv_c",
            Launch::Now,
            same(sendbuf, sendcount, sendtype),
            Side::<MPI_Count, MPI_Aint>::Varying(recvbuf, recvcounts, displs, recvtype),
            comm,
        )
    }
}

/// Blocking: block i sent to destination i, block i received from source i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoall_c(
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
        run(
            "Neighbor_alltoall_c",
            Launch::Now,
            uniform(sendbuf, sendcount, sendtype),
            uniform(recvbuf, recvcount, recvtype),
            comm,
        )
    }
}

/// Blocking: block i (of its own size) sent to destination i, block i received from source i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoallv_c(
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
        run(
            "Neighbor_alltoallv_c",
            Launch::Now,
            Side::<MPI_Count, MPI_Aint>::Varying(sendbuf, sendcounts, sdispls, sendtype),
            Side::<MPI_Count, MPI_Aint>::Varying(recvbuf, recvcounts, rdispls, recvtype),
            comm,
        )
    }
}

/// Blocking: block i (its own size, datatype and byte displacement) sent to destination i, block i received from source i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoallw_c(
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
        run(
            "Neighbor_alltoallw_c",
            Launch::Now,
            Side::<MPI_Count, MPI_Aint>::Typed(sendbuf, sendcounts, sdispls, sendtypes),
            Side::<MPI_Count, MPI_Aint>::Typed(recvbuf, recvcounts, rdispls, recvtypes),
            comm,
        )
    }
}

/// Starts: the same block sent to every destination, one block received from each source (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_allgather_c(
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
        run(
            "Ineighbor_allgather_c",
            Launch::Start(request),
            same(sendbuf, sendcount, sendtype),
            uniform(recvbuf, recvcount, recvtype),
            comm,
        )
    }
}

/// Starts: the same block sent to every destination, a block of its own size received from each source (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_allgatherv_c(
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
        run(
            "Ineighbor_allgatherv_c",
            Launch::Start(request),
            same(sendbuf, sendcount, sendtype),
            Side::<MPI_Count, MPI_Aint>::Varying(recvbuf, recvcounts, displs, recvtype),
            comm,
        )
    }
}

/// Starts: block i sent to destination i, block i received from source i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_alltoall_c(
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
        run(
            "Ineighbor_alltoall_c",
            Launch::Start(request),
            uniform(sendbuf, sendcount, sendtype),
            uniform(recvbuf, recvcount, recvtype),
            comm,
        )
    }
}

/// Starts: block i (of its own size) sent to destination i, block i received from source i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_alltoallv_c(
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
        run(
            "Ineighbor_alltoallv_c",
            Launch::Start(request),
            Side::<MPI_Count, MPI_Aint>::Varying(sendbuf, sendcounts, sdispls, sendtype),
            Side::<MPI_Count, MPI_Aint>::Varying(recvbuf, recvcounts, rdispls, recvtype),
            comm,
        )
    }
}

/// Starts: block i (its own size, datatype and byte displacement) sent to destination i, block i received from source i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_alltoallw_c(
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
        run(
            "Ineighbor_alltoallw_c",
            Launch::Start(request),
            Side::<MPI_Count, MPI_Aint>::Typed(sendbuf, sendcounts, sdispls, sendtypes),
            Side::<MPI_Count, MPI_Aint>::Typed(recvbuf, recvcounts, rdispls, recvtypes),
            comm,
        )
    }
}

/// A persistent request for: the same block sent to every destination, one block received from each source (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_allgather_init_c(
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
        run(
            "Neighbor_allgather_init_c",
            Launch::Persist(request),
            same(sendbuf, sendcount, sendtype),
            uniform(recvbuf, recvcount, recvtype),
            comm,
        )
    }
}

/// A persistent request for: the same block sent to every destination, a block of its own size received from each source (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_allgatherv_init_c(
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
        run(
            "Neighbor_allgatherv_init_c",
            Launch::Persist(request),
            same(sendbuf, sendcount, sendtype),
            Side::<MPI_Count, MPI_Aint>::Varying(recvbuf, recvcounts, displs, recvtype),
            comm,
        )
    }
}

/// A persistent request for: block i sent to destination i, block i received from source i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoall_init_c(
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
        run(
            "Neighbor_alltoall_init_c",
            Launch::Persist(request),
            uniform(sendbuf, sendcount, sendtype),
            uniform(recvbuf, recvcount, recvtype),
            comm,
        )
    }
}

/// A persistent request for: block i (of its own size) sent to destination i, block i received from source i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoallv_init_c(
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
        run(
            "Neighbor_alltoallv_init_c",
            Launch::Persist(request),
            Side::<MPI_Count, MPI_Aint>::Varying(sendbuf, sendcounts, sdispls, sendtype),
            Side::<MPI_Count, MPI_Aint>::Varying(recvbuf, recvcounts, rdispls, recvtype),
            comm,
        )
    }
}

/// A persistent request for: block i (its own size, datatype and byte displacement) sent to destination i, block i received from source i (large counts).
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoallw_init_c(
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
        run(
            "Neighbor_alltoallw_init_c",
            Launch::Persist(request),
            Side::<MPI_Count, MPI_Aint>::Typed(sendbuf, sendcounts, sdispls, sendtypes),
            Side::<MPI_Count, MPI_Aint>::Typed(recvbuf, recvcounts, rdispls, recvtypes),
            comm,
        )
    }
}
