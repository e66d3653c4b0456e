//! The large-count (`_c`) forms of the write calls of [`super::write`]: the same body with
//! MPI_Count counts.

use super::data::{access, Call, Done, Via};
use crate::abi::*;
use std::ffi::{c_int, c_void};

/// [`MPI_File_write`](super::write::MPI_File_write) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_c(
    fh: MPI_File,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_write_c",
        fh,
        via: Via::Individual,
        offset: 0,
        write: true,
        collective: false,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// [`MPI_File_write_all`](super::write::MPI_File_write_all) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_all_c(
    fh: MPI_File,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_write_all_c",
        fh,
        via: Via::Individual,
        offset: 0,
        write: true,
        collective: true,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// [`MPI_File_write_at`](super::write::MPI_File_write_at) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_at_c(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_write_at_c",
        fh,
        via: Via::At,
        offset,
        write: true,
        collective: false,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// [`MPI_File_write_at_all`](super::write::MPI_File_write_at_all) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_at_all_c(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_write_at_all_c",
        fh,
        via: Via::At,
        offset,
        write: true,
        collective: true,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// [`MPI_File_write_shared`](super::write::MPI_File_write_shared) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_shared_c(
    fh: MPI_File,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_write_shared_c",
        fh,
        via: Via::Shared,
        offset: 0,
        write: true,
        collective: false,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// [`MPI_File_write_ordered`](super::write::MPI_File_write_ordered) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_ordered_c(
    fh: MPI_File,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_write_ordered_c",
        fh,
        via: Via::Ordered,
        offset: 0,
        write: true,
        collective: true,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// [`MPI_File_iwrite`](super::write::MPI_File_iwrite) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iwrite_c(
    fh: MPI_File,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iwrite_c",
        fh,
        via: Via::Individual,
        offset: 0,
        write: true,
        collective: false,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// [`MPI_File_iwrite_all`](super::write::MPI_File_iwrite_all) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iwrite_all_c(
    fh: MPI_File,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iwrite_all_c",
        fh,
        via: Via::Individual,
        offset: 0,
        write: true,
        collective: true,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// [`MPI_File_iwrite_at`](super::write::MPI_File_iwrite_at) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iwrite_at_c(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iwrite_at_c",
        fh,
        via: Via::At,
        offset,
        write: true,
        collective: false,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// [`MPI_File_iwrite_at_all`](super::write::MPI_File_iwrite_at_all) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iwrite_at_all_c(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iwrite_at_all_c",
        fh,
        via: Via::At,
        offset,
        write: true,
        collective: true,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// [`MPI_File_iwrite_shared`](super::write::MPI_File_iwrite_shared) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iwrite_shared_c(
    fh: MPI_File,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iwrite_shared_c",
        fh,
        via: Via::Shared,
        offset: 0,
        write: true,
        collective: false,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// [`MPI_File_write_all_begin`](super::write::MPI_File_write_all_begin) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_all_begin_c(
    fh: MPI_File,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> c_int {
    let call = Call {
        name: "File_write_all_begin_c",
        fh,
        via: Via::Individual,
        offset: 0,
        write: true,
        collective: true,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Begin) }
}

/// [`MPI_File_write_at_all_begin`](super::write::MPI_File_write_at_all_begin) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_at_all_begin_c(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> c_int {
    let call = Call {
        name: "File_write_at_all_begin_c",
        fh,
        via: Via::At,
        offset,
        write: true,
        collective: true,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Begin) }
}

/// [`MPI_File_write_ordered_begin`](super::write::MPI_File_write_ordered_begin) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_ordered_begin_c(
    fh: MPI_File,
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> c_int {
    let call = Call {
        name: "File_write_ordered_begin_c",
        fh,
        via: Via::Ordered,
        offset: 0,
        write: true,
        collective: true,
        buf,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Begin) }
}
