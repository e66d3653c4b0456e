//! The exported neighbourhood collectives: MPI_Neighbor_allgather(v) and
//! MPI_Neighbor_alltoall(v,w), blocking, non-blocking (`MPI_Ineighbor_...`) and persistent
//! (`..._init`), all writing the plan of `neighbor.rs`.

use super::neighbor::{run, same, uniform, Side};
use super::Launch;
use crate::abi::*;
use std::ffi::{c_int, c_void};

/// Blocking: the same block sent to every destination, one block received from each source.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_allgather(
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
        run(
            "Neighbor_allgather",
            Launch::Now,
            same(sendbuf, sendcount as i64, sendtype),
            uniform(recvbuf, recvcount as i64, recvtype),
            comm,
        )
    }
}

/// Blocking: the same block sent to every destination, a block of its own size received from each source.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_allgatherv(
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
        run(
            "Neighbor_allgatherv",
            Launch::Now,
            same(sendbuf, sendcount as i64, sendtype),
            Side::<c_int, c_int>::Varying(recvbuf, recvcounts, displs, recvtype),
            comm,
        )
    }
}

/// Blocking: block i sent to destination i, block i received from source i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoall(
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
        run(
            "Neighbor_alltoall",
            Launch::Now,
            uniform(sendbuf, sendcount as i64, sendtype),
            uniform(recvbuf, recvcount as i64, recvtype),
            comm,
        )
    }
}

/// Blocking: block i (of its own size) sent to destination i, block i received from source i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoallv(
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
        run(
            "Neighbor_alltoallv",
            Launch::Now,
            Side::<c_int, c_int>::Varying(sendbuf, sendcounts, sdispls, sendtype),
            Side::<c_int, c_int>::Varying(recvbuf, recvcounts, rdispls, recvtype),
            comm,
        )
    }
}

/// Blocking: block i (its own size, datatype and byte displacement) sent to destination i, block i received from source i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        run(
            "Neighbor_alltoallw",
            Launch::Now,
            Side::<c_int, MPI_Aint>::Typed(sendbuf, sendcounts, sdispls, sendtypes),
            Side::<c_int, MPI_Aint>::Typed(recvbuf, recvcounts, rdispls, recvtypes),
            comm,
        )
    }
}

/// Starts: the same block sent to every destination, one block received from each source.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_allgather(
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
        run(
            "Ineighbor_allgather",
            Launch::Start(request),
            same(sendbuf, sendcount as i64, sendtype),
            uniform(recvbuf, recvcount as i64, recvtype),
            comm,
        )
    }
}

/// Starts: the same block sent to every destination, a block of its own size received from each source.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_allgatherv(
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
        run(
            "Ineighbor_allgatherv",
            Launch::Start(request),
            same(sendbuf, sendcount as i64, sendtype),
            Side::<c_int, c_int>::Varying(recvbuf, recvcounts, displs, recvtype),
            comm,
        )
    }
}

/// Starts: block i sent to destination i, block i received from source i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_alltoall(
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
        run(
            "Ineighbor_alltoall",
            Launch::Start(request),
            uniform(sendbuf, sendcount as i64, sendtype),
            uniform(recvbuf, recvcount as i64, recvtype),
            comm,
        )
    }
}

/// Starts: block i (of its own size) sent to destination i, block i received from source i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_alltoallv(
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
        run(
            "Ineighbor_alltoallv",
            Launch::Start(request),
            Side::<c_int, c_int>::Varying(sendbuf, sendcounts, sdispls, sendtype),
            Side::<c_int, c_int>::Varying(recvbuf, recvcounts, rdispls, recvtype),
            comm,
        )
    }
}

/// Starts: block i (its own size, datatype and byte displacement) sent to destination i, block i received from source i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ineighbor_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the arguments are what MPI requires of the call.
    unsafe {
        run(
            "Ineighbor_alltoallw",
            Launch::Start(request),
            Side::<c_int, MPI_Aint>::Typed(sendbuf, sendcounts, sdispls, sendtypes),
            Side::<c_int, MPI_Aint>::Typed(recvbuf, recvcounts, rdispls, recvtypes),
            comm,
        )
    }
}

/// A persistent request for: the same block sent to every destination, one block received from each source.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_allgather_init(
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
        run(
            "Neighbor_allgather_init",
            Launch::Persist(request),
            same(sendbuf, sendcount as i64, sendtype),
            uniform(recvbuf, recvcount as i64, recvtype),
            comm,
        )
    }
}

/// A persistent request for: the same block sent to every destination, a block of its own size received from each source.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_allgatherv_init(
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
        run(
            "Neighbor_allgatherv_init",
            Launch::Persist(request),
            same(sendbuf, sendcount as i64, sendtype),
            Side::<c_int, c_int>::Varying(recvbuf, recvcounts, displs, recvtype),
            comm,
        )
    }
}

/// A persistent request for: block i sent to destination i, block i received from source i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoall_init(
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
        run(
            "Neighbor_alltoall_init",
            Launch::Persist(request),
            uniform(sendbuf, sendcount as i64, sendtype),
            uniform(recvbuf, recvcount as i64, recvtype),
            comm,
        )
    }
}

/// A persistent request for: block i (of its own size) sent to destination i, block i received from source i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoallv_init(
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
        run(
            "Neighbor_alltoallv_init",
            Launch::Persist(request),
            Side::<c_int, c_int>::Varying(sendbuf, sendcounts, sdispls, sendtype),
            Side::<c_int, c_int>::Varying(recvbuf, recvcounts, rdispls, recvtype),
            comm,
        )
    }
}

/// A persistent request for: block i (its own size, datatype and byte displacement) sent to destination i, block i received from source i.
#[no_mangle]
pub unsafe extern "C" fn MPI_Neighbor_alltoallw_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
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
            "Neighbor_alltoallw_init",
            Launch::Persist(request),
            Side::<c_int, MPI_Aint>::Typed(sendbuf, sendcounts, sdispls, sendtypes),
            Side::<c_int, MPI_Aint>::Typed(recvbuf, recvcounts, rdispls, recvtypes),
            comm,
        )
    }
}
