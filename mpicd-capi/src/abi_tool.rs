//! The C types and constants of the tool information interface (MPI_T) in `mpi.h`, laid out
//! as in the MPI-5 standard ABI: handles are pointers to incomplete structs, the null handles
//! 0, the enumerations' values those of the MPI Forum's `mpi-abi-stubs` (checked by
//! `tests/abi_constants.rs`).

// The sentinels stay `N as *mut T` casts: cbindgen turns those into C casts.
#![allow(clippy::zero_ptr, clippy::manual_dangling_ptr)]

use crate::abi::MPI_Count;
use std::ffi::{c_int, c_void};

pub struct MPI_ABI_T_enum {
    _opaque: [u8; 0],
}
/// An enumeration: the named values of an `int` variable.
pub type MPI_T_enum = *mut MPI_ABI_T_enum;
pub struct MPI_ABI_T_cvar_handle {
    _opaque: [u8; 0],
}
/// A handle on a control variable.
pub type MPI_T_cvar_handle = *mut MPI_ABI_T_cvar_handle;
pub struct MPI_ABI_T_pvar_handle {
    _opaque: [u8; 0],
}
/// A handle on a performance variable in a session.
pub type MPI_T_pvar_handle = *mut MPI_ABI_T_pvar_handle;
pub struct MPI_ABI_T_pvar_session {
    _opaque: [u8; 0],
}
/// A performance variable session.
pub type MPI_T_pvar_session = *mut MPI_ABI_T_pvar_session;
pub struct MPI_ABI_T_event_registration {
    _opaque: [u8; 0],
}
/// A registration for an event type.
pub type MPI_T_event_registration = *mut MPI_ABI_T_event_registration;
pub struct MPI_ABI_T_event_instance {
    _opaque: [u8; 0],
}
/// One occurrence of an event, valid while the callback it is given to runs.
pub type MPI_T_event_instance = *mut MPI_ABI_T_event_instance;

pub const MPI_T_ENUM_NULL: MPI_T_enum = 0 as MPI_T_enum;
pub const MPI_T_CVAR_HANDLE_NULL: MPI_T_cvar_handle = 0 as MPI_T_cvar_handle;
pub const MPI_T_PVAR_SESSION_NULL: MPI_T_pvar_session = 0 as MPI_T_pvar_session;
pub const MPI_T_PVAR_HANDLE_NULL: MPI_T_pvar_handle = 0 as MPI_T_pvar_handle;
/// Every handle of a session (`MPI_T_pvar_start`, `_stop`, `_reset`).
pub const MPI_T_PVAR_ALL_HANDLES: MPI_T_pvar_handle = 1 as MPI_T_pvar_handle;
pub const MPI_T_EVENT_REGISTRATION_NULL: MPI_T_event_registration = 0 as MPI_T_event_registration;
pub const MPI_T_EVENT_INSTANCE_NULL: MPI_T_event_instance = 0 as MPI_T_event_instance;

/// The restrictions a callback meets (an enumeration in the standard ABI).
pub type MPI_T_cb_safety = c_int;
pub const MPI_T_CB_REQUIRE_NONE: MPI_T_cb_safety = 0x00;
pub const MPI_T_CB_REQUIRE_MPI_RESTRICTED: MPI_T_cb_safety = 0x03;
pub const MPI_T_CB_REQUIRE_THREAD_SAFE: MPI_T_cb_safety = 0x0F;
pub const MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE: MPI_T_cb_safety = 0x3F;

/// Whether a source's timestamps are in the order of its events (an enumeration in the
/// standard ABI).
pub type MPI_T_source_order = c_int;
pub const MPI_T_SOURCE_ORDERED: MPI_T_source_order = 1;
pub const MPI_T_SOURCE_UNORDERED: MPI_T_source_order = 2;

pub const MPI_T_VERBOSITY_USER_BASIC: c_int = 0x09;
pub const MPI_T_VERBOSITY_USER_DETAIL: c_int = 0x0a;
pub const MPI_T_VERBOSITY_USER_ALL: c_int = 0x0c;
pub const MPI_T_VERBOSITY_TUNER_BASIC: c_int = 0x11;
pub const MPI_T_VERBOSITY_TUNER_DETAIL: c_int = 0x12;
pub const MPI_T_VERBOSITY_TUNER_ALL: c_int = 0x14;
pub const MPI_T_VERBOSITY_MPIDEV_BASIC: c_int = 0x21;
pub const MPI_T_VERBOSITY_MPIDEV_DETAIL: c_int = 0x22;
pub const MPI_T_VERBOSITY_MPIDEV_ALL: c_int = 0x24;

pub const MPI_T_BIND_NO_OBJECT: c_int = 1;
pub const MPI_T_BIND_MPI_COMM: c_int = 2;
pub const MPI_T_BIND_MPI_DATATYPE: c_int = 3;
pub const MPI_T_BIND_MPI_ERRHANDLER: c_int = 4;
pub const MPI_T_BIND_MPI_FILE: c_int = 5;
pub const MPI_T_BIND_MPI_GROUP: c_int = 6;
pub const MPI_T_BIND_MPI_OP: c_int = 7;
pub const MPI_T_BIND_MPI_REQUEST: c_int = 8;
pub const MPI_T_BIND_MPI_WIN: c_int = 9;
pub const MPI_T_BIND_MPI_MESSAGE: c_int = 10;
pub const MPI_T_BIND_MPI_INFO: c_int = 11;
pub const MPI_T_BIND_MPI_SESSION: c_int = 12;

pub const MPI_T_SCOPE_CONSTANT: c_int = 1;
pub const MPI_T_SCOPE_READONLY: c_int = 2;
pub const MPI_T_SCOPE_LOCAL: c_int = 3;
pub const MPI_T_SCOPE_GROUP: c_int = 4;
pub const MPI_T_SCOPE_GROUP_EQ: c_int = 5;
pub const MPI_T_SCOPE_ALL: c_int = 6;
pub const MPI_T_SCOPE_ALL_EQ: c_int = 7;

pub const MPI_T_PVAR_CLASS_STATE: c_int = 1;
pub const MPI_T_PVAR_CLASS_LEVEL: c_int = 2;
pub const MPI_T_PVAR_CLASS_SIZE: c_int = 3;
pub const MPI_T_PVAR_CLASS_PERCENTAGE: c_int = 4;
pub const MPI_T_PVAR_CLASS_HIGHWATERMARK: c_int = 5;
pub const MPI_T_PVAR_CLASS_LOWWATERMARK: c_int = 6;
pub const MPI_T_PVAR_CLASS_COUNTER: c_int = 7;
pub const MPI_T_PVAR_CLASS_AGGREGATE: c_int = 8;
pub const MPI_T_PVAR_CLASS_TIMER: c_int = 9;
pub const MPI_T_PVAR_CLASS_GENERIC: c_int = 10;

// Error classes of the tool interface (standard ABI values).
pub const MPI_T_ERR_CANNOT_INIT: c_int = 1001;
pub const MPI_T_ERR_NOT_ACCESSIBLE: c_int = 1002;
pub const MPI_T_ERR_NOT_INITIALIZED: c_int = 1003;
pub const MPI_T_ERR_NOT_SUPPORTED: c_int = 1004;
pub const MPI_T_ERR_MEMORY: c_int = 1005;
pub const MPI_T_ERR_INVALID: c_int = 1006;
pub const MPI_T_ERR_INVALID_INDEX: c_int = 1007;
pub const MPI_T_ERR_INVALID_ITEM: c_int = 1008;
pub const MPI_T_ERR_INVALID_SESSION: c_int = 1009;
pub const MPI_T_ERR_INVALID_HANDLE: c_int = 1010;
pub const MPI_T_ERR_INVALID_NAME: c_int = 1011;
pub const MPI_T_ERR_OUT_OF_HANDLES: c_int = 1012;
pub const MPI_T_ERR_OUT_OF_SESSIONS: c_int = 1013;
pub const MPI_T_ERR_CVAR_SET_NOT_NOW: c_int = 1014;
pub const MPI_T_ERR_CVAR_SET_NEVER: c_int = 1015;
pub const MPI_T_ERR_PVAR_NO_WRITE: c_int = 1016;
pub const MPI_T_ERR_PVAR_NO_STARTSTOP: c_int = 1017;
pub const MPI_T_ERR_PVAR_NO_ATOMIC: c_int = 1018;

/// An event callback (`MPI_T_event_register_callback`): called with the instance, valid
/// while it runs, its registration, the safety the call requires and the user's data.
pub type MPI_T_event_cb_function = Option<
    unsafe extern "C" fn(
        event_instance: MPI_T_event_instance,
        event_registration: MPI_T_event_registration,
        cb_safety: MPI_T_cb_safety,
        user_data: *mut c_void,
    ),
>;
/// Called once a registration is freed (`MPI_T_event_handle_free`).
pub type MPI_T_event_free_cb_function = Option<
    unsafe extern "C" fn(
        event_registration: MPI_T_event_registration,
        cb_safety: MPI_T_cb_safety,
        user_data: *mut c_void,
    ),
>;
/// Called with the number of events a registration lost (`MPI_T_event_set_dropped_handler`).
pub type MPI_T_event_dropped_cb_function = Option<
    unsafe extern "C" fn(
        count: MPI_Count,
        event_registration: MPI_T_event_registration,
        source_index: c_int,
        cb_safety: MPI_T_cb_safety,
        user_data: *mut c_void,
    ),
>;
