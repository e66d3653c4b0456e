//! The accumulate family of the safe epochs: [`Epoch::accumulate`],
//! [`Epoch::get_accumulate`], [`Epoch::fetch_and_op`] and [`Epoch::compare_and_swap`], typed
//! over [`Primitive`] elements with an [`Op`], each atomic with respect to every other
//! accumulate-class operation on the same target elements.
//!
//! Buffers: `accumulate` and `get_accumulate` borrow theirs for the epoch's `'a`, like put
//! and get, so their results are promised only when the epoch has ended (today they complete
//! when the call returns, but the API does not rely on it). `fetch_and_op` and
//! `compare_and_swap` lend nothing: they take their operands by value and return the target's
//! previous value, which the calls underneath ([`crate::Window::accumulate`],
//! [`crate::Window::compare_and_swap`]) have written before they return (their contract: complete,
//! at the target too, when they return).

use super::{element, typed, Epoch};
use crate::datatype::{bytes_of, bytes_of_mut};
use crate::error::{Error, Result};
use crate::window::AccumulateOp;
use crate::{ElementType, Op, Primitive, TypedBuf};

/// What `op` does to elements of `T`: `InvalidOp` where MPI does not define it.
fn accumulate_op<T: Primitive>(op: Op) -> Result<AccumulateOp> {
    let elem = element::<T>()?;
    Ok(match op {
        Op::Replace => AccumulateOp::Replace,
        Op::NoOp => AccumulateOp::NoOp,
        Op::Reduce(r) if r.is_defined_on(elem) => AccumulateOp::Reduce(r, elem),
        Op::Reduce(r) => {
            return Err(Error::InvalidOp(format!(
                "{r:?} is not defined on {elem:?} elements"
            )))
        }
    })
}

impl<'a> Epoch<'_, 'a> {
    /// `MPI_Accumulate`: combines `data` with `op` into member `rank`'s window at `disp` (in
    /// the target's displacement units), element by element, atomically with every other
    /// accumulate; complete when the epoch ends. `op` is a reduction or [`Op::Replace`]
    /// ([`Op::NoOp`] is for the fetching calls); one MPI does not define on `T` (a bitwise
    /// op on floats) is `Error::InvalidOp`.
    pub fn accumulate<T: Primitive>(
        &self,
        data: &'a [T],
        rank: i32,
        disp: i64,
        op: impl Into<Op>,
    ) -> Result<()> {
        let op = op.into();
        if op == Op::NoOp {
            return Err(Error::InvalidOp(
                "NoOp is taken by get_accumulate and fetch_and_op only".into(),
            ));
        }
        let acc = accumulate_op::<T>(op)?;
        let (len, width) = (std::mem::size_of_val(data), std::mem::size_of::<T>());
        let p = data.as_ptr().cast();
        // SAFETY: `data` is readable for its bytes; no result.
        let null = std::ptr::null_mut();
        if unsafe {
            self.win
                .try_accumulate_mapped(p, null, len, width, rank, disp, &acc)
        } {
            return Ok(());
        }
        let ty = typed::<T>()?;
        let target = TypedBuf::new(std::ptr::null(), data.len() as u64, &ty);
        // SAFETY: no result buffer; the origin is a borrowed slice read during the call.
        unsafe {
            self.win
                .accumulate(bytes_of(data), None, rank, disp, &target, &acc)
        }
    }

    /// `MPI_Get_accumulate`: as [`Epoch::accumulate`], and the target's elements as they
    /// were before land in `result` (of `data`'s length; with [`Op::NoOp`] `data` is ignored,
    /// `&[]` will do, and the call is an atomic read of `result.len()` elements). The result
    /// is promised when the epoch has ended: the borrow keeps it out of reach until then.
    pub fn get_accumulate<T: Primitive>(
        &self,
        data: &'a [T],
        result: &'a mut [T],
        rank: i32,
        disp: i64,
        op: impl Into<Op>,
    ) -> Result<()> {
        let acc = accumulate_op::<T>(op.into())?;
        let origin = match acc {
            AccumulateOp::NoOp => &[],
            _ => bytes_of(data),
        };
        let ty = typed::<T>()?;
        let n = result.len() as u64;
        let res = TypedBuf::new(result.as_mut_ptr().cast_const().cast(), n, &ty);
        let target = TypedBuf::new(std::ptr::null(), n, &ty);
        // SAFETY: `result` is mutably borrowed for 'a, past the epoch's closing
        // synchronization, so it is writable and nobody else touches it meanwhile; its
        // elements accept any bytes (`Primitive`), and `res` covers exactly its bytes
        // (`typed` checked the element size).
        unsafe {
            self.win
                .accumulate(origin, Some(&res), rank, disp, &target, &acc)
        }
    }

    /// `MPI_Fetch_and_op`: combines `value` with `op` into the element at `disp` of member
    /// `rank`'s window and returns that element's previous value, atomically with every
    /// other accumulate ([`Op::NoOp`]: an atomic read; [`Op::Replace`]: an atomic swap).
    /// The value is there when the call returns. To `PROC_NULL` nothing happens and the
    /// result is zero.
    pub fn fetch_and_op<T: Primitive>(
        &self,
        value: T,
        rank: i32,
        disp: i64,
        op: impl Into<Op>,
    ) -> Result<T> {
        let acc = accumulate_op::<T>(op.into())?;
        let origin = [value];
        let origin = match acc {
            AccumulateOp::NoOp => &[],
            _ => bytes_of(&origin),
        };
        let mut out = [value];
        bytes_of_mut(&mut out).fill(0);
        let width = std::mem::size_of::<T>();
        let (o, r) = (origin.as_ptr(), out.as_mut_ptr().cast());
        // SAFETY: `origin` holds one element (or none for NoOp, which reads none); `out` one
        // writable element.
        if unsafe {
            self.win
                .try_accumulate_mapped(o, r, width, width, rank, disp, &acc)
        } {
            return Ok(out[0]);
        }
        let ty = typed::<T>()?;
        let res = TypedBuf::new(out.as_mut_ptr().cast_const().cast(), 1, &ty);
        let target = TypedBuf::new(std::ptr::null(), 1, &ty);
        // SAFETY: `out` is a local element that `res` covers exactly, writable, and alive
        // past the call, which has written the result when it returns (complete at return).
        unsafe {
            self.win
                .accumulate(origin, Some(&res), rank, disp, &target, &acc)
        }?;
        Ok(out[0])
    }

    /// `MPI_Compare_and_swap`: the element at `disp` of member `rank`'s window becomes
    /// `value` if it equals `compare` (bit for bit); returns its previous value (so the swap
    /// happened exactly when the result equals `compare`). Atomic with every accumulate;
    /// done when it returns. MPI defines it on integer and byte elements only: `f32`/`f64`
    /// are `Error::InvalidDatatype`. To `PROC_NULL` nothing happens and the result is zero.
    pub fn compare_and_swap<T: Primitive>(
        &self,
        value: T,
        compare: T,
        rank: i32,
        disp: i64,
    ) -> Result<T> {
        let elem = element::<T>()?;
        if matches!(elem, ElementType::F32 | ElementType::F64) {
            return Err(Error::InvalidDatatype(format!(
                "compare-and-swap takes integer or byte elements, not {elem:?}"
            )));
        }
        let mut out = [value];
        bytes_of_mut(&mut out).fill(0);
        let (v, c) = ([value], [compare]);
        if self.win.try_compare_and_swap_mapped(
            bytes_of(&v),
            bytes_of(&c),
            bytes_of_mut(&mut out),
            rank,
            disp,
        ) {
            return Ok(out[0]);
        }
        let ty = typed::<T>()?;
        let target = TypedBuf::new(std::ptr::null(), 1, &ty);
        self.win.compare_and_swap(
            bytes_of(&[value]),
            bytes_of(&[compare]),
            bytes_of_mut(&mut out),
            rank,
            disp,
            &target,
        )?;
        Ok(out[0])
    }
}
