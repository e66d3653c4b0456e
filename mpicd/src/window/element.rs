//! One target element of an accumulate-class operation on a mapped window, changed with the
//! CPU's atomics ([`apply`]): an element of 1, 2, 4 or 8 bytes at an address aligned to its
//! size is read, combined and written in one atomic instruction (integer sum, bitwise and, or,
//! xor, replace, max and min of integers) or a compare-and-swap loop (everything else: floats,
//! products, the logical ops, a [`AccumulateOp::Combine`] function), and read with one load
//! for [`AccumulateOp::NoOp`].
//!
//! MPI 4.1 (12.7.1) promises atomicity per element only between accumulate-class operations
//! using the same predefined datatype on the same location, so every such operation of a
//! mapped window treats each element of such a size the same way: atomically when its address
//! is aligned (which depends only on the location and the type), and otherwise, like larger
//! elements (pairs, complex doubles, long doubles), under the target's accumulate lock with
//! plain loads and stores ([`apply_plain`]). No operation ever mixes the two on one element.

use super::access::{Located, State};
use super::{packed_len, AccumulateOp, Window};
use crate::error::Result;
use crate::reduction::{reduce_local, ReduceOp};
use crate::{ElementType, TypedBuf};
use smallvec::SmallVec;
use std::sync::atomic::{
    AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicU16, AtomicU32, AtomicU64, AtomicU8,
    Ordering::SeqCst,
};
use std::sync::Mutex;

/// Whether elements of `width` bytes are changed atomically (when aligned).
#[inline]
pub(crate) fn atomic_width(width: usize) -> bool {
    matches!(width, 1 | 2 | 4 | 8)
}

/// Whether [`apply`] can do `op` on elements of `width` bytes without failing: a predefined
/// reduction must be defined on its element type and be of that width (a `Combine` function
/// may fail, and is left to the general path, which reports its error).
#[inline(always)]
pub(crate) fn infallible(op: &AccumulateOp, width: usize) -> bool {
    match op {
        AccumulateOp::Replace | AccumulateOp::NoOp => true,
        AccumulateOp::Reduce(r, e) => e.size() == width && r.is_defined_on(*e),
        AccumulateOp::Combine(_) => false,
    }
}

/// `acc = acc op inc` on one element's bytes (for `Reduce` and `Combine`).
#[inline]
fn combine(op: &AccumulateOp, acc: &mut [u8], inc: &[u8]) -> Result<()> {
    match op {
        AccumulateOp::Replace => {
            acc.copy_from_slice(inc);
            Ok(())
        }
        AccumulateOp::NoOp => Ok(()),
        AccumulateOp::Reduce(r, e) => reduce_local(*r, *e, acc, inc),
        AccumulateOp::Combine(f) => f(acc, inc),
    }
}

/// Whether the element type is a signed integer (its max and min compare as signed).
fn signed(e: ElementType) -> bool {
    matches!(
        e,
        ElementType::I8 | ElementType::I16 | ElementType::I32 | ElementType::I64
    )
}

/// Combines the element of atomic `$a` with `op` in a compare-and-swap loop; its old bits.
macro_rules! cas_loop {
    ($a:expr, $op:expr, $inc:expr, $n:expr, $b:ty) => {{
        // SAFETY: `$inc` holds one element.
        let inc = std::slice::from_raw_parts($inc, $n);
        let mut cur = $a.load(SeqCst);
        loop {
            let mut next = cur.to_ne_bytes();
            combine($op, &mut next, inc)?;
            match $a.compare_exchange_weak(cur, <$b>::from_ne_bytes(next), SeqCst, SeqCst) {
                Ok(v) => break v,
                Err(v) => cur = v,
            }
        }
    }};
}

/// [`apply`] for one width: `$u` the unsigned atomic, `$i` the signed one, `$b` the bits.
macro_rules! width {
    ($name:ident, $u:ty, $i:ty, $b:ty) => {
        /// # Safety
        /// As [`apply`], with `at` aligned for this width.
        #[inline]
        unsafe fn $name(
            at: *mut u8,
            op: &AccumulateOp,
            inc: *const u8,
            old: *mut u8,
        ) -> Result<()> {
            const N: usize = std::mem::size_of::<$b>();
            // SAFETY: the caller's promise: aligned, valid, and accessed only atomically by
            // accumulate-class operations.
            let (a, s) = unsafe { (&*(at as *const $u), &*(at as *const $i)) };
            // SAFETY: `inc` holds one element (read only for ops that take an operand).
            let operand =
                || unsafe { <$b>::from_ne_bytes(std::ptr::read_unaligned(inc as *const [u8; N])) };
            let prev: $b = match op {
                AccumulateOp::NoOp => a.load(SeqCst),
                AccumulateOp::Replace => a.swap(operand(), SeqCst),
                AccumulateOp::Reduce(r, e)
                    if e.size() == N && *e != ElementType::F32 && *e != ElementType::F64 =>
                {
                    match r {
                        ReduceOp::Sum => a.fetch_add(operand(), SeqCst),
                        ReduceOp::Band => a.fetch_and(operand(), SeqCst),
                        ReduceOp::Bor => a.fetch_or(operand(), SeqCst),
                        ReduceOp::Bxor => a.fetch_xor(operand(), SeqCst),
                        ReduceOp::Max if signed(*e) => s.fetch_max(operand() as _, SeqCst) as $b,
                        ReduceOp::Min if signed(*e) => s.fetch_min(operand() as _, SeqCst) as $b,
                        ReduceOp::Max => a.fetch_max(operand(), SeqCst),
                        ReduceOp::Min => a.fetch_min(operand(), SeqCst),
                        _ => unsafe { cas_loop!(a, op, inc, N, $b) },
                    }
                }
                _ => unsafe { cas_loop!(a, op, inc, N, $b) },
            };
            if !old.is_null() {
                // SAFETY: the caller's promise: `old` has room for one element.
                unsafe { std::ptr::write_unaligned(old as *mut [u8; N], prev.to_ne_bytes()) };
            }
            Ok(())
        }
    };
}

width!(apply1, AtomicU8, AtomicI8, u8);
width!(apply2, AtomicU16, AtomicI16, u16);
width!(apply4, AtomicU32, AtomicI32, u32);
width!(apply8, AtomicU64, AtomicI64, u64);

/// Applies `op` atomically to the element of `width` bytes at `at` with the origin element
/// at `inc` (not read for [`AccumulateOp::NoOp`]); its previous value goes to `old` unless
/// that is null. Fails only when a `Reduce` or `Combine` op fails (then nothing changed).
///
/// # Safety
/// `width` must pass [`atomic_width`] and `at` be aligned to it, valid for reads and writes,
/// and accessed by accumulate-class operations only atomically; `inc` readable and `old`
/// writable for `width` bytes.
#[inline(always)]
pub(crate) unsafe fn apply(
    at: *mut u8,
    width: usize,
    op: &AccumulateOp,
    inc: *const u8,
    old: *mut u8,
) -> Result<()> {
    // SAFETY: forwarded from the caller.
    unsafe {
        match width {
            1 => apply1(at, op, inc, old),
            2 => apply2(at, op, inc, old),
            4 => apply4(at, op, inc, old),
            _ => apply8(at, op, inc, old),
        }
    }
}

/// [`apply`] with plain loads and stores, for an element no other operation changes now
/// (under the target's accumulate lock): any width, any alignment.
///
/// # Safety
/// `at` must be valid for `width` bytes of reads and writes, `inc` readable and `old`
/// writable (unless null) for `width` bytes.
pub(crate) unsafe fn apply_plain(
    at: *mut u8,
    width: usize,
    op: &AccumulateOp,
    inc: *const u8,
    old: *mut u8,
) -> Result<()> {
    let mut v = smallvec::SmallVec::<[u8; 32]>::from_elem(0, width);
    // SAFETY: the caller's promises; the ranges may overlap the origin (a window of this
    // process), hence copies that allow it.
    unsafe {
        std::ptr::copy(at, v.as_mut_ptr(), width);
        if !old.is_null() {
            std::ptr::copy(v.as_ptr(), old, width);
        }
        if matches!(op, AccumulateOp::NoOp) {
            return Ok(());
        }
        combine(op, &mut v, std::slice::from_raw_parts(inc, width))?;
        std::ptr::copy(v.as_ptr(), at, width);
    }
    Ok(())
}

/// Compares the element of `n` bytes at `at` with `compare` and, if equal, stores `origin`,
/// in one atomic compare-and-swap; the old value goes to `result`.
///
/// # Safety
/// As [`apply`]; the three slices hold `n` bytes each.
pub(crate) unsafe fn compare_swap(
    at: *mut u8,
    n: usize,
    origin: &[u8],
    compare: &[u8],
    result: &mut [u8],
) {
    macro_rules! cas {
        ($a:ty, $b:ty, $n:expr) => {{
            // SAFETY: the caller's promise: aligned, valid, accessed atomically.
            let a = unsafe { &*(at as *const $a) };
            let bits = |s: &[u8]| <$b>::from_ne_bytes(s[..$n].try_into().unwrap_or([0; $n]));
            let old = match a.compare_exchange(bits(compare), bits(origin), SeqCst, SeqCst) {
                Ok(v) | Err(v) => v,
            };
            result[..$n].copy_from_slice(&old.to_ne_bytes());
        }};
    }
    match n {
        1 => cas!(AtomicU8, u8, 1),
        2 => cas!(AtomicU16, u16, 2),
        4 => cas!(AtomicU32, u32, 4),
        _ => cas!(AtomicU64, u64, 8),
    }
}

/// The types whose every instance an accumulate changes whole, under the target's
/// accumulate lock, recognized by identity ([`crate::Datatype::same`]).
static WHOLE: Mutex<Vec<crate::Datatype>> = Mutex::new(Vec::new());

/// Declares that accumulates change each instance of `t` as one element, not element by
/// element of its basic type: what MPI's pair types (`MPI_2INT` ...) are, which the C library
/// builds as structs. Types made from `t` inherit it.
pub fn accumulate_whole(t: &crate::Datatype) {
    WHOLE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(t.clone());
}

/// Whether `t` is, or is made from, an [`accumulate_whole`] type.
fn has_whole(t: &crate::Datatype) -> bool {
    let whole = WHOLE.lock().unwrap_or_else(|p| p.into_inner());
    !whole.is_empty() && made_of(t, &whole)
}

fn made_of(t: &crate::Datatype, whole: &[crate::Datatype]) -> bool {
    whole.iter().any(|w| w.same(t)) || t.parts().iter().any(|(_, c)| made_of(c, whole))
}

impl Window {
    /// The width of `target`'s elements when this window is mapped and they are changed one
    /// by one with atomics: one predefined type (not a pair) of 1, 2, 4 or 8 bytes.
    ///
    /// A type made of [`accumulate_whole`] types takes the lock instead: MPI's pair types
    /// (`MPI_2INT` ...) are structs of two elements here, but a pair is one element, read and
    /// written whole by every accumulate (an `MPI_2INT` changed as two ints could be read
    /// torn).
    pub(crate) fn element_width(&self, target: &TypedBuf) -> Option<usize> {
        self.mapped.as_ref()?;
        let t = target.datatype();
        let b = t.homogeneous()?;
        (b.parts == 1 && atomic_width(b.size) && !has_whole(t)).then_some(b.size)
    }

    /// An accumulate on a mapped window whose target elements are `width` bytes each
    /// ([`Window::element_width`]): each element changed with [`apply`], misaligned ones under
    /// the accumulate lock with [`apply_plain`]; `origin` holds the packed origin elements
    /// (empty for `NoOp`), the old ones land in `result`.
    ///
    /// # Safety
    /// `loc` must be a located access of `target` (range checked); `result`'s type map
    /// writable.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn accumulate_elements(
        &self,
        st: &mut State,
        loc: &Located,
        target: &TypedBuf,
        width: usize,
        origin: &[u8],
        result: Option<&TypedBuf>,
        op: &AccumulateOp,
    ) -> Result<()> {
        let Some(m) = &self.mapped else {
            return Err(crate::error::Error::InvalidRequest);
        };
        let base = m.data(loc.rank, loc.addr, self.targets[loc.rank].rec.base);
        let mut runs = SmallVec::<[(usize, usize); 8]>::new();
        match target.contiguous() {
            Some((at, len)) => runs.push((at as usize, len)),
            None => target.for_each_run(|at, len| runs.push((at as usize, len))),
        }
        let aligned = |p: *mut u8| p as usize % width == 0;
        let misaligned = runs.iter().any(|&(at, _)| !aligned(base.wrapping_add(at)));
        let mut old = SmallVec::<[u8; 64]>::new();
        if result.is_some() {
            old.resize(packed_len(target)?, 0);
        }
        if misaligned {
            self.acquire_accumulate(st, loc.rank)?;
        }
        let (mut pos, mut outcome) = (0usize, Ok(()));
        'runs: for (at, len) in runs {
            for k in (0..len).step_by(width) {
                let p = base.wrapping_add(at + k);
                let inc = origin.as_ptr().wrapping_add(pos);
                let o = match result {
                    Some(_) => old.as_mut_ptr().wrapping_add(pos),
                    None => std::ptr::null_mut(),
                };
                // SAFETY: `p` is an element of the checked range (aligned for `apply`); the
                // origin holds every element but for NoOp, which reads none; `old` the same.
                outcome = unsafe {
                    match aligned(p) {
                        true => apply(p, width, op, inc, o),
                        false => apply_plain(p, width, op, inc, o),
                    }
                };
                if outcome.is_err() {
                    break 'runs;
                }
                pos += width;
            }
        }
        if misaligned {
            outcome = outcome.and(self.release_accumulate(st, loc.rank));
        }
        if let (Some(res), Ok(())) = (result, &outcome) {
            // SAFETY: the caller's promise: the result is writable.
            unsafe { res.unpack(0, &old) };
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn run<T: Copy>(target: T, op: AccumulateOp, inc: T) -> (T, T) {
        let mut t = target;
        let mut old = target;
        let n = std::mem::size_of::<T>();
        // SAFETY: locals of the element's size, aligned for it.
        unsafe {
            apply(
                (&mut t as *mut T).cast(),
                n,
                &op,
                (&inc as *const T).cast(),
                (&mut old as *mut T).cast(),
            )
        }
        .expect("apply");
        (t, old)
    }

    #[test]
    fn each_op_kind_changes_the_element_and_returns_the_old_one() {
        let sum = AccumulateOp::Reduce(ReduceOp::Sum, ElementType::I64);
        assert_eq!(run(5i64, sum, -7), (-2, 5));
        let max = AccumulateOp::Reduce(ReduceOp::Max, ElementType::I32);
        assert_eq!(run(-5i32, max, -7), (-5, -5), "signed max");
        let max = AccumulateOp::Reduce(ReduceOp::Max, ElementType::U32);
        assert_eq!(run(5u32, max, u32::MAX), (u32::MAX, 5), "unsigned max");
        let prod = AccumulateOp::Reduce(ReduceOp::Prod, ElementType::I16);
        assert_eq!(run(3i16, prod, 4), (12, 3));
        let fsum = AccumulateOp::Reduce(ReduceOp::Sum, ElementType::F64);
        assert_eq!(run(1.5f64, fsum, 2.25), (3.75, 1.5));
        let fmin = AccumulateOp::Reduce(ReduceOp::Min, ElementType::F32);
        assert_eq!(run(1.5f32, fmin, -2.0), (-2.0, 1.5));
        let land = AccumulateOp::Reduce(ReduceOp::Land, ElementType::U8);
        assert_eq!(run(3u8, land, 0), (0, 3));
        assert_eq!(run(9u64, AccumulateOp::Replace, 4), (4, 9));
        assert_eq!(run(9u16, AccumulateOp::NoOp, 4), (9, 9));
        let f = AccumulateOp::Combine(Arc::new(|a: &mut [u8], b: &[u8]| {
            a[0] = a[0].wrapping_sub(b[0]);
            Ok(())
        }));
        assert_eq!(run(9u8, f, 4), (5, 9));
    }

    #[test]
    fn plain_and_atomic_agree() {
        let op = AccumulateOp::Reduce(ReduceOp::Bxor, ElementType::U32);
        let (mut t, inc, mut old) = (0xf0f0u32, 0xffffu32, 0u32);
        // SAFETY: locals of four bytes.
        unsafe {
            apply_plain(
                (&mut t as *mut u32).cast(),
                4,
                &op,
                (&inc as *const u32).cast(),
                (&mut old as *mut u32).cast(),
            )
        }
        .expect("plain");
        assert_eq!((t, old), run(0xf0f0u32, op, 0xffff));
    }
}
