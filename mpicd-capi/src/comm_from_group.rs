//! The MPI-4 constructors that need no parent communicator: `MPI_Comm_create_from_group` and
//! `MPI_Intercomm_create_from_groups`, collective over the group(s) only, told apart by a
//! string tag (the core's [`mpicd::Session`] runs them). They work on any group of the
//! runtime's processes, from a session's process set or from a communicator. The error handler
//! they take handles their own errors and is the new communicator's.

use crate::abi::*;
use crate::comms::{insert_new, COMMS};
use crate::env::{core_session, new_comm_out, out};
use crate::errhandlers::{resolve_for, ObjKind};
use crate::errors::{run, CResult, Errh};
use crate::sessions::string_arg;
use std::ffi::{c_char, c_int};

/// The handler of a constructor's `errhandler` argument, or the default one if invalid (the
/// body then fails on it).
fn handler_of(errhandler: MPI_Errhandler) -> Errh {
    resolve_for(errhandler, ObjKind::Comm).unwrap_or_else(|_| crate::comms::default_errh())
}

/// The string tag argument.
fn stringtag_arg(stringtag: *const c_char) -> CResult<String> {
    // SAFETY: MPI requires a NUL-terminated string.
    unsafe { string_arg(stringtag, MPI_MAX_STRINGTAG_LEN, "stringtag") }
}

/// A new communicator's handle, with the hints of `info`, deriving from the session of
/// `group` (if it has one).
fn insert_with_hints(
    comm: mpicd::Communicator,
    errh: Errh,
    info: MPI_Info,
    group: MPI_Group,
) -> CResult<MPI_Comm> {
    let hints = crate::comm_dup::hints_of(info)?;
    let made = insert_new(comm, errh, crate::groups::session_of(group), None);
    COMMS.with(made as usize, |e| e.info = hints);
    Ok(made)
}

/// A communicator of `group`'s members, in its order, made by them alone (each calls it with
/// the same group and `stringtag`, at most MPI_MAX_STRINGTAG_LEN - 1 bytes; concurrent calls
/// over overlapping groups need different tags). MPI_GROUP_EMPTY gives MPI_COMM_NULL. The new
/// communicator has `errhandler` and the hints of `info` mpicd keeps.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_from_group(
    group: MPI_Group,
    stringtag: *const c_char,
    info: MPI_Info,
    errhandler: MPI_Errhandler,
    newcomm: *mut MPI_Comm,
) -> c_int {
    run("Comm_create_from_group", handler_of(errhandler), |_| {
        let handler = resolve_for(errhandler, ObjKind::Comm)?;
        new_comm_out(newcomm, "newcomm")?;
        let tag = stringtag_arg(stringtag)?;
        let g = crate::groups::get(group)?;
        crate::comm_dup::hints_of(info)?;
        let made = match core_session()?.create_from_group(&g, &tag)? {
            Some(comm) => insert_with_hints(comm, handler, info, group)?,
            None => MPI_COMM_NULL,
        };
        out(newcomm, made)
    })
}

/// An inter-communicator between `local_group` (which has the caller) and `remote_group`, two
/// disjoint groups, made by their members alone: each calls it with the same `stringtag`,
/// naming its group's leader and the other group's by their ranks in those groups. The new
/// communicator has `errhandler` and the hints of `info` mpicd keeps.
#[no_mangle]
pub unsafe extern "C" fn MPI_Intercomm_create_from_groups(
    local_group: MPI_Group,
    local_leader: c_int,
    remote_group: MPI_Group,
    remote_leader: c_int,
    stringtag: *const c_char,
    info: MPI_Info,
    errhandler: MPI_Errhandler,
    newintercomm: *mut MPI_Comm,
) -> c_int {
    run(
        "Intercomm_create_from_groups",
        handler_of(errhandler),
        |_| {
            let handler = resolve_for(errhandler, ObjKind::Comm)?;
            new_comm_out(newintercomm, "newintercomm")?;
            let tag = stringtag_arg(stringtag)?;
            let local = crate::groups::get(local_group)?;
            let remote = crate::groups::get(remote_group)?;
            crate::comm_dup::hints_of(info)?;
            let comm = core_session()?.intercomm_from_groups(
                &local,
                local_leader,
                &remote,
                remote_leader,
                &tag,
            )?;
            out(
                newintercomm,
                insert_with_hints(comm, handler, info, local_group)?,
            )
        },
    )
}
