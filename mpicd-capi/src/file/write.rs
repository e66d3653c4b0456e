//! The write calls of files (int counts): each names its form of [`super::data::access`].

use super::data::{access, Call, Done, Via};
use crate::abi::*;
use std::ffi::{c_int, c_void};

/// Writes `count` `datatype`s from `buf` at the individual file pointer (which advances past the data).
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write(
    fh: MPI_File,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_write",
        fh,
        via: Via::Individual,
        offset: 0,
        write: true,
        collective: false,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// Writes `count` `datatype`s from `buf` at the individual file pointer (which advances past the data). Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_all(
    fh: MPI_File,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_write_all",
        fh,
        via: Via::Individual,
        offset: 0,
        write: true,
        collective: true,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// Writes `count` `datatype`s from `buf` at `offset` etypes of the view.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_at(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_write_at",
        fh,
        via: Via::At,
        offset,
        write: true,
        collective: false,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// Writes `count` `datatype`s from `buf` at `offset` etypes of the view. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_at_all(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_write_at_all",
        fh,
        via: Via::At,
        offset,
        write: true,
        collective: true,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// Writes `count` `datatype`s from `buf` at the shared file pointer (which advances atomically past the data).
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_shared(
    fh: MPI_File,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_write_shared",
        fh,
        via: Via::Shared,
        offset: 0,
        write: true,
        collective: false,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// Writes `count` `datatype`s from `buf` at the shared file pointer, the members' data in rank order. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_ordered(
    fh: MPI_File,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_write_ordered",
        fh,
        via: Via::Ordered,
        offset: 0,
        write: true,
        collective: true,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// Writes `count` `datatype`s from `buf` at the individual file pointer (which advances past the data); the transfer is done when the call returns and `*request` is complete.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iwrite(
    fh: MPI_File,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iwrite",
        fh,
        via: Via::Individual,
        offset: 0,
        write: true,
        collective: false,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// Writes `count` `datatype`s from `buf` at the individual file pointer (which advances past the data); the transfer is done when the call returns and `*request` is complete. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iwrite_all(
    fh: MPI_File,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iwrite_all",
        fh,
        via: Via::Individual,
        offset: 0,
        write: true,
        collective: true,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// Writes `count` `datatype`s from `buf` at `offset` etypes of the view; the transfer is done when the call returns and `*request` is complete.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iwrite_at(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iwrite_at",
        fh,
        via: Via::At,
        offset,
        write: true,
        collective: false,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// Writes `count` `datatype`s from `buf` at `offset` etypes of the view; the transfer is done when the call returns and `*request` is complete. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iwrite_at_all(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iwrite_at_all",
        fh,
        via: Via::At,
        offset,
        write: true,
        collective: true,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// Writes `count` `datatype`s from `buf` at the shared file pointer (which advances atomically past the data); the transfer is done when the call returns and `*request` is complete.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iwrite_shared(
    fh: MPI_File,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iwrite_shared",
        fh,
        via: Via::Shared,
        offset: 0,
        write: true,
        collective: false,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// Writes `count` `datatype`s from `buf` at the individual file pointer (which advances past the data); begins a split collective (the status comes with the matching `_end`). Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_all_begin(
    fh: MPI_File,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> c_int {
    let call = Call {
        name: "File_write_all_begin",
        fh,
        via: Via::Individual,
        offset: 0,
        write: true,
        collective: true,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Begin) }
}

/// Writes `count` `datatype`s from `buf` at `offset` etypes of the view; begins a split collective (the status comes with the matching `_end`). Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_at_all_begin(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> c_int {
    let call = Call {
        name: "File_write_at_all_begin",
        fh,
        via: Via::At,
        offset,
        write: true,
        collective: true,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Begin) }
}

/// Writes `count` `datatype`s from `buf` at the shared file pointer, the members' data in rank order; begins a split collective (the status comes with the matching `_end`). Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_ordered_begin(
    fh: MPI_File,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> c_int {
    let call = Call {
        name: "File_write_ordered_begin",
        fh,
        via: Via::Ordered,
        offset: 0,
        write: true,
        collective: true,
        buf,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Begin) }
}
