//! The lock-free calls of one-sided communication: MPI_Put, MPI_Get, the accumulate family and
//! the flushes on a window mapped in this process (see [`mpicd::Window::try_put_mapped`]),
//! with predefined datatypes and contiguous buffers. The window is reached through
//! [`super::HOT`] (no lock, no reference count), the datatypes through the predefined table;
//! each function returns true when it did the whole call, and false, having done nothing, when
//! the general path must run (it checks the arguments again and reports any error under the
//! window's error handler).
//!
//! Nothing here can panic (every lookup is checked), and no error is swallowed: whatever
//! the fast path does not accept, the general path sees.

use super::accumulate::predefined_accumulate_op;
use super::HOT;
use crate::abi::*;
use crate::types;
use std::ffi::{c_int, c_void};

/// Bytes of `count` elements of the predefined type `datatype` (`None`: not predefined, or a
/// negative or overflowing count).
#[inline(always)]
fn bytes_of(count: i64, datatype: MPI_Datatype) -> Option<(usize, usize)> {
    let b = types::basic(datatype)?;
    let n = usize::try_from(count).ok()?.checked_mul(b.size)?;
    Some((n, b.size))
}

/// Whether MPI is live (the general path reports otherwise).
#[inline(always)]
fn live() -> bool {
    crate::env::is_live()
}

/// MPI_Put (`put`) or MPI_Get of predefined types, contiguous on both sides.
///
/// # Safety
/// MPI's rules for the origin buffer.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) unsafe fn put_get(
    put: bool,
    origin: *const c_void,
    origin_count: i64,
    origin_datatype: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    target_count: i64,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> bool {
    let Some((len, _)) = bytes_of(target_count, target_datatype) else {
        return false;
    };
    let same = origin_datatype == target_datatype && origin_count == target_count;
    if !same && bytes_of(origin_count, origin_datatype).map(|b| b.0) != Some(len) {
        return false;
    }
    if origin.is_null() || !live() {
        return false;
    }
    let Some(w) = HOT.get(win as usize) else {
        return false;
    };
    // SAFETY: MPI's rules: the origin holds `len` bytes, readable (put) or writable (get).
    unsafe {
        match put {
            true => w.try_put_mapped(origin as *const u8, len, rank, disp as i64),
            false => w.try_get_mapped(origin as *mut u8, len, rank, disp as i64),
        }
    }
}

/// MPI_Accumulate (`result` None), MPI_Get_accumulate and MPI_Fetch_and_op of a predefined
/// op on predefined types, contiguous everywhere.
///
/// # Safety
/// MPI's rules for the buffers.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) unsafe fn accumulate(
    origin: (*const c_void, i64, MPI_Datatype),
    result: Option<(*mut c_void, i64, MPI_Datatype)>,
    rank: c_int,
    disp: MPI_Aint,
    target_count: i64,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> bool {
    let Some((len, width)) = bytes_of(target_count, target_datatype) else {
        return false;
    };
    let Some(acc) = predefined_accumulate_op(op, target_datatype) else {
        return false;
    };
    // MPI_NO_OP ignores the origin; any other op reads as many bytes as the target holds.
    let reads_origin = !matches!(acc, mpicd::AccumulateOp::NoOp);
    let same = origin.2 == target_datatype && origin.1 == target_count;
    if reads_origin && !same {
        match bytes_of(origin.1, origin.2) {
            Some((n, w)) if n == len && w == width && !origin.0.is_null() => {}
            _ => return false,
        }
    }
    if reads_origin && origin.0.is_null() {
        return false;
    }
    let res = match result {
        None => std::ptr::null_mut(),
        Some((p, n, d)) if d == target_datatype && n == target_count && !p.is_null() => {
            p as *mut u8
        }
        Some((p, n, d)) => match bytes_of(n, d) {
            Some((rlen, w)) if rlen == len && w == width && !p.is_null() => p as *mut u8,
            _ => return false,
        },
    };
    if len == 0 || !live() {
        return false;
    }
    let Some(w) = HOT.get(win as usize) else {
        return false;
    };
    // SAFETY: MPI's rules: the origin holds `len` readable bytes (unless NoOp, which reads
    // none), the result `len` writable ones.
    unsafe {
        w.try_accumulate_mapped(
            origin.0 as *const u8,
            res,
            len,
            width,
            rank,
            disp as i64,
            acc,
        )
    }
}

/// MPI_Compare_and_swap on a predefined type.
///
/// # Safety
/// MPI's rules for the buffers: one element of `datatype` at each address.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) unsafe fn compare_and_swap(
    origin: *const c_void,
    compare: *const c_void,
    result: *mut c_void,
    datatype: MPI_Datatype,
    rank: c_int,
    disp: MPI_Aint,
    win: MPI_Win,
) -> bool {
    let Some(n) = types::basic(datatype)
        .filter(|b| b.kind.swappable())
        .map(|b| b.size)
    else {
        return false; // the general path says why
    };
    if origin.is_null() || compare.is_null() || result.is_null() || !live() {
        return false;
    }
    // SAFETY: MPI's rules: `n` bytes at each address; the result is the caller's alone.
    let (o, c, r) = unsafe {
        (
            std::slice::from_raw_parts(origin as *const u8, n),
            std::slice::from_raw_parts(compare as *const u8, n),
            std::slice::from_raw_parts_mut(result as *mut u8, n),
        )
    };
    let Some(w) = HOT.get(win as usize) else {
        return false;
    };
    w.try_compare_and_swap_mapped(o, c, r, rank, disp as i64)
}

/// MPI_Win_flush and MPI_Win_flush_local (`rank` Some), MPI_Win_flush_all and
/// MPI_Win_flush_local_all.
#[inline(always)]
pub(super) fn flush(rank: Option<c_int>, win: MPI_Win) -> bool {
    if !live() {
        return false;
    }
    let Some(w) = HOT.get(win as usize) else {
        return false;
    };
    match rank {
        Some(r) => w.try_flush_mapped(r),
        None => w.try_flush_all_mapped(),
    }
}
