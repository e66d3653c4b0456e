//! The Fortran side of the MPI-5 standard ABI (MPI 5.0 section 20.3): what libmpi knows of the
//! Fortran compiler. mpicd's Fortran datatypes have gfortran's properties on x86-64 and
//! aarch64 Linux (`types/fortran.rs`: default INTEGER, REAL and LOGICAL of 4 bytes, DOUBLE
//! PRECISION of 8; LOGICAL true 1 and false 0), fixed when the library is built. So the
//! properties are known from the start: `MPI_Abi_get_fortran_info` and
//! `MPI_Abi_get_fortran_booleans` report them, and the two setters answer `MPI_ERR_ABI`, the
//! standard's answer once the properties are set. The four calls work at any time, from any
//! thread, and return their errors without invoking an error handler (as `MPI_Abi_get_version`).

use crate::abi::*;
use crate::env::{out, require};
use crate::errors::{fail, run, CResult, Errh};
use crate::info;
use crate::types::fortran::basic_of;
use mpicd::Info;
use std::ffi::{c_int, c_void};

/// The sizes `MPI_Abi_get_fortran_info` reports: key and datatype.
const SIZES: [(&str, MPI_Datatype); 4] = [
    ("mpi_logical_size", MPI_LOGICAL),
    ("mpi_integer_size", MPI_INTEGER),
    ("mpi_real_size", MPI_REAL),
    ("mpi_double_precision_size", MPI_DOUBLE_PRECISION),
];

/// The optional types `MPI_Abi_get_fortran_info` reports on: key and datatype. A type is
/// supported when it has a size (the standard marks an unsupported one by `MPI_UNDEFINED` from
/// `MPI_Type_size`); every one has here, REAL2 and COMPLEX4 included (handles with a size that
/// no reduction takes).
const OPTIONAL: [(&str, MPI_Datatype); 19] = [
    ("mpi_logical1_supported", MPI_LOGICAL1),
    ("mpi_logical2_supported", MPI_LOGICAL2),
    ("mpi_logical4_supported", MPI_LOGICAL4),
    ("mpi_logical8_supported", MPI_LOGICAL8),
    ("mpi_logical16_supported", MPI_LOGICAL16),
    ("mpi_integer1_supported", MPI_INTEGER1),
    ("mpi_integer2_supported", MPI_INTEGER2),
    ("mpi_integer4_supported", MPI_INTEGER4),
    ("mpi_integer8_supported", MPI_INTEGER8),
    ("mpi_integer16_supported", MPI_INTEGER16),
    ("mpi_real2_supported", MPI_REAL2),
    ("mpi_real4_supported", MPI_REAL4),
    ("mpi_real8_supported", MPI_REAL8),
    ("mpi_real16_supported", MPI_REAL16),
    ("mpi_complex4_supported", MPI_COMPLEX4),
    ("mpi_complex8_supported", MPI_COMPLEX8),
    ("mpi_complex16_supported", MPI_COMPLEX16),
    ("mpi_complex32_supported", MPI_COMPLEX32),
    ("mpi_double_complex_supported", MPI_DOUBLE_COMPLEX),
];

/// The Fortran properties as an info object's contents.
fn fortran_info() -> CResult<Info> {
    let mut info = Info::new();
    for (key, datatype) in SIZES {
        let size = basic_of(datatype).map_or(0, |b| b.size);
        info.set(key, size.to_string())?;
    }
    for (key, datatype) in OPTIONAL {
        let sized = basic_of(datatype).is_some_and(|b| b.size > 0);
        info.set(key, if sized { "true" } else { "false" })?;
    }
    Ok(info)
}

/// A Fortran LOGICAL's size must be a power of two of at most 16 bytes (the LOGICALn kinds).
fn check_logical_size(logical_size: c_int) -> CResult<usize> {
    match usize::try_from(logical_size) {
        Ok(n @ (1 | 2 | 4 | 8 | 16)) => Ok(n),
        _ => Err(fail(
            MPI_ERR_ARG,
            format!("logical_size {logical_size} is not a power of two up to 16"),
        )),
    }
}

/// A new info object with the Fortran properties the library follows: `mpi_logical_size`,
/// `mpi_integer_size`, `mpi_real_size`, `mpi_double_precision_size` (4, 4, 4, 8) and
/// `mpi_<type>_supported` ("true"/"false") for the optional Fortran types. The caller frees it.
#[no_mangle]
pub unsafe extern "C" fn MPI_Abi_get_fortran_info(info: *mut MPI_Info) -> c_int {
    run("Abi_get_fortran_info", Errh::Return, |_| {
        require(info, "info")?;
        out(info, info::insert(fortran_info()?))
    })
}

/// The Fortran properties are fixed in this library (see MPI_Abi_get_fortran_info): an info
/// object is checked and MPI_ERR_ABI answered, as for every call after the first.
#[no_mangle]
pub unsafe extern "C" fn MPI_Abi_set_fortran_info(info: MPI_Info) -> c_int {
    run("Abi_set_fortran_info", Errh::Return, |_| {
        info::with(info, |_| ())?;
        Err(fail(
            MPI_ERR_ABI,
            "the Fortran properties are fixed (MPI_Abi_get_fortran_info)",
        ))
    })
}

/// The literal values of Fortran's .TRUE. (1) and .FALSE. (0) as LOGICALs of `logical_size`
/// bytes (1, 2, 4, 8 or 16; MPI_ERR_ARG otherwise), written to `logical_true` and
/// `logical_false`; `is_set` is set to 1: the library knows them.
#[no_mangle]
pub unsafe extern "C" fn MPI_Abi_get_fortran_booleans(
    logical_size: c_int,
    logical_true: *mut c_void,
    logical_false: *mut c_void,
    is_set: *mut c_int,
) -> c_int {
    run("Abi_get_fortran_booleans", Errh::Return, |_| {
        let n = check_logical_size(logical_size)?;
        require(logical_true, "logical_true")?;
        require(logical_false, "logical_false")?;
        require(is_set, "is_set")?;
        let one = 1u128.to_ne_bytes();
        // The low-order `n` bytes of 1 in the machine's byte order.
        let one = if cfg!(target_endian = "little") {
            &one[..n]
        } else {
            &one[16 - n..]
        };
        // SAFETY: the caller provides `logical_size` bytes at each pointer (checked non-null).
        unsafe {
            std::ptr::copy_nonoverlapping(one.as_ptr(), logical_true.cast::<u8>(), n);
            std::ptr::write_bytes(logical_false.cast::<u8>(), 0, n);
        }
        out(is_set, 1)
    })
}

/// The Fortran booleans are fixed in this library (see MPI_Abi_get_fortran_booleans): the
/// arguments are checked and MPI_ERR_ABI answered, as for every call after the first.
#[no_mangle]
pub unsafe extern "C" fn MPI_Abi_set_fortran_booleans(
    logical_size: c_int,
    logical_true: *mut c_void,
    logical_false: *mut c_void,
) -> c_int {
    run("Abi_set_fortran_booleans", Errh::Return, |_| {
        check_logical_size(logical_size)?;
        require(logical_true, "logical_true")?;
        require(logical_false, "logical_false")?;
        Err(fail(
            MPI_ERR_ABI,
            "the Fortran booleans are fixed (MPI_Abi_get_fortran_booleans)",
        ))
    })
}
