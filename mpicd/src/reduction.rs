//! Reductions over bytes: the predefined operations ([`ReduceOp`]) on elements of an
//! [`ElementType`] ([`reduce_local`]), the [`Reduction`] the collective algorithms
//! apply (the C library builds its own for complex numbers, pairs and user operations),
//! whether operands may combine in any [`Order`], and [`Op`], the operations of the
//! accumulate calls of windows (the predefined ones, MPI_REPLACE and MPI_NO_OP).

use crate::datatype::ElementType;
use crate::error::{Error, Result};
use std::sync::Arc;

/// A predefined reduction operation (MPI_SUM, MPI_PROD, ...). All are commutative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
    Land,
    Lor,
    Lxor,
    Band,
    Bor,
    Bxor,
}

impl ReduceOp {
    /// Whether MPI defines the op on elements of `elem`: every op on integers, the
    /// arithmetic ones (sum, product, max, min) on floating-point numbers, the bitwise ones
    /// on bytes.
    #[inline]
    pub fn is_defined_on(self, elem: ElementType) -> bool {
        use ReduceOp::*;
        match elem {
            ElementType::F32 | ElementType::F64 => matches!(self, Sum | Prod | Max | Min),
            ElementType::Byte => matches!(self, Band | Bor | Bxor),
            _ => true,
        }
    }
}

/// An operation of the accumulate calls of windows (`MPI_Op` restricted to what they take):
/// a predefined reduction combines the origin's elements into the target's, [`Op::Replace`]
/// overwrites them, [`Op::NoOp`] leaves them (a get-accumulate or fetch-and-op then only
/// reads, atomically). A [`ReduceOp`] converts into one: `ReduceOp::Sum.into()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// A predefined reduction (`MPI_SUM`, `MPI_MAX`, ...; integers wrap on overflow).
    Reduce(ReduceOp),
    /// `MPI_REPLACE`: the origin's value replaces the target's.
    Replace,
    /// `MPI_NO_OP`: the target's value stays (get-accumulate and fetch-and-op only).
    NoOp,
}

impl From<ReduceOp> for Op {
    fn from(r: ReduceOp) -> Op {
        Op::Reduce(r)
    }
}

impl Op {
    /// Whether the op may be applied to elements of `elem` (replace and no-op: always).
    pub fn is_defined_on(self, elem: ElementType) -> bool {
        match self {
            Op::Reduce(r) => r.is_defined_on(elem),
            Op::Replace | Op::NoOp => true,
        }
    }
}

/// A number the reductions combine, read from and written to native-endian bytes.
trait Number: Copy {
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl Number for $t {
            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                let mut w = [0u8; std::mem::size_of::<$t>()];
                w.copy_from_slice(b);
                <$t>::from_ne_bytes(w)
            }

            #[inline(always)]
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_ne_bytes())
            }
        }
    )*};
}

numbers!(u8, i8, i16, u16, i32, u32, i64, u64, f32, f64);

/// `acc[i] = f(acc[i], inc[i])` for every element: over typed slices when both buffers are
/// aligned for `T` (a loop the compiler vectorises), else through unaligned loads. Each
/// (type, op) pair is its own instance, the operation inlined. Lengths are whole elements.
#[inline(always)]
fn zip_apply<T: Number, F: Fn(T, T) -> T>(acc: &mut [u8], inc: &[u8], f: F) {
    let n = std::mem::size_of::<T>();
    // SAFETY: every bit pattern of the bytes is a valid integer or float; the typed middles
    // cover only bytes of the slices.
    let ((pa, ma, _), (pi, mi, _)) = unsafe { (acc.align_to_mut::<T>(), inc.align_to::<T>()) };
    if pa.is_empty() && pi.is_empty() && ma.len() == mi.len() {
        for (a, b) in ma.iter_mut().zip(mi) {
            *a = f(*a, *b);
        }
        return;
    }
    for (a, b) in acc.chunks_exact_mut(n).zip(inc.chunks_exact(n)) {
        f(T::load(a), T::load(b)).store(a);
    }
}

macro_rules! combine_ints {
    ($t:ty, $op:expr, $acc:expr, $inc:expr) => {{
        let (acc, inc) = ($acc, $inc);
        match $op {
            ReduceOp::Sum => zip_apply::<$t, _>(acc, inc, |a, b| a.wrapping_add(b)),
            ReduceOp::Prod => zip_apply::<$t, _>(acc, inc, |a, b| a.wrapping_mul(b)),
            ReduceOp::Max => zip_apply::<$t, _>(acc, inc, |a, b| a.max(b)),
            ReduceOp::Min => zip_apply::<$t, _>(acc, inc, |a, b| a.min(b)),
            ReduceOp::Land => zip_apply::<$t, _>(acc, inc, |a, b| (a != 0 && b != 0) as $t),
            ReduceOp::Lor => zip_apply::<$t, _>(acc, inc, |a, b| (a != 0 || b != 0) as $t),
            ReduceOp::Lxor => zip_apply::<$t, _>(acc, inc, |a, b| ((a != 0) != (b != 0)) as $t),
            ReduceOp::Band => zip_apply::<$t, _>(acc, inc, |a, b| a & b),
            ReduceOp::Bor => zip_apply::<$t, _>(acc, inc, |a, b| a | b),
            ReduceOp::Bxor => zip_apply::<$t, _>(acc, inc, |a, b| a ^ b),
        }
        Ok(())
    }};
}

macro_rules! combine_floats {
    ($t:ty, $op:expr, $acc:expr, $inc:expr) => {{
        let (acc, inc) = ($acc, $inc);
        match $op {
            ReduceOp::Sum => zip_apply::<$t, _>(acc, inc, |a, b| a + b),
            ReduceOp::Prod => zip_apply::<$t, _>(acc, inc, |a, b| a * b),
            ReduceOp::Max => zip_apply::<$t, _>(acc, inc, |a, b| a.max(b)),
            ReduceOp::Min => zip_apply::<$t, _>(acc, inc, |a, b| a.min(b)),
            other => {
                return Err(Error::InvalidOp(format!(
                    "{other:?} is not defined on floating-point elements"
                )))
            }
        }
        Ok(())
    }};
}

/// Whether a reduction may combine its operands in any order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// A commutative op: any order.
    Any,
    /// A non-commutative op: operands combine in rank order, always.
    Ranks,
}

/// A combination of two operands: `combine(acc, incoming)` sets `acc` to `acc op incoming`.
pub type CombineFn = dyn Fn(&mut [u8], &[u8]) -> Result<()> + Send + Sync;

/// A reduction as the collectives apply it.
#[derive(Clone)]
pub struct Reduction {
    pub combine: Arc<CombineFn>,
    pub order: Order,
    /// Bytes of one element: operands are split only at multiples of it.
    pub unit: usize,
}

impl Reduction {
    /// A predefined op on elements of one type.
    pub fn predefined(op: ReduceOp, elem: ElementType) -> Reduction {
        Reduction {
            combine: Arc::new(move |acc, inc| reduce_local(op, elem, acc, inc)),
            order: Order::Any,
            unit: elem.size(),
        }
    }
}

/// Combines `incoming` into `acc` element by element: `acc[i] = op(acc[i], incoming[i])`.
/// Integers wrap on overflow; `Byte` elements combine as unsigned bytes.
pub fn reduce_local(
    op: ReduceOp,
    elem: ElementType,
    acc: &mut [u8],
    incoming: &[u8],
) -> Result<()> {
    if acc.len() != incoming.len() || acc.len() % elem.size() != 0 {
        return Err(Error::InvalidArgument(format!(
            "reduction of {} and {} bytes of {elem:?}",
            acc.len(),
            incoming.len()
        )));
    }
    match elem {
        ElementType::Byte | ElementType::U8 => combine_ints!(u8, op, acc, incoming),
        ElementType::I8 => combine_ints!(i8, op, acc, incoming),
        ElementType::I16 => combine_ints!(i16, op, acc, incoming),
        ElementType::U16 => combine_ints!(u16, op, acc, incoming),
        ElementType::I32 => combine_ints!(i32, op, acc, incoming),
        ElementType::U32 => combine_ints!(u32, op, acc, incoming),
        ElementType::I64 => combine_ints!(i64, op, acc, incoming),
        ElementType::U64 => combine_ints!(u64, op, acc, incoming),
        ElementType::F32 => combine_floats!(f32, op, acc, incoming),
        ElementType::F64 => combine_floats!(f64, op, acc, incoming),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_are_defined_where_mpi_defines_them() {
        use ElementType::*;
        assert!(
            Op::from(ReduceOp::Sum).is_defined_on(F64)
                && Op::from(ReduceOp::Max).is_defined_on(F32)
        );
        assert!(
            !Op::from(ReduceOp::Band).is_defined_on(F64)
                && !Op::from(ReduceOp::Lxor).is_defined_on(F32)
        );
        assert!(
            Op::from(ReduceOp::Band).is_defined_on(Byte)
                && !Op::from(ReduceOp::Sum).is_defined_on(Byte)
        );
        assert!(
            Op::from(ReduceOp::Land).is_defined_on(I8)
                && Op::from(ReduceOp::Bxor).is_defined_on(U64)
        );
        for e in ElementType::ALL {
            assert!(Op::Replace.is_defined_on(e) && Op::NoOp.is_defined_on(e));
        }
        assert!(!matches!(Op::Replace, Op::Reduce(_)));
        assert_eq!(Op::from(ReduceOp::Prod), Op::Reduce(ReduceOp::Prod));
    }

    #[test]
    fn an_undefined_op_is_an_op_error() {
        let e = reduce_local(ReduceOp::Bor, ElementType::F64, &mut [0; 8], &[0; 8]).unwrap_err();
        assert_eq!(e.class(), crate::error::class::ERR_OP);
    }
}
