//! Datatype queries beside size and extent (in `mod.rs`): the MPI_Count forms of the size and
//! extent, the true extent, names (predefined types report their standard names), the pair
//! type of a value and an index (MPI_Type_get_value_index), and the address calls
//! (MPI_Get_address, MPI_Aint_add, MPI_Aint_diff).
//!
//! A custom type reports lower bound 0 and extent 1 as in MPI_Type_get_extent (or the bounds
//! MPI_Type_create_resized gave it, which collectives step arrays of objects by), and 0 and 1
//! as its true extent (its callbacks, not MPI, know its memory).

use super::{custom, datatype, is_predefined, predefined::name_of, size_of, with_created};
use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{out, require};
use crate::errors::{fail, run, write_c_string, CResult};
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;

/// (lower bound, extent) of a handle.
pub(crate) fn extent_of(h: MPI_Datatype) -> CResult<(i64, i64)> {
    match datatype(h) {
        Ok(t) => Ok((t.lb(), t.extent())),
        Err(e) => custom(h).map(|c| c.bounds).map_err(|_| e),
    }
}

/// (true lower bound, true extent) of a handle.
fn true_extent_of(h: MPI_Datatype) -> CResult<(i64, i64)> {
    match datatype(h) {
        Ok(t) => Ok((t.true_lb(), t.true_extent())),
        Err(e) => custom(h).map(|_| (0, 1)).map_err(|_| e),
    }
}

/// [`super::MPI_Type_get_extent`] with MPI_Counts (the MPI-3 name).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent_x(
    datatype: MPI_Datatype,
    lb: *mut MPI_Count,
    extent: *mut MPI_Count,
) -> c_int {
    run("Type_get_extent_x", default_errh(), |_| {
        let (l, e) = extent_of(datatype)?;
        out(lb, l)?;
        out(extent, e)
    })
}

/// [`super::MPI_Type_get_extent`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent_c(
    datatype: MPI_Datatype,
    lb: *mut MPI_Count,
    extent: *mut MPI_Count,
) -> c_int {
    run("Type_get_extent_c", default_errh(), |_| {
        let (l, e) = extent_of(datatype)?;
        out(lb, l)?;
        out(extent, e)
    })
}

/// The lowest byte of data and the span to one past the highest, bounds set by resized or
/// the alignment padding of a struct left aside.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_true_extent(
    datatype: MPI_Datatype,
    true_lb: *mut MPI_Aint,
    true_extent: *mut MPI_Aint,
) -> c_int {
    run("Type_get_true_extent", default_errh(), |_| {
        let (l, e) = true_extent_of(datatype)?;
        out(true_lb, l as MPI_Aint)?;
        out(true_extent, e as MPI_Aint)
    })
}

/// [`MPI_Type_get_true_extent`] with MPI_Counts (the MPI-3 name).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_true_extent_x(
    datatype: MPI_Datatype,
    true_lb: *mut MPI_Count,
    true_extent: *mut MPI_Count,
) -> c_int {
    run("Type_get_true_extent_x", default_errh(), |_| {
        let (l, e) = true_extent_of(datatype)?;
        out(true_lb, l)?;
        out(true_extent, e)
    })
}

/// [`MPI_Type_get_true_extent`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_true_extent_c(
    datatype: MPI_Datatype,
    true_lb: *mut MPI_Count,
    true_extent: *mut MPI_Count,
) -> c_int {
    run("Type_get_true_extent_c", default_errh(), |_| {
        let (l, e) = true_extent_of(datatype)?;
        out(true_lb, l)?;
        out(true_extent, e)
    })
}

/// [`super::MPI_Type_size`] with an MPI_Count (the MPI-3 name).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size_x(datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int {
    run("Type_size_x", default_errh(), |_| {
        out(size, size_of(datatype)?)
    })
}

/// Names given to predefined types (their standard names otherwise).
static RENAMED: Mutex<BTreeMap<usize, String>> = Mutex::new(BTreeMap::new());

fn renamed() -> std::sync::MutexGuard<'static, BTreeMap<usize, String>> {
    RENAMED.lock().unwrap_or_else(|p| p.into_inner())
}

/// `name` cut to MPI_MAX_OBJECT_NAME - 1 bytes on a character boundary.
fn clip(mut name: String) -> String {
    let max = MPI_MAX_OBJECT_NAME as usize - 1;
    if name.len() > max {
        let mut n = max;
        while !name.is_char_boundary(n) {
            n -= 1;
        }
        name.truncate(n);
    }
    name
}

/// Gives a datatype a name (cut to MPI_MAX_OBJECT_NAME - 1 bytes).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_set_name(
    datatype: MPI_Datatype,
    type_name: *const c_char,
) -> c_int {
    run("Type_set_name", default_errh(), |_| {
        require(type_name, "type_name")?;
        // SAFETY: non-null; MPI requires a NUL-terminated string.
        let name = clip(
            unsafe { CStr::from_ptr(type_name) }
                .to_string_lossy()
                .into_owned(),
        );
        if is_predefined(datatype) {
            renamed().insert(datatype as usize, name);
            return Ok(());
        }
        with_created(datatype, |e| e.name = name)
    })
}

/// The name of a datatype: the one it was given, else a predefined type's standard name
/// ("MPI_INT"), else the empty string; MPI_DATATYPE_NULL is "MPI_DATATYPE_NULL" (MPI-4.1 lets
/// the get_name calls take the null handles). `type_name` needs MPI_MAX_OBJECT_NAME bytes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_name(
    datatype: MPI_Datatype,
    type_name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    run("Type_get_name", default_errh(), |_| {
        require(type_name, "type_name")?;
        require(resultlen, "resultlen")?;
        let name = if datatype == MPI_DATATYPE_NULL {
            "MPI_DATATYPE_NULL".to_string()
        } else if is_predefined(datatype) {
            let given = renamed().get(&(datatype as usize)).cloned();
            given.unwrap_or_else(|| name_of(datatype).unwrap_or_default().to_string())
        } else {
            with_created(datatype, |e| e.name.clone())?
        };
        // SAFETY: MPI requires MPI_MAX_OBJECT_NAME bytes at `type_name`.
        let n = unsafe { write_c_string(type_name, MPI_MAX_OBJECT_NAME as usize, &name) };
        out(resultlen, n as c_int)
    })
}

/// The predefined value-index pair type of MINLOC and MAXLOC whose value has type
/// `value_type` and index `index_type` (MPI 4.1): `MPI_FLOAT_INT` for `MPI_FLOAT` and
/// `MPI_INT`, `MPI_2INTEGER` for `MPI_INTEGER` twice; MPI_DATATYPE_NULL for valid types that
/// make no predefined pair.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_value_index(
    value_type: MPI_Datatype,
    index_type: MPI_Datatype,
    pair_type: *mut MPI_Datatype,
) -> c_int {
    run("Type_get_value_index", default_errh(), |_| {
        require(pair_type, "pair_type")?;
        for h in [value_type, index_type] {
            if !is_predefined(h) {
                with_created(h, |_| ())?;
            }
        }
        let found = super::PAIRS.iter().copied().find(|&p| {
            super::pair(p).map(|(v, _)| v) == Some(value_type)
                && super::pair_index(p) == Some(index_type)
        });
        out(pair_type, found.unwrap_or(MPI_DATATYPE_NULL))
    })
}

/// The address of `location`, for displacements relative to MPI_BOTTOM.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_address(location: *const c_void, address: *mut MPI_Aint) -> c_int {
    run("Get_address", default_errh(), |_| {
        if address.is_null() {
            return Err(fail(MPI_ERR_ARG, "null address"));
        }
        out(address, location as MPI_Aint)
    })
}

/// `base + disp`, as an address.
#[no_mangle]
pub extern "C" fn MPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    base.wrapping_add(disp)
}

/// `addr1 - addr2`, as a displacement.
#[no_mangle]
pub extern "C" fn MPI_Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
    addr1.wrapping_sub(addr2)
}
