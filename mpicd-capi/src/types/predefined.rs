//! The predefined datatypes: each handle's size, alignment and element type, which reductions
//! apply, and the core datatype it stands for (the pair types of MINLOC/MAXLOC are structs, as
//! the standard defines them: `MPI_DOUBLE_INT` has size 12 and extent 16).

use crate::abi::*;
use mpicd::{Datatype, ElementType};
use std::ffi::{c_char, c_long};
use std::sync::OnceLock;

/// Which reductions a predefined type takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// C integers: every predefined operation but the floating-point-only ones.
    Integer,
    /// Fortran integers: sum, product, max, min and the bitwise operations.
    FortranInteger,
    /// Floating point: sum, product, max, min.
    Float,
    /// C booleans and Fortran logicals: the logical operations.
    Bool,
    /// 128-bit Fortran integers (INTEGER16): as [`Kind::FortranInteger`].
    Wide,
    /// 128-bit Fortran logicals (LOGICAL16): as [`Kind::Bool`].
    WideLogical,
    /// IEEE binary128 (REAL16): sum, product, max, min (computed in C).
    Quad,
    /// Complex binary128 (COMPLEX32): sum and product (computed in C).
    QuadComplex,
    /// MPI_BYTE: the bitwise operations.
    Bytes,
    /// C's long double: sum, product, max, min (computed in C: Rust lacks the type).
    Extended,
    /// Complex long double: sum and product (computed in C).
    ExtendedComplex,
    /// Wide characters, MPI_PACKED, complex numbers of float and double (their reductions
    /// are told apart by size), pairs; Fortran's CHARACTER and half precision types.
    Other,
}

impl Kind {
    /// Whether `MPI_Compare_and_swap` takes it: C and Fortran integers (the multi-language
    /// types among them), logicals and bytes, of at most 8 bytes.
    pub(crate) fn swappable(self) -> bool {
        matches!(
            self,
            Kind::Integer | Kind::FortranInteger | Kind::Bool | Kind::Bytes
        )
    }
}

/// A predefined datatype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Basic {
    pub size: usize,
    pub elem: ElementType,
    pub kind: Kind,
}

const fn b(size: usize, elem: ElementType, kind: Kind) -> Option<Basic> {
    Some(Basic { size, elem, kind })
}

const fn signed(size: usize) -> ElementType {
    match size {
        1 => ElementType::I8,
        2 => ElementType::I16,
        4 => ElementType::I32,
        _ => ElementType::I64,
    }
}

const fn unsigned(size: usize) -> ElementType {
    match size {
        1 => ElementType::U8,
        2 => ElementType::U16,
        4 => ElementType::U32,
        _ => ElementType::U64,
    }
}

/// The handle values of predefined datatypes lie in this range (the ABI's 0x200 block).
const PREDEFINED: std::ops::Range<usize> = 0x200..0x300;

/// The predefined type of a handle value (a table lookup: every call of the library that
/// takes a datatype asks).
pub(crate) fn basic(h: MPI_Datatype) -> Option<Basic> {
    static TABLE: std::sync::OnceLock<Vec<Option<Basic>>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| PREDEFINED.map(|v| basic_of(v as MPI_Datatype)).collect());
    (h as usize)
        .checked_sub(PREDEFINED.start)
        .and_then(|i| table.get(i).copied().flatten())
}

/// The predefined type of a handle value, by comparison (what the table holds).
fn basic_of(h: MPI_Datatype) -> Option<Basic> {
    use ElementType::*;
    use Kind::*;
    const LONG: usize = std::mem::size_of::<c_long>();
    let char_elem = if c_char::MIN == 0 { U8 } else { I8 };
    let t = |d: MPI_Datatype| d as usize;
    match h as usize {
        // MPI_CHAR reduces as a C integer, as MPICH and Open MPI allow.
        x if x == t(MPI_CHAR) => b(1, char_elem, Integer),
        x if x == t(MPI_SIGNED_CHAR) || x == t(MPI_INT8_T) => b(1, I8, Integer),
        x if x == t(MPI_UNSIGNED_CHAR) || x == t(MPI_UINT8_T) => b(1, U8, Integer),
        x if x == t(MPI_BYTE) => b(1, Byte, Bytes),
        x if x == t(MPI_PACKED) => b(1, Byte, Other),
        x if x == t(MPI_SHORT) || x == t(MPI_INT16_T) => b(2, I16, Integer),
        x if x == t(MPI_UNSIGNED_SHORT) || x == t(MPI_UINT16_T) => b(2, U16, Integer),
        x if x == t(MPI_INT) || x == t(MPI_INT32_T) => b(4, I32, Integer),
        x if x == t(MPI_UNSIGNED) || x == t(MPI_UINT32_T) => b(4, U32, Integer),
        x if x == t(MPI_LONG) => b(LONG, signed(LONG), Integer),
        x if x == t(MPI_UNSIGNED_LONG) => b(LONG, unsigned(LONG), Integer),
        x if x == t(MPI_LONG_LONG) || x == t(MPI_INT64_T) => b(8, I64, Integer),
        x if x == t(MPI_UNSIGNED_LONG_LONG) || x == t(MPI_UINT64_T) => b(8, U64, Integer),
        x if x == t(MPI_AINT) || x == t(MPI_COUNT) || x == t(MPI_OFFSET) => b(8, I64, Integer),
        x if x == t(MPI_FLOAT) => b(4, F32, Float),
        x if x == t(MPI_DOUBLE) => b(8, F64, Float),
        x if x == t(MPI_C_BOOL) || x == t(MPI_CXX_BOOL) => b(1, U8, Bool),
        x if x == t(MPI_WCHAR) => b(4, I32, Other),
        x if x == t(MPI_LONG_DOUBLE) => b(16, Byte, Extended),
        x if x == t(MPI_C_FLOAT_COMPLEX) || x == t(MPI_CXX_FLOAT_COMPLEX) => b(8, F32, Other),
        x if x == t(MPI_C_DOUBLE_COMPLEX) || x == t(MPI_CXX_DOUBLE_COMPLEX) => b(16, F64, Other),
        x if x == t(MPI_C_LONG_DOUBLE_COMPLEX) || x == t(MPI_CXX_LONG_DOUBLE_COMPLEX) => {
            b(32, Byte, ExtendedComplex)
        }
        _ => super::fortran::basic_of(h),
    }
}

/// Alignment of a predefined type in C (of a Fortran one, in gfortran).
fn align_of(h: MPI_Datatype, b: Basic) -> usize {
    if super::fortran::is_half(h) {
        return 2;
    }
    match b.kind {
        // Complex numbers align as their parts.
        Kind::Other if b.size == 8 || b.size == 16 && b.elem == ElementType::F64 => b.size / 2,
        Kind::ExtendedComplex | Kind::QuadComplex => 16,
        _ => b.size,
    }
}

/// The pair types (value, index) of MINLOC and MAXLOC: (first member, offset of the index).
/// The index is a C int ([`pair_index`] tells the Fortran pairs' index type).
pub(crate) fn pair(h: MPI_Datatype) -> Option<(MPI_Datatype, i64)> {
    let t = |d: MPI_Datatype| d as usize;
    let long = std::mem::size_of::<c_long>() as i64;
    Some(match h as usize {
        x if x == t(MPI_FLOAT_INT) => (MPI_FLOAT, 4),
        x if x == t(MPI_DOUBLE_INT) => (MPI_DOUBLE, 8),
        x if x == t(MPI_LONG_INT) => (MPI_LONG, long),
        x if x == t(MPI_2INT) => (MPI_INT, 4),
        x if x == t(MPI_SHORT_INT) => (MPI_SHORT, 4),
        x if x == t(MPI_LONG_DOUBLE_INT) => (MPI_LONG_DOUBLE, 16),
        x if x == t(MPI_2REAL) => (MPI_REAL, 4),
        x if x == t(MPI_2DOUBLE_PRECISION) => (MPI_DOUBLE_PRECISION, 8),
        x if x == t(MPI_2INTEGER) => (MPI_INTEGER, 4),
        _ => return None,
    })
}

/// The index type of a pair type: a C int, or for the Fortran pairs the value's type.
pub(crate) fn pair_index(h: MPI_Datatype) -> Option<MPI_Datatype> {
    let (first, _) = pair(h)?;
    Some(
        if [MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER].contains(&h) {
            first
        } else {
            MPI_INT
        },
    )
}

/// Every pair type.
pub(crate) const PAIRS: [MPI_Datatype; 9] = [
    MPI_FLOAT_INT,
    MPI_DOUBLE_INT,
    MPI_LONG_INT,
    MPI_2INT,
    MPI_SHORT_INT,
    MPI_LONG_DOUBLE_INT,
    MPI_2REAL,
    MPI_2DOUBLE_PRECISION,
    MPI_2INTEGER,
];

/// The core datatype of each predefined basic handle, made once (by handle value, from
/// `PREDEFINED.start`): the calls that take a datatype clone it instead of building it.
fn basic_types() -> &'static [Option<Datatype>] {
    static MADE: OnceLock<Vec<Option<Datatype>>> = OnceLock::new();
    MADE.get_or_init(|| {
        PREDEFINED
            .map(|v| {
                let h = v as MPI_Datatype;
                let b = basic(h)?;
                Datatype::basic(mpicd::Basic {
                    id: h as usize,
                    size: b.size,
                    align: align_of(h, b),
                    parts: 1,
                })
                .ok()
            })
            .collect()
    })
}

/// The pair types' structs, made once, so that a pair inside a derived type is recognized as
/// the named type it came from ([`predefined_handle`]).
fn pair_types() -> &'static [(MPI_Datatype, Datatype)] {
    struct Pairs(Vec<(MPI_Datatype, Datatype)>);
    // SAFETY: the handles are constants the library never dereferences; `Datatype` is Send
    // and Sync.
    unsafe impl Send for Pairs {}
    unsafe impl Sync for Pairs {}
    static MADE: OnceLock<Pairs> = OnceLock::new();
    &MADE
        .get_or_init(|| {
            let make = |h| {
                let (first, index_at) = pair(h)?;
                let types = [core_type(first)?, core_type(pair_index(h)?)?];
                let t = Datatype::structure(&[1, 1], &[0, index_at], &types).ok()?;
                // A pair is one element to an accumulate, not two.
                mpicd::accumulate_whole(&t);
                Some(t)
            };
            Pairs(PAIRS.iter().filter_map(|&h| Some((h, make(h)?))).collect())
        })
        .0
}

/// The core datatype of a predefined handle (a basic element, or a pair's struct).
pub(crate) fn core_type(h: MPI_Datatype) -> Option<Datatype> {
    if basic(h).is_some() {
        return basic_types()
            .get((h as usize).checked_sub(PREDEFINED.start)?)
            .cloned()
            .flatten();
    }
    pair(h)?;
    pair_types()
        .iter()
        .find(|(p, _)| *p == h)
        .map(|(_, t)| t.clone())
}

/// The predefined handle a core datatype stands for: a basic element's, or a pair type's.
pub(crate) fn predefined_handle(t: &Datatype) -> Option<MPI_Datatype> {
    if let mpicd::Constructor::Basic(b) = t.constructor() {
        return Some(b.id as MPI_Datatype);
    }
    pair_types()
        .iter()
        .find(|(_, p)| p.same(t))
        .map(|(h, _)| *h)
}

/// The name `MPI_Type_get_name` reports for a predefined type (one per handle value: of the
/// synonyms MPI_LONG_LONG and MPI_LONG_LONG_INT, MPI_C_FLOAT_COMPLEX and MPI_C_COMPLEX, the
/// first).
pub(crate) fn name_of(h: MPI_Datatype) -> Option<&'static str> {
    const NAMES: &[(MPI_Datatype, &str)] = &[
        (MPI_AINT, "MPI_AINT"),
        (MPI_COUNT, "MPI_COUNT"),
        (MPI_OFFSET, "MPI_OFFSET"),
        (MPI_PACKED, "MPI_PACKED"),
        (MPI_SHORT, "MPI_SHORT"),
        (MPI_INT, "MPI_INT"),
        (MPI_LONG, "MPI_LONG"),
        (MPI_LONG_LONG, "MPI_LONG_LONG"),
        (MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"),
        (MPI_UNSIGNED, "MPI_UNSIGNED"),
        (MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"),
        (MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"),
        (MPI_FLOAT, "MPI_FLOAT"),
        (MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX"),
        (MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX"),
        (MPI_DOUBLE, "MPI_DOUBLE"),
        (MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"),
        (MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX"),
        (MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"),
        (MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX"),
        (MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX"),
        (MPI_FLOAT_INT, "MPI_FLOAT_INT"),
        (MPI_DOUBLE_INT, "MPI_DOUBLE_INT"),
        (MPI_LONG_INT, "MPI_LONG_INT"),
        (MPI_2INT, "MPI_2INT"),
        (MPI_SHORT_INT, "MPI_SHORT_INT"),
        (MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"),
        (MPI_2REAL, "MPI_2REAL"),
        (MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION"),
        (MPI_2INTEGER, "MPI_2INTEGER"),
        (MPI_C_BOOL, "MPI_C_BOOL"),
        (MPI_CXX_BOOL, "MPI_CXX_BOOL"),
        (MPI_WCHAR, "MPI_WCHAR"),
        (MPI_INT8_T, "MPI_INT8_T"),
        (MPI_UINT8_T, "MPI_UINT8_T"),
        (MPI_CHAR, "MPI_CHAR"),
        (MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR"),
        (MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"),
        (MPI_BYTE, "MPI_BYTE"),
        (MPI_INT16_T, "MPI_INT16_T"),
        (MPI_UINT16_T, "MPI_UINT16_T"),
        (MPI_INT32_T, "MPI_INT32_T"),
        (MPI_UINT32_T, "MPI_UINT32_T"),
        (MPI_INT64_T, "MPI_INT64_T"),
        (MPI_UINT64_T, "MPI_UINT64_T"),
    ];
    NAMES
        .iter()
        .find(|(k, _)| *k == h)
        .map(|(_, n)| *n)
        .or_else(|| super::fortran::name_of(h))
}

/// True for a predefined handle of any kind.
pub(crate) fn is_predefined(h: MPI_Datatype) -> bool {
    basic(h).is_some() || pair(h).is_some()
}

/// The predefined type that stands for an element type (regions reported to C).
pub(crate) fn handle_of(elem: ElementType) -> MPI_Datatype {
    match elem {
        ElementType::Byte => MPI_BYTE,
        ElementType::I8 => MPI_INT8_T,
        ElementType::U8 => MPI_UINT8_T,
        ElementType::I16 => MPI_INT16_T,
        ElementType::U16 => MPI_UINT16_T,
        ElementType::I32 => MPI_INT32_T,
        ElementType::U32 => MPI_UINT32_T,
        ElementType::I64 => MPI_INT64_T,
        ElementType::U64 => MPI_UINT64_T,
        ElementType::F32 => MPI_FLOAT,
        ElementType::F64 => MPI_DOUBLE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::c_int;

    #[test]
    fn predefined_types_have_c_sizes() {
        let size = |h| basic(h).map(|b| b.size);
        assert_eq!(size(MPI_INT), Some(std::mem::size_of::<c_int>()));
        assert_eq!(size(MPI_LONG), Some(std::mem::size_of::<c_long>()));
        assert_eq!(size(MPI_DOUBLE), Some(8));
        assert_eq!(size(MPI_C_BOOL), Some(std::mem::size_of::<bool>()));
        assert_eq!(size(MPI_DATATYPE_NULL), None);
        for e in ElementType::ALL {
            assert_eq!(basic(handle_of(e)).map(|b| b.elem), Some(e));
        }
    }

    #[test]
    fn pair_types_are_structs_of_c_layout() {
        let t = |h| core_type(h).map(|d| (d.size(), d.extent()));
        assert_eq!(t(MPI_DOUBLE_INT), Some((12, 16)));
        assert_eq!(t(MPI_SHORT_INT), Some((6, 8)));
        assert_eq!(t(MPI_2INT), Some((8, 8)));
        assert_eq!(t(MPI_FLOAT_INT), Some((8, 8)));
        assert_eq!(t(MPI_LONG_DOUBLE_INT), Some((20, 32)));
        assert_eq!(t(MPI_LONG_DOUBLE), Some((16, 16)));
        assert_eq!(t(MPI_2REAL), Some((8, 8)));
        assert_eq!(t(MPI_2DOUBLE_PRECISION), Some((16, 16)));
        assert_eq!(t(MPI_2INTEGER), Some((8, 8)));
        assert!(is_predefined(MPI_2INT) && !is_predefined(MPI_DATATYPE_NULL));
    }

    #[test]
    fn predefined_types_are_recognized_by_identity_and_named() {
        let pair = core_type(MPI_DOUBLE_INT).unwrap();
        assert_eq!(predefined_handle(&pair), Some(MPI_DOUBLE_INT));
        assert_eq!(
            predefined_handle(&core_type(MPI_INT).unwrap()),
            Some(MPI_INT)
        );
        // The same struct made by hand is a derived type, not the named one.
        let types = [core_type(MPI_DOUBLE).unwrap(), core_type(MPI_INT).unwrap()];
        let lookalike = Datatype::structure(&[1, 1], &[0, 8], &types).unwrap();
        assert_eq!(predefined_handle(&lookalike), None);
        assert_eq!(name_of(MPI_INT), Some("MPI_INT"));
        assert_eq!(name_of(MPI_LONG_LONG_INT), Some("MPI_LONG_LONG"));
        assert_eq!(name_of(MPI_2INT), Some("MPI_2INT"));
        assert_eq!(name_of(MPI_DATATYPE_NULL), None);
    }
}
