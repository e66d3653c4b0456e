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
//!
//! `MPI_Type_create_f90_integer`, `_real` and `_complex` choose a kind as Fortran's
//! SELECTED_INT_KIND and SELECTED_REAL_KIND would, and return a handle of that type that
//! decodes as the F90 combiner with its arguments.

use super::predefined::{Basic, Kind};
use crate::abi::*;
use crate::comms::default_errh;
use crate::env::out;
use crate::errors::{fail, run, CResult};
use mpicd::ElementType;
use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard};

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
        MPI_TYPECLASS_REAL => &[
            (2, MPI_REAL2),
            (4, MPI_REAL4),
            (8, MPI_REAL8),
            (16, MPI_REAL16),
        ],
        MPI_TYPECLASS_COMPLEX => &[
            (4, MPI_COMPLEX4),
            (8, MPI_COMPLEX8),
            (16, MPI_COMPLEX16),
            (32, MPI_COMPLEX32),
        ],
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
/// `MPI_REAL8`, `MPI_COMPLEX16`, ...), which must not be freed; half precision gives `MPI_REAL2`
/// and `MPI_COMPLEX4` (valid handles that no reduction takes); an unknown class or size is
/// MPI_ERR_ARG.
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

/// A type of `MPI_Type_create_f90_*`: its handle, combiner and the arguments it was made with.
#[derive(Clone, Copy)]
struct F90 {
    handle: usize,
    combiner: c_int,
    p: c_int,
    r: c_int,
}

/// The types made so far: the same arguments give the same handle.
static F90_TYPES: Mutex<Vec<F90>> = Mutex::new(Vec::new());

fn f90_types() -> MutexGuard<'static, Vec<F90>> {
    F90_TYPES.lock().unwrap_or_else(|e| e.into_inner())
}

/// The combiner and integer arguments of a handle from `MPI_Type_create_f90_*` (the
/// standard's decoding: (p, r) for REAL and COMPLEX, (r) for INTEGER).
pub(crate) fn f90_args(h: MPI_Datatype) -> Option<(c_int, Vec<i64>)> {
    let t = f90_types()
        .iter()
        .copied()
        .find(|t| t.handle == h as usize)?;
    let ints = if t.combiner == MPI_COMBINER_F90_INTEGER {
        vec![t.r as i64]
    } else {
        vec![t.p as i64, t.r as i64]
    };
    Some((t.combiner, ints))
}

/// The decimal precision and exponent range of the REAL kinds gfortran has here, and the
/// predefined type of each (real, complex). REAL(10), x87 extended precision, is C's long
/// double on x86 (no size-specific MPI type names it).
fn real_kinds() -> Vec<(c_int, c_int, MPI_Datatype, MPI_Datatype)> {
    let mut kinds = vec![
        (6, 37, MPI_REAL4, MPI_COMPLEX8),
        (15, 307, MPI_REAL8, MPI_COMPLEX16),
    ];
    if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
        kinds.push((18, 4931, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX));
    }
    kinds.push((33, 4931, MPI_REAL16, MPI_COMPLEX32));
    kinds
}

/// The predefined type a `MPI_Type_create_f90_*` call stands for (as Fortran's
/// SELECTED_INT_KIND and SELECTED_REAL_KIND choose: the smallest kind that holds it).
fn f90_base(combiner: c_int, p: c_int, r: c_int) -> CResult<MPI_Datatype> {
    let none = || {
        fail(
            MPI_ERR_ARG,
            format!("no Fortran kind has precision {p} and range {r}"),
        )
    };
    if combiner == MPI_COMBINER_F90_INTEGER {
        if r == MPI_UNDEFINED {
            return Err(fail(MPI_ERR_ARG, "MPI_UNDEFINED range of an integer type"));
        }
        let ints = [
            (2, MPI_INTEGER1),
            (4, MPI_INTEGER2),
            (9, MPI_INTEGER4),
            (18, MPI_INTEGER8),
            (38, MPI_INTEGER16),
        ];
        return ints
            .iter()
            .find(|(max, _)| r <= *max)
            .map(|(_, h)| *h)
            .ok_or_else(none);
    }
    if p == MPI_UNDEFINED && r == MPI_UNDEFINED {
        return Err(fail(
            MPI_ERR_ARG,
            "both precision and range are MPI_UNDEFINED",
        ));
    }
    let fits = |asked: c_int, has: c_int| asked == MPI_UNDEFINED || asked <= has;
    real_kinds()
        .into_iter()
        .find(|&(kp, kr, _, _)| fits(p, kp) && fits(r, kr))
        .map(|(_, _, real, complex)| {
            if combiner == MPI_COMBINER_F90_COMPLEX {
                complex
            } else {
                real
            }
        })
        .ok_or_else(none)
}

/// Shared body of the `MPI_Type_create_f90_*` calls.
fn create_f90(combiner: c_int, p: c_int, r: c_int, newtype: *mut MPI_Datatype) -> CResult<()> {
    let base = f90_base(combiner, p, r)?;
    let mut made = f90_types();
    if let Some(t) = made
        .iter()
        .find(|t| (t.combiner, t.p, t.r) == (combiner, p, r))
    {
        return out(newtype, t.handle as MPI_Datatype);
    }
    let core = super::core_type(base).ok_or_else(|| fail(MPI_ERR_INTERN, "no core type"))?;
    let handle = super::insert_derived_as(core, true, false);
    super::with_created(handle, |e| {
        e.name = super::predefined::name_of(base).unwrap_or_default().into()
    })?;
    made.push(F90 {
        handle: handle as usize,
        combiner,
        p,
        r,
    });
    out(newtype, handle)
}

/// True for a handle from `MPI_Type_create_f90_*` (predefined: it cannot be freed).
pub(crate) fn is_f90(h: MPI_Datatype) -> bool {
    f90_types().iter().any(|t| t.handle == h as usize)
}

/// The predefined datatype of a Fortran REAL with at least `p` decimal digits and exponent
/// range `r` (either may be MPI_UNDEFINED): the smallest such kind of gfortran (REAL4, REAL8,
/// x87 extended, REAL16). Its combiner is MPI_COMBINER_F90_REAL with (p, r); the same
/// arguments give the same handle, which must not be freed. No such kind: MPI_ERR_ARG.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_f90_real(
    p: c_int,
    r: c_int,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_f90_real", default_errh(), |_| {
        create_f90(MPI_COMBINER_F90_REAL, p, r, newtype)
    })
}

/// [`MPI_Type_create_f90_real`] for a COMPLEX of such parts (MPI_COMBINER_F90_COMPLEX).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_f90_complex(
    p: c_int,
    r: c_int,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_f90_complex", default_errh(), |_| {
        create_f90(MPI_COMBINER_F90_COMPLEX, p, r, newtype)
    })
}

/// The predefined datatype of a Fortran INTEGER of decimal range `r` (values up to 10^r):
/// INTEGER1, 2, 4, 8 or 16, with combiner MPI_COMBINER_F90_INTEGER and (r).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_f90_integer(
    r: c_int,
    newtype: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_f90_integer", default_errh(), |_| {
        create_f90(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, newtype)
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
        assert_eq!(match_size(MPI_TYPECLASS_REAL, 2), Some(MPI_REAL2));
        assert_eq!(match_size(MPI_TYPECLASS_REAL, 10), None);
        assert_eq!(match_size(0, 4), None);
    }

    #[test]
    fn f90_kinds_are_the_smallest_that_hold() {
        let real = |p, r| f90_base(MPI_COMBINER_F90_REAL, p, r).ok();
        assert_eq!(real(3, 10), Some(MPI_REAL4));
        assert_eq!(real(7, MPI_UNDEFINED), Some(MPI_REAL8));
        assert_eq!(real(MPI_UNDEFINED, 400), real(18, 400));
        assert_eq!(real(30, MPI_UNDEFINED), Some(MPI_REAL16));
        assert_eq!(real(40, 10), None);
        assert_eq!(real(MPI_UNDEFINED, MPI_UNDEFINED), None);
        let complex = f90_base(MPI_COMBINER_F90_COMPLEX, 7, 30).ok();
        assert_eq!(complex, Some(MPI_COMPLEX16));
        let int = |r| f90_base(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r).ok();
        assert_eq!(int(2), Some(MPI_INTEGER1));
        assert_eq!(int(5), Some(MPI_INTEGER4));
        assert_eq!(int(18), Some(MPI_INTEGER8));
        assert_eq!(int(39), None);
    }
}
