//! The read calls of files (int counts): each names its form of [`super::data::access`].

use super::data::{access, Call, Done, Via};
use crate::abi::*;
use std::ffi::{c_int, c_void};

/// Reads `count` `datatype`s into `buf` at the individual file pointer (which advances past the data).
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read(
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_read",
        fh,
        via: Via::Individual,
        offset: 0,
        write: false,
        collective: false,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// Reads `count` `datatype`s into `buf` at the individual file pointer (which advances past the data). Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_all(
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_read_all",
        fh,
        via: Via::Individual,
        offset: 0,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// Reads `count` `datatype`s into `buf` at `offset` etypes of the view.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_at(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_read_at",
        fh,
        via: Via::At,
        offset,
        write: false,
        collective: false,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// Reads `count` `datatype`s into `buf` at `offset` etypes of the view. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_at_all(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_read_at_all",
        fh,
        via: Via::At,
        offset,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// Reads `count` `datatype`s into `buf` at the shared file pointer (which advances atomically past the data).
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_shared(
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_read_shared",
        fh,
        via: Via::Shared,
        offset: 0,
        write: false,
        collective: false,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// Reads `count` `datatype`s into `buf` at the shared file pointer, the members' data in rank order. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_ordered(
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_read_ordered",
        fh,
        via: Via::Ordered,
        offset: 0,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// Reads `count` `datatype`s into `buf` at the individual file pointer (which advances past the data); the transfer is done when the call returns and `*request` is complete.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iread(
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iread",
        fh,
        via: Via::Individual,
        offset: 0,
        write: false,
        collective: false,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// Reads `count` `datatype`s into `buf` at the individual file pointer (which advances past the data); the transfer is done when the call returns and `*request` is complete. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iread_all(
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iread_all",
        fh,
        via: Via::Individual,
        offset: 0,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// Reads `count` `datatype`s into `buf` at `offset` etypes of the view; the transfer is done when the call returns and `*request` is complete.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iread_at(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iread_at",
        fh,
        via: Via::At,
        offset,
        write: false,
        collective: false,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// Reads `count` `datatype`s into `buf` at `offset` etypes of the view; the transfer is done when the call returns and `*request` is complete. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iread_at_all(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iread_at_all",
        fh,
        via: Via::At,
        offset,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// Reads `count` `datatype`s into `buf` at the shared file pointer (which advances atomically past the data); the transfer is done when the call returns and `*request` is complete.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iread_shared(
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iread_shared",
        fh,
        via: Via::Shared,
        offset: 0,
        write: false,
        collective: false,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// Reads `count` `datatype`s into `buf` at the individual file pointer (which advances past the data); begins a split collective (the status comes with the matching `_end`). Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_all_begin(
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> c_int {
    let call = Call {
        name: "File_read_all_begin",
        fh,
        via: Via::Individual,
        offset: 0,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Begin) }
}

/// Reads `count` `datatype`s into `buf` at `offset` etypes of the view; begins a split collective (the status comes with the matching `_end`). Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_at_all_begin(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> c_int {
    let call = Call {
        name: "File_read_at_all_begin",
        fh,
        via: Via::At,
        offset,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Begin) }
}

/// Reads `count` `datatype`s into `buf` at the shared file pointer, the members' data in rank order; begins a split collective (the status comes with the matching `_end`). Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_ordered_begin(
    fh: MPI_File,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> c_int {
    let call = Call {
        name: "File_read_ordered_begin",
        fh,
        via: Via::Ordered,
        offset: 0,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count: count as MPI_Count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Begin) }
}
