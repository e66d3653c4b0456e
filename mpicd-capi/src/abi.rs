//! The C types and constants of `mpi.h`, laid out as in the MPI-5 standard ABI (the MPI Forum's
//! `mpi_abi.h`): handles are pointers to incomplete structs, predefined handles are small
//! integer constants cast to those pointers, integer constants use the standard values.
//!
//! cbindgen turns this module into the type and constant part of `include/mpi.h`;
//! `tests/abi_constants.rs` checks every value against the MPI Forum's `mpi-abi-stubs`.

// The sentinels stay `N as *mut T` casts: cbindgen turns those into C casts.
#![allow(clippy::zero_ptr, clippy::manual_dangling_ptr)]

use std::ffi::{c_char, c_int, c_void};

/// Address-sized integer.
pub type MPI_Aint = isize;
/// Element counts of the large-count (`_c`) interface and of custom datatypes.
pub type MPI_Count = i64;
/// File offsets.
pub type MPI_Offset = i64;
/// A Fortran INTEGER.
pub type MPI_Fint = c_int;

/// A user's reduction (`MPI_Op_create`): `inoutvec[i] = invec[i] op inoutvec[i]` for the `*len`
/// elements of `*datatype`.
pub type MPI_User_function = Option<
    unsafe extern "C" fn(
        invec: *mut c_void,
        inoutvec: *mut c_void,
        len: *mut c_int,
        datatype: *mut MPI_Datatype,
    ),
>;
/// [`MPI_User_function`] with an MPI_Count length (`MPI_Op_create_c`).
pub type MPI_User_function_c = Option<
    unsafe extern "C" fn(
        invec: *mut c_void,
        inoutvec: *mut c_void,
        len: *mut MPI_Count,
        datatype: *mut MPI_Datatype,
    ),
>;
/// A user's error handler for communicators (`MPI_Comm_create_errhandler`): called with a
/// pointer to the communicator's handle and a pointer to the error code; mpicd passes no
/// further arguments.
pub type MPI_Comm_errhandler_function =
    Option<unsafe extern "C" fn(comm: *mut MPI_Comm, error_code: *mut c_int, ...)>;

/// A user's error handler for sessions (`MPI_Session_create_errhandler`): called with a
/// pointer to the session's handle and a pointer to the error code; mpicd passes no further
/// arguments.
pub type MPI_Session_errhandler_function =
    Option<unsafe extern "C" fn(session: *mut MPI_Session, error_code: *mut c_int, ...)>;
/// A generalized request's status query (`MPI_Grequest_start`): fills `*status`.
pub type MPI_Grequest_query_function =
    Option<unsafe extern "C" fn(extra_state: *mut c_void, status: *mut MPI_Status) -> c_int>;
/// A generalized request's clean-up (`MPI_Grequest_start`), called once when it is freed.
pub type MPI_Grequest_free_function =
    Option<unsafe extern "C" fn(extra_state: *mut c_void) -> c_int>;
/// A generalized request's cancel (`MPI_Grequest_start`); `complete` says whether
/// `MPI_Grequest_complete` was already called.
pub type MPI_Grequest_cancel_function =
    Option<unsafe extern "C" fn(extra_state: *mut c_void, complete: c_int) -> c_int>;

/// What a receive, probe or wait reports. `internal` is private to the library.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MPI_Status {
    pub MPI_SOURCE: c_int,
    pub MPI_TAG: c_int,
    pub MPI_ERROR: c_int,
    pub internal: [c_int; 5],
}

// Handles: opaque pointers to incomplete structs that the library never dereferences.
// (Written out, not made by a macro, so that cbindgen sees them.)

pub struct MPI_ABI_Op {
    _opaque: [u8; 0],
}
pub type MPI_Op = *mut MPI_ABI_Op;
pub struct MPI_ABI_Comm {
    _opaque: [u8; 0],
}
pub type MPI_Comm = *mut MPI_ABI_Comm;
pub struct MPI_ABI_Group {
    _opaque: [u8; 0],
}
pub type MPI_Group = *mut MPI_ABI_Group;
pub struct MPI_ABI_Win {
    _opaque: [u8; 0],
}
pub type MPI_Win = *mut MPI_ABI_Win;
pub struct MPI_ABI_File {
    _opaque: [u8; 0],
}
pub type MPI_File = *mut MPI_ABI_File;
pub struct MPI_ABI_Session {
    _opaque: [u8; 0],
}
pub type MPI_Session = *mut MPI_ABI_Session;
pub struct MPI_ABI_Message {
    _opaque: [u8; 0],
}
pub type MPI_Message = *mut MPI_ABI_Message;
pub struct MPI_ABI_Info {
    _opaque: [u8; 0],
}
pub type MPI_Info = *mut MPI_ABI_Info;
pub struct MPI_ABI_Errhandler {
    _opaque: [u8; 0],
}
pub type MPI_Errhandler = *mut MPI_ABI_Errhandler;
pub struct MPI_ABI_Request {
    _opaque: [u8; 0],
}
pub type MPI_Request = *mut MPI_ABI_Request;
pub struct MPI_ABI_Datatype {
    _opaque: [u8; 0],
}
pub type MPI_Datatype = *mut MPI_ABI_Datatype;

// ----- predefined handles (standard ABI values) -----

pub const MPI_OP_NULL: MPI_Op = 0x20 as MPI_Op;
pub const MPI_SUM: MPI_Op = 0x21 as MPI_Op;
pub const MPI_MIN: MPI_Op = 0x22 as MPI_Op;
pub const MPI_MAX: MPI_Op = 0x23 as MPI_Op;
pub const MPI_PROD: MPI_Op = 0x24 as MPI_Op;
pub const MPI_BAND: MPI_Op = 0x28 as MPI_Op;
pub const MPI_BOR: MPI_Op = 0x29 as MPI_Op;
pub const MPI_BXOR: MPI_Op = 0x2a as MPI_Op;
pub const MPI_LAND: MPI_Op = 0x30 as MPI_Op;
pub const MPI_LOR: MPI_Op = 0x31 as MPI_Op;
pub const MPI_LXOR: MPI_Op = 0x32 as MPI_Op;
pub const MPI_MINLOC: MPI_Op = 0x38 as MPI_Op;
pub const MPI_MAXLOC: MPI_Op = 0x39 as MPI_Op;
pub const MPI_REPLACE: MPI_Op = 0x3c as MPI_Op;
pub const MPI_NO_OP: MPI_Op = 0x3d as MPI_Op;

pub const MPI_COMM_NULL: MPI_Comm = 0x100 as MPI_Comm;
pub const MPI_COMM_WORLD: MPI_Comm = 0x101 as MPI_Comm;
pub const MPI_COMM_SELF: MPI_Comm = 0x102 as MPI_Comm;

pub const MPI_GROUP_NULL: MPI_Group = 0x108 as MPI_Group;
pub const MPI_GROUP_EMPTY: MPI_Group = 0x109 as MPI_Group;
pub const MPI_WIN_NULL: MPI_Win = 0x110 as MPI_Win;
pub const MPI_FILE_NULL: MPI_File = 0x118 as MPI_File;
pub const MPI_SESSION_NULL: MPI_Session = 0x120 as MPI_Session;

pub const MPI_MESSAGE_NULL: MPI_Message = 0x128 as MPI_Message;
pub const MPI_MESSAGE_NO_PROC: MPI_Message = 0x129 as MPI_Message;

pub const MPI_INFO_NULL: MPI_Info = 0x130 as MPI_Info;
pub const MPI_INFO_ENV: MPI_Info = 0x131 as MPI_Info;

pub const MPI_ERRHANDLER_NULL: MPI_Errhandler = 0x140 as MPI_Errhandler;
pub const MPI_ERRORS_ARE_FATAL: MPI_Errhandler = 0x141 as MPI_Errhandler;
pub const MPI_ERRORS_ABORT: MPI_Errhandler = 0x142 as MPI_Errhandler;
pub const MPI_ERRORS_RETURN: MPI_Errhandler = 0x143 as MPI_Errhandler;

pub const MPI_REQUEST_NULL: MPI_Request = 0x180 as MPI_Request;

pub const MPI_DATATYPE_NULL: MPI_Datatype = 0x200 as MPI_Datatype;
pub const MPI_AINT: MPI_Datatype = 0x201 as MPI_Datatype;
pub const MPI_COUNT: MPI_Datatype = 0x202 as MPI_Datatype;
pub const MPI_OFFSET: MPI_Datatype = 0x203 as MPI_Datatype;
pub const MPI_PACKED: MPI_Datatype = 0x207 as MPI_Datatype;
pub const MPI_SHORT: MPI_Datatype = 0x208 as MPI_Datatype;
pub const MPI_INT: MPI_Datatype = 0x209 as MPI_Datatype;
pub const MPI_LONG: MPI_Datatype = 0x20a as MPI_Datatype;
pub const MPI_LONG_LONG: MPI_Datatype = 0x20b as MPI_Datatype;
pub const MPI_LONG_LONG_INT: MPI_Datatype = 0x20b as MPI_Datatype;
pub const MPI_UNSIGNED_SHORT: MPI_Datatype = 0x20c as MPI_Datatype;
pub const MPI_UNSIGNED: MPI_Datatype = 0x20d as MPI_Datatype;
pub const MPI_UNSIGNED_LONG: MPI_Datatype = 0x20e as MPI_Datatype;
pub const MPI_UNSIGNED_LONG_LONG: MPI_Datatype = 0x20f as MPI_Datatype;
pub const MPI_FLOAT: MPI_Datatype = 0x210 as MPI_Datatype;
pub const MPI_C_FLOAT_COMPLEX: MPI_Datatype = 0x212 as MPI_Datatype;
pub const MPI_C_COMPLEX: MPI_Datatype = 0x212 as MPI_Datatype;
pub const MPI_CXX_FLOAT_COMPLEX: MPI_Datatype = 0x213 as MPI_Datatype;
pub const MPI_DOUBLE: MPI_Datatype = 0x214 as MPI_Datatype;
pub const MPI_C_DOUBLE_COMPLEX: MPI_Datatype = 0x216 as MPI_Datatype;
pub const MPI_CXX_DOUBLE_COMPLEX: MPI_Datatype = 0x217 as MPI_Datatype;
pub const MPI_LONG_DOUBLE: MPI_Datatype = 0x220 as MPI_Datatype;
pub const MPI_C_LONG_DOUBLE_COMPLEX: MPI_Datatype = 0x224 as MPI_Datatype;
pub const MPI_CXX_LONG_DOUBLE_COMPLEX: MPI_Datatype = 0x225 as MPI_Datatype;
pub const MPI_FLOAT_INT: MPI_Datatype = 0x228 as MPI_Datatype;
pub const MPI_DOUBLE_INT: MPI_Datatype = 0x229 as MPI_Datatype;
pub const MPI_LONG_INT: MPI_Datatype = 0x22a as MPI_Datatype;
pub const MPI_2INT: MPI_Datatype = 0x22b as MPI_Datatype;
pub const MPI_SHORT_INT: MPI_Datatype = 0x22c as MPI_Datatype;
pub const MPI_LONG_DOUBLE_INT: MPI_Datatype = 0x22d as MPI_Datatype;
/// Fortran's value-index pairs of MINLOC and MAXLOC (the index of the value's type).
pub const MPI_2REAL: MPI_Datatype = 0x230 as MPI_Datatype;
pub const MPI_2DOUBLE_PRECISION: MPI_Datatype = 0x231 as MPI_Datatype;
pub const MPI_2INTEGER: MPI_Datatype = 0x232 as MPI_Datatype;
pub const MPI_C_BOOL: MPI_Datatype = 0x238 as MPI_Datatype;
pub const MPI_CXX_BOOL: MPI_Datatype = 0x239 as MPI_Datatype;
pub const MPI_WCHAR: MPI_Datatype = 0x23c as MPI_Datatype;
pub const MPI_INT8_T: MPI_Datatype = 0x240 as MPI_Datatype;
pub const MPI_UINT8_T: MPI_Datatype = 0x241 as MPI_Datatype;
pub const MPI_CHAR: MPI_Datatype = 0x243 as MPI_Datatype;
pub const MPI_SIGNED_CHAR: MPI_Datatype = 0x244 as MPI_Datatype;
pub const MPI_UNSIGNED_CHAR: MPI_Datatype = 0x245 as MPI_Datatype;
pub const MPI_BYTE: MPI_Datatype = 0x247 as MPI_Datatype;
pub const MPI_INT16_T: MPI_Datatype = 0x248 as MPI_Datatype;
pub const MPI_UINT16_T: MPI_Datatype = 0x249 as MPI_Datatype;
pub const MPI_INT32_T: MPI_Datatype = 0x250 as MPI_Datatype;
pub const MPI_UINT32_T: MPI_Datatype = 0x251 as MPI_Datatype;
pub const MPI_INT64_T: MPI_Datatype = 0x258 as MPI_Datatype;
pub const MPI_UINT64_T: MPI_Datatype = 0x259 as MPI_Datatype;

// The Fortran datatypes, valid in C without Fortran bindings (sizes of gfortran on the
// platform: `types/fortran.rs`).
pub const MPI_LOGICAL: MPI_Datatype = 0x218 as MPI_Datatype;
pub const MPI_INTEGER: MPI_Datatype = 0x219 as MPI_Datatype;
pub const MPI_REAL: MPI_Datatype = 0x21a as MPI_Datatype;
pub const MPI_COMPLEX: MPI_Datatype = 0x21b as MPI_Datatype;
pub const MPI_DOUBLE_PRECISION: MPI_Datatype = 0x21c as MPI_Datatype;
pub const MPI_DOUBLE_COMPLEX: MPI_Datatype = 0x21d as MPI_Datatype;
pub const MPI_CHARACTER: MPI_Datatype = 0x21e as MPI_Datatype;
pub const MPI_LOGICAL1: MPI_Datatype = 0x2c0 as MPI_Datatype;
pub const MPI_INTEGER1: MPI_Datatype = 0x2c1 as MPI_Datatype;
pub const MPI_LOGICAL2: MPI_Datatype = 0x2c8 as MPI_Datatype;
pub const MPI_INTEGER2: MPI_Datatype = 0x2c9 as MPI_Datatype;
pub const MPI_REAL2: MPI_Datatype = 0x2ca as MPI_Datatype;
pub const MPI_LOGICAL4: MPI_Datatype = 0x2d0 as MPI_Datatype;
pub const MPI_INTEGER4: MPI_Datatype = 0x2d1 as MPI_Datatype;
pub const MPI_REAL4: MPI_Datatype = 0x2d2 as MPI_Datatype;
pub const MPI_COMPLEX4: MPI_Datatype = 0x2d3 as MPI_Datatype;
pub const MPI_LOGICAL8: MPI_Datatype = 0x2d8 as MPI_Datatype;
pub const MPI_INTEGER8: MPI_Datatype = 0x2d9 as MPI_Datatype;
pub const MPI_REAL8: MPI_Datatype = 0x2da as MPI_Datatype;
pub const MPI_COMPLEX8: MPI_Datatype = 0x2db as MPI_Datatype;
pub const MPI_LOGICAL16: MPI_Datatype = 0x2e0 as MPI_Datatype;
pub const MPI_INTEGER16: MPI_Datatype = 0x2e1 as MPI_Datatype;
pub const MPI_REAL16: MPI_Datatype = 0x2e2 as MPI_Datatype;
pub const MPI_COMPLEX16: MPI_Datatype = 0x2e3 as MPI_Datatype;
pub const MPI_COMPLEX32: MPI_Datatype = 0x2eb as MPI_Datatype;

// `MPI_Type_match_size` classes (mpi-abi-stubs values; the LOGICAL one is an MPICH
// extension the stubs name).
pub const MPIX_TYPECLASS_LOGICAL: c_int = 191;
pub const MPI_TYPECLASS_INTEGER: c_int = 192;
pub const MPI_TYPECLASS_REAL: c_int = 193;
pub const MPI_TYPECLASS_COMPLEX: c_int = 194;

// ----- buffer and ignore sentinels -----

pub const MPI_BOTTOM: *mut c_void = 0 as *mut c_void;
pub const MPI_IN_PLACE: *mut c_void = 1 as *mut c_void;
pub const MPI_STATUS_IGNORE: *mut MPI_Status = 0 as *mut MPI_Status;
pub const MPI_STATUSES_IGNORE: *mut MPI_Status = 0 as *mut MPI_Status;
pub const MPI_ERRCODES_IGNORE: *mut c_int = 0 as *mut c_int;
/// No arguments for the programs MPI_Comm_spawn starts.
pub const MPI_ARGV_NULL: *mut *mut c_char = 0 as *mut *mut c_char;
/// No arguments for any of the programs MPI_Comm_spawn_multiple starts.
pub const MPI_ARGVS_NULL: *mut *mut *mut c_char = 0 as *mut *mut *mut c_char;
/// MPI_Buffer_attach's buffer that asks MPI to allocate buffered messages itself (MPI 4.1).
pub const MPI_BUFFER_AUTOMATIC: *mut c_void = 2 as *mut c_void;
/// The weights of an unweighted distributed graph (mpi-abi-stubs value).
pub const MPI_UNWEIGHTED: *mut c_int = 10 as *mut c_int;
/// The weights of a weighted distributed graph's process with no edges (mpi-abi-stubs value).
pub const MPI_WEIGHTS_EMPTY: *mut c_int = 11 as *mut c_int;

// ----- versions and string sizes -----

/// Bytes of a buffered send's bookkeeping in an attached buffer, counted once per message
/// (MPI_Buffer_attach: attach the messages' packed sizes plus this much for each).
pub const MPI_BSEND_OVERHEAD: c_int = 512;

pub const MPI_VERSION: c_int = 5;
pub const MPI_SUBVERSION: c_int = 0;
/// The version of the standard ABI this library follows (MPI-5.0's first), which
/// `MPI_Abi_get_version` answers too. Every function of that ABI exists (clients such as
/// mpi4py take these macros to mean so).
pub const MPI_ABI_VERSION: c_int = 1;
pub const MPI_ABI_SUBVERSION: c_int = 0;

/// `MPI_Status` as Fortran 77 INTEGERs: its size and the indices of the public fields.
pub const MPI_F_STATUS_SIZE: c_int = 8;
pub const MPI_F_SOURCE: c_int = 0;
pub const MPI_F_TAG: c_int = 1;
pub const MPI_F_ERROR: c_int = 2;
pub const MPI_MAX_ERROR_STRING: c_int = 512;
pub const MPI_MAX_LIBRARY_VERSION_STRING: c_int = 8192;
pub const MPI_MAX_PROCESSOR_NAME: c_int = 256;
pub const MPI_MAX_OBJECT_NAME: c_int = 128;
/// Bytes of a data representation name (I/O; mpicd has no files, the size is the standard's).
pub const MPI_MAX_DATAREP_STRING: c_int = 128;
/// Bytes of a port name (dynamic processes; mpicd has no ports, the size is the standard's).
pub const MPI_MAX_PORT_NAME: c_int = 1024;
/// Bytes of a C buffer that holds any info key and its NUL (keys have at most 255 bytes).
pub const MPI_MAX_INFO_KEY: c_int = 256;
/// Bytes of a C buffer that holds any info value and its NUL (values have at most 1023 bytes).
pub const MPI_MAX_INFO_VAL: c_int = 1024;
/// Bytes of the longest string tag of `MPI_Comm_create_from_group` and
/// `MPI_Intercomm_create_from_groups`, its NUL included (mpi-abi-stubs value).
pub const MPI_MAX_STRINGTAG_LEN: c_int = 1024;
/// Bytes of the longest process set name, its NUL included (mpi-abi-stubs value).
pub const MPI_MAX_PSET_NAME_LEN: c_int = 1024;

// ----- rank, tag and other sentinels -----

pub const MPI_ANY_SOURCE: c_int = -1;
pub const MPI_ANY_TAG: c_int = -2;
pub const MPI_PROC_NULL: c_int = -3;
pub const MPI_ROOT: c_int = -4;
pub const MPI_UNDEFINED: c_int = -32766;

pub const MPI_THREAD_SINGLE: c_int = 0;
pub const MPI_THREAD_FUNNELED: c_int = 1024;
pub const MPI_THREAD_SERIALIZED: c_int = 2048;
pub const MPI_THREAD_MULTIPLE: c_int = 4096;

pub const MPI_IDENT: c_int = 201;
pub const MPI_CONGRUENT: c_int = 202;
pub const MPI_SIMILAR: c_int = 203;
pub const MPI_UNEQUAL: c_int = 204;

// `MPI_Comm_split_type` kinds (MPI-5.0 values of the mpi-abi-stubs, as the combiners below).
pub const MPI_COMM_TYPE_SHARED: c_int = 221;
pub const MPI_COMM_TYPE_HW_UNGUIDED: c_int = 222;
pub const MPI_COMM_TYPE_HW_GUIDED: c_int = 223;
pub const MPI_COMM_TYPE_RESOURCE_GUIDED: c_int = 224;

// Communicator topologies (`MPI_Topo_test`; MPI-5.0 values of the mpi-abi-stubs).
pub const MPI_CART: c_int = 211;
pub const MPI_GRAPH: c_int = 212;
pub const MPI_DIST_GRAPH: c_int = 213;

pub const MPI_TAG_UB: c_int = 501;
pub const MPI_IO: c_int = 502;
pub const MPI_HOST: c_int = 503;
pub const MPI_WTIME_IS_GLOBAL: c_int = 504;
pub const MPI_APPNUM: c_int = 505;
pub const MPI_LASTUSEDCODE: c_int = 506;
pub const MPI_UNIVERSE_SIZE: c_int = 507;
/// The value a freed keyval handle is set to (user keyvals are never 0).
pub const MPI_KEYVAL_INVALID: c_int = 0;

// ----- datatype constructors and decoding -----

/// `MPI_Type_create_subarray` / `_darray`: row-major arrays.
pub const MPI_ORDER_C: c_int = 12;
/// Column-major arrays.
pub const MPI_ORDER_FORTRAN: c_int = 15;

pub const MPI_DISTRIBUTE_NONE: c_int = 16;
pub const MPI_DISTRIBUTE_BLOCK: c_int = 17;
pub const MPI_DISTRIBUTE_CYCLIC: c_int = 18;
/// The default distribution argument of `MPI_Type_create_darray`. (In the standard ABI it is
/// 19, so a block size of exactly 19 cannot be asked for: 19 always means the default.)
pub const MPI_DISTRIBUTE_DFLT_DARG: c_int = 19;

pub const MPI_COMBINER_NAMED: c_int = 101;
pub const MPI_COMBINER_DUP: c_int = 102;
pub const MPI_COMBINER_CONTIGUOUS: c_int = 103;
pub const MPI_COMBINER_VECTOR: c_int = 104;
pub const MPI_COMBINER_HVECTOR: c_int = 105;
pub const MPI_COMBINER_INDEXED: c_int = 106;
pub const MPI_COMBINER_HINDEXED: c_int = 107;
pub const MPI_COMBINER_INDEXED_BLOCK: c_int = 108;
pub const MPI_COMBINER_HINDEXED_BLOCK: c_int = 109;
pub const MPI_COMBINER_STRUCT: c_int = 110;
pub const MPI_COMBINER_SUBARRAY: c_int = 111;
pub const MPI_COMBINER_DARRAY: c_int = 112;
pub const MPI_COMBINER_F90_REAL: c_int = 113;
pub const MPI_COMBINER_F90_COMPLEX: c_int = 114;
pub const MPI_COMBINER_F90_INTEGER: c_int = 115;
pub const MPI_COMBINER_RESIZED: c_int = 116;
pub const MPI_COMBINER_VALUE_INDEX: c_int = 117;

// ----- error classes (standard ABI values) -----

pub const MPI_SUCCESS: c_int = 0;
pub const MPI_ERR_BUFFER: c_int = 1;
pub const MPI_ERR_COUNT: c_int = 2;
pub const MPI_ERR_TYPE: c_int = 3;
pub const MPI_ERR_TAG: c_int = 4;
pub const MPI_ERR_COMM: c_int = 5;
pub const MPI_ERR_RANK: c_int = 6;
pub const MPI_ERR_REQUEST: c_int = 7;
pub const MPI_ERR_ROOT: c_int = 8;
pub const MPI_ERR_GROUP: c_int = 9;
pub const MPI_ERR_OP: c_int = 10;
pub const MPI_ERR_TOPOLOGY: c_int = 11;
pub const MPI_ERR_DIMS: c_int = 12;
pub const MPI_ERR_ARG: c_int = 13;
pub const MPI_ERR_UNKNOWN: c_int = 14;
pub const MPI_ERR_TRUNCATE: c_int = 15;
pub const MPI_ERR_OTHER: c_int = 16;
pub const MPI_ERR_INTERN: c_int = 17;
pub const MPI_ERR_PENDING: c_int = 18;
pub const MPI_ERR_IN_STATUS: c_int = 19;
pub const MPI_ERR_ACCESS: c_int = 20;
pub const MPI_ERR_AMODE: c_int = 21;
pub const MPI_ERR_ASSERT: c_int = 22;
pub const MPI_ERR_BAD_FILE: c_int = 23;
/// An invalid base address (`MPI_Free_mem` of memory not from `MPI_Alloc_mem`).
pub const MPI_ERR_BASE: c_int = 24;
pub const MPI_ERR_CONVERSION: c_int = 25;
pub const MPI_ERR_DISP: c_int = 26;
pub const MPI_ERR_DUP_DATAREP: c_int = 27;
pub const MPI_ERR_FILE_EXISTS: c_int = 28;
pub const MPI_ERR_FILE_IN_USE: c_int = 29;
pub const MPI_ERR_FILE: c_int = 30;
pub const MPI_ERR_INFO_KEY: c_int = 31;
pub const MPI_ERR_INFO_NOKEY: c_int = 32;
pub const MPI_ERR_INFO_VALUE: c_int = 33;
pub const MPI_ERR_INFO: c_int = 34;
pub const MPI_ERR_IO: c_int = 35;
/// An invalid attribute key, or one of the wrong kind (attributes).
pub const MPI_ERR_KEYVAL: c_int = 36;
pub const MPI_ERR_LOCKTYPE: c_int = 37;
pub const MPI_ERR_NAME: c_int = 38;
pub const MPI_ERR_NO_MEM: c_int = 39;
pub const MPI_ERR_NOT_SAME: c_int = 40;
pub const MPI_ERR_NO_SPACE: c_int = 41;
pub const MPI_ERR_NO_SUCH_FILE: c_int = 42;
pub const MPI_ERR_PORT: c_int = 43;
pub const MPI_ERR_QUOTA: c_int = 44;
pub const MPI_ERR_READ_ONLY: c_int = 45;
pub const MPI_ERR_RMA_ATTACH: c_int = 46;
pub const MPI_ERR_RMA_CONFLICT: c_int = 47;
pub const MPI_ERR_RMA_RANGE: c_int = 48;
pub const MPI_ERR_RMA_SHARED: c_int = 49;
pub const MPI_ERR_RMA_SYNC: c_int = 50;
pub const MPI_ERR_SERVICE: c_int = 51;
pub const MPI_ERR_SIZE: c_int = 52;
pub const MPI_ERR_SPAWN: c_int = 53;
pub const MPI_ERR_UNSUPPORTED_DATAREP: c_int = 54;
pub const MPI_ERR_UNSUPPORTED_OPERATION: c_int = 55;
pub const MPI_ERR_WIN: c_int = 56;
pub const MPI_ERR_RMA_FLAVOR: c_int = 57;
/// A process aborted (MPI-4.0).
pub const MPI_ERR_PROC_ABORTED: c_int = 58;
pub const MPI_ERR_VALUE_TOO_LARGE: c_int = 59;
/// An invalid session handle (MPI-4.0).
pub const MPI_ERR_SESSION: c_int = 60;
pub const MPI_ERR_ERRHANDLER: c_int = 61;
/// The ABI in use does not match (MPI-5.0).
pub const MPI_ERR_ABI: c_int = 62;
/// ULFM (Open MPI 5's value): a peer process failed or became unreachable.
pub const MPIX_ERR_PROC_FAILED: c_int = 75;
/// ULFM (Open MPI 5's value): a receive from `MPI_ANY_SOURCE` is pending on a communicator with
/// a failed process not acknowledged (`MPIX_Comm_failure_ack`); the request stays active.
pub const MPIX_ERR_PROC_FAILED_PENDING: c_int = 76;
/// ULFM (Open MPI 5's value): the communicator was revoked.
pub const MPIX_ERR_REVOKED: c_int = 77;
/// mpicd extension: a call was made before `MPI_Init` or after `MPI_Finalize` (above Open MPI
/// 5's classes).
pub const MPIX_ERR_NOT_INITIALIZED: c_int = 93;
pub const MPI_ERR_LASTCODE: c_int = 0x3fff;

// ----- attribute caching (`attrs/`): the callbacks of keyvals. The predefined callbacks are
// the standard ABI's sentinel values (0: no copy / no delete, 1: copy the value as it is), not
// functions. -----

/// Copies a communicator's attribute at `MPI_Comm_dup`: sets `*(void **)attribute_val_out` and
/// `*flag` (1: the new communicator gets the attribute, 0: it does not).
pub type MPI_Comm_copy_attr_function = Option<
    unsafe extern "C" fn(
        comm: MPI_Comm,
        comm_keyval: c_int,
        extra_state: *mut c_void,
        attribute_val_in: *mut c_void,
        attribute_val_out: *mut c_void,
        flag: *mut c_int,
    ) -> c_int,
>;
/// Deletes a communicator's attribute (`MPI_Comm_free`, `MPI_Comm_delete_attr`, overwrite).
pub type MPI_Comm_delete_attr_function = Option<
    unsafe extern "C" fn(
        comm: MPI_Comm,
        comm_keyval: c_int,
        attribute_val: *mut c_void,
        extra_state: *mut c_void,
    ) -> c_int,
>;
/// [`MPI_Comm_copy_attr_function`] for datatypes (`MPI_Type_dup`).
pub type MPI_Type_copy_attr_function = Option<
    unsafe extern "C" fn(
        datatype: MPI_Datatype,
        type_keyval: c_int,
        extra_state: *mut c_void,
        attribute_val_in: *mut c_void,
        attribute_val_out: *mut c_void,
        flag: *mut c_int,
    ) -> c_int,
>;
/// [`MPI_Comm_delete_attr_function`] for datatypes (`MPI_Type_free`, ...).
pub type MPI_Type_delete_attr_function = Option<
    unsafe extern "C" fn(
        datatype: MPI_Datatype,
        type_keyval: c_int,
        attribute_val: *mut c_void,
        extra_state: *mut c_void,
    ) -> c_int,
>;
/// The MPI-1 form of [`MPI_Comm_copy_attr_function`] (deprecated, `MPI_Keyval_create`).
pub type MPI_Copy_function = Option<
    unsafe extern "C" fn(
        comm: MPI_Comm,
        keyval: c_int,
        extra_state: *mut c_void,
        attribute_val_in: *mut c_void,
        attribute_val_out: *mut c_void,
        flag: *mut c_int,
    ) -> c_int,
>;
/// The MPI-1 form of [`MPI_Comm_delete_attr_function`] (deprecated, `MPI_Keyval_create`).
pub type MPI_Delete_function = Option<
    unsafe extern "C" fn(
        comm: MPI_Comm,
        keyval: c_int,
        attribute_val: *mut c_void,
        extra_state: *mut c_void,
    ) -> c_int,
>;

/// No copy: a dup does not get the attribute.
pub const MPI_COMM_NULL_COPY_FN: *mut MPI_Comm_copy_attr_function =
    0 as *mut MPI_Comm_copy_attr_function;
/// A dup gets the attribute with the same value.
pub const MPI_COMM_DUP_FN: *mut MPI_Comm_copy_attr_function = 1 as *mut MPI_Comm_copy_attr_function;
/// Nothing to do at deletion.
pub const MPI_COMM_NULL_DELETE_FN: *mut MPI_Comm_delete_attr_function =
    0 as *mut MPI_Comm_delete_attr_function;
/// [`MPI_COMM_NULL_COPY_FN`] for datatypes.
pub const MPI_TYPE_NULL_COPY_FN: *mut MPI_Type_copy_attr_function =
    0 as *mut MPI_Type_copy_attr_function;
/// [`MPI_COMM_DUP_FN`] for datatypes.
pub const MPI_TYPE_DUP_FN: *mut MPI_Type_copy_attr_function = 1 as *mut MPI_Type_copy_attr_function;
/// [`MPI_COMM_NULL_DELETE_FN`] for datatypes.
pub const MPI_TYPE_NULL_DELETE_FN: *mut MPI_Type_delete_attr_function =
    0 as *mut MPI_Type_delete_attr_function;
/// [`MPI_COMM_NULL_COPY_FN`] of the MPI-1 interface (deprecated).
pub const MPI_NULL_COPY_FN: *mut MPI_Copy_function = 0 as *mut MPI_Copy_function;
/// [`MPI_COMM_DUP_FN`] of the MPI-1 interface (deprecated).
pub const MPI_DUP_FN: *mut MPI_Copy_function = 1 as *mut MPI_Copy_function;
/// [`MPI_COMM_NULL_DELETE_FN`] of the MPI-1 interface (deprecated).
pub const MPI_NULL_DELETE_FN: *mut MPI_Delete_function = 0 as *mut MPI_Delete_function;

pub use crate::abi_file::*;

// ----- one-sided communication (`win/`): lock types, flavors, memory models, predefined
// window attributes, assertions, and the callbacks of window keyvals and error handlers. -----

/// An exclusive passive-target lock (`MPI_Win_lock`).
pub const MPI_LOCK_EXCLUSIVE: c_int = 301;
/// A shared passive-target lock.
pub const MPI_LOCK_SHARED: c_int = 302;
/// A window made by `MPI_Win_create`.
pub const MPI_WIN_FLAVOR_CREATE: c_int = 311;
/// A window made by `MPI_Win_allocate`.
pub const MPI_WIN_FLAVOR_ALLOCATE: c_int = 312;
/// A window made by `MPI_Win_create_dynamic`.
pub const MPI_WIN_FLAVOR_DYNAMIC: c_int = 313;
/// A window made by `MPI_Win_allocate_shared`.
pub const MPI_WIN_FLAVOR_SHARED: c_int = 314;
/// The unified memory model (public and private copies are the same memory): mpicd's.
pub const MPI_WIN_UNIFIED: c_int = 321;
/// The separate memory model.
pub const MPI_WIN_SEPARATE: c_int = 322;
/// Window attribute: the base address (the value itself is the `void *`).
pub const MPI_WIN_BASE: c_int = 601;
/// Window attribute: a pointer to the displacement unit (`int`).
pub const MPI_WIN_DISP_UNIT: c_int = 602;
/// Window attribute: a pointer to the size in bytes (`MPI_Aint`).
pub const MPI_WIN_SIZE: c_int = 603;
/// Window attribute: a pointer to the flavor (`int`, `MPI_WIN_FLAVOR_*`).
pub const MPI_WIN_CREATE_FLAVOR: c_int = 604;
/// Window attribute: a pointer to the memory model (`int`, `MPI_WIN_UNIFIED`).
pub const MPI_WIN_MODEL: c_int = 605;
/// Assertion: no other process holds or tries to take a conflicting lock.
pub const MPI_MODE_NOCHECK: c_int = 1024;
/// Assertion: the fence completes no local operations.
pub const MPI_MODE_NOPRECEDE: c_int = 2048;
/// Assertion: the window is not updated by puts or accumulates in the epoch.
pub const MPI_MODE_NOPUT: c_int = 4096;
/// Assertion: the local window was not updated by stores since the last synchronization.
pub const MPI_MODE_NOSTORE: c_int = 8192;
/// Assertion: the fence starts no epoch.
pub const MPI_MODE_NOSUCCEED: c_int = 16384;

/// A user's error handler for windows (`MPI_Win_create_errhandler`): called with a pointer to
/// the window's handle and a pointer to the error code; mpicd passes no further arguments.
pub type MPI_Win_errhandler_function =
    Option<unsafe extern "C" fn(win: *mut MPI_Win, error_code: *mut c_int, ...)>;
/// [`MPI_Comm_copy_attr_function`] for windows (windows are never duplicated: never called).
pub type MPI_Win_copy_attr_function = Option<
    unsafe extern "C" fn(
        oldwin: MPI_Win,
        win_keyval: c_int,
        extra_state: *mut c_void,
        attribute_val_in: *mut c_void,
        attribute_val_out: *mut c_void,
        flag: *mut c_int,
    ) -> c_int,
>;
/// [`MPI_Comm_delete_attr_function`] for windows (`MPI_Win_free`, `MPI_Win_delete_attr`).
pub type MPI_Win_delete_attr_function = Option<
    unsafe extern "C" fn(
        win: MPI_Win,
        win_keyval: c_int,
        attribute_val: *mut c_void,
        extra_state: *mut c_void,
    ) -> c_int,
>;
/// [`MPI_COMM_NULL_COPY_FN`] for windows.
pub const MPI_WIN_NULL_COPY_FN: *mut MPI_Win_copy_attr_function =
    0 as *mut MPI_Win_copy_attr_function;
/// [`MPI_COMM_DUP_FN`] for windows.
pub const MPI_WIN_DUP_FN: *mut MPI_Win_copy_attr_function = 1 as *mut MPI_Win_copy_attr_function;
/// [`MPI_COMM_NULL_DELETE_FN`] for windows.
pub const MPI_WIN_NULL_DELETE_FN: *mut MPI_Win_delete_attr_function =
    0 as *mut MPI_Win_delete_attr_function;
