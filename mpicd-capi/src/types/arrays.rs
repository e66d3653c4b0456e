//! The array constructors: MPI_Type_create_subarray and MPI_Type_create_darray, with their
//! large-count `_c` variants (MPI_Count array sizes). Orders and distributions take the
//! standard ABI's values; MPI_DISTRIBUTE_DFLT_DARG (19 in the ABI) asks for the default block
//! size.

use super::ctors::{all_nonneg, array, make, raw, Wide};
use super::datatype;
use crate::abi::*;
use crate::comms::default_errh;
use crate::errors::{fail, run, CResult};
use mpicd::{Datatype, Distribution, Order, DISTRIBUTE_DFLT_DARG};
use std::ffi::c_int;

fn order_of(order: c_int) -> CResult<Order> {
    match order {
        MPI_ORDER_C => Ok(Order::C),
        MPI_ORDER_FORTRAN => Ok(Order::Fortran),
        o => Err(fail(MPI_ERR_ARG, format!("unknown array order {o}"))),
    }
}

fn distribution_of(d: c_int) -> CResult<Distribution> {
    match d {
        MPI_DISTRIBUTE_NONE => Ok(Distribution::None),
        MPI_DISTRIBUTE_BLOCK => Ok(Distribution::Block),
        MPI_DISTRIBUTE_CYCLIC => Ok(Distribution::Cyclic),
        d => Err(fail(MPI_ERR_ARG, format!("unknown distribution {d}"))),
    }
}

fn subarray(
    sizes: &[i64],
    subsizes: &[i64],
    starts: &[i64],
    order: c_int,
    old: MPI_Datatype,
) -> CResult<Datatype> {
    let sizes = all_nonneg(sizes, "array size")?;
    let subsizes = all_nonneg(subsizes, "subarray size")?;
    let starts = all_nonneg(starts, "subarray start")?;
    let order = order_of(order)?;
    let old = datatype(old)?;
    Ok(Datatype::subarray(&sizes, &subsizes, &starts, order, &old)?)
}

/// The arguments of a darray beside its global sizes, read from C.
struct Grid {
    size: c_int,
    rank: c_int,
    ndims: c_int,
    distribs: *const c_int,
    dargs: *const c_int,
    psizes: *const c_int,
    order: c_int,
}

/// # Safety
/// The grid's arrays must each hold `ndims` values.
unsafe fn darray(g: Grid, gsizes: *const impl Wide, old: MPI_Datatype) -> CResult<Datatype> {
    let size = u32::try_from(g.size)
        .ok()
        .filter(|&s| s > 0)
        .ok_or_else(|| fail(MPI_ERR_ARG, format!("darray over {} processes", g.size)))?;
    let rank = u32::try_from(g.rank)
        .map_err(|_| fail(MPI_ERR_ARG, format!("darray for rank {}", g.rank)))?;
    let n = u64::try_from(g.ndims)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| fail(MPI_ERR_ARG, format!("darray of {} dimensions", g.ndims)))?;
    // SAFETY: forwarded from the caller.
    let (gsizes, distribs, dargs, psizes) = unsafe {
        (
            array(gsizes, n, "array_of_gsizes")?,
            raw(g.distribs, n, "array_of_distribs")?,
            raw(g.dargs, n, "array_of_dargs")?,
            array(g.psizes, n, "array_of_psizes")?,
        )
    };
    let gsizes = all_nonneg(&gsizes, "global size")?;
    let distribs = distribs
        .iter()
        .map(|&d| distribution_of(d))
        .collect::<CResult<Vec<_>>>()?;
    let dargs: Vec<i64> = dargs
        .iter()
        .map(|&d| match d {
            MPI_DISTRIBUTE_DFLT_DARG => DISTRIBUTE_DFLT_DARG,
            d => d as i64,
        })
        .collect();
    let psizes = psizes
        .iter()
        .map(|&p| u32::try_from(p).map_err(|_| fail(MPI_ERR_ARG, format!("{p} processes"))))
        .collect::<CResult<Vec<_>>>()?;
    let order = order_of(g.order)?;
    let old = datatype(old)?;
    Ok(Datatype::darray(
        size, rank, &gsizes, &distribs, &dargs, &psizes, order, &old,
    )?)
}

/// Reads the three arrays of a subarray.
///
/// # Safety
/// Each must hold `ndims` values.
unsafe fn subarray_args<T: Wide>(
    ndims: c_int,
    sizes: *const T,
    subsizes: *const T,
    starts: *const T,
) -> CResult<[Vec<i64>; 3]> {
    let n = u64::try_from(ndims)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| fail(MPI_ERR_ARG, format!("subarray of {ndims} dimensions")))?;
    // SAFETY: forwarded from the caller.
    unsafe {
        Ok([
            array(sizes, n, "array_of_sizes")?,
            array(subsizes, n, "array_of_subsizes")?,
            array(starts, n, "array_of_starts")?,
        ])
    }
}

/// The `array_of_subsizes` block at `array_of_starts` of an `array_of_sizes` array of
/// `oldtype` in `order` (MPI_ORDER_C or MPI_ORDER_FORTRAN); its extent is the whole array's.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_subarray(
    ndims: c_int,
    array_of_sizes: *const c_int,
    array_of_subsizes: *const c_int,
    array_of_starts: *const c_int,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_subarray", default_errh(), |_| {
        make(newtype, false, || {
            // SAFETY: the caller (MPI) passes arrays of `ndims` entries.
            let [sz, sub, st] = unsafe {
                subarray_args(ndims, array_of_sizes, array_of_subsizes, array_of_starts)
            }?;
            subarray(&sz, &sub, &st, order, oldtype)
        })
    })
}

/// [`MPI_Type_create_subarray`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_subarray_c(
    ndims: c_int,
    array_of_sizes: *const MPI_Count,
    array_of_subsizes: *const MPI_Count,
    array_of_starts: *const MPI_Count,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_subarray_c", default_errh(), |_| {
        make(newtype, true, || {
            // SAFETY: the caller (MPI) passes arrays of `ndims` entries.
            let [sz, sub, st] = unsafe {
                subarray_args(ndims, array_of_sizes, array_of_subsizes, array_of_starts)
            }?;
            subarray(&sz, &sub, &st, order, oldtype)
        })
    })
}

/// The part of a distributed `array_of_gsizes` array of `oldtype` that process `rank` of
/// `size` owns, over a row-major `array_of_psizes` process grid.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_darray(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    array_of_gsizes: *const c_int,
    array_of_distribs: *const c_int,
    array_of_dargs: *const c_int,
    array_of_psizes: *const c_int,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_darray", default_errh(), |_| {
        make(newtype, false, || {
            let g = Grid {
                size,
                rank,
                ndims,
                distribs: array_of_distribs,
                dargs: array_of_dargs,
                psizes: array_of_psizes,
                order,
            };
            // SAFETY: the caller (MPI) passes arrays of `ndims` entries.
            unsafe { darray(g, array_of_gsizes, oldtype) }
        })
    })
}

/// [`MPI_Type_create_darray`] with MPI_Count global sizes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_darray_c(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    array_of_gsizes: *const MPI_Count,
    array_of_distribs: *const c_int,
    array_of_dargs: *const c_int,
    array_of_psizes: *const c_int,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_darray_c", default_errh(), |_| {
        make(newtype, true, || {
            let g = Grid {
                size,
                rank,
                ndims,
                distribs: array_of_distribs,
                dargs: array_of_dargs,
                psizes: array_of_psizes,
                order,
            };
            // SAFETY: the caller (MPI) passes arrays of `ndims` entries.
            unsafe { darray(g, array_of_gsizes, oldtype) }
        })
    })
}
