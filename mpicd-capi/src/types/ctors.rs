//! The type constructors, and what they share: MPI_Type_contiguous, _vector,
//! _create_hvector, _create_struct, _create_resized and _dup here, each with its large-count
//! `_c` variant (MPI_Type_dup has none); the indexed family is in [`super::indexed`], subarray
//! and darray in [`super::arrays`]. They check the C arguments, build the core type
//! (`mpicd::Datatype`) and store it uncommitted; a type made by a `_c` variant is marked so
//! that its decoding returns large counts ([`super::contents`]).
//!
//! Error classes: a negative count is MPI_ERR_COUNT; a negative block length, size or process
//! count, a subarray outside its array, an unknown order or distribution, and a null array or
//! output pointer are MPI_ERR_ARG; a null, freed or custom old type is MPI_ERR_TYPE.

use super::{datatype, insert_derived, insert_derived_as, is_predefined, with_created, Created};
use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{out, require};
use crate::errors::{fail, run, CResult};
use mpicd::Datatype;
use std::ffi::c_int;

/// The integer types of constructor arguments (int, MPI_Aint, MPI_Count), widened to i64.
pub(crate) trait Wide: Copy {
    fn wide(self) -> i64;
}

impl Wide for c_int {
    fn wide(self) -> i64 {
        self as i64
    }
}

impl Wide for isize {
    fn wide(self) -> i64 {
        self as i64
    }
}

impl Wide for i64 {
    fn wide(self) -> i64 {
        self
    }
}

/// A count argument: negative is MPI_ERR_COUNT.
pub(super) fn count_arg(n: impl Wide) -> CResult<u64> {
    let n = n.wide();
    u64::try_from(n).map_err(|_| fail(MPI_ERR_COUNT, format!("negative count {n}")))
}

/// A block length, size or other argument that must not be negative (MPI_ERR_ARG).
pub(super) fn nonneg(n: i64, what: &str) -> CResult<u64> {
    u64::try_from(n).map_err(|_| fail(MPI_ERR_ARG, format!("negative {what} {n}")))
}

/// The `n` values of the C array at `ptr`, widened (none read when `n` is 0).
///
/// # Safety
/// A non-null `ptr` must point to `n` readable values.
pub(crate) unsafe fn array<T: Wide>(ptr: *const T, n: u64, what: &str) -> CResult<Vec<i64>> {
    // SAFETY: the caller (MPI) passes arrays of `count` entries.
    Ok(unsafe { raw(ptr, n, what) }?
        .iter()
        .map(|v| v.wide())
        .collect())
}

/// The C array at `ptr` of `n` elements as a slice.
///
/// # Safety
/// As for [`array`](fn@array).
pub(super) unsafe fn raw<'a, T>(ptr: *const T, n: u64, what: &str) -> CResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    require(ptr, what)?;
    let n = usize::try_from(n).map_err(|_| fail(MPI_ERR_ARG, format!("{n} {what}")))?;
    // SAFETY: non-null, and the caller promises `n` readable values.
    Ok(unsafe { std::slice::from_raw_parts(ptr, n) })
}

/// Non-negative values of an array argument.
pub(super) fn all_nonneg(v: &[i64], what: &str) -> CResult<Vec<u64>> {
    v.iter().map(|&x| nonneg(x, what)).collect()
}

/// Checks `newtype`, builds the type and stores it (uncommitted) under `newtype`.
pub(super) fn make(
    newtype: *mut MPI_Datatype,
    large: bool,
    build: impl FnOnce() -> CResult<Datatype>,
) -> CResult<()> {
    require(newtype, "newtype")?;
    let ty = build()?;
    out(
        newtype,
        if large {
            insert_derived_as(ty, false, true)
        } else {
            insert_derived(ty)
        },
    )
}

fn contiguous(count: i64, old: MPI_Datatype) -> CResult<Datatype> {
    let n = count_arg(count)?;
    Ok(Datatype::contiguous(n, &datatype(old)?)?)
}

fn vector(count: i64, bl: i64, stride: i64, old: MPI_Datatype, bytes: bool) -> CResult<Datatype> {
    let (n, bl) = (count_arg(count)?, nonneg(bl, "block length")?);
    let old = datatype(old)?;
    Ok(if bytes {
        Datatype::hvector(n, bl, stride, &old)?
    } else {
        Datatype::vector(n, bl, stride, &old)?
    })
}

/// # Safety
/// `types` must point to `bls.len()` handles.
unsafe fn structure(bls: &[i64], displs: &[i64], types: *const MPI_Datatype) -> CResult<Datatype> {
    let bls = all_nonneg(bls, "block length")?;
    // SAFETY: forwarded from the caller.
    let handles = unsafe { raw(types, bls.len() as u64, "array_of_types") }?;
    let types = handles
        .iter()
        .map(|&h| datatype(h))
        .collect::<CResult<Vec<_>>>()?;
    Ok(Datatype::structure(&bls, displs, &types)?)
}

/// `count` copies of `oldtype`, one after the other.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_contiguous(
    count: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_contiguous", default_errh(), |_| {
        make(newtype, false, || contiguous(count as i64, oldtype))
    })
}

/// [`MPI_Type_contiguous`] with an MPI_Count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_contiguous_c(
    count: MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_contiguous_c", default_errh(), |_| {
        make(newtype, true, || contiguous(count, oldtype))
    })
}

/// `count` blocks of `blocklength` copies of `oldtype`, `stride` extents of it apart.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_vector(
    count: c_int,
    blocklength: c_int,
    stride: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_vector", default_errh(), |_| {
        make(newtype, false, || {
            vector(
                count as i64,
                blocklength as i64,
                stride as i64,
                oldtype,
                false,
            )
        })
    })
}

/// [`MPI_Type_vector`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_vector_c(
    count: MPI_Count,
    blocklength: MPI_Count,
    stride: MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_vector_c", default_errh(), |_| {
        make(newtype, true, || {
            vector(count, blocklength, stride, oldtype, false)
        })
    })
}

/// [`MPI_Type_vector`] with the stride in bytes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hvector(
    count: c_int,
    blocklength: c_int,
    stride: MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_hvector", default_errh(), |_| {
        make(newtype, false, || {
            vector(
                count as i64,
                blocklength as i64,
                stride as i64,
                oldtype,
                true,
            )
        })
    })
}

/// [`MPI_Type_create_hvector`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hvector_c(
    count: MPI_Count,
    blocklength: MPI_Count,
    stride: MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_hvector_c", default_errh(), |_| {
        make(newtype, true, || {
            vector(count, blocklength, stride, oldtype, true)
        })
    })
}

/// Blocks of `array_of_blocklengths[i]` copies of `array_of_types[i]` at byte displacements
/// `array_of_displacements[i]` (absolute addresses with MPI_BOTTOM as the buffer).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_struct(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const MPI_Aint,
    array_of_types: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_struct", default_errh(), |_| {
        make(newtype, false, || {
            let n = count_arg(count)?;
            // SAFETY: the caller (MPI) passes arrays of `count` entries.
            let bls = unsafe { array(array_of_blocklengths, n, "array_of_blocklengths") }?;
            let displs = unsafe { array(array_of_displacements, n, "array_of_displacements") }?;
            // SAFETY: the caller (MPI) passes `count` datatypes.
            unsafe { structure(&bls, &displs, array_of_types) }
        })
    })
}

/// [`MPI_Type_create_struct`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_struct_c(
    count: MPI_Count,
    array_of_blocklengths: *const MPI_Count,
    array_of_displacements: *const MPI_Count,
    array_of_types: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_struct_c", default_errh(), |_| {
        make(newtype, true, || {
            let n = count_arg(count)?;
            // SAFETY: the caller (MPI) passes arrays of `count` entries.
            let bls = unsafe { array(array_of_blocklengths, n, "array_of_blocklengths") }?;
            let displs = unsafe { array(array_of_displacements, n, "array_of_displacements") }?;
            // SAFETY: the caller (MPI) passes `count` datatypes.
            unsafe { structure(&bls, &displs, array_of_types) }
        })
    })
}

/// `oldtype` with lower bound `lb` and extent `extent`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_resized(
    oldtype: MPI_Datatype,
    lb: MPI_Aint,
    extent: MPI_Aint,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_resized", default_errh(), |_| {
        if let Ok(c) = super::custom(oldtype) {
            require(newtype, "newtype")?;
            let ty = c.resized(lb as i64, extent as i64);
            return out(newtype, super::insert_custom(ty));
        }
        make(newtype, false, || {
            Ok(Datatype::resized(
                &datatype(oldtype)?,
                lb as i64,
                extent as i64,
            )?)
        })
    })
}

/// [`MPI_Type_create_resized`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_resized_c(
    oldtype: MPI_Datatype,
    lb: MPI_Count,
    extent: MPI_Count,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_resized_c", default_errh(), |_| {
        if let Ok(c) = super::custom(oldtype) {
            require(newtype, "newtype")?;
            return out(newtype, super::insert_custom(c.resized(lb, extent)));
        }
        make(newtype, true, || {
            Ok(Datatype::resized(&datatype(oldtype)?, lb, extent)?)
        })
    })
}

/// A copy of `oldtype`, committed if it is (a predefined type always is), with the attributes
/// that their copy callbacks copy (if one fails, so does the dup, with its code, and
/// `*newtype` is MPI_DATATYPE_NULL). A custom type cannot be duplicated (MPI_ERR_TYPE).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_dup(oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> c_int {
    run("Type_dup", default_errh(), |_| {
        require(newtype, "newtype")?;
        let old = datatype(oldtype)?;
        let committed = is_predefined(oldtype)
            || with_created(oldtype, |e| {
                matches!(
                    e.created,
                    Created::Derived {
                        committed: true,
                        ..
                    }
                )
            })?;
        let made = insert_derived_as(Datatype::dup(&old), committed, false);
        // Attributes (attrs/types.rs): the copy callbacks; a failed one frees `made`.
        if let Err(e) = crate::attrs::types::inherit(oldtype, made) {
            let _ = out(newtype, MPI_DATATYPE_NULL);
            return Err(e);
        }
        out(newtype, made)
    })
}
