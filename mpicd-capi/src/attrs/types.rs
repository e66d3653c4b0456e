//! Datatype attributes: MPI_Type_create_keyval / free_keyval / set_attr / get_attr /
//! delete_attr, on predefined and created types alike, and what the datatype calls use: the
//! copy at MPI_Type_dup ([`inherit`]) and the deletion at MPI_Type_free ([`release`]).

use super::{Copier, Deleter, Kind, Object};
use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{out, require};
use crate::errors::{run, CResult};
use crate::types::{is_predefined, with_created, TYPES};
use std::ffi::{c_int, c_void};

/// Fails unless `h` is a predefined or a live created datatype.
fn check_type(h: MPI_Datatype) -> CResult<()> {
    crate::env::check_live()?;
    if is_predefined(h) {
        return Ok(());
    }
    with_created(h, |_| ())
}

/// Gives the new duplicate `new` of `old` the attributes their copy callbacks copy. On a
/// callback's failure `new` loses the attributes copied so far (their delete callbacks run)
/// and is freed, and the dup fails with the callback's code.
pub(crate) fn inherit(old: MPI_Datatype, new: MPI_Datatype) -> CResult<()> {
    let copied = super::copy_all(Object::datatype(old), Object::datatype(new));
    if copied.is_err() {
        let _ = super::delete_all(Object::datatype(new));
        TYPES.remove(new as usize);
    }
    copied
}

/// Deletes the attributes of `datatype`, which is being freed (the last set first). On a
/// delete callback's failure the free fails and the type keeps the attributes not deleted yet.
pub(crate) fn release(datatype: MPI_Datatype) -> CResult<()> {
    super::delete_all(Object::datatype(datatype))
}

/// A new datatype keyval. `type_copy_attr_fn` runs at MPI_Type_dup (MPI_TYPE_NULL_COPY_FN:
/// not copied; MPI_TYPE_DUP_FN: the same value); `type_delete_attr_fn` when an attribute is
/// deleted, overwritten, or its type freed (MPI_TYPE_NULL_DELETE_FN: nothing).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_keyval(
    type_copy_attr_fn: MPI_Type_copy_attr_function,
    type_delete_attr_fn: MPI_Type_delete_attr_function,
    type_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    run("Type_create_keyval", default_errh(), |_| {
        crate::env::check_live()?;
        super::create_keyval(
            Kind::Datatype,
            Copier::datatype(type_copy_attr_fn),
            Deleter::datatype(type_delete_attr_fn),
            extra_state,
            type_keyval,
        )
    })
}

/// Frees a datatype keyval and sets it to MPI_KEYVAL_INVALID; attributes that use it keep it
/// alive (and their callbacks run) until they are deleted.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free_keyval(type_keyval: *mut c_int) -> c_int {
    run("Type_free_keyval", default_errh(), |_| {
        crate::env::check_live()?;
        super::free_keyval(Kind::Datatype, type_keyval)
    })
}

/// Sets attribute `type_keyval` of `datatype` to `attribute_val`; an old value is deleted
/// first (its delete callback runs).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_set_attr(
    datatype: MPI_Datatype,
    type_keyval: c_int,
    attribute_val: *mut c_void,
) -> c_int {
    run("Type_set_attr", default_errh(), |_| {
        check_type(datatype)?;
        super::set(Object::datatype(datatype), type_keyval, attribute_val)
    })
}

/// Attribute `type_keyval` of `datatype`: `*(void **)attribute_val` = its value and `*flag` =
/// 1, or `*flag` = 0 if it is not set.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_attr(
    datatype: MPI_Datatype,
    type_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    run("Type_get_attr", default_errh(), |_| {
        check_type(datatype)?;
        require(attribute_val, "attribute_val")?;
        require(flag, "flag")?;
        let value = super::get(Object::datatype(datatype), type_keyval)?;
        if let Some(v) = value {
            out(attribute_val as *mut *mut c_void, v)?;
        }
        out(flag, value.is_some() as c_int)
    })
}

/// Deletes attribute `type_keyval` of `datatype` (its delete callback runs; nothing happens if
/// it is not set).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_delete_attr(datatype: MPI_Datatype, type_keyval: c_int) -> c_int {
    run("Type_delete_attr", default_errh(), |_| {
        check_type(datatype)?;
        super::delete(Object::datatype(datatype), type_keyval)
    })
}
