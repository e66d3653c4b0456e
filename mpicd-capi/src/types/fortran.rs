//! The Fortran predefined datatypes as C handles, valid without Fortran bindings: their sizes
//! (those of gfortran on x86-64 and aarch64 Linux: default INTEGER, REAL and LOGICAL of 4
//! bytes, DOUBLE PRECISION of 8, CHARACTER of 1; REAL(16) is IEEE binary128, not C's long
//! double), the reductions each takes, their names, and `MPI_Type_match_size`.
//!
//! Reductions follow the standard's groups (MPI 4.1 section 6.9.2): Fortran integers take the
//! arithmetic, MIN/MAX and bitwise ops but not the logical ones; REALn and COMPLEXn the
//! arithmetic ones (complex: sum and product); LOGICALn the logical ops, with gfortran's values
//! (any non-zero value is true, results are 1 or 0). REAL2 and COMPLEX4 (half precision, which
//! gfortran lacks) and CHARACTER are handles with a size that no reduction takes
//! (`MPI_ERR_OP`). INTEGER16 and LOGICAL16 reduce as 128-bit integers, REAL16 and COMPLEX32 in
//! C (`long_double.c`, where the compiler has `__float128`).

use super::predefined::{Basic, Kind};
use crate::abi::*;
use crate::comms::default_errh;
use crate::env::out;
use crate::errors::{fail, run};
use mpicd::ElementType;
use std::ffi::c_int;

/// Every Fortran type: handle, name, size, element type and reduction kind.
const FORTRAN: &[(MPI_Datatype, &str, usize, ElementType, Kind)] = {
    use ElementType::*;
    use Kind::*;
    &[
        (MPI_CHARACTER, "MPI_CHARACTER", 1, U8, Other),
        (MPI_LOGICAL, "MPI_LOGICAL", 4, I32, Bool),
        (MPI_INTEGER, "MPI_INTEGER", 4, I32, FortranInteger),
        (MPI_REAL, "MPI_REAL", 4, F32, Float),
        (MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, F64, Float),
        (MPI_COMPLEX, "MPI_COMPLEX", 8, F32, Other),
        (MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, F64, Other),
        (MPI_LOGICAL1, "MPI_LOGICAL1", 1, I8, Bool),
        (MPI_LOGICAL2, "MPI_LOGICAL2", 2, I16, Bool),
        (MPI_LOGICAL4, "MPI_LOGICAL4", 4, I32, Bool),
        (MPI_LOGICAL8, "MPI_LOGICAL8", 8, I64, Bool),
        (MPI_LOGICAL16, "MPI_LOGICAL16", 16, Byte, WideLogical),
        (MPI_INTEGER1, "MPI_INTEGER1", 1, I8, FortranInteger),
        (MPI_INTEGER2, "MPI_INTEGER2", 2, I16, FortranInteger),
        (MPI_INTEGER4, "MPI_INTEGER4", 4, I32, FortranInteger),
        (MPI_INTEGER8, "MPI_INTEGER8", 8, I64, FortranInteger),
        (MPI_INTEGER16, "MPI_INTEGER16", 16, Byte, Wide),
        (MPI_REAL2, "MPI_REAL2", 2, I16, Other),
        (MPI_REAL4, "MPI_REAL4", 4, F32, Float),
        (MPI_REAL8, "MPI_REAL8", 8, F64, Float),
        (MPI_REAL16, "MPI_REAL16", 16, Byte, Quad),
        (MPI_COMPLEX4, "MPI_COMPLEX4", 4, I16, Other),
        (MPI_COMPLEX8, "MPI_COMPLEX8", 8, F32, Other),
        (MPI_COMPLEX16, "MPI_COMPLEX16", 16, F64, Other),
        (MPI_COMPLEX32, "MPI_COMPLEX32", 32, Byte, QuadComplex),
    ]
};

fn find(
    h: MPI_Datatype,
) -> Option<&'static (MPI_Datatype, &'static str, usize, ElementType, Kind)> {
    FORTRAN.iter().find(|e| e.0 == h)
}

/// The predefined type of a Fortran handle.
pub(crate) fn basic_of(h: MPI_Datatype) -> Option<Basic> {
    find(h).map(|&(_, _, size, elem, kind)| Basic { size, elem, kind })
}

/// The name of a Fortran handle.
pub(crate) fn name_of(h: MPI_Datatype) -> Option<&'static str> {
    find(h).map(|e| e.1)
}

/// True for the half-precision types (REAL2, COMPLEX4), whose parts are 2 bytes.
pub(crate) fn is_half(h: MPI_Datatype) -> bool {
    h == MPI_REAL2 || h == MPI_COMPLEX4
}

/// The named type of `size` bytes in `typeclass`, as the standard's advice to implementors
/// gives it (the size-specific Fortran types).
fn match_size(typeclass: c_int, size: c_int) -> Option<MPI_Datatype> {
    let table: &[(c_int, MPI_Datatype)] = match typeclass {
        MPI_TYPECLASS_INTEGER => &[
            (1, MPI_INTEGER1),
            (2, MPI_INTEGER2),
            (4, MPI_INTEGER4),
            (8, MPI_INTEGER8),
            (16, MPI_INTEGER16),
        ],
        MPI_TYPECLASS_REAL => &[(4, MPI_REAL4), (8, MPI_REAL8), (16, MPI_REAL16)],
        MPI_TYPECLASS_COMPLEX => &[(8, MPI_COMPLEX8), (16, MPI_COMPLEX16), (32, MPI_COMPLEX32)],
        MPIX_TYPECLASS_LOGICAL => &[
            (1, MPI_LOGICAL1),
            (2, MPI_LOGICAL2),
            (4, MPI_LOGICAL4),
            (8, MPI_LOGICAL8),
            (16, MPI_LOGICAL16),
        ],
        _ => return None,
    };
    table.iter().find(|(s, _)| *s == size).map(|(_, h)| *h)
}

/// The predefined datatype of `typeclass` (MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX) whose
/// values have `size` bytes: one of the size-specific Fortran types (`MPI_INTEGER4`,
/// `MPI_REAL8`, `MPI_COMPLEX16`, ...), which must not be freed. Half precision is not offered
/// (gfortran has none); an unknown class or size is MPI_ERR_ARG.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_match_size(
    typeclass: c_int,
    size: c_int,
    datatype: *mut MPI_Datatype,
) -> c_int {
    run("Type_match_size", default_errh(), |_| {
        let h = match_size(typeclass, size).ok_or_else(|| {
            fail(
                MPI_ERR_ARG,
                format!("no predefined type of class {typeclass} with {size} bytes"),
            )
        })?;
        out(datatype, h)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_types_have_gfortran_sizes() {
        let size = |h| basic_of(h).map(|b| b.size);
        assert_eq!(size(MPI_INTEGER), Some(4));
        assert_eq!(size(MPI_REAL), Some(4));
        assert_eq!(size(MPI_DOUBLE_PRECISION), Some(8));
        assert_eq!(size(MPI_LOGICAL), Some(4));
        assert_eq!(size(MPI_CHARACTER), Some(1));
        assert_eq!(size(MPI_DOUBLE_COMPLEX), Some(16));
        assert_eq!(size(MPI_COMPLEX32), Some(32));
        assert_eq!(size(MPI_INT), None);
        for &(h, name, size, _, _) in FORTRAN {
            assert!(name.starts_with("MPI_"));
            if let Some(class) = [
                (MPI_TYPECLASS_INTEGER, "MPI_INTEGER"),
                (MPI_TYPECLASS_REAL, "MPI_REAL"),
                (MPI_TYPECLASS_COMPLEX, "MPI_COMPLEX"),
                (MPIX_TYPECLASS_LOGICAL, "MPI_LOGICAL"),
            ]
            .iter()
            .find(|(_, p)| {
                name.strip_prefix(p)
                    .is_some_and(|d| d.parse::<u32>().is_ok())
            }) {
                if !is_half(h) {
                    assert_eq!(match_size(class.0, size as c_int), Some(h), "{name}");
                }
            }
        }
        assert_eq!(match_size(MPI_TYPECLASS_REAL, 2), None);
        assert_eq!(match_size(MPI_TYPECLASS_REAL, 10), None);
        assert_eq!(match_size(0, 4), None);
    }
}
