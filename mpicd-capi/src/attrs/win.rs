//! Window attributes: MPI_Win_create_keyval / free_keyval / set_attr / get_attr / delete_attr,
//! and the predefined attributes MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT,
//! MPI_WIN_CREATE_FLAVOR and MPI_WIN_MODEL (their values live with the window's handle,
//! `win/`). Windows are never duplicated, so a window keyval's copy callback never runs.

use super::{Copier, Deleter, Kind, Object};
use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{out, require};
use crate::errors::{fail, run, CResult};
use crate::win::{run_on_win, WINS};
use std::ffi::{c_int, c_void};

/// The address `MPI_Win_get_attr` gives for a predefined window attribute (the base itself
/// for MPI_WIN_BASE), or `None` for another keyval.
fn predefined(win: MPI_Win, keyval: c_int) -> CResult<Option<*mut c_void>> {
    if !(MPI_WIN_BASE..=MPI_WIN_MODEL).contains(&keyval) {
        return Ok(None);
    }
    WINS.with(win as usize, |e| {
        let p = &*e.predefined;
        Some(match keyval {
            MPI_WIN_BASE => p.base,
            MPI_WIN_SIZE => &p.size as *const MPI_Aint as *mut c_void,
            MPI_WIN_DISP_UNIT => &p.disp_unit as *const c_int as *mut c_void,
            MPI_WIN_CREATE_FLAVOR => &p.flavor as *const c_int as *mut c_void,
            _ => &p.model as *const c_int as *mut c_void,
        })
    })
    .ok_or_else(|| fail(MPI_ERR_WIN, "unknown or freed window"))
}

fn refuse_predefined(keyval: c_int, what: &str) -> CResult<()> {
    if (MPI_WIN_BASE..=MPI_WIN_MODEL).contains(&keyval) {
        return Err(fail(
            MPI_ERR_KEYVAL,
            format!("the predefined window attribute {keyval} cannot be {what}"),
        ));
    }
    Ok(())
}

/// A new window keyval. `win_delete_attr_fn` runs when an attribute is deleted, overwritten,
/// or its window freed (MPI_WIN_NULL_DELETE_FN: nothing); windows are never copied.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create_keyval(
    win_copy_attr_fn: MPI_Win_copy_attr_function,
    win_delete_attr_fn: MPI_Win_delete_attr_function,
    win_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    let _ = win_copy_attr_fn;
    run("Win_create_keyval", default_errh(), |_| {
        crate::env::check_live()?;
        super::create_keyval(
            Kind::Win,
            Copier::Null,
            Deleter::win(win_delete_attr_fn),
            extra_state,
            win_keyval,
        )
    })
}

/// Frees a window keyval and sets it to MPI_KEYVAL_INVALID.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_free_keyval(win_keyval: *mut c_int) -> c_int {
    run("Win_free_keyval", default_errh(), |_| {
        crate::env::check_live()?;
        require(win_keyval, "win_keyval")?;
        // SAFETY: checked non-null.
        refuse_predefined(unsafe { *win_keyval }, "freed")?;
        super::free_keyval(Kind::Win, win_keyval)
    })
}

/// Sets attribute `win_keyval` of `win` to `attribute_val` (an old value is deleted first).
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_set_attr(
    win: MPI_Win,
    win_keyval: c_int,
    attribute_val: *mut c_void,
) -> c_int {
    run_on_win("Win_set_attr", win, |_| {
        refuse_predefined(win_keyval, "set")?;
        super::set(Object::win(win), win_keyval, attribute_val)
    })
}

/// Attribute `win_keyval` of `win`: `*(void **)attribute_val` = its value and `*flag` = 1, or
/// `*flag` = 0. MPI_WIN_BASE gives the base address; the other predefined attributes give
/// pointers to their values (`MPI_Aint` for MPI_WIN_SIZE, `int` otherwise).
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_attr(
    win: MPI_Win,
    win_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    run_on_win("Win_get_attr", win, |_| {
        require(attribute_val, "attribute_val")?;
        require(flag, "flag")?;
        let value = match predefined(win, win_keyval)? {
            Some(v) => Some(v),
            None => super::get(Object::win(win), win_keyval)?,
        };
        if let Some(v) = value {
            out(attribute_val as *mut *mut c_void, v)?;
        }
        out(flag, value.is_some() as c_int)
    })
}

/// Deletes attribute `win_keyval` of `win` (its delete callback runs).
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_delete_attr(win: MPI_Win, win_keyval: c_int) -> c_int {
    run_on_win("Win_delete_attr", win, |_| {
        refuse_predefined(win_keyval, "deleted")?;
        super::delete(Object::win(win), win_keyval)
    })
}
