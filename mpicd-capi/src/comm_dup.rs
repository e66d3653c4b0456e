//! The dup calls beside `MPI_Comm_dup` (`MPI_Comm_dup_with_info`, `MPI_Comm_idup`,
//! `MPI_Comm_idup_with_info`) and a communicator's info hints (`MPI_Comm_set_info`,
//! `MPI_Comm_get_info`).
//!
//! An idup's handle is reserved at the call and given to the caller at once; its communicator
//! is made without blocking ([`mpicd::Communicator::idup`]) and enters the table at the
//! handle's first use after the request completed ([`materialize`]), so using it earlier
//! fails with MPI_ERR_COMM. As MPI 4.1 says, the result is as if MPI_Comm_dup had run at the
//! call: the error handler, topology and hints are taken then, and the attributes copied then.
//!
//! Hints: a communicator keeps the hints mpicd understands, the standard assertions
//! ([`ASSERTIONS`], "true" or "false"); it ignores the others, as MPI allows, and
//! `MPI_Comm_get_info` returns the hints in use. A dup keeps its parent's hints; a dup with
//! info takes those of its info instead.

use crate::abi::*;
use crate::comms::{errh, insert_with, run_on, CommEntry, COMMS};
use crate::env::{new_comm_out, out, require};
use crate::errors::{fail, CResult, Errh};
use mpicd::topology::Topology;
use mpicd::{Communicator, Info, PendingComm};
use std::collections::BTreeMap;
use std::ffi::c_int;
use std::sync::{Arc, Mutex, MutexGuard};

/// The info keys a communicator keeps (MPI 4.1 section 7.4.4), each "true" or "false".
pub(crate) const ASSERTIONS: [&str; 4] = [
    "mpi_assert_no_any_tag",
    "mpi_assert_no_any_source",
    "mpi_assert_exact_length",
    "mpi_assert_allow_overtaking",
];

/// A communicator MPI_Comm_idup is making, with what it takes from its parent.
struct Pending {
    comm: PendingComm,
    errh: Errh,
    topo: Option<Arc<Topology>>,
    info: Info,
    session: Option<usize>,
}

static PENDING: Mutex<BTreeMap<usize, Pending>> = Mutex::new(BTreeMap::new());

fn pending() -> MutexGuard<'static, BTreeMap<usize, Pending>> {
    PENDING.lock().unwrap_or_else(|p| p.into_inner())
}

/// The communicator of an idup's handle `h`, put in the table if its request has completed.
pub(crate) fn materialize(h: MPI_Comm) -> CResult<Arc<Communicator>> {
    let mut waiting = pending();
    let entry = waiting
        .get(&(h as usize))
        .ok_or_else(|| fail(MPI_ERR_COMM, "unknown or freed communicator"))?;
    let comm = entry.comm.get().ok_or_else(|| {
        fail(
            MPI_ERR_COMM,
            "the communicator of MPI_Comm_idup is not made yet (complete its request first)",
        )
    })?;
    let entry = waiting.remove(&(h as usize)).expect("found above");
    let comm = Arc::new(comm);
    let mut made = CommEntry::new(Arc::clone(&comm), entry.errh);
    made.topo = entry.topo;
    made.info = entry.info;
    made.session = entry.session;
    COMMS.insert_at(h as usize, made);
    Ok(comm)
}

/// The error handler of an idup's handle not in the table yet.
pub(crate) fn pending_errh(h: MPI_Comm) -> Option<Errh> {
    pending()
        .get(&(h as usize))
        .map(|p| p.errh.bound_to(h as usize))
}

/// The session an idup's handle not in the table yet derives from.
pub(crate) fn pending_session(h: MPI_Comm) -> Option<Option<usize>> {
    pending().get(&(h as usize)).map(|p| p.session)
}

/// Gives an idup's handle not in the table yet the error handler `new`; the one it had, or
/// `None` if `h` is no such handle.
pub(crate) fn replace_pending_errh(h: MPI_Comm, new: Errh) -> Option<Errh> {
    pending()
        .get_mut(&(h as usize))
        .map(|p| std::mem::replace(&mut p.errh, new))
}

/// Forgets the idups never used (finalize).
pub(crate) fn forget_pending() {
    for (_, p) in std::mem::take(&mut *pending()) {
        crate::errhandlers::release(p.errh);
    }
}

/// The hints of `info` that a communicator keeps (none for MPI_INFO_NULL).
pub(crate) fn hints_of(info: MPI_Info) -> CResult<Info> {
    let mut hints = Info::new();
    if info == MPI_INFO_NULL {
        return Ok(hints);
    }
    crate::info::with(info, |given| {
        for key in ASSERTIONS {
            let value = given
                .get(key)
                .ok()
                .flatten()
                .map(<[u8]>::to_ascii_lowercase);
            if let Some(v @ (b"true" | b"false")) = value.as_deref() {
                let _ = hints.set(key, v);
            }
        }
    })?;
    Ok(hints)
}

/// The topology and hints of `comm`.
fn inherited(comm: MPI_Comm) -> (Option<Arc<Topology>>, Info) {
    COMMS
        .with(comm as usize, |e| (e.topo.clone(), e.info.clone()))
        .unwrap_or_default()
}

/// A new communicator with the same group and the hints of `info` instead of `comm`'s
/// (collective); otherwise as MPI_Comm_dup (error handler, topology and attributes).
/// MPI_INFO_NULL gives a communicator without hints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup_with_info(
    comm: MPI_Comm,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
) -> c_int {
    run_on("Comm_dup_with_info", comm, |c| {
        new_comm_out(newcomm, "newcomm")?;
        let hints = hints_of(info)?;
        let dup = c.dup()?;
        let made = insert_with(dup, comm, inherited(comm).0);
        COMMS.with(made as usize, |e| e.info = hints);
        if let Err(e) = crate::attrs::comm::inherit(comm, made) {
            let _ = out(newcomm, MPI_COMM_NULL);
            return Err(e);
        }
        out(newcomm, made)
    })
}

/// Starts a dup that does not block (collective, in the order of `comm`'s other collectives):
/// `*newcomm` is set at once, and may be used once `*request` has completed. As if
/// MPI_Comm_dup had run now: the error handler, topology, hints and attributes (the copy
/// callbacks run now) are those `comm` has now.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_idup(
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    idup("Comm_idup", comm, None, newcomm, request)
}

/// [`MPI_Comm_idup`] whose communicator has the hints of `info` instead of `comm`'s.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_idup_with_info(
    comm: MPI_Comm,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    idup("Comm_idup_with_info", comm, Some(info), newcomm, request)
}

fn idup(
    name: &'static str,
    comm: MPI_Comm,
    info: Option<MPI_Info>,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    run_on(name, comm, |c| {
        new_comm_out(newcomm, "newcomm")?;
        require(request, "request")?;
        let (topo, parent_hints) = inherited(comm);
        let hints = match info {
            Some(info) => hints_of(info)?,
            None => parent_hints,
        };
        let (made, req) = c.idup()?;
        let handler = errh(comm);
        let req = crate::requests::insert(req, handler, None);
        let h = COMMS.reserve();
        // The attributes, as they are now; a failed copy callback fails the call, and the
        // agreement, already started with the other members, completes unseen.
        if let Err(e) = crate::attrs::comm::inherit(comm, h as MPI_Comm) {
            drop(crate::requests::REQUESTS.remove(req as usize));
            let _ = out(newcomm, MPI_COMM_NULL);
            return Err(e);
        }
        crate::errhandlers::retain(handler);
        pending().insert(
            h,
            Pending {
                comm: made,
                errh: handler,
                topo,
                info: hints,
                session: crate::comms::session_of(comm),
            },
        );
        out(newcomm, h as MPI_Comm)?;
        out(request, req)
    })
}

/// Sets `comm`'s hints from `info` (the ones mpicd keeps, see the module doc; the others are
/// ignored, and hints `info` does not name keep their values). MPI_INFO_NULL changes nothing.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_info(comm: MPI_Comm, info: MPI_Info) -> c_int {
    run_on("Comm_set_info", comm, |_| {
        let given = hints_of(info)?;
        COMMS
            .with(comm as usize, |e| {
                for n in 0..given.len() as i32 {
                    if let Ok(key) = given.nth_key(n) {
                        let value = given.get(key).ok().flatten().unwrap_or_default().to_vec();
                        let _ = e.info.set(key, value);
                    }
                }
            })
            .ok_or_else(|| fail(MPI_ERR_COMM, "unknown or freed communicator"))
    })
}

/// A new info object with the hints `comm` uses (free it with MPI_Info_free).
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_info(comm: MPI_Comm, info_used: *mut MPI_Info) -> c_int {
    run_on("Comm_get_info", comm, |_| {
        require(info_used, "info_used")?;
        let hints = COMMS
            .with(comm as usize, |e| e.info.clone())
            .ok_or_else(|| fail(MPI_ERR_COMM, "unknown or freed communicator"))?;
        out(info_used, crate::info::insert(hints))
    })
}
