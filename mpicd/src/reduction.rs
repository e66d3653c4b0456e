//! Reductions over bytes: the predefined operations ([`ReduceOp`]) on elements of an
//! [`ElementType`] ([`reduce_local`]), the [`Reduction`] the collective algorithms
//! apply (the C library builds its own for complex numbers, pairs and user operations), and
//! whether operands may combine in any [`Order`].

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

macro_rules! combine_ints {
    ($t:ty, $op:expr, $acc:expr, $inc:expr) => {{
        let f: fn($t, $t) -> $t = match $op {
            ReduceOp::Sum => |a, b| a.wrapping_add(b),
            ReduceOp::Prod => |a, b| a.wrapping_mul(b),
            ReduceOp::Max => |a, b| a.max(b),
            ReduceOp::Min => |a, b| a.min(b),
            ReduceOp::Land => |a, b| (a != 0 && b != 0) as $t,
            ReduceOp::Lor => |a, b| (a != 0 || b != 0) as $t,
            ReduceOp::Lxor => |a, b| ((a != 0) != (b != 0)) as $t,
            ReduceOp::Band => |a, b| a & b,
            ReduceOp::Bor => |a, b| a | b,
            ReduceOp::Bxor => |a, b| a ^ b,
        };
        combine::<$t, { std::mem::size_of::<$t>() }>(
            $acc,
            $inc,
            f,
            <$t>::from_ne_bytes,
            <$t>::to_ne_bytes,
        )
    }};
}

macro_rules! combine_floats {
    ($t:ty, $op:expr, $acc:expr, $inc:expr) => {{
        let f: fn($t, $t) -> $t = match $op {
            ReduceOp::Sum => |a, b| a + b,
            ReduceOp::Prod => |a, b| a * b,
            ReduceOp::Max => |a, b| a.max(b),
            ReduceOp::Min => |a, b| a.min(b),
            other => {
                return Err(Error::InvalidArgument(format!(
                    "{other:?} is not defined on floating-point elements"
                )))
            }
        };
        combine::<$t, { std::mem::size_of::<$t>() }>(
            $acc,
            $inc,
            f,
            <$t>::from_ne_bytes,
            <$t>::to_ne_bytes,
        )
    }};
}

fn combine<T, const N: usize>(
    acc: &mut [u8],
    incoming: &[u8],
    f: fn(T, T) -> T,
    from: fn([u8; N]) -> T,
    to: fn(T) -> [u8; N],
) -> Result<()> {
    let bad = || Error::InvalidArgument("reduction buffers are not whole elements".into());
    for (a, b) in acc.chunks_exact_mut(N).zip(incoming.chunks_exact(N)) {
        let x = from((&*a).try_into().map_err(|_| bad())?);
        let y = from(b.try_into().map_err(|_| bad())?);
        a.copy_from_slice(&to(f(x, y)));
    }
    Ok(())
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
