//! The inter-communicator calls: MPI_Intercomm_create, MPI_Intercomm_merge,
//! MPI_Comm_test_inter, MPI_Comm_remote_size and MPI_Comm_remote_group. The core makes and
//! merges inter-communicators ([`mpicd::Communicator::intercomm_create`],
//! [`mpicd::Communicator::merge`]); the communicator calls of `comms.rs` (dup, split, create,
//! compare, free) and the collectives take either kind.

use crate::abi::*;
use crate::comms::{get, insert, run_on};
use crate::env::{new_comm_out, out, require};
use crate::errors::{fail, CResult};
use mpicd::{Communicator, Group};
use std::ffi::c_int;
use std::sync::Arc;

/// The remote group of an inter-communicator (MPI_ERR_COMM for an intra-communicator).
fn remote_group(c: &Communicator, call: &str) -> CResult<Group> {
    c.remote_group()
        .ok_or_else(|| fail(MPI_ERR_COMM, format!("{call} needs an inter-communicator")))
}

/// An inter-communicator between the group of `local_comm` and another, disjoint group
/// (collective over both groups). Each group names its leader (`local_leader`, a rank of
/// `local_comm`, the same on every member); the leaders meet on `peer_comm`, where the other
/// leader has rank `remote_leader`, with messages of tag `tag`. `peer_comm` and
/// `remote_leader` are read at the local leader only. The new communicator inherits
/// `local_comm`'s error handler.
#[no_mangle]
pub unsafe extern "C" fn MPI_Intercomm_create(
    local_comm: MPI_Comm,
    local_leader: c_int,
    peer_comm: MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: *mut MPI_Comm,
) -> c_int {
    run_on("Intercomm_create", local_comm, |c| {
        new_comm_out(newintercomm, "newintercomm")?;
        if c.is_inter() {
            return Err(fail(
                MPI_ERR_COMM,
                "the local communicator of MPI_Intercomm_create must be an intra-communicator",
            ));
        }
        let peer: Option<Arc<Communicator>> = match c.rank() == local_leader {
            true => Some(get(peer_comm)?),
            false => None,
        };
        let inter = c.intercomm_create(local_leader, peer.as_deref(), remote_leader, tag)?;
        out(newintercomm, insert(inter, local_comm))
    })
}

/// One intra-communicator of both groups of `intercomm` (collective over both): the group
/// whose members pass `high` = 0 comes first, then the other; if both groups pass the same
/// value, the group whose rank 0 has the lower rank in MPI_COMM_WORLD comes first.
#[no_mangle]
pub unsafe extern "C" fn MPI_Intercomm_merge(
    intercomm: MPI_Comm,
    high: c_int,
    newintracomm: *mut MPI_Comm,
) -> c_int {
    run_on("Intercomm_merge", intercomm, |c| {
        new_comm_out(newintracomm, "newintracomm")?;
        remote_group(&c, "MPI_Intercomm_merge")?;
        let merged = c.merge(high != 0)?;
        out(newintracomm, insert(merged, intercomm))
    })
}

/// `*flag` = 1 for an inter-communicator, 0 for an intra-communicator.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_test_inter(comm: MPI_Comm, flag: *mut c_int) -> c_int {
    run_on("Comm_test_inter", comm, |c| {
        out(flag, c.is_inter() as c_int)
    })
}

/// The size of the remote group of an inter-communicator.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_remote_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
    run_on("Comm_remote_size", comm, |c| {
        out(size, remote_group(&c, "MPI_Comm_remote_size")?.size())
    })
}

/// The remote group of an inter-communicator.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_remote_group(comm: MPI_Comm, group: *mut MPI_Group) -> c_int {
    run_on("Comm_remote_group", comm, |c| {
        require(group, "group")?;
        let remote = remote_group(&c, "MPI_Comm_remote_group")?;
        out(
            group,
            crate::groups::insert(remote, crate::comms::session_of(comm)),
        )
    })
}
