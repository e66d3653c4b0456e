//! The C constants and callback types of parallel I/O in `mpi.h` (the file access modes,
//! seek positions, the data representation callbacks), with the MPI-5 standard ABI's values
//! (checked by `tests/abi_constants.rs`); re-exported by [`crate::abi`].

// The sentinels stay `N as *mut T` casts: cbindgen turns those into C casts.
#![allow(clippy::zero_ptr, clippy::manual_dangling_ptr)]

use crate::abi::{MPI_Aint, MPI_Count, MPI_Datatype, MPI_File, MPI_Offset};
use std::ffi::{c_int, c_void};

/// File access mode: the pointers start at the end of the file.
pub const MPI_MODE_APPEND: c_int = 1;
/// File access mode: create the file if it does not exist.
pub const MPI_MODE_CREATE: c_int = 2;
/// File access mode: delete the file when it is closed.
pub const MPI_MODE_DELETE_ON_CLOSE: c_int = 4;
/// File access mode: fail if the file exists (with MPI_MODE_CREATE).
pub const MPI_MODE_EXCL: c_int = 8;
/// File access mode: read only.
pub const MPI_MODE_RDONLY: c_int = 16;
/// File access mode: reading and writing.
pub const MPI_MODE_RDWR: c_int = 32;
/// File access mode: sequential access only (shared file pointer).
pub const MPI_MODE_SEQUENTIAL: c_int = 64;
/// File access mode: the file is not opened concurrently elsewhere.
pub const MPI_MODE_UNIQUE_OPEN: c_int = 128;
/// File access mode: write only.
pub const MPI_MODE_WRONLY: c_int = 256;
/// `MPI_File_seek`: from the current position.
pub const MPI_SEEK_CUR: c_int = 401;
/// `MPI_File_seek`: from the end of the file.
pub const MPI_SEEK_END: c_int = 402;
/// `MPI_File_seek`: from the start of the view.
pub const MPI_SEEK_SET: c_int = 403;
/// `MPI_File_set_view`'s displacement for a sequential file: the shared file pointer's.
pub const MPI_DISPLACEMENT_CURRENT: MPI_Offset = -1 as MPI_Offset;

/// A user's error handler for files (`MPI_File_create_errhandler`): called with a pointer to
/// the file's handle and a pointer to the error code; mpicd passes no further arguments.
pub type MPI_File_errhandler_function =
    Option<unsafe extern "C" fn(file: *mut MPI_File, error_code: *mut c_int, ...)>;
/// The extent of a datatype in a user data representation (`MPI_Register_datarep`).
pub type MPI_Datarep_extent_function = Option<
    unsafe extern "C" fn(
        datatype: MPI_Datatype,
        extent: *mut MPI_Aint,
        extra_state: *mut c_void,
    ) -> c_int,
>;
/// A conversion between the native and a user data representation (`MPI_Register_datarep`).
pub type MPI_Datarep_conversion_function = Option<
    unsafe extern "C" fn(
        userbuf: *mut c_void,
        datatype: MPI_Datatype,
        count: c_int,
        filebuf: *mut c_void,
        position: MPI_Offset,
        extra_state: *mut c_void,
    ) -> c_int,
>;
/// [`MPI_Datarep_conversion_function`] with an MPI_Count count.
pub type MPI_Datarep_conversion_function_c = Option<
    unsafe extern "C" fn(
        userbuf: *mut c_void,
        datatype: MPI_Datatype,
        count: MPI_Count,
        filebuf: *mut c_void,
        position: MPI_Offset,
        extra_state: *mut c_void,
    ) -> c_int,
>;
/// No conversion: the data are moved as they are.
pub const MPI_CONVERSION_FN_NULL: *mut MPI_Datarep_conversion_function =
    0 as *mut MPI_Datarep_conversion_function;
/// [`MPI_CONVERSION_FN_NULL`] for the large-count registration.
pub const MPI_CONVERSION_FN_NULL_C: *mut MPI_Datarep_conversion_function_c =
    0 as *mut MPI_Datarep_conversion_function_c;
