//! What a reduction computes, from an op handle and a datatype: the core's predefined ops on
//! predefined element types (and derived types made of one), complex sums and products,
//! 128-bit integers and binary128 numbers (Fortran's INTEGER16, LOGICAL16, REAL16, COMPLEX32),
//! and MINLOC/MAXLOC on the value-index pair types. [`Reduction::combine`] applies it to the packed
//! bytes of two buffers, which is what the collective algorithms call.

use crate::abi::*;
use crate::blocks::Elem;
use crate::errors::{fail, CResult};
use crate::types::{self, Basic, Kind};
use crate::userops::{user_op, UserOp};
use kernels::{complex_prod, wide};
use mpicd::collective::{reduce_local, Order, ReduceOp};
use mpicd::{Datatype, ElementType, TypedBuf};
use std::ffi::c_void;
use std::ffi::{c_int, c_long};

mod kernels;

/// The value of a MINLOC/MAXLOC pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value {
    F32,
    F64,
    I16,
    I32,
    I64,
    /// C's long double, compared in C.
    Extended,
}

impl Value {
    fn size(self) -> usize {
        match self {
            Value::I16 => 2,
            Value::F32 | Value::I32 => 4,
            Value::F64 | Value::I64 => 8,
            Value::Extended => 16,
        }
    }

    /// The value at the start of `b`, widened for comparison.
    fn read(self, b: &[u8]) -> f64 {
        let mut w = [0u8; 8];
        w[..self.size()].copy_from_slice(&b[..self.size()]);
        match self {
            Value::F32 => f32::from_ne_bytes([w[0], w[1], w[2], w[3]]) as f64,
            Value::F64 => f64::from_ne_bytes(w),
            Value::I16 => i16::from_ne_bytes([w[0], w[1]]) as f64,
            Value::I32 => i32::from_ne_bytes([w[0], w[1], w[2], w[3]]) as f64,
            // Compared exactly below; this widening only serves the float kinds.
            Value::I64 | Value::Extended => i64::from_ne_bytes(w) as f64,
        }
    }
}

/// A reduction over packed bytes.
#[derive(Debug, Clone)]
pub(crate) enum Reduction {
    /// A predefined op on predefined elements.
    Core(ReduceOp, ElementType),
    /// The product of complex numbers whose parts are `part` (sums are `Core` on the parts).
    ComplexProd(ElementType),
    /// MINLOC (`max` false) or MAXLOC on pairs of a value and an index (a C int, or in the
    /// Fortran pairs a number of the value's type).
    Loc {
        max: bool,
        value: Value,
        index: Value,
    },
    /// MPI_SUM, MPI_PROD, MPI_MAX or MPI_MIN (`op`, as long_double.c numbers them) on long
    /// doubles, or (`complex`) MPI_SUM or MPI_PROD on complex long doubles; `quad`: on
    /// binary128 numbers (Fortran's REAL16 and COMPLEX32) instead.
    Extended {
        op: c_int,
        complex: bool,
        quad: bool,
    },
    /// A predefined op on 128-bit integers (Fortran's INTEGER16 and LOGICAL16).
    Wide(ReduceOp),
    /// A user's op on elements of `datatype`, `size` bytes of data each. `scattered`: the
    /// type's data lies in memory with gaps, so the function sees the elements unpacked.
    User {
        op: UserOp,
        datatype: MPI_Datatype,
        size: usize,
        scattered: Option<Datatype>,
    },
}

fn op_is(op: MPI_Op, h: MPI_Op) -> bool {
    std::ptr::eq(op, h)
}

/// The core op of a predefined op handle on a predefined type of `kind`, if defined there.
fn core_op(op: MPI_Op, kind: Kind) -> CResult<ReduceOp> {
    use Kind::*;
    let table: [(MPI_Op, ReduceOp, &[Kind]); 10] = [
        (
            MPI_SUM,
            ReduceOp::Sum,
            &[Integer, FortranInteger, Float, Wide],
        ),
        (
            MPI_PROD,
            ReduceOp::Prod,
            &[Integer, FortranInteger, Float, Wide],
        ),
        (
            MPI_MAX,
            ReduceOp::Max,
            &[Integer, FortranInteger, Float, Wide],
        ),
        (
            MPI_MIN,
            ReduceOp::Min,
            &[Integer, FortranInteger, Float, Wide],
        ),
        (MPI_LAND, ReduceOp::Land, &[Integer, Bool, WideLogical]),
        (MPI_LOR, ReduceOp::Lor, &[Integer, Bool, WideLogical]),
        (MPI_LXOR, ReduceOp::Lxor, &[Integer, Bool, WideLogical]),
        (
            MPI_BAND,
            ReduceOp::Band,
            &[Integer, FortranInteger, Bytes, Wide],
        ),
        (
            MPI_BOR,
            ReduceOp::Bor,
            &[Integer, FortranInteger, Bytes, Wide],
        ),
        (
            MPI_BXOR,
            ReduceOp::Bxor,
            &[Integer, FortranInteger, Bytes, Wide],
        ),
    ];
    let Some(&(_, rop, kinds)) = table.iter().find(|(h, _, _)| op_is(op, *h)) else {
        return Err(fail(
            MPI_ERR_OP,
            "unknown or unsupported reduction operation",
        ));
    };
    if !kinds.contains(&kind) {
        return Err(fail(
            MPI_ERR_OP,
            format!("{rop:?} is not defined on this datatype"),
        ));
    }
    Ok(rop)
}

/// The complex number types mpicd reduces, by the type of their parts.
fn complex_part(b: Basic) -> Option<ElementType> {
    match (b.kind, b.size, b.elem) {
        (Kind::Other, 8, ElementType::F32) => Some(ElementType::F32),
        (Kind::Other, 16, ElementType::F64) => Some(ElementType::F64),
        _ => None,
    }
}

/// The value and index of a pair type handle.
fn pair_value(h: MPI_Datatype) -> Option<(Value, Value)> {
    let (first, _) = types::pair(h)?;
    let index = match types::pair_index(h)? {
        i if i == MPI_REAL => Value::F32,
        i if i == MPI_DOUBLE_PRECISION => Value::F64,
        _ => Value::I32,
    };
    Some((value_of(first)?, index))
}

/// The value kind of a pair's first member.
fn value_of(first: MPI_Datatype) -> Option<Value> {
    let t = |d: MPI_Datatype| d as usize;
    Some(match first as usize {
        x if x == t(MPI_FLOAT) || x == t(MPI_REAL) => Value::F32,
        x if x == t(MPI_DOUBLE) || x == t(MPI_DOUBLE_PRECISION) => Value::F64,
        x if x == t(MPI_SHORT) => Value::I16,
        x if x == t(MPI_INT) || x == t(MPI_INTEGER) => Value::I32,
        x if x == t(MPI_LONG) && std::mem::size_of::<c_long>() == 8 => Value::I64,
        x if x == t(MPI_LONG) => Value::I32,
        x if x == t(MPI_LONG_DOUBLE) => Value::Extended,
        _ => return None,
    })
}

impl Reduction {
    /// True for a predefined op handle.
    pub(crate) fn is_predefined(op: MPI_Op) -> bool {
        [
            MPI_SUM,
            MPI_PROD,
            MPI_MAX,
            MPI_MIN,
            MPI_LAND,
            MPI_LOR,
            MPI_LXOR,
            MPI_BAND,
            MPI_BOR,
            MPI_BXOR,
            MPI_MINLOC,
            MPI_MAXLOC,
            MPI_REPLACE,
            MPI_NO_OP,
        ]
        .iter()
        .any(|&h| op_is(op, h))
    }

    /// This reduction as the core's combining function, movable to any thread (a collective's
    /// run or a one-sided accumulate).
    pub(crate) fn into_combine(self) -> std::sync::Arc<mpicd::window::CombineFn> {
        let shared = Shared(self);
        std::sync::Arc::new(move |acc: &mut [u8], inc: &[u8]| shared.combine(acc, inc))
    }

    /// Whether the operands may combine in any order.
    pub(crate) fn order(&self) -> Order {
        match self {
            Reduction::User { op, .. } if !op.commute => Order::Ranks,
            _ => Order::Any,
        }
    }

    /// The reduction `op` performs on elements of `datatype` (whose collective view is `elem`).
    pub(crate) fn of(op: MPI_Op, datatype: MPI_Datatype, elem: &Elem) -> CResult<Reduction> {
        if let Some(user) = user_op(op) {
            // The function sees elements as they lie in memory: packed bytes are that for a
            // predefined type or a contiguous one; others are unpacked for it.
            let (size, scattered) = match elem {
                Elem::Basic(b) => (b.size, None),
                Elem::Derived(t)
                    if t.contiguous_at(1) == Some(0) && t.size() as i64 == t.extent() =>
                {
                    (t.size() as usize, None)
                }
                Elem::Derived(t) if t.extent() > 0 && t.size() > 0 => {
                    (t.size() as usize, Some(t.clone()))
                }
                Elem::Derived(_) => {
                    return Err(fail(
                        MPI_ERR_OP,
                        "user operations need a type of positive size and extent",
                    ))
                }
            };
            return Ok(Reduction::User {
                op: user,
                datatype,
                size,
                scattered,
            });
        }
        let minloc = op_is(op, MPI_MINLOC);
        if minloc || op_is(op, MPI_MAXLOC) {
            let (value, index) = pair_value(datatype).ok_or_else(|| {
                fail(
                    MPI_ERR_OP,
                    "MINLOC and MAXLOC need a value-index pair type such as MPI_DOUBLE_INT",
                )
            })?;
            return Ok(Reduction::Loc {
                max: !minloc,
                value,
                index,
            });
        }
        if types::pair(datatype).is_some() {
            return Err(fail(
                MPI_ERR_OP,
                "a value-index pair type takes only MINLOC and MAXLOC",
            ));
        }
        let b = elem.reduction_basic()?;
        if matches!(b.kind, Kind::Wide | Kind::WideLogical) {
            return Ok(Reduction::Wide(core_op(op, b.kind)?));
        }
        let quad = matches!(b.kind, Kind::Quad | Kind::QuadComplex);
        // SAFETY: a C function of no arguments (long_double.c).
        if quad && unsafe { mpicd_float128_supported() } == 0 {
            return Err(fail(
                MPI_ERR_OP,
                "this build has no binary128 arithmetic for REAL16 and COMPLEX32",
            ));
        }
        if quad || matches!(b.kind, Kind::Extended | Kind::ExtendedComplex) {
            let complex = matches!(b.kind, Kind::ExtendedComplex | Kind::QuadComplex);
            let ops: &[(MPI_Op, c_int)] = if complex {
                &[(MPI_SUM, 0), (MPI_PROD, 1)]
            } else {
                &[(MPI_SUM, 0), (MPI_PROD, 1), (MPI_MAX, 2), (MPI_MIN, 3)]
            };
            return match ops.iter().find(|(h, _)| op_is(op, *h)) {
                Some(&(_, op)) => Ok(Reduction::Extended { op, complex, quad }),
                None => Err(fail(
                    MPI_ERR_OP,
                    "the operation is not defined on long double, REAL16 or COMPLEX32 types",
                )),
            };
        }
        if let Some(part) = complex_part(b) {
            if op_is(op, MPI_SUM) {
                return Ok(Reduction::Core(ReduceOp::Sum, part));
            }
            if op_is(op, MPI_PROD) {
                return Ok(Reduction::ComplexProd(part));
            }
            return Err(fail(
                MPI_ERR_OP,
                "only MPI_SUM and MPI_PROD are defined on complex types",
            ));
        }
        Ok(Reduction::Core(core_op(op, b.kind)?, b.elem))
    }

    /// Sets `acc` to `acc op incoming`, element by element.
    #[allow(clippy::manual_is_multiple_of)] // is_multiple_of is newer than the workspace's MSRV
    pub(crate) fn combine(&self, acc: &mut [u8], inc: &[u8]) -> mpicd::Result<()> {
        let uneven =
            || mpicd::Error::InvalidArgument("reduction buffers of different sizes".into());
        if acc.len() != inc.len() {
            return Err(uneven());
        }
        match *self {
            Reduction::Core(op, e) => reduce_local(op, e, acc, inc),
            Reduction::ComplexProd(ElementType::F32) => complex_prod::<4>(
                acc,
                inc,
                |b| f32::from_ne_bytes(b) as f64,
                |v| (v as f32).to_ne_bytes(),
            ),
            Reduction::ComplexProd(_) => {
                complex_prod::<8>(acc, inc, f64::from_ne_bytes, f64::to_ne_bytes)
            }
            Reduction::User {
                op,
                datatype,
                size,
                ref scattered,
            } => {
                if size == 0 || acc.len() % size != 0 {
                    return Err(uneven());
                }
                let len = acc.len() / size;
                match scattered {
                    // SAFETY: packed bytes are the elements as they lie in memory.
                    None => unsafe { apply_packed(op, datatype, acc, inc, len) },
                    // SAFETY: as the function documents.
                    Some(t) => unsafe { apply_scattered(op, datatype, t, acc, inc, len) },
                }
            }
            Reduction::Wide(op) => wide(op, acc, inc),
            Reduction::Extended { op, complex, quad } => {
                let n = if complex { 32 } else { 16 };
                if acc.len() % n != 0 {
                    return Err(uneven());
                }
                let f = match (complex, quad) {
                    (true, false) => mpicd_long_double_complex_reduce,
                    (false, false) => mpicd_long_double_reduce,
                    (true, true) => mpicd_float128_complex_reduce,
                    (false, true) => mpicd_float128_reduce,
                };
                // SAFETY: both buffers hold acc.len() / n elements of n bytes.
                match unsafe { f(op, acc.as_mut_ptr(), inc.as_ptr(), acc.len() / n) } {
                    0 => Ok(()),
                    _ => Err(mpicd::Error::InvalidArgument(
                        "unknown long double operation".into(),
                    )),
                }
            }
            Reduction::Loc { max, value, index } => {
                let n = value.size() + index.size();
                if acc.len() % n != 0 {
                    return Err(uneven());
                }
                for (a, b) in acc.chunks_exact_mut(n).zip(inc.chunks_exact(n)) {
                    if loc_takes(value, index, max, a, b) {
                        a.copy_from_slice(b);
                    }
                }
                Ok(())
            }
        }
    }
}

/// Runs a user's function on packed operands: it computes inout = in op inout, with in = acc
/// and inout a copy of inc, which then becomes acc.
///
/// # Safety
/// The packed bytes of `len` elements of `datatype` must be those elements as they lie in
/// memory.
unsafe fn apply_packed(
    op: UserOp,
    datatype: MPI_Datatype,
    acc: &mut [u8],
    inc: &[u8],
    len: usize,
) -> mpicd::Result<()> {
    let mut inout = inc.to_vec();
    // SAFETY: both buffers hold `len` elements of `datatype`, per the caller.
    unsafe {
        op.apply(
            acc.as_mut_ptr() as *mut c_void,
            inout.as_mut_ptr() as *mut c_void,
            len as i64,
            datatype,
        )
    }
    .map_err(|_| mpicd::Error::InvalidCount(len as i64))?;
    acc.copy_from_slice(&inout);
    Ok(())
}

/// Runs a user's function on elements of a type with gaps: both operands are unpacked into
/// memory laid out as `len` elements of `t`, the function runs there, and the result is packed
/// back into `acc`.
///
/// # Safety
/// `t` must be the layout of `datatype`, with positive extent.
unsafe fn apply_scattered(
    op: UserOp,
    datatype: MPI_Datatype,
    t: &Datatype,
    acc: &mut [u8],
    inc: &[u8],
    len: usize,
) -> mpicd::Result<()> {
    if len == 0 {
        return Ok(());
    }
    // The bytes `len` elements touch: from true_lb to (len - 1) extents past the true extent.
    let span = (len as i64 - 1) * t.extent() + t.true_extent();
    let span = usize::try_from(span).map_err(|_| mpicd::Error::InvalidCount(len as i64))?;
    let (mut a, mut b) = (vec![0u8; span], vec![0u8; span]);
    // Base addresses such that the first element's lowest byte is each scratch's first.
    let base = |v: &mut Vec<u8>| v.as_mut_ptr().wrapping_offset(-(t.true_lb() as isize));
    let (ta, tb) = (
        TypedBuf::new(base(&mut a), len as u64, t),
        TypedBuf::new(base(&mut b), len as u64, t),
    );
    // SAFETY: each scratch holds every byte its type map names (sized above).
    unsafe {
        ta.unpack(0, acc);
        tb.unpack(0, inc);
        op.apply(
            base(&mut a) as *mut c_void,
            base(&mut b) as *mut c_void,
            len as i64,
            datatype,
        )
        .map_err(|_| mpicd::Error::InvalidCount(len as i64))?;
        tb.pack(0, acc);
    }
    Ok(())
}

extern "C" {
    // long_double.c, compiled by build.rs.
    fn mpicd_long_double_reduce(op: c_int, acc: *mut u8, inc: *const u8, n: usize) -> c_int;
    fn mpicd_long_double_complex_reduce(op: c_int, acc: *mut u8, inc: *const u8, n: usize)
        -> c_int;
    fn mpicd_long_double_compare(a: *const u8, b: *const u8) -> c_int;
    fn mpicd_float128_supported() -> c_int;
    fn mpicd_float128_reduce(op: c_int, acc: *mut u8, inc: *const u8, n: usize) -> c_int;
    fn mpicd_float128_complex_reduce(op: c_int, acc: *mut u8, inc: *const u8, n: usize) -> c_int;
}

/// Whether MINLOC/MAXLOC of pairs `a` and `b` is `b`: the better value, or on a tie the lower
/// index.
fn loc_takes(value: Value, index: Value, max: bool, a: &[u8], b: &[u8]) -> bool {
    let s = value.size();
    let index = |p: &[u8]| index.read(&p[s..]);
    let order = if value == Value::Extended {
        // SAFETY: both pairs start with a 16-byte long double (the caller's chunks).
        unsafe { mpicd_long_double_compare(a.as_ptr(), b.as_ptr()) }.cmp(&0)
    } else if value == Value::I64 {
        let v = |p: &[u8]| i64::from_ne_bytes(p[..8].try_into().unwrap_or([0; 8]));
        v(a).cmp(&v(b))
    } else {
        value
            .read(a)
            .partial_cmp(&value.read(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    match (order, max) {
        (std::cmp::Ordering::Equal, _) => index(b) < index(a),
        (std::cmp::Ordering::Less, true) | (std::cmp::Ordering::Greater, false) => true,
        _ => false,
    }
}

/// A reduction moved to whichever thread combines (see [`Reduction::into_combine`]).
struct Shared(Reduction);

// SAFETY: a reduction holds plain values and, for a user op, a C function pointer and a
// datatype handle; the handle is only passed back to that function, from whichever thread
// progresses the engine, as MPI lets any thread complete a request.
unsafe impl Send for Shared {}
// SAFETY: as above; combining never mutates the reduction.
unsafe impl Sync for Shared {}

impl Shared {
    /// The whole wrapper, not its field, is what the closure captures (so it is Send + Sync).
    fn combine(&self, acc: &mut [u8], inc: &[u8]) -> mpicd::Result<()> {
        self.0.combine(acc, inc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair_f64(v: f64, i: i32) -> Vec<u8> {
        let mut b = v.to_ne_bytes().to_vec();
        b.extend_from_slice(&i.to_ne_bytes());
        b
    }

    #[test]
    fn minloc_maxloc_break_ties_by_the_lower_index() {
        let min = Reduction::Loc {
            max: false,
            value: Value::F64,
            index: Value::I32,
        };
        let mut acc = [pair_f64(2.0, 5), pair_f64(1.0, 7), pair_f64(3.0, 9)].concat();
        let inc = [pair_f64(1.0, 6), pair_f64(1.0, 2), pair_f64(4.0, 0)].concat();
        min.combine(&mut acc, &inc).unwrap();
        assert_eq!(
            acc,
            [pair_f64(1.0, 6), pair_f64(1.0, 2), pair_f64(3.0, 9)].concat()
        );
        let max = Reduction::Loc {
            max: true,
            value: Value::F64,
            index: Value::I32,
        };
        max.combine(
            &mut acc,
            &[pair_f64(0.0, 0), pair_f64(1.0, 1), pair_f64(3.0, 3)].concat(),
        )
        .unwrap();
        assert_eq!(
            acc,
            [pair_f64(1.0, 6), pair_f64(1.0, 1), pair_f64(3.0, 3)].concat()
        );
    }

    #[test]
    fn wide_integers_and_binary128() {
        let w = |v: &[i128]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        let mut acc = w(&[i128::MAX / 2, -3, 0]);
        Reduction::Wide(ReduceOp::Sum)
            .combine(&mut acc, &w(&[1, 5, 0]))
            .unwrap();
        assert_eq!(acc, w(&[i128::MAX / 2 + 1, 2, 0]));
        Reduction::Wide(ReduceOp::Land)
            .combine(&mut acc, &w(&[7, 0, 1]))
            .unwrap();
        assert_eq!(acc, w(&[1, 0, 0]));
        // SAFETY: a C function of no arguments.
        if unsafe { mpicd_float128_supported() } == 0 {
            return;
        }
        // binary128 1.0 and 2.0: sign 0, exponent 0x3fff / 0x4000, fraction 0.
        let q = |hi: u64| ((hi as u128) << 64).to_ne_bytes().to_vec();
        let mut acc = q(0x3fff_0000_0000_0000);
        let sum = Reduction::Extended {
            op: 0,
            complex: false,
            quad: true,
        };
        sum.combine(&mut acc, &q(0x3fff_0000_0000_0000)).unwrap();
        assert_eq!(acc, q(0x4000_0000_0000_0000));
    }

    #[test]
    fn complex_products() {
        let z = |r: f64, i: f64| [r.to_ne_bytes(), i.to_ne_bytes()].concat();
        let mut acc = z(1.0, 2.0);
        Reduction::ComplexProd(ElementType::F64)
            .combine(&mut acc, &z(3.0, -1.0))
            .unwrap();
        assert_eq!(acc, z(5.0, 5.0));
    }
}
