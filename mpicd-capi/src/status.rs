//! `MPI_Status` as mpicd fills it, and the calls that read it: Get_count, Get_elements,
//! Test_cancelled, Status_get_source/_tag/_error. The internal fields hold the message size in
//! bytes (two halves), flags (cancelled, size unknown, custom-typed receive), and the element
//! count of a custom-typed receive (two halves).

use crate::abi::*;
use crate::comms::default_errh;
use crate::env::out;
use crate::errors::{fail, run, CResult};
use crate::types::{self, Dtype};
use std::ffi::c_int;

const CANCELLED: c_int = 1;
const SIZE_UNKNOWN: c_int = 2;
const CUSTOM: c_int = 4;

/// The standard's empty status (of MPI_REQUEST_NULL, an inactive persistent request):
/// any source, any tag, success, count 0, not cancelled.
pub(crate) fn empty() -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: MPI_ANY_SOURCE,
        MPI_TAG: MPI_ANY_TAG,
        MPI_ERROR: MPI_SUCCESS,
        internal: [0; 5],
    }
}

/// The status of a receive from MPI_PROC_NULL: source MPI_PROC_NULL, any tag, count 0.
pub(crate) fn proc_null() -> MPI_Status {
    MPI_Status {
        MPI_SOURCE: MPI_PROC_NULL,
        ..empty()
    }
}

/// The status of a file access that moved `bytes` bytes (any source, any tag: MPI leaves
/// them undefined).
pub(crate) fn of_bytes(bytes: u64) -> MPI_Status {
    MPI_Status {
        internal: [
            bytes as u32 as c_int,
            (bytes >> 32) as u32 as c_int,
            0,
            0,
            0,
        ],
        ..empty()
    }
}

/// The C status of a core status; `custom_count` is the count of a custom-typed receive.
pub(crate) fn from_core(s: &mpicd::Status, custom_count: Option<i64>) -> MPI_Status {
    let bytes = s.bytes.unwrap_or(0);
    let mut flags = 0;
    if s.cancelled {
        flags |= CANCELLED;
    }
    if s.bytes.is_none() {
        flags |= SIZE_UNKNOWN;
    }
    let count = custom_count.unwrap_or(0) as u64;
    if custom_count.is_some() {
        flags |= CUSTOM;
    }
    MPI_Status {
        MPI_SOURCE: s.source,
        MPI_TAG: if s.tag == mpicd::ANY_TAG {
            MPI_ANY_TAG
        } else {
            s.tag
        },
        MPI_ERROR: MPI_SUCCESS,
        internal: [
            bytes as u32 as c_int,
            (bytes >> 32) as u32 as c_int,
            flags,
            count as u32 as c_int,
            (count >> 32) as u32 as c_int,
        ],
    }
}

/// Writes the status of a single-completion call unless the caller passed MPI_STATUS_IGNORE.
/// Its `MPI_ERROR` stays as the caller left it (only the calls that complete arrays of
/// requests set that field; the others return the code, as MPICH and Open MPI do), except in
/// the status of a failure and in the standard's empty status (any source, any tag), which are
/// written whole.
///
/// # Safety
/// `out` is null or points to a writable `MPI_Status`.
pub(crate) unsafe fn store(out: *mut MPI_Status, status: MPI_Status) {
    if out.is_null() {
        return;
    }
    let is_empty = status.MPI_SOURCE == MPI_ANY_SOURCE && status.MPI_TAG == MPI_ANY_TAG;
    // SAFETY: non-null, readable and writable per the caller.
    unsafe {
        let error = if is_empty || status.MPI_ERROR != MPI_SUCCESS {
            status.MPI_ERROR
        } else {
            (*out).MPI_ERROR
        };
        out.write(MPI_Status {
            MPI_ERROR: error,
            ..status
        });
    }
}

fn halves(lo: c_int, hi: c_int) -> u64 {
    (lo as u32 as u64) | ((hi as u32 as u64) << 32)
}

fn read<'a>(status: *const MPI_Status) -> CResult<&'a MPI_Status> {
    if status.is_null() {
        return Err(fail(
            MPI_ERR_ARG,
            "null status (MPI_STATUS_IGNORE cannot be read)",
        ));
    }
    // SAFETY: non-null; MPI requires a valid status.
    Ok(unsafe { &*status })
}

/// What a count of received data counts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// Whole elements of the datatype (`MPI_Get_count`).
    Elements,
    /// Basic elements (`MPI_Get_elements`): a partial element of a derived type counts the
    /// basic elements it holds; bytes that end inside a basic element, MPI_UNDEFINED.
    Basics,
}

/// Elements of `datatype` in the message of `status`, MPI_UNDEFINED if not whole or unknown.
#[allow(clippy::manual_is_multiple_of)] // is_multiple_of is newer than the workspace's MSRV
fn count_of(status: &MPI_Status, datatype: MPI_Datatype, unit: Unit) -> CResult<i64> {
    let flags = status.internal[2];
    let bytes = halves(status.internal[0], status.internal[1]);
    let whole = |size: u64| {
        if size == 0 {
            // A type without data: any number of them fits in nothing.
            0
        } else if bytes % size == 0 {
            (bytes / size) as i64
        } else {
            MPI_UNDEFINED as i64
        }
    };
    match types::get(datatype)? {
        Dtype::Custom(_) if flags & CUSTOM != 0 => {
            Ok(halves(status.internal[3], status.internal[4]) as i64)
        }
        Dtype::Custom(_) => Ok(MPI_UNDEFINED as i64),
        _ if flags & SIZE_UNKNOWN != 0 => Ok(MPI_UNDEFINED as i64),
        Dtype::Basic(b) => Ok(whole(b.size as u64)),
        Dtype::Derived(t) => match unit {
            Unit::Elements => Ok(whole(t.size())),
            // Bytes that end inside a basic element (a signature the type does not match)
            // count none.
            Unit::Basics => Ok(match t.elements_in(bytes) {
                n if t.bytes_of_elements(n) == bytes => n as i64,
                _ => MPI_UNDEFINED as i64,
            }),
        },
    }
}

fn narrow(n: i64) -> c_int {
    c_int::try_from(n).unwrap_or(MPI_UNDEFINED)
}

/// Number of received elements of `datatype` (MPI_UNDEFINED if not a whole number).
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_count(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut c_int,
) -> c_int {
    run("Get_count", default_errh(), |_| {
        out(
            count,
            narrow(count_of(read(status)?, datatype, Unit::Elements)?),
        )
    })
}

/// [`MPI_Get_count`] with an MPI_Count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_count_c(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut MPI_Count,
) -> c_int {
    run("Get_count_c", default_errh(), |_| {
        out(count, count_of(read(status)?, datatype, Unit::Elements)?)
    })
}

/// Number of received basic elements (predefined types are their own basic elements).
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_elements(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut c_int,
) -> c_int {
    run("Get_elements", default_errh(), |_| {
        out(
            count,
            narrow(count_of(read(status)?, datatype, Unit::Basics)?),
        )
    })
}

/// [`MPI_Get_elements`] with an MPI_Count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_elements_c(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut MPI_Count,
) -> c_int {
    run("Get_elements_c", default_errh(), |_| {
        out(count, count_of(read(status)?, datatype, Unit::Basics)?)
    })
}

/// [`MPI_Get_elements`] with an MPI_Count (the MPI-3 name).
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_elements_x(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut MPI_Count,
) -> c_int {
    run("Get_elements_x", default_errh(), |_| {
        out(count, count_of(read(status)?, datatype, Unit::Basics)?)
    })
}

/// Whether the operation of `status` was cancelled.
#[no_mangle]
pub unsafe extern "C" fn MPI_Test_cancelled(status: *const MPI_Status, flag: *mut c_int) -> c_int {
    run("Test_cancelled", default_errh(), |_| {
        out(flag, (read(status)?.internal[2] & CANCELLED != 0) as c_int)
    })
}

/// The source rank `status` reports (MPI 4.1).
#[no_mangle]
pub unsafe extern "C" fn MPI_Status_get_source(
    status: *const MPI_Status,
    source: *mut c_int,
) -> c_int {
    run("Status_get_source", default_errh(), |_| {
        out(source, read(status)?.MPI_SOURCE)
    })
}

/// The tag `status` reports (MPI 4.1).
#[no_mangle]
pub unsafe extern "C" fn MPI_Status_get_tag(status: *const MPI_Status, tag: *mut c_int) -> c_int {
    run("Status_get_tag", default_errh(), |_| {
        out(tag, read(status)?.MPI_TAG)
    })
}

/// The error code `status` holds in MPI_ERROR (MPI 4.1).
#[no_mangle]
pub unsafe extern "C" fn MPI_Status_get_error(
    status: *const MPI_Status,
    error: *mut c_int,
) -> c_int {
    run("Status_get_error", default_errh(), |_| {
        out(error, read(status)?.MPI_ERROR)
    })
}

fn write<'a>(status: *mut MPI_Status) -> CResult<&'a mut MPI_Status> {
    if status.is_null() {
        return Err(fail(
            MPI_ERR_ARG,
            "null status (MPI_STATUS_IGNORE cannot be set)",
        ));
    }
    // SAFETY: non-null; MPI requires a valid, writable status.
    Ok(unsafe { &mut *status })
}

/// Shared body of the Status_set_elements family: the status then reports `count` basic
/// elements of `datatype` (and the whole elements they make).
fn set_elements(status: *mut MPI_Status, datatype: MPI_Datatype, count: i64) -> CResult<()> {
    if count < 0 {
        return Err(fail(MPI_ERR_COUNT, format!("negative count {count}")));
    }
    let bytes = match types::get(datatype)? {
        Dtype::Basic(b) => (count as u64).saturating_mul(b.size as u64),
        Dtype::Derived(t) => t.bytes_of_elements(count as u64),
        Dtype::Custom(_) => {
            return Err(fail(
                MPI_ERR_TYPE,
                "a custom datatype has no basic elements",
            ))
        }
    };
    let s = write(status)?;
    s.internal[0] = bytes as u32 as c_int;
    s.internal[1] = (bytes >> 32) as u32 as c_int;
    s.internal[2] &= !(SIZE_UNKNOWN | CUSTOM);
    Ok(())
}

/// Sets the number of basic elements `status` reports (for generalized requests and layered
/// libraries).
#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_elements(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: c_int,
) -> c_int {
    run("Status_set_elements", default_errh(), |_| {
        set_elements(status, datatype, count as i64)
    })
}

/// [`MPI_Status_set_elements`] with an MPI_Count (the MPI-3 name).
#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_elements_x(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: MPI_Count,
) -> c_int {
    run("Status_set_elements_x", default_errh(), |_| {
        set_elements(status, datatype, count)
    })
}

/// [`MPI_Status_set_elements`] with an MPI_Count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_elements_c(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: MPI_Count,
) -> c_int {
    run("Status_set_elements_c", default_errh(), |_| {
        set_elements(status, datatype, count)
    })
}

/// Sets whether `status` reports a cancelled operation.
#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_cancelled(status: *mut MPI_Status, flag: c_int) -> c_int {
    run("Status_set_cancelled", default_errh(), |_| {
        let s = write(status)?;
        if flag != 0 {
            s.internal[2] |= CANCELLED;
        } else {
            s.internal[2] &= !CANCELLED;
        }
        Ok(())
    })
}

/// Sets the source rank `status` reports (MPI 4.1; for generalized requests' query callbacks).
#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_source(status: *mut MPI_Status, source: c_int) -> c_int {
    run("Status_set_source", default_errh(), |_| {
        write(status)?.MPI_SOURCE = source;
        Ok(())
    })
}

/// Sets the tag `status` reports (MPI 4.1).
#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_tag(status: *mut MPI_Status, tag: c_int) -> c_int {
    run("Status_set_tag", default_errh(), |_| {
        write(status)?.MPI_TAG = tag;
        Ok(())
    })
}

/// Sets the error code `status` reports in MPI_ERROR (MPI 4.1).
#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_error(status: *mut MPI_Status, error: c_int) -> c_int {
    run("Status_set_error", default_errh(), |_| {
        write(status)?.MPI_ERROR = error;
        Ok(())
    })
}
