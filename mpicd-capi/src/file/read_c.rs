//! The large-count (`_c`) forms of the read calls of [`super::read`]: the same body with
//! MPI_Count counts.

use super::data::{access, Call, Done, Via};
use crate::abi::*;
use std::ffi::{c_int, c_void};

/// [`MPI_File_read`](super::read::MPI_File_read) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_c(
    fh: MPI_File,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_read_c",
        fh,
        via: Via::Individual,
        offset: 0,
        write: false,
        collective: false,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// [`MPI_File_read_all`](super::read::MPI_File_read_all) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_all_c(
    fh: MPI_File,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_read_all_c",
        fh,
        via: Via::Individual,
        offset: 0,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// [`MPI_File_read_at`](super::read::MPI_File_read_at) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_at_c(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_read_at_c",
        fh,
        via: Via::At,
        offset,
        write: false,
        collective: false,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// [`MPI_File_read_at_all`](super::read::MPI_File_read_at_all) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_at_all_c(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_read_at_all_c",
        fh,
        via: Via::At,
        offset,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// [`MPI_File_read_shared`](super::read::MPI_File_read_shared) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_shared_c(
    fh: MPI_File,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_read_shared_c",
        fh,
        via: Via::Shared,
        offset: 0,
        write: false,
        collective: false,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// [`MPI_File_read_ordered`](super::read::MPI_File_read_ordered) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_ordered_c(
    fh: MPI_File,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    status: *mut MPI_Status,
) -> c_int {
    let call = Call {
        name: "File_read_ordered_c",
        fh,
        via: Via::Ordered,
        offset: 0,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Status(status)) }
}

/// [`MPI_File_iread`](super::read::MPI_File_iread) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iread_c(
    fh: MPI_File,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iread_c",
        fh,
        via: Via::Individual,
        offset: 0,
        write: false,
        collective: false,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// [`MPI_File_iread_all`](super::read::MPI_File_iread_all) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iread_all_c(
    fh: MPI_File,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iread_all_c",
        fh,
        via: Via::Individual,
        offset: 0,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// [`MPI_File_iread_at`](super::read::MPI_File_iread_at) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iread_at_c(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iread_at_c",
        fh,
        via: Via::At,
        offset,
        write: false,
        collective: false,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// [`MPI_File_iread_at_all`](super::read::MPI_File_iread_at_all) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iread_at_all_c(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iread_at_all_c",
        fh,
        via: Via::At,
        offset,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// [`MPI_File_iread_shared`](super::read::MPI_File_iread_shared) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_iread_shared_c(
    fh: MPI_File,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    request: *mut MPI_Request,
) -> c_int {
    let call = Call {
        name: "File_iread_shared_c",
        fh,
        via: Via::Shared,
        offset: 0,
        write: false,
        collective: false,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Request(request)) }
}

/// [`MPI_File_read_all_begin`](super::read::MPI_File_read_all_begin) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_all_begin_c(
    fh: MPI_File,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> c_int {
    let call = Call {
        name: "File_read_all_begin_c",
        fh,
        via: Via::Individual,
        offset: 0,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Begin) }
}

/// [`MPI_File_read_at_all_begin`](super::read::MPI_File_read_at_all_begin) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_at_all_begin_c(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> c_int {
    let call = Call {
        name: "File_read_at_all_begin_c",
        fh,
        via: Via::At,
        offset,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Begin) }
}

/// [`MPI_File_read_ordered_begin`](super::read::MPI_File_read_ordered_begin) with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_ordered_begin_c(
    fh: MPI_File,
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
) -> c_int {
    let call = Call {
        name: "File_read_ordered_begin_c",
        fh,
        via: Via::Ordered,
        offset: 0,
        write: false,
        collective: true,
        buf: buf as *const c_void,
        count,
        datatype,
    };
    // SAFETY: MPI's rules for the buffer.
    unsafe { access(call, Done::Begin) }
}
