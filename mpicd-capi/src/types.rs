//! Datatype handles: the predefined types (size, element type, which reductions apply), the
//! table of custom types, and MPI_Type_size / get_extent / commit / free.

use crate::abi::*;
use crate::comms::default_errh;
use crate::custom::CustomType;
use crate::env::{out, read_arg};
use crate::errors::{fail, run, CResult};
use crate::handles::{Table, DATATYPE_BASE};
use mpicd::ElementType;
use std::ffi::{c_char, c_int, c_long};
use std::sync::Arc;

/// Which reductions a predefined type takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// C integers: every predefined operation but the floating-point-only ones.
    Integer,
    /// Floating point: sum, product, max, min.
    Float,
    /// C booleans: the logical operations.
    Bool,
    /// MPI_BYTE: the bitwise operations.
    Bytes,
    /// Characters, complex numbers, pairs, long double: no reductions in mpicd.
    Other,
}

/// A predefined datatype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Basic {
    pub size: usize,
    pub elem: ElementType,
    pub kind: Kind,
}

/// What a datatype handle stands for.
pub(crate) enum Dtype {
    Basic(Basic),
    Custom(Arc<CustomType>),
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

/// The predefined type of a handle value.
pub(crate) fn basic(h: MPI_Datatype) -> Option<Basic> {
    use ElementType::*;
    use Kind::*;
    const LONG: usize = std::mem::size_of::<c_long>();
    let char_elem = if c_char::MIN == 0 { U8 } else { I8 };
    let t = |d: MPI_Datatype| d as usize;
    match h as usize {
        x if x == t(MPI_CHAR) => b(1, char_elem, Other),
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
        x if x == t(MPI_LONG_DOUBLE) => b(16, Byte, Other),
        x if x == t(MPI_C_FLOAT_COMPLEX) || x == t(MPI_CXX_FLOAT_COMPLEX) => b(8, F32, Other),
        x if x == t(MPI_C_DOUBLE_COMPLEX) || x == t(MPI_CXX_DOUBLE_COMPLEX) => b(16, F64, Other),
        x if x == t(MPI_C_LONG_DOUBLE_COMPLEX) || x == t(MPI_CXX_LONG_DOUBLE_COMPLEX) => {
            b(32, Byte, Other)
        }
        x if x == t(MPI_FLOAT_INT) || x == t(MPI_2INT) || x == t(MPI_SHORT_INT) => {
            b(8, Byte, Other)
        }
        x if x == t(MPI_DOUBLE_INT) || x == t(MPI_LONG_INT) => b(16, Byte, Other),
        x if x == t(MPI_LONG_DOUBLE_INT) => b(32, Byte, Other),
        _ => None,
    }
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

pub(crate) static TYPES: Table<Arc<CustomType>> = Table::new(DATATYPE_BASE);

/// The datatype of a handle, for use in communication (a custom type must be committed).
pub(crate) fn get(h: MPI_Datatype) -> CResult<Dtype> {
    if let Some(basic) = basic(h) {
        return Ok(Dtype::Basic(basic));
    }
    let custom = lookup_custom(h)?;
    if !custom.is_committed() {
        return Err(fail(MPI_ERR_TYPE, "the custom datatype was not committed"));
    }
    Ok(Dtype::Custom(custom))
}

fn lookup_custom(h: MPI_Datatype) -> CResult<Arc<CustomType>> {
    if h == MPI_DATATYPE_NULL || h.is_null() {
        return Err(fail(MPI_ERR_TYPE, "MPI_DATATYPE_NULL is not a datatype"));
    }
    TYPES
        .with(h as usize, |t| Arc::clone(t))
        .ok_or_else(|| fail(MPI_ERR_TYPE, "unknown, freed or unsupported datatype"))
}

/// A predefined type, refusing custom ones (collectives).
pub(crate) fn get_basic(h: MPI_Datatype) -> CResult<Basic> {
    match get(h)? {
        Dtype::Basic(b) => Ok(b),
        Dtype::Custom(_) => Err(fail(
            MPI_ERR_TYPE,
            "custom datatypes are only supported in point-to-point calls",
        )),
    }
}

/// `count` elements of `basic` in bytes.
pub(crate) fn byte_len(count: i64, basic: Basic) -> CResult<usize> {
    if count < 0 {
        return Err(fail(MPI_ERR_COUNT, format!("negative count {count}")));
    }
    (count as usize)
        .checked_mul(basic.size)
        .ok_or_else(|| fail(MPI_ERR_COUNT, format!("count {count} overflows")))
}

/// Drops every custom type (finalize).
pub(crate) fn free_all() {
    drop(TYPES.drain());
}

/// Size in bytes of the data of one element; MPI_UNDEFINED for a custom type.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size(datatype: MPI_Datatype, size: *mut c_int) -> c_int {
    run("Type_size", default_errh(), |_| {
        let n = match basic(datatype) {
            Some(b) => b.size as c_int,
            None => lookup_custom(datatype).map(|_| MPI_UNDEFINED)?,
        };
        out(size, n)
    })
}

/// [`MPI_Type_size`] with an MPI_Count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size_c(datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int {
    run("Type_size_c", default_errh(), |_| {
        let n = match basic(datatype) {
            Some(b) => b.size as MPI_Count,
            None => lookup_custom(datatype).map(|_| MPI_UNDEFINED as MPI_Count)?,
        };
        out(size, n)
    })
}

/// Lower bound 0 and extent = size for predefined types; a custom type reports extent 1
/// (its callbacks, not MPI, walk arrays of it).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent(
    datatype: MPI_Datatype,
    lb: *mut MPI_Aint,
    extent: *mut MPI_Aint,
) -> c_int {
    run("Type_get_extent", default_errh(), |_| {
        let n = match basic(datatype) {
            Some(b) => b.size as MPI_Aint,
            None => lookup_custom(datatype).map(|_| 1)?,
        };
        out(lb, 0)?;
        out(extent, n)
    })
}

/// Commits a datatype (predefined ones are always committed).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_commit(datatype: *mut MPI_Datatype) -> c_int {
    run("Type_commit", default_errh(), |_| {
        let h = read_arg(datatype, "datatype pointer")?;
        if basic(h).is_some() {
            return Ok(());
        }
        lookup_custom(h)?.commit();
        Ok(())
    })
}

/// Frees a custom datatype and sets the handle to MPI_DATATYPE_NULL. Operations still using
/// it keep it alive until they complete.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free(datatype: *mut MPI_Datatype) -> c_int {
    run("Type_free", default_errh(), |_| {
        let h = read_arg(datatype, "datatype pointer")?;
        if basic(h).is_some() {
            return Err(fail(MPI_ERR_TYPE, "predefined datatypes cannot be freed"));
        }
        lookup_custom(h)?;
        TYPES.remove(h as usize);
        out(datatype, MPI_DATATYPE_NULL)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
