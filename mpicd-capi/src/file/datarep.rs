//! Data representations of file views: "native" and "internal" (the same bytes as in memory),
//! "external32" for the types whose elements keep their size in it (the bytes are converted in
//! place; MPI_LONG, MPI_UNSIGNED_LONG and MPI_WCHAR shrink, and are
//! MPI_ERR_UNSUPPORTED_DATAREP), and the ones an application registers with
//! `MPI_Register_datarep` (kept for the life of the process): their extent function answers
//! `MPI_File_get_type_extent`, and their conversion functions make the file bytes of a write
//! and store those of a read, piece by piece (a missing one: the bytes as they are). mpicd's
//! views lay the file out as the memory's packed bytes, so a registered representation must
//! give every element of the view's and the access's types its native size
//! (MPI_ERR_UNSUPPORTED_DATAREP otherwise).

use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{check_live, require};
use crate::errors::{fail, run, CResult};
use crate::types::external::SameSize;
use mpicd::file::Convert;
use mpicd::{Datatype, TypedBuf};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;

/// A conversion function of either width.
#[derive(Clone, Copy)]
pub(crate) enum Conversion {
    Int(
        unsafe extern "C" fn(
            *mut c_void,
            MPI_Datatype,
            c_int,
            *mut c_void,
            MPI_Offset,
            *mut c_void,
        ) -> c_int,
    ),
    Large(
        unsafe extern "C" fn(
            *mut c_void,
            MPI_Datatype,
            MPI_Count,
            *mut c_void,
            MPI_Offset,
            *mut c_void,
        ) -> c_int,
    ),
}

/// A registered data representation.
#[derive(Clone)]
pub(crate) struct Registered {
    pub name: String,
    pub read: Option<Conversion>,
    pub write: Option<Conversion>,
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

fn unsupported(why: String) -> crate::errors::Fail {
    fail(MPI_ERR_UNSUPPORTED_DATAREP, why)
}

/// The external32 conversion of the packed bytes of `ty`: MPI_ERR_UNSUPPORTED_DATAREP if an
/// element of it changes size in external32 (MPI_LONG, MPI_UNSIGNED_LONG, MPI_WCHAR), which
/// mpicd's file views do not lay out.
fn external32(ty: &Datatype, what: &str) -> CResult<SameSize> {
    SameSize::of(ty).ok_or_else(|| {
        unsupported(format!(
            "external32 file access with a {what} whose elements change size in external32 \
             (MPI_LONG, MPI_UNSIGNED_LONG, MPI_WCHAR) is not supported"
        ))
    })
}

impl Registered {
    /// The file extent of predefined type `h`.
    fn extent_of(&self, h: MPI_Datatype) -> CResult<i64> {
        let mut ext: MPI_Aint = 0;
        // SAFETY: the application's extent function, called as MPI specifies.
        let code = unsafe { (self.extent)(h, &mut ext, self.extra_state as *mut c_void) };
        match code {
            MPI_SUCCESS => Ok(ext as i64),
            _ => Err(fail(
                code,
                "the data representation's extent function failed",
            )),
        }
    }

    /// Checks that every element of `ty` has its native size in this representation.
    fn check_sizes(&self, ty: &Datatype, what: &str) -> CResult<()> {
        let mut seen: Vec<usize> = Vec::new();
        let mut outcome = Ok(());
        // No memory is touched: the walk only computes addresses (from 0).
        TypedBuf::new(std::ptr::null(), 1, ty).for_each_basic(|_, _, b| {
            if outcome.is_err() || seen.contains(&b.id) {
                return;
            }
            seen.push(b.id);
            outcome = self
                .extent_of(b.id as MPI_Datatype)
                .and_then(|e| match e == b.size as i64 {
                    true => Ok(()),
                    false => Err(unsupported(format!(
                    "data representation \"{}\": a {what} element of {} bytes has a file extent \
                     of {e} (mpicd lays files out with the memory's sizes)",
                    self.name, b.size
                ))),
                });
        });
        outcome
    }
}

/// An access through a registered representation's conversion functions: the user's buffer
/// and datatype, as the functions take them.
struct UserRep {
    rep: Registered,
    userbuf: *mut c_void,
    h: MPI_Datatype,
    ty: Datatype,
}

// SAFETY: the buffer pointer is the application's, used only during the access that made it,
// on its thread.
unsafe impl Send for UserRep {}
// SAFETY: as above.
unsafe impl Sync for UserRep {}

impl UserRep {
    /// Calls `f` on the elements of the packed stream's `[at, at + len)`.
    fn call(&self, f: Conversion, at: u64, chunk: &mut [u8]) -> mpicd::Result<()> {
        let first = self.ty.elements_in(at);
        let count = self.ty.elements_in(at + chunk.len() as u64) - first;
        let extra = self.rep.extra_state as *mut c_void;
        let file = chunk.as_mut_ptr() as *mut c_void;
        // SAFETY: the application's conversion function, called as MPI specifies: `chunk`
        // holds the file bytes of `count` elements, the user's buffer is the access's.
        let code = unsafe {
            match f {
                Conversion::Int(f) => f(
                    self.userbuf,
                    self.h,
                    count as c_int,
                    file,
                    first as MPI_Offset,
                    extra,
                ),
                Conversion::Large(f) => f(
                    self.userbuf,
                    self.h,
                    count as MPI_Count,
                    file,
                    first as MPI_Offset,
                    extra,
                ),
            }
        };
        match code {
            MPI_SUCCESS => Ok(()),
            _ => Err(mpicd::Error::Io(
                mpicd::IoError::Conversion,
                format!(
                    "the conversion function of \"{}\" failed with {code}",
                    self.rep.name
                ),
            )),
        }
    }
}

impl Convert for UserRep {
    unsafe fn make_file_bytes(
        &self,
        buf: &TypedBuf,
        at: u64,
        chunk: &mut [u8],
    ) -> mpicd::Result<()> {
        match self.rep.write {
            Some(f) => self.call(f, at, chunk),
            None => {
                // SAFETY: the caller's promise (readable).
                unsafe { buf.pack(at, chunk) };
                Ok(())
            }
        }
    }

    unsafe fn store_file_bytes(
        &self,
        buf: &TypedBuf,
        at: u64,
        chunk: &mut [u8],
    ) -> mpicd::Result<()> {
        match self.rep.read {
            Some(f) => self.call(f, at, chunk),
            None => {
                // SAFETY: the caller's promise (writable, not overlapping).
                unsafe { buf.unpack(at, chunk) };
                Ok(())
            }
        }
    }
}

/// The conversion an access of `ty` (handle `h`) at `userbuf` needs in representation `name`.
pub(crate) fn conversion(
    name: &str,
    ty: &Datatype,
    h: MPI_Datatype,
    userbuf: *const c_void,
) -> CResult<Option<Box<dyn Convert>>> {
    if is_native(name) {
        return Ok(None);
    }
    if name == "external32" {
        return Ok(Some(Box::new(external32(ty, "datatype")?)));
    }
    let rep = registered(name)
        .ok_or_else(|| unsupported(format!("unknown data representation \"{name}\"")))?;
    if rep.read.is_none() && rep.write.is_none() {
        return Ok(None);
    }
    rep.check_sizes(ty, "datatype")?;
    Ok(Some(Box::new(UserRep {
        rep,
        userbuf: userbuf as *mut c_void,
        h,
        ty: ty.clone(),
    })))
}

/// Checks that a view of `etype` and `filetype` may use representation `name`: native,
/// internal, external32 (types whose elements keep their size), or registered (its file
/// extents those of the memory).
pub(crate) fn check(name: &str, etype: &Datatype, filetype: &Datatype) -> CResult<()> {
    if is_native(name) {
        return Ok(());
    }
    if name == "external32" {
        external32(etype, "etype")?;
        return external32(filetype, "filetype").map(drop);
    }
    let rep = registered(name)
        .ok_or_else(|| unsupported(format!("unsupported data representation \"{name}\"")))?;
    rep.check_sizes(etype, "etype")?;
    rep.check_sizes(filetype, "filetype")
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
        Some(r) if crate::types::is_predefined(h) => r.extent_of(h),
        _ => Ok(ty.extent()),
    }
}

/// The body of both registrations.
fn register(
    name: &'static str,
    datarep: *const c_char,
    read: Option<Conversion>,
    write: Option<Conversion>,
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
            read,
            write,
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
        read_conversion_fn.map(Conversion::Int),
        write_conversion_fn.map(Conversion::Int),
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
        read_conversion_fn.map(Conversion::Large),
        write_conversion_fn.map(Conversion::Large),
        dtype_file_extent_fn,
        extra_state,
    )
}
