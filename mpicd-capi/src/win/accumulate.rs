//! The accumulate calls of windows: MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op,
//! MPI_Compare_and_swap, the request-based MPI_Raccumulate and MPI_Rget_accumulate, and the
//! `_c` forms. Ops become [`AccumulateOp`]s over the reductions `MPI_Reduce` uses (every
//! predefined op on every type it is defined for, MPI_REPLACE and MPI_NO_OP).

use super::rma::{run_rma, target, typed, Target};
use super::run_on_win;
use crate::abi::*;
use crate::blocks::Elem;
use crate::errors::{fail, CResult};
use crate::p2p::count_of;
use crate::reductions::Reduction;
use crate::types;
use mpicd::{AccumulateOp, Window};
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

/// The one predefined type (a pair type included) a derived type is made of, by its
/// constructors.
fn element_of(t: &mpicd::Datatype) -> Option<MPI_Datatype> {
    if let Some(h) = types::predefined_handle(t) {
        return Some(h);
    }
    let all: Vec<_> = t.parts().iter().map(|(_, c)| element_of(c)).collect();
    match all.first() {
        Some(Some(h)) if all.iter().all(|e| *e == Some(*h)) => Some(*h),
        _ => None,
    }
}

/// Predefined op handles and predefined datatype handles: the ranges [`accumulate_op`]
/// remembers the combination of.
const OPS: std::ops::Range<usize> = 0x20..0x40;
const TYPES: std::ops::Range<usize> = 0x200..0x300;

/// What `op` does to elements of `datatype` in an accumulate, made once for each predefined
/// op and predefined datatype.
fn accumulate_op(op: MPI_Op, datatype: MPI_Datatype) -> CResult<AccumulateOp> {
    match predefined_accumulate_op(op, datatype) {
        Some(made) => Ok(made.clone()),
        // Not a predefined pair, or not an accumulate (say, an op undefined for the type):
        // made now, or the error made again.
        None => make_accumulate_op(op, datatype),
    }
}

/// [`accumulate_op`] for a predefined op on a predefined datatype, where it is defined: made
/// on first use and kept (what the lock-free calls use, without a clone).
pub(super) fn predefined_accumulate_op(
    op: MPI_Op,
    datatype: MPI_Datatype,
) -> Option<&'static AccumulateOp> {
    type Made = Box<[OnceLock<Option<AccumulateOp>>]>;
    static MADE: OnceLock<Made> = OnceLock::new();
    let (o, t) = (op as usize, datatype as usize);
    if !(OPS.contains(&o) && TYPES.contains(&t)) {
        return None;
    }
    let table = MADE.get_or_init(|| {
        (0..OPS.len() * TYPES.len())
            .map(|_| OnceLock::new())
            .collect()
    });
    let slot = &table[(o - OPS.start) * TYPES.len() + (t - TYPES.start)];
    slot.get_or_init(|| make_accumulate_op(op, datatype).ok())
        .as_ref()
}

/// [`accumulate_op`], made now.
fn make_accumulate_op(op: MPI_Op, datatype: MPI_Datatype) -> CResult<AccumulateOp> {
    if op == MPI_REPLACE {
        return Ok(AccumulateOp::Replace);
    }
    if op == MPI_NO_OP {
        return Ok(AccumulateOp::NoOp);
    }
    if crate::userops::user_op(op).is_some() || !Reduction::is_predefined(op) {
        return Err(fail(
            MPI_ERR_OP,
            "accumulates take predefined operations only",
        ));
    }
    // A derived type made of one predefined type (pairs included) reduces as that type.
    let elem = match types::get(datatype)? {
        types::Dtype::Derived(t) => element_of(&t).unwrap_or(datatype),
        _ => datatype,
    };
    let red = Reduction::of(op, elem, &Elem::of(elem)?)?;
    if let Reduction::Core(rop, e) = red {
        return Ok(AccumulateOp::Reduce(rop, e));
    }
    Ok(AccumulateOp::Combine(red.into_combine()))
}

/// The body of MPI_Accumulate (`result` None) and MPI_Get_accumulate.
unsafe fn accumulate(
    w: &Window,
    origin: (*const c_void, i64, MPI_Datatype),
    result: Option<(*mut c_void, i64, MPI_Datatype)>,
    t: Target,
    op: MPI_Op,
) -> CResult<()> {
    let tt = target(t.count, t.datatype)?;
    let acc = match tt.packed_size() {
        // Nothing to combine (a type of size 0): the op is not even looked at by the target.
        0 => AccumulateOp::NoOp,
        _ => accumulate_op(op, t.datatype)?,
    };
    let data = match acc {
        AccumulateOp::NoOp => std::borrow::Cow::Borrowed(&[][..]),
        _ => {
            let e = Elem::of(origin.2)?;
            // SAFETY: MPI's rules: the origin holds `count` elements.
            unsafe { e.read(origin.0, count_of(origin.1)?) }?
        }
    };
    let res = match result {
        Some((p, n, d)) => Some(typed(p, n, d)?),
        None => None,
    };
    // SAFETY: the result buffer is writable, per MPI's rules.
    unsafe { w.accumulate(&data, res.as_ref(), t.rank, t.disp as i64, &tt, &acc) }
        .map_err(Into::into)
}

/// An accumulate call as `name`, the general path (what the lock-free one,
/// [`super::hot::accumulate`], does not take).
///
/// # Safety
/// MPI's rules for the buffers.
#[cold]
#[inline(never)]
unsafe fn accumulate_slow(
    name: &'static str,
    origin: (*const c_void, i64, MPI_Datatype),
    result: Option<(*mut c_void, i64, MPI_Datatype)>,
    t: Target,
    op: MPI_Op,
    win: MPI_Win,
) -> c_int {
    run_rma(name, win, t.rank, None, |w| {
        // SAFETY: forwarded from the caller.
        unsafe { accumulate(w, origin, result, t, op) }
    })
}

/// Combines the origin's elements into the target's with `op` (a predefined op, MPI_REPLACE
/// or MPI_NO_OP), atomically per element with every other accumulate.
#[no_mangle]
pub unsafe extern "C" fn MPI_Accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> c_int {
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        MPI_Accumulate_c(
            origin_addr,
            origin_count as MPI_Count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count as MPI_Count,
            target_datatype,
            op,
            win,
        )
    }
}

/// [`MPI_Accumulate`] with MPI_Count counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Accumulate_c(
    origin_addr: *const c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> c_int {
    // SAFETY: MPI's rules for the buffers.
    let done = unsafe {
        super::hot::accumulate(
            (origin_addr, origin_count, origin_datatype),
            None,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            win,
        )
    };
    if done {
        return MPI_SUCCESS;
    }
    let t = Target::new(target_rank, target_disp, target_count, target_datatype);
    let origin = (origin_addr, origin_count, origin_datatype);
    // SAFETY: MPI's rules for the buffers.
    unsafe { accumulate_slow("Accumulate", origin, None, t, op, win) }
}

/// [`MPI_Accumulate`] that also returns the target's previous elements in the result buffer.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> c_int {
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        MPI_Get_accumulate_c(
            origin_addr,
            origin_count as MPI_Count,
            origin_datatype,
            result_addr,
            result_count as MPI_Count,
            result_datatype,
            target_rank,
            target_disp,
            target_count as MPI_Count,
            target_datatype,
            op,
            win,
        )
    }
}

/// [`MPI_Get_accumulate`] with MPI_Count counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_accumulate_c(
    origin_addr: *const c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: MPI_Count,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> c_int {
    // SAFETY: MPI's rules for the buffers.
    let done = unsafe {
        super::hot::accumulate(
            (origin_addr, origin_count, origin_datatype),
            Some((result_addr, result_count, result_datatype)),
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            win,
        )
    };
    if done {
        return MPI_SUCCESS;
    }
    let t = Target::new(target_rank, target_disp, target_count, target_datatype);
    let origin = (origin_addr, origin_count, origin_datatype);
    let result = Some((result_addr, result_count, result_datatype));
    // SAFETY: MPI's rules for the buffers.
    unsafe { accumulate_slow("Get_accumulate", origin, result, t, op, win) }
}

/// Request-based [`MPI_Accumulate`]: the request is complete when the call returns.
#[no_mangle]
pub unsafe extern "C" fn MPI_Raccumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        MPI_Raccumulate_c(
            origin_addr,
            origin_count as MPI_Count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count as MPI_Count,
            target_datatype,
            op,
            win,
            request,
        )
    }
}

/// [`MPI_Raccumulate`] with MPI_Count counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Raccumulate_c(
    origin_addr: *const c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> c_int {
    let t = Target::new(target_rank, target_disp, target_count, target_datatype);
    run_rma("Raccumulate", win, target_rank, Some(request), |w| {
        // SAFETY: MPI's rules for the buffers.
        unsafe { accumulate(w, (origin_addr, origin_count, origin_datatype), None, t, op) }
    })
}

/// Request-based [`MPI_Get_accumulate`]: the request is complete when the call returns.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rget_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        MPI_Rget_accumulate_c(
            origin_addr,
            origin_count as MPI_Count,
            origin_datatype,
            result_addr,
            result_count as MPI_Count,
            result_datatype,
            target_rank,
            target_disp,
            target_count as MPI_Count,
            target_datatype,
            op,
            win,
            request,
        )
    }
}

/// [`MPI_Rget_accumulate`] with MPI_Count counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rget_accumulate_c(
    origin_addr: *const c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: MPI_Count,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> c_int {
    let t = Target::new(target_rank, target_disp, target_count, target_datatype);
    run_rma("Rget_accumulate", win, target_rank, Some(request), |w| {
        // SAFETY: MPI's rules for the buffers.
        unsafe {
            accumulate(
                w,
                (origin_addr, origin_count, origin_datatype),
                Some((result_addr, result_count, result_datatype)),
                t,
                op,
            )
        }
    })
}

/// Combines one element at `origin_addr` into the target element with `op` and returns the
/// target's previous value in `result_addr`, atomically.
#[no_mangle]
pub unsafe extern "C" fn MPI_Fetch_and_op(
    origin_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    op: MPI_Op,
    win: MPI_Win,
) -> c_int {
    // SAFETY: MPI's rules for the buffers.
    let done = unsafe {
        super::hot::accumulate(
            (origin_addr, 1, datatype),
            Some((result_addr, 1, datatype)),
            target_rank,
            target_disp,
            1,
            datatype,
            op,
            win,
        )
    };
    if done {
        return MPI_SUCCESS;
    }
    let t = Target::new(target_rank, target_disp, 1, datatype);
    let result = Some((result_addr, 1, datatype));
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        accumulate_slow(
            "Fetch_and_op",
            (origin_addr, 1, datatype),
            result,
            t,
            op,
            win,
        )
    }
}

/// Replaces the target element with `*origin_addr` if it equals `*compare_addr`; its previous
/// value lands in `result_addr`. Atomic.
#[no_mangle]
pub unsafe extern "C" fn MPI_Compare_and_swap(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    win: MPI_Win,
) -> c_int {
    // SAFETY: MPI's rules for the buffers.
    let done = unsafe {
        super::hot::compare_and_swap(
            origin_addr,
            compare_addr,
            result_addr,
            datatype,
            target_rank,
            target_disp,
            win,
        )
    };
    if done {
        return MPI_SUCCESS;
    }
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        compare_and_swap_slow(
            origin_addr,
            compare_addr,
            result_addr,
            datatype,
            target_rank,
            target_disp,
            win,
        )
    }
}

/// MPI_Compare_and_swap, the general path.
///
/// # Safety
/// MPI's rules for the buffers.
#[cold]
#[inline(never)]
unsafe fn compare_and_swap_slow(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    win: MPI_Win,
) -> c_int {
    run_on_win("Compare_and_swap", win, |w| {
        let b = types::basic(datatype)
            .filter(|b| b.kind.swappable())
            .ok_or_else(|| {
                fail(
                    MPI_ERR_TYPE,
                    "compare-and-swap takes a predefined integer, logical or byte type",
                )
            })?;
        let n = b.size;
        // SAFETY: MPI requires one element of `datatype` at each address.
        let (o, c, r) = unsafe {
            (
                crate::blocks::bytes(origin_addr, n)?,
                crate::blocks::bytes(compare_addr, n)?,
                crate::blocks::bytes_mut(result_addr, n)?,
            )
        };
        let t = target(1, datatype)?;
        w.compare_and_swap(o, c, r, target_rank, target_disp as i64, &t)
            .map_err(Into::into)
    })
}
