//! The indexed constructors: MPI_Type_indexed, _create_hindexed, _create_indexed_block and
//! _create_hindexed_block, each with its large-count `_c` variant (displacements in extents of
//! the old type, or in bytes for the `h` forms; MPI_Count displacements in the `_c` forms).

use super::ctors::{all_nonneg, array, count_arg, make, nonneg};
use super::datatype;
use crate::abi::*;
use crate::comms::default_errh;
use crate::errors::{run, CResult};
use mpicd::Datatype;
use std::ffi::c_int;

fn indexed(bls: &[i64], displs: &[i64], old: MPI_Datatype, bytes: bool) -> CResult<Datatype> {
    let bls = all_nonneg(bls, "block length")?;
    let old = datatype(old)?;
    Ok(if bytes {
        Datatype::hindexed(&bls, displs, &old)?
    } else {
        Datatype::indexed(&bls, displs, &old)?
    })
}

fn indexed_block(bl: i64, displs: &[i64], old: MPI_Datatype, bytes: bool) -> CResult<Datatype> {
    let bl = nonneg(bl, "block length")?;
    let old = datatype(old)?;
    Ok(if bytes {
        Datatype::hindexed_block(bl, displs, &old)?
    } else {
        Datatype::indexed_block(bl, displs, &old)?
    })
}

/// Blocks of `array_of_blocklengths[i]` copies of `oldtype` at `array_of_displacements[i]`
/// extents of it.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_indexed(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_indexed", default_errh(), |_| {
        make(newtype, false, || {
            let n = count_arg(count)?;
            // SAFETY: the caller (MPI) passes arrays of `count` entries.
            let bls = unsafe { array(array_of_blocklengths, n, "array_of_blocklengths") }?;
            let displs = unsafe { array(array_of_displacements, n, "array_of_displacements") }?;
            indexed(&bls, &displs, oldtype, false)
        })
    })
}

/// [`MPI_Type_indexed`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_indexed_c(
    count: MPI_Count,
    array_of_blocklengths: *const MPI_Count,
    array_of_displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_indexed_c", default_errh(), |_| {
        make(newtype, true, || {
            let n = count_arg(count)?;
            // SAFETY: the caller (MPI) passes arrays of `count` entries.
            let bls = unsafe { array(array_of_blocklengths, n, "array_of_blocklengths") }?;
            let displs = unsafe { array(array_of_displacements, n, "array_of_displacements") }?;
            indexed(&bls, &displs, oldtype, false)
        })
    })
}

/// [`MPI_Type_indexed`] with displacements in bytes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_hindexed", default_errh(), |_| {
        make(newtype, false, || {
            let n = count_arg(count)?;
            // SAFETY: the caller (MPI) passes arrays of `count` entries.
            let bls = unsafe { array(array_of_blocklengths, n, "array_of_blocklengths") }?;
            let displs = unsafe { array(array_of_displacements, n, "array_of_displacements") }?;
            indexed(&bls, &displs, oldtype, true)
        })
    })
}

/// [`MPI_Type_create_hindexed`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed_c(
    count: MPI_Count,
    array_of_blocklengths: *const MPI_Count,
    array_of_displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_hindexed_c", default_errh(), |_| {
        make(newtype, true, || {
            let n = count_arg(count)?;
            // SAFETY: the caller (MPI) passes arrays of `count` entries.
            let bls = unsafe { array(array_of_blocklengths, n, "array_of_blocklengths") }?;
            let displs = unsafe { array(array_of_displacements, n, "array_of_displacements") }?;
            indexed(&bls, &displs, oldtype, true)
        })
    })
}

/// Blocks of `blocklength` copies of `oldtype` at `array_of_displacements[i]` extents of it.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_indexed_block(
    count: c_int,
    blocklength: c_int,
    array_of_displacements: *const c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_indexed_block", default_errh(), |_| {
        make(newtype, false, || {
            let n = count_arg(count)?;
            // SAFETY: the caller (MPI) passes arrays of `count` entries.
            let displs = unsafe { array(array_of_displacements, n, "array_of_displacements") }?;
            indexed_block(blocklength as i64, &displs, oldtype, false)
        })
    })
}

/// [`MPI_Type_create_indexed_block`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_indexed_block_c(
    count: MPI_Count,
    blocklength: MPI_Count,
    array_of_displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_indexed_block_c", default_errh(), |_| {
        make(newtype, true, || {
            let n = count_arg(count)?;
            // SAFETY: the caller (MPI) passes arrays of `count` entries.
            let displs = unsafe { array(array_of_displacements, n, "array_of_displacements") }?;
            indexed_block(blocklength, &displs, oldtype, false)
        })
    })
}

/// [`MPI_Type_create_indexed_block`] with displacements in bytes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed_block(
    count: c_int,
    blocklength: c_int,
    array_of_displacements: *const MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_hindexed_block", default_errh(), |_| {
        make(newtype, false, || {
            let n = count_arg(count)?;
            // SAFETY: the caller (MPI) passes arrays of `count` entries.
            let displs = unsafe { array(array_of_displacements, n, "array_of_displacements") }?;
            indexed_block(blocklength as i64, &displs, oldtype, true)
        })
    })
}

/// [`MPI_Type_create_hindexed_block`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed_block_c(
    count: MPI_Count,
    blocklength: MPI_Count,
    array_of_displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_hindexed_block_c", default_errh(), |_| {
        make(newtype, true, || {
            let n = count_arg(count)?;
            // SAFETY: the caller (MPI) passes arrays of `count` entries.
            let displs = unsafe { array(array_of_displacements, n, "array_of_displacements") }?;
            indexed_block(blocklength, &displs, oldtype, true)
        })
    })
}
