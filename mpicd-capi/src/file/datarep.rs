//! Data representations of file views: "native" and "internal" (the same bytes as in memory),
//! and the ones an application registers with `MPI_Register_datarep` (their names, extent
//! functions, kept for the life of the process), and "external32" for the types whose
//! elements keep their size in it (the bytes are converted in place; MPI_LONG,
//! MPI_UNSIGNED_LONG and MPI_WCHAR shrink, and are MPI_ERR_UNSUPPORTED_DATAREP). A registered
//! representation without conversion functions moves the bytes as they are (its extent
//! function answers `MPI_File_get_type_extent`); mpicd does not call conversion functions, so
//! a view in a representation that has them is MPI_ERR_UNSUPPORTED_DATAREP.

use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{check_live, require};
use crate::errors::{fail, run, CResult};
use crate::types::external::SameSize;
use mpicd::Datatype;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;

/// A registered data representation.
#[derive(Clone)]
pub(crate) struct Registered {
    pub name: String,
    /// Whether it has a read or a write conversion function (mpicd calls neither: a view in
    /// such a representation is refused).
    pub converts: bool,
    pub extent: unsafe extern "C" fn(MPI_Datatype, *mut MPI_Aint, *mut c_void) -> c_int,
    pub extra_state: usize,
}

static REGISTERED: Mutex<Vec<Registered>> = Mutex::new(Vec::new());

fn registered(name: &str) -> Option<Registered> {
    REGISTERED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .find(|r| r.name == name)
        .cloned()
}

/// True for the representations that are the memory's bytes.
fn is_native(name: &str) -> bool {
    matches!(name, "native" | "internal")
}

/// The external32 conversion of the packed bytes of `ty`: MPI_ERR_UNSUPPORTED_DATAREP if an
/// element of it changes size in external32 (MPI_LONG, MPI_UNSIGNED_LONG, MPI_WCHAR), which
/// mpicd's file views do not lay out.
fn external32(ty: &Datatype, what: &str) -> CResult<SameSize> {
    SameSize::of(ty).ok_or_else(|| {
        fail(
            MPI_ERR_UNSUPPORTED_DATAREP,
            format!(
                "external32 file access with a {what} whose elements change size in external32 \
                 (MPI_LONG, MPI_UNSIGNED_LONG, MPI_WCHAR) is not supported"
            ),
        )
    })
}

/// The conversion an access with memory type `ty` needs in representation `name`.
pub(crate) fn conversion(name: &str, ty: &Datatype) -> CResult<Option<SameSize>> {
    match name {
        "external32" => external32(ty, "datatype").map(Some),
        _ => Ok(None),
    }
}

/// Checks that a view of `etype` and `filetype` may use representation `name`: native,
/// internal, external32 (types whose elements keep their size), or registered without
/// conversion functions (mpicd does not call conversion functions: a representation that
/// needs them is MPI_ERR_UNSUPPORTED_DATAREP).
pub(crate) fn check(name: &str, etype: &Datatype, filetype: &Datatype) -> CResult<()> {
    if is_native(name) {
        return Ok(());
    }
    if name == "external32" {
        external32(etype, "etype")?;
        return external32(filetype, "filetype").map(drop);
    }
    match registered(name) {
        Some(r) if !r.converts => Ok(()),
        Some(_) => Err(fail(
            MPI_ERR_UNSUPPORTED_DATAREP,
            format!("data representation \"{name}\" needs conversion functions, which mpicd does not call"),
        )),
        None => Err(fail(
            MPI_ERR_UNSUPPORTED_DATAREP,
            format!("unsupported data representation \"{name}\""),
        )),
    }
}

/// The extent of `ty` (handle `h`) in representation `name`: a registered representation's
/// extent function gives it for a predefined type.
pub(crate) fn extent(name: &str, h: MPI_Datatype, ty: &Datatype) -> CResult<i64> {
    if name == "external32" {
        return Ok(match SameSize::size_of(h) {
            Some(n) if crate::types::is_predefined(h) => n as i64,
            _ => ty.extent(),
        });
    }
    match registered(name) {
        Some(r) if crate::types::is_predefined(h) => {
            let mut ext: MPI_Aint = 0;
            // SAFETY: the application's extent function, called as MPI specifies.
            let code = unsafe { (r.extent)(h, &mut ext, r.extra_state as *mut c_void) };
            if code != MPI_SUCCESS {
                return Err(fail(
                    code,
                    "the data representation's extent function failed",
                ));
            }
            Ok(ext as i64)
        }
        _ => Ok(ty.extent()),
    }
}

/// The body of both registrations.
fn register(
    name: &'static str,
    datarep: *const c_char,
    converts: bool,
    extent: MPI_Datarep_extent_function,
    extra_state: *mut c_void,
) -> c_int {
    run(name, default_errh(), |_| {
        check_live()?;
        require(datarep, "datarep")?;
        // SAFETY: non-null; MPI requires a NUL-terminated string.
        let rep = unsafe { CStr::from_ptr(datarep) }
            .to_string_lossy()
            .into_owned();
        if rep.is_empty() || rep.len() >= MPI_MAX_DATAREP_STRING as usize {
            return Err(fail(MPI_ERR_ARG, "invalid data representation name length"));
        }
        let extent = extent.ok_or_else(|| fail(MPI_ERR_ARG, "null extent function"))?;
        let mut all = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
        if is_native(&rep) || rep == "external32" || all.iter().any(|r| r.name == rep) {
            return Err(fail(
                MPI_ERR_DUP_DATAREP,
                format!("data representation \"{rep}\" is already defined"),
            ));
        }
        all.push(Registered {
            name: rep,
            converts,
            extent,
            extra_state: extra_state as usize,
        });
        Ok(())
    })
}

/// Registers the data representation `datarep` with its conversion functions (read and write;
/// MPI_CONVERSION_FN_NULL for none) and the function giving the file extent of a predefined
/// type. A name already defined: MPI_ERR_DUP_DATAREP.
#[no_mangle]
pub unsafe extern "C" fn MPI_Register_datarep(
    datarep: *const c_char,
    read_conversion_fn: MPI_Datarep_conversion_function,
    write_conversion_fn: MPI_Datarep_conversion_function,
    dtype_file_extent_fn: MPI_Datarep_extent_function,
    extra_state: *mut c_void,
) -> c_int {
    register(
        "Register_datarep",
        datarep,
        read_conversion_fn.is_some() || write_conversion_fn.is_some(),
        dtype_file_extent_fn,
        extra_state,
    )
}

/// [`MPI_Register_datarep`] with large-count conversion functions.
#[no_mangle]
pub unsafe extern "C" fn MPI_Register_datarep_c(
    datarep: *const c_char,
    read_conversion_fn: MPI_Datarep_conversion_function_c,
    write_conversion_fn: MPI_Datarep_conversion_function_c,
    dtype_file_extent_fn: MPI_Datarep_extent_function,
    extra_state: *mut c_void,
) -> c_int {
    register(
        "Register_datarep_c",
        datarep,
        read_conversion_fn.is_some() || write_conversion_fn.is_some(),
        dtype_file_extent_fn,
        extra_state,
    )
}
