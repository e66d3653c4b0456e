//! MPI_Pack, MPI_Unpack and MPI_Pack_size, with their `_c` variants: the bytes of a predefined
//! or committed derived type moved between its memory and a user buffer at `position`, in the
//! native representation (the type signature's bytes in type-map order, as a derived-typed
//! message travels), straight from memory to the buffer without a temporary.
//!
//! Nothing is written past the buffers: packing more than `outsize - position` bytes, or
//! unpacking more than `insize - position`, fails with MPI_ERR_TRUNCATE before any byte moves.
//! Custom types (whose callbacks pack them) are MPI_ERR_TYPE. MPI_PACKED is a one-byte
//! predefined type, so packed data is sent and received as `position` bytes of it.

use super::{core_type, datatype, get, Dtype};
use crate::abi::*;
use crate::comms::{self, errh};
use crate::env::{out, read_arg};
use crate::errors::{fail, run, CResult};
use mpicd::{Datatype, TypedBuf};
use std::ffi::{c_int, c_void};

/// The core type of a handle that memory can be packed with: predefined, or derived and
/// committed.
pub(crate) fn packable(h: MPI_Datatype) -> CResult<Datatype> {
    match get(h)? {
        Dtype::Basic(_) => core_type(h).ok_or_else(|| fail(MPI_ERR_TYPE, "unknown datatype")),
        Dtype::Derived(t) => Ok(t),
        Dtype::Custom(_) => Err(fail(
            MPI_ERR_TYPE,
            "a custom datatype is packed by its own callbacks, not by MPI_Pack",
        )),
    }
}

/// Packed bytes of `count` elements of `ty`.
pub(crate) fn packed_len(count: i64, ty: &Datatype) -> CResult<u64> {
    let n =
        u64::try_from(count).map_err(|_| fail(MPI_ERR_COUNT, format!("negative count {count}")))?;
    n.checked_mul(ty.size())
        .filter(|&b| b <= i64::MAX as u64)
        .ok_or_else(|| fail(MPI_ERR_COUNT, format!("{count} elements overflow")))
}

/// The `len` bytes of a user buffer of `size` bytes from `position`: MPI_ERR_TRUNCATE if they
/// do not fit.
pub(crate) fn window(size: i64, position: i64, len: u64, what: &str) -> CResult<usize> {
    if size < 0 {
        return Err(fail(MPI_ERR_ARG, format!("negative {what} size {size}")));
    }
    if position < 0 || position > size {
        return Err(fail(
            MPI_ERR_ARG,
            format!("position {position} outside a {what} buffer of {size} bytes"),
        ));
    }
    if len > (size - position) as u64 {
        return Err(fail(
            MPI_ERR_TRUNCATE,
            format!(
                "{len} bytes do not fit in the {} bytes left of the {what} buffer",
                size - position
            ),
        ));
    }
    Ok(position as usize)
}

/// A predefined type's buffer must not be null when it holds data (a derived type's may:
/// MPI_BOTTOM with absolute displacements).
pub(crate) fn check_base(buf: *const c_void, ty: &Datatype, len: u64) -> CResult<()> {
    if buf.is_null() && len > 0 && ty.is_basic() {
        return Err(fail(MPI_ERR_BUFFER, "null buffer with a non-zero count"));
    }
    Ok(())
}

/// Packs `count` elements of `dt` at `inbuf` into `outbuf` (`outsize` bytes) at `position`;
/// the new position.
///
/// # Safety
/// The type map must be readable at `inbuf` and `outbuf` writable for `outsize` bytes.
unsafe fn pack(
    inbuf: *const c_void,
    count: i64,
    dt: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: i64,
    position: i64,
) -> CResult<i64> {
    let ty = packable(dt)?;
    let len = packed_len(count, &ty)?;
    let at = window(outsize, position, len, "output")?;
    check_base(inbuf, &ty, len)?;
    if len == 0 {
        return Ok(position);
    }
    if outbuf.is_null() {
        return Err(fail(MPI_ERR_BUFFER, "null outbuf"));
    }
    // SAFETY: `at + len <= outsize` bytes of `outbuf`, which the caller gives.
    let dst = unsafe { std::slice::from_raw_parts_mut((outbuf as *mut u8).add(at), len as usize) };
    let buf = TypedBuf::new(inbuf as *const u8, count as u64, &ty);
    // SAFETY: the caller's promise about `inbuf`.
    let n = unsafe { buf.pack(0, dst) };
    debug_assert_eq!(n as u64, len);
    Ok(position + len as i64)
}

/// Unpacks `count` elements of `dt` into `outbuf` from `inbuf` (`insize` bytes) at `position`;
/// the new position.
///
/// # Safety
/// `inbuf` must be readable for `insize` bytes and the type map writable at `outbuf`.
unsafe fn unpack(
    inbuf: *const c_void,
    insize: i64,
    position: i64,
    outbuf: *mut c_void,
    count: i64,
    dt: MPI_Datatype,
) -> CResult<i64> {
    let ty = packable(dt)?;
    let len = packed_len(count, &ty)?;
    let at = window(insize, position, len, "input")?;
    check_base(outbuf, &ty, len)?;
    if len == 0 {
        return Ok(position);
    }
    if inbuf.is_null() {
        return Err(fail(MPI_ERR_BUFFER, "null inbuf"));
    }
    // SAFETY: `at + len <= insize` bytes of `inbuf`, which the caller gives.
    let src = unsafe { std::slice::from_raw_parts((inbuf as *const u8).add(at), len as usize) };
    let buf = TypedBuf::new(outbuf as *const u8, count as u64, &ty);
    // SAFETY: the caller's promise about `outbuf`.
    let n = unsafe { buf.unpack(0, src) };
    debug_assert_eq!(n as u64, len);
    Ok(position + len as i64)
}

/// Packs `incount` elements of `datatype` at `inbuf` into `outbuf` at `*position`, which
/// moves past them.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack(
    inbuf: *const c_void,
    incount: c_int,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: c_int,
    position: *mut c_int,
    comm: MPI_Comm,
) -> c_int {
    run("Pack", errh(comm), |_| {
        comms::get(comm)?;
        let at = read_arg(position, "position")?;
        // SAFETY: the caller gives the buffers MPI_Pack requires.
        let to = unsafe {
            pack(
                inbuf,
                incount as i64,
                datatype,
                outbuf,
                outsize as i64,
                at as i64,
            )
        }?;
        out(position, to as c_int)
    })
}

/// [`MPI_Pack`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_c(
    inbuf: *const c_void,
    incount: MPI_Count,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: MPI_Count,
    position: *mut MPI_Count,
    comm: MPI_Comm,
) -> c_int {
    run("Pack_c", errh(comm), |_| {
        comms::get(comm)?;
        let at = read_arg(position, "position")?;
        // SAFETY: the caller gives the buffers MPI_Pack requires.
        let to = unsafe { pack(inbuf, incount, datatype, outbuf, outsize, at) }?;
        out(position, to)
    })
}

/// Unpacks `outcount` elements of `datatype` into `outbuf` from `inbuf` at `*position`, which
/// moves past them.
#[no_mangle]
pub unsafe extern "C" fn MPI_Unpack(
    inbuf: *const c_void,
    insize: c_int,
    position: *mut c_int,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    run("Unpack", errh(comm), |_| {
        comms::get(comm)?;
        let at = read_arg(position, "position")?;
        // SAFETY: the caller gives the buffers MPI_Unpack requires.
        let to = unsafe {
            unpack(
                inbuf,
                insize as i64,
                at as i64,
                outbuf,
                outcount as i64,
                datatype,
            )
        }?;
        out(position, to as c_int)
    })
}

/// [`MPI_Unpack`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Unpack_c(
    inbuf: *const c_void,
    insize: MPI_Count,
    position: *mut MPI_Count,
    outbuf: *mut c_void,
    outcount: MPI_Count,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    run("Unpack_c", errh(comm), |_| {
        comms::get(comm)?;
        let at = read_arg(position, "position")?;
        // SAFETY: the caller gives the buffers MPI_Unpack requires.
        let to = unsafe { unpack(inbuf, insize, at, outbuf, outcount, datatype) }?;
        out(position, to)
    })
}

/// Bytes of `incount` elements of a predefined or derived type (committed or not).
fn pack_size(incount: i64, dt: MPI_Datatype) -> CResult<i64> {
    Ok(packed_len(incount, &datatype(dt)?)? as i64)
}

/// The room [`MPI_Pack`] needs for `incount` elements of `datatype` (exactly their data).
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_size(
    incount: c_int,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
    size: *mut c_int,
) -> c_int {
    run("Pack_size", errh(comm), |_| {
        comms::get(comm)?;
        let n = pack_size(incount as i64, datatype)?;
        let n = c_int::try_from(n).map_err(|_| {
            fail(
                MPI_ERR_VALUE_TOO_LARGE,
                format!("{n} bytes do not fit an int: use MPI_Pack_size_c"),
            )
        })?;
        out(size, n)
    })
}

/// [`MPI_Pack_size`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_size_c(
    incount: MPI_Count,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
    size: *mut MPI_Count,
) -> c_int {
    run("Pack_size_c", errh(comm), |_| {
        comms::get(comm)?;
        out(size, pack_size(incount, datatype)?)
    })
}
