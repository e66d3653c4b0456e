//! Communicator attributes: MPI_Comm_create_keyval / free_keyval / set_attr / get_attr /
//! delete_attr, their deprecated MPI-1 forms (MPI_Keyval_create, MPI_Attr_put...), the
//! predefined attributes (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_APPNUM,
//! MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE), and what `comms.rs` and finalize call: the copy at a
//! dup ([`inherit`]) and the deletion at a free ([`release`], [`finalize`]).

use super::{Copier, Deleter, Kind, Object};
use crate::abi::*;
use crate::comms::{default_errh, run_on, COMMS};
use crate::env::{out, require};
use crate::errors::{fail, run, CResult};
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

/// Gives the new duplicate `new` of `old` the attributes their copy callbacks copy. On a
/// callback's failure `new` loses the attributes copied so far (their delete callbacks run)
/// and is freed, and the dup fails with the callback's code.
pub(crate) fn inherit(old: MPI_Comm, new: MPI_Comm) -> CResult<()> {
    let copied = super::copy_all(Object::comm(old), Object::comm(new));
    if copied.is_err() {
        let _ = super::delete_all(Object::comm(new));
        COMMS.remove(new as usize);
    }
    copied
}

/// Deletes the attributes of `comm`, which is being freed (the last set first). On a delete
/// callback's failure the free fails and `comm` keeps the attributes not deleted yet.
pub(crate) fn release(comm: MPI_Comm) -> CResult<()> {
    super::delete_all(Object::comm(comm))
}

/// The attribute part of MPI_Finalize, run before anything else is torn down: as if
/// MPI_COMM_SELF were freed first (its delete callbacks run, the last set first), then
/// MPI_COMM_WORLD; then every keyval and attribute is forgotten. Each callback runs; the
/// first failure is returned.
pub(crate) fn finalize() -> CResult<()> {
    let self_done = release(MPI_COMM_SELF);
    let world_done = release(MPI_COMM_WORLD);
    super::clear();
    self_done.and(world_done)
}

fn is_predefined(keyval: c_int) -> bool {
    (MPI_TAG_UB..=MPI_UNIVERSE_SIZE).contains(&keyval)
}

fn refuse_predefined(keyval: c_int, what: &str) -> CResult<()> {
    if is_predefined(keyval) {
        return Err(fail(
            MPI_ERR_KEYVAL,
            format!("the predefined attribute {keyval} cannot be {what}"),
        ));
    }
    Ok(())
}

/// Values of the predefined attributes, which `MPI_Comm_get_attr` hands out by address.
static TAG_UB_VALUE: c_int = mpicd::TAG_UB;
static HOST_VALUE: c_int = MPI_PROC_NULL;
static IO_VALUE: c_int = MPI_ANY_SOURCE;
static WTIME_IS_GLOBAL_VALUE: c_int = 0;
/// MPI_APPNUM and MPI_UNIVERSE_SIZE, asked of the launcher once (None: it does not say).
static LAUNCH: OnceLock<(Option<c_int>, Option<c_int>)> = OnceLock::new();

/// The application number and universe size (at least the world's size) the launcher gives.
fn launch_facts(world_size: usize) -> CResult<&'static (Option<c_int>, Option<c_int>)> {
    if let Some(facts) = LAUNCH.get() {
        return Ok(facts);
    }
    let (appnum, universe) = crate::env::launch_facts()?;
    let appnum = appnum.and_then(|a| c_int::try_from(a).ok());
    let universe = universe
        .map(|u| (u as usize).max(world_size))
        .and_then(|u| c_int::try_from(u).ok());
    Ok(LAUNCH.get_or_init(|| (appnum, universe)))
}

/// What a keyval is among the predefined attributes.
enum Predefined {
    /// Not a predefined attribute key.
    No,
    /// A predefined attribute this process does not have.
    Unset,
    /// A predefined attribute and the address of its value.
    At(*const c_int),
}

fn predefined(keyval: c_int) -> CResult<Predefined> {
    let at = |v: Option<&'static c_int>| v.map_or(Predefined::Unset, |v| Predefined::At(v));
    let world_size = || crate::env::world_size().map(|n| n as usize);
    Ok(match keyval {
        MPI_TAG_UB => Predefined::At(&TAG_UB_VALUE),
        MPI_HOST => Predefined::At(&HOST_VALUE),
        MPI_IO => Predefined::At(&IO_VALUE),
        MPI_WTIME_IS_GLOBAL => Predefined::At(&WTIME_IS_GLOBAL_VALUE),
        MPI_LASTUSEDCODE => Predefined::At(crate::errcodes::last_used_code_ref()),
        MPI_APPNUM => at(launch_facts(world_size()?)?.0.as_ref()),
        MPI_UNIVERSE_SIZE => at(launch_facts(world_size()?)?.1.as_ref()),
        _ => Predefined::No,
    })
}

/// Reads attribute `keyval` of `comm` into `*(void **)attribute_val`, and `*flag` = whether it
/// is set.
fn get_attr(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> CResult<()> {
    require(attribute_val, "attribute_val")?;
    require(flag, "flag")?;
    let value: Option<*mut c_void> = match predefined(keyval)? {
        Predefined::At(v) => Some(v as *mut c_void),
        Predefined::Unset => None,
        Predefined::No => super::get(Object::comm(comm), keyval)?,
    };
    if let Some(v) = value {
        out(attribute_val as *mut *mut c_void, v)?;
    }
    out(flag, value.is_some() as c_int)
}

/// A new communicator keyval. `comm_copy_attr_fn` runs at MPI_Comm_dup (MPI_COMM_NULL_COPY_FN:
/// not copied; MPI_COMM_DUP_FN: the same value); `comm_delete_attr_fn` when an attribute is
/// deleted, overwritten, or its communicator freed (MPI_COMM_NULL_DELETE_FN: nothing).
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_keyval(
    comm_copy_attr_fn: MPI_Comm_copy_attr_function,
    comm_delete_attr_fn: MPI_Comm_delete_attr_function,
    comm_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    run("Comm_create_keyval", default_errh(), |_| {
        crate::env::check_live()?;
        super::create_keyval(
            Kind::Comm,
            Copier::comm(comm_copy_attr_fn),
            Deleter::comm(comm_delete_attr_fn),
            extra_state,
            comm_keyval,
        )
    })
}

/// Frees a communicator keyval and sets it to MPI_KEYVAL_INVALID; attributes that use it
/// keep it alive (and their callbacks run) until they are deleted.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free_keyval(comm_keyval: *mut c_int) -> c_int {
    run("Comm_free_keyval", default_errh(), |_| {
        crate::env::check_live()?;
        if !comm_keyval.is_null() {
            // SAFETY: non-null; MPI requires a readable int.
            refuse_predefined(unsafe { *comm_keyval }, "freed")?;
        }
        super::free_keyval(Kind::Comm, comm_keyval)
    })
}

/// Sets attribute `comm_keyval` of `comm` to `attribute_val`; an old value is deleted first
/// (its delete callback runs). The predefined attributes cannot be set (MPI_ERR_KEYVAL).
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_attr(
    comm: MPI_Comm,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
) -> c_int {
    run_on("Comm_set_attr", comm, |_| {
        refuse_predefined(comm_keyval, "set")?;
        super::set(Object::comm(comm), comm_keyval, attribute_val)
    })
}

/// Attribute `comm_keyval` of `comm`: `*(void **)attribute_val` = its value and `*flag` = 1,
/// or `*flag` = 0 if it is not set. The predefined attributes' values are pointers to `int`;
/// MPI_APPNUM and MPI_UNIVERSE_SIZE are set when the launcher gives them.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_attr(
    comm: MPI_Comm,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    run_on("Comm_get_attr", comm, |_| {
        get_attr(comm, comm_keyval, attribute_val, flag)
    })
}

/// Deletes attribute `comm_keyval` of `comm` (its delete callback runs; nothing happens if it
/// is not set). The predefined attributes cannot be deleted (MPI_ERR_KEYVAL).
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_delete_attr(comm: MPI_Comm, comm_keyval: c_int) -> c_int {
    run_on("Comm_delete_attr", comm, |_| {
        refuse_predefined(comm_keyval, "deleted")?;
        super::delete(Object::comm(comm), comm_keyval)
    })
}

/// [`MPI_Comm_create_keyval`] in its MPI-1 form (deprecated).
#[no_mangle]
pub unsafe extern "C" fn MPI_Keyval_create(
    copy_fn: MPI_Copy_function,
    delete_fn: MPI_Delete_function,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: the same function types (MPI_Copy_function is MPI_Comm_copy_attr_function).
    unsafe { MPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state) }
}

/// [`MPI_Comm_free_keyval`] in its MPI-1 form (deprecated).
#[no_mangle]
pub unsafe extern "C" fn MPI_Keyval_free(keyval: *mut c_int) -> c_int {
    // SAFETY: forwards the caller's arguments.
    unsafe { MPI_Comm_free_keyval(keyval) }
}

/// [`MPI_Comm_set_attr`] in its MPI-1 form (deprecated).
#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_put(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
) -> c_int {
    // SAFETY: forwards the caller's arguments.
    unsafe { MPI_Comm_set_attr(comm, keyval, attribute_val) }
}

/// [`MPI_Comm_get_attr`] in its MPI-1 form (deprecated).
#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_get(
    comm: MPI_Comm,
    keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: forwards the caller's arguments.
    unsafe { MPI_Comm_get_attr(comm, keyval, attribute_val, flag) }
}

/// [`MPI_Comm_delete_attr`] in its MPI-1 form (deprecated).
#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_delete(comm: MPI_Comm, keyval: c_int) -> c_int {
    // SAFETY: forwards the caller's arguments.
    unsafe { MPI_Comm_delete_attr(comm, keyval) }
}
