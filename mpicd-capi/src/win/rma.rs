//! The data-moving calls of windows: MPI_Put, MPI_Get, the request-based MPI_Rput and
//! MPI_Rget, their `_c` forms, and what the accumulates ([`super::accumulate`]) share with
//! them. Datatypes become [`TypedBuf`]s (the target side with base 0: displacements from the
//! target address).
//!
//! A request-based operation completes (at the target too) before the call returns, so its
//! request is complete from the start; Wait and Test treat it like any other.

use super::{errh, run_on_win};
use crate::abi::*;
use crate::env::{out, require};
use crate::errors::{fail, CResult};
use crate::p2p::count_of;
use crate::types::{self, Dtype};
use mpicd::{Datatype, TypedBuf, Window};
use std::ffi::{c_int, c_void};

/// The core datatype of a handle for a one-sided call (custom types are refused).
pub(crate) fn rma_type(h: MPI_Datatype) -> CResult<Datatype> {
    if let Some(t) = types::core_type(h) {
        return Ok(t);
    }
    match types::get(h)? {
        Dtype::Custom(_) => Err(fail(
            MPI_ERR_TYPE,
            "custom datatypes cannot be used in one-sided communication",
        )),
        _ => types::datatype(h),
    }
}

/// `count` elements of `datatype` at `buf` (MPI_BOTTOM, address 0, with absolute
/// displacements in the type).
pub(crate) fn typed(buf: *const c_void, count: i64, datatype: MPI_Datatype) -> CResult<TypedBuf> {
    let count = count_of(count)? as u64;
    let t = rma_type(datatype)?;
    Ok(TypedBuf::new(buf as *const u8, count, &t))
}

/// The target side: `count` elements of `datatype` with base 0.
pub(crate) fn target(count: i64, datatype: MPI_Datatype) -> CResult<TypedBuf> {
    let count = count_of(count)? as u64;
    Ok(TypedBuf::new(std::ptr::null(), count, &rma_type(datatype)?))
}

/// The C arguments of the target side.
#[derive(Clone, Copy)]
pub(crate) struct Target {
    pub rank: c_int,
    pub disp: MPI_Aint,
    pub count: i64,
    pub datatype: MPI_Datatype,
}

impl Target {
    pub(crate) fn new(rank: c_int, disp: MPI_Aint, count: i64, datatype: MPI_Datatype) -> Target {
        Target {
            rank,
            disp,
            count,
            datatype,
        }
    }
}

/// Runs the one-sided call `name` on `win` with `body`. A request-based call (`request` set)
/// must be in a passive-target epoch on `rank`; its operation is flushed and it returns a
/// complete request (see the module docs). Out of line, as [`run_on_win`].
#[inline(never)]
pub(crate) fn run_rma(
    name: &'static str,
    win: MPI_Win,
    rank: c_int,
    request: Option<*mut MPI_Request>,
    body: impl FnOnce(&Window) -> CResult<()>,
) -> c_int {
    run_on_win(name, win, |w| {
        if let Some(r) = request {
            require(r, "request")?;
            w.check_passive(rank)?;
        }
        body(&w)?;
        match request {
            Some(r) => finished(&w, rank, win, r),
            None => Ok(()),
        }
    })
}

/// The body of MPI_Put (`put`) and MPI_Get.
unsafe fn put_get(
    w: &Window,
    put: bool,
    origin: *const c_void,
    count: i64,
    datatype: MPI_Datatype,
    t: Target,
) -> CResult<()> {
    let o = typed(origin, count, datatype)?;
    let tt = target(t.count, t.datatype)?;
    // SAFETY: MPI's rules: the origin stays valid and untouched until the operation completes.
    unsafe {
        match put {
            true => w.put(&o, t.rank, t.disp as i64, &tt),
            false => w.get(&o, t.rank, t.disp as i64, &tt),
        }
    }
    .map_err(Into::into)
}

/// MPI_Put (`put`) or MPI_Get as `name`, the general path (what the lock-free one,
/// [`super::hot::put_get`], does not take).
///
/// # Safety
/// MPI's rules for the origin buffer.
#[cold]
#[inline(never)]
unsafe fn put_get_slow(
    name: &'static str,
    put: bool,
    origin: *const c_void,
    count: i64,
    datatype: MPI_Datatype,
    t: Target,
    win: MPI_Win,
) -> c_int {
    run_rma(name, win, t.rank, None, |w| {
        // SAFETY: forwarded from the caller.
        unsafe { put_get(w, put, origin, count, datatype, t) }
    })
}

/// A complete request for a request-based operation, after its flush.
fn finished(w: &Window, rank: c_int, win: MPI_Win, request: *mut MPI_Request) -> CResult<()> {
    w.flush(rank)?;
    out(
        request,
        crate::requests::insert_complete(crate::status::empty(), errh(win)),
    )
}

/// Writes `origin_count` elements of `origin_datatype` to `target_count` elements of
/// `target_datatype` at displacement `target_disp` of `target_rank`'s window; complete at the
/// next synchronization.
#[no_mangle]
pub unsafe extern "C" fn MPI_Put(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> c_int {
    // SAFETY: MPI's rules for the origin buffer.
    let done = unsafe {
        super::hot::put_get(
            true,
            origin_addr,
            origin_count as i64,
            origin_datatype,
            target_rank,
            target_disp,
            target_count as i64,
            target_datatype,
            win,
        )
    };
    if done {
        return MPI_SUCCESS;
    }
    let t = Target::new(
        target_rank,
        target_disp,
        target_count as i64,
        target_datatype,
    );
    // SAFETY: MPI's rules for the origin buffer.
    unsafe {
        put_get_slow(
            "Put",
            true,
            origin_addr,
            origin_count as i64,
            origin_datatype,
            t,
            win,
        )
    }
}

/// [`MPI_Put`] with MPI_Count counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Put_c(
    origin_addr: *const c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> c_int {
    // SAFETY: MPI's rules for the origin buffer.
    let done = unsafe {
        super::hot::put_get(
            true,
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
        )
    };
    if done {
        return MPI_SUCCESS;
    }
    let t = Target::new(target_rank, target_disp, target_count, target_datatype);
    // SAFETY: MPI's rules for the origin buffer.
    unsafe {
        put_get_slow(
            "Put_c",
            true,
            origin_addr,
            origin_count,
            origin_datatype,
            t,
            win,
        )
    }
}

/// Request-based [`MPI_Put`] (in a passive-target epoch): the request is complete when the
/// call returns.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rput(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> c_int {
    let t = Target::new(
        target_rank,
        target_disp,
        target_count as i64,
        target_datatype,
    );
    run_rma("Rput", win, target_rank, Some(request), |w| {
        // SAFETY: MPI's rules for the origin buffer.
        unsafe {
            put_get(
                w,
                true,
                origin_addr,
                origin_count as i64,
                origin_datatype,
                t,
            )
        }
    })
}

/// [`MPI_Rput`] with MPI_Count counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rput_c(
    origin_addr: *const c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> c_int {
    let t = Target::new(target_rank, target_disp, target_count, target_datatype);
    run_rma("Rput_c", win, target_rank, Some(request), |w| {
        // SAFETY: MPI's rules for the origin buffer.
        unsafe { put_get(w, true, origin_addr, origin_count, origin_datatype, t) }
    })
}

/// Reads `target_count` elements of `target_datatype` at displacement `target_disp` of
/// `target_rank`'s window into the origin buffer; there after the next synchronization.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> c_int {
    // SAFETY: MPI's rules for the origin buffer.
    let done = unsafe {
        super::hot::put_get(
            false,
            origin_addr as *const c_void,
            origin_count as i64,
            origin_datatype,
            target_rank,
            target_disp,
            target_count as i64,
            target_datatype,
            win,
        )
    };
    if done {
        return MPI_SUCCESS;
    }
    let t = Target::new(
        target_rank,
        target_disp,
        target_count as i64,
        target_datatype,
    );
    // SAFETY: MPI's rules for the origin buffer.
    unsafe {
        put_get_slow(
            "Get",
            false,
            origin_addr as *const c_void,
            origin_count as i64,
            origin_datatype,
            t,
            win,
        )
    }
}

/// [`MPI_Get`] with MPI_Count counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_c(
    origin_addr: *mut c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> c_int {
    // SAFETY: MPI's rules for the origin buffer.
    let done = unsafe {
        super::hot::put_get(
            false,
            origin_addr as *const c_void,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
        )
    };
    if done {
        return MPI_SUCCESS;
    }
    let t = Target::new(target_rank, target_disp, target_count, target_datatype);
    // SAFETY: MPI's rules for the origin buffer.
    unsafe {
        put_get_slow(
            "Get_c",
            false,
            origin_addr as *const c_void,
            origin_count,
            origin_datatype,
            t,
            win,
        )
    }
}

/// Request-based [`MPI_Get`] (in a passive-target epoch): the request is complete when the
/// call returns.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rget(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> c_int {
    let t = Target::new(
        target_rank,
        target_disp,
        target_count as i64,
        target_datatype,
    );
    run_rma("Rget", win, target_rank, Some(request), |w| {
        // SAFETY: MPI's rules for the origin buffer.
        unsafe {
            put_get(
                w,
                false,
                origin_addr,
                origin_count as i64,
                origin_datatype,
                t,
            )
        }
    })
}

/// [`MPI_Rget`] with MPI_Count counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rget_c(
    origin_addr: *mut c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> c_int {
    let t = Target::new(target_rank, target_disp, target_count, target_datatype);
    run_rma("Rget_c", win, target_rank, Some(request), |w| {
        // SAFETY: MPI's rules for the origin buffer.
        unsafe { put_get(w, false, origin_addr, origin_count, origin_datatype, t) }
    })
}
