//! File views and file pointers: `MPI_File_set_view` / `_get_view`, `_get_type_extent`,
//! `_get_byte_offset`, `_seek`, `_get_position` and their shared-pointer forms.

use super::{datarep, get, run_on_file, with_entry};
use crate::abi::*;
use crate::env::{out, require};
use crate::errors::{fail, write_c_string, CResult};
use crate::types::{self, Dtype};
use mpicd::file::Whence;
use mpicd::Datatype;
use std::ffi::{c_char, c_int, CStr};

/// The core datatype of a handle used in file access: predefined, or derived and committed.
pub(crate) fn io_type(h: MPI_Datatype) -> CResult<Datatype> {
    match types::get(h)? {
        Dtype::Custom(_) => Err(fail(
            MPI_ERR_TYPE,
            "a custom datatype cannot be used in file access",
        )),
        Dtype::Basic(_) | Dtype::Derived(_) => types::datatype(h),
    }
}

fn whence_of(w: c_int) -> CResult<Whence> {
    match w {
        MPI_SEEK_SET => Ok(Whence::Set),
        MPI_SEEK_CUR => Ok(Whence::Current),
        MPI_SEEK_END => Ok(Whence::End),
        _ => Err(fail(MPI_ERR_ARG, format!("invalid whence {w}"))),
    }
}

/// Sets the file view of this member: data from byte `disp` (MPI_DISPLACEMENT_CURRENT: the
/// shared file pointer's position, for a sequential file), counted in `etype`s, laid out by
/// `filetype` tiles, in representation `datarep` ("native", "internal", "external32", or one
/// registered by MPI_Register_datarep without conversion functions). Resets both file pointers. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_set_view(
    fh: MPI_File,
    disp: MPI_Offset,
    etype: MPI_Datatype,
    filetype: MPI_Datatype,
    datarep: *const c_char,
    info: MPI_Info,
) -> c_int {
    run_on_file("File_set_view", fh, |f| {
        require(datarep, "datarep")?;
        // SAFETY: non-null; MPI requires a NUL-terminated string.
        let rep = unsafe { CStr::from_ptr(datarep) }
            .to_string_lossy()
            .into_owned();
        let disp = match disp {
            MPI_DISPLACEMENT_CURRENT => None,
            d if d < 0 => return Err(fail(MPI_ERR_ARG, format!("negative displacement {d}"))),
            d => Some(d as u64),
        };
        let (e, t) = (io_type(etype)?, io_type(filetype)?);
        datarep::check(&rep, &e, &t)?;
        if info != MPI_INFO_NULL {
            crate::info::with(info, |_| ())?;
        }
        f.set_view(disp, &e, &t, &rep)?;
        with_entry(fh, |en| {
            en.etype = etype;
            en.filetype = filetype;
        })
    })
}

/// A handle for a view's type: the predefined handle itself, or a new handle of a derived
/// type (the caller frees it).
fn view_type(h: MPI_Datatype, ty: &Datatype) -> MPI_Datatype {
    match types::is_predefined(h) {
        true => h,
        false => types::insert_derived_as(ty.clone(), true, false),
    }
}

/// The view: displacement, etype, filetype (derived ones as new handles) and data
/// representation (`datarep` needs MPI_MAX_DATAREP_STRING bytes).
#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_view(
    fh: MPI_File,
    disp: *mut MPI_Offset,
    etype: *mut MPI_Datatype,
    filetype: *mut MPI_Datatype,
    datarep: *mut c_char,
) -> c_int {
    run_on_file("File_get_view", fh, |f| {
        require(disp, "disp")?;
        require(etype, "etype")?;
        require(filetype, "filetype")?;
        require(datarep, "datarep")?;
        let v = f.view();
        let (eh, th) = with_entry(fh, |e| (e.etype, e.filetype))?;
        out(disp, v.disp() as MPI_Offset)?;
        out(etype, view_type(eh, v.etype()))?;
        out(filetype, view_type(th, v.filetype()))?;
        // SAFETY: MPI requires MPI_MAX_DATAREP_STRING writable bytes.
        unsafe { write_c_string(datarep, MPI_MAX_DATAREP_STRING as usize, v.datarep()) };
        Ok(())
    })
}

/// The extent of `datatype` in the file's data representation.
fn type_extent(fh: MPI_File, datatype: MPI_Datatype) -> CResult<i64> {
    let f = get(fh)?;
    let t = types::datatype(datatype)?;
    datarep::extent(f.view().datarep(), datatype, &t)
}

/// The extent of `datatype` in the file's data representation.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_type_extent(
    fh: MPI_File,
    datatype: MPI_Datatype,
    extent: *mut MPI_Aint,
) -> c_int {
    run_on_file("File_get_type_extent", fh, |_| {
        require(extent, "extent")?;
        out(extent, type_extent(fh, datatype)? as MPI_Aint)
    })
}

/// [`MPI_File_get_type_extent`] with an MPI_Count extent.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_type_extent_c(
    fh: MPI_File,
    datatype: MPI_Datatype,
    extent: *mut MPI_Count,
) -> c_int {
    run_on_file("File_get_type_extent_c", fh, |_| {
        require(extent, "extent")?;
        out(extent, type_extent(fh, datatype)? as MPI_Count)
    })
}

/// The absolute byte position in the file of `offset` etypes of the view.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_byte_offset(
    fh: MPI_File,
    offset: MPI_Offset,
    disp: *mut MPI_Offset,
) -> c_int {
    run_on_file("File_get_byte_offset", fh, |f| {
        require(disp, "disp")?;
        if f.amode().sequential {
            return Err(fail(
                MPI_ERR_UNSUPPORTED_OPERATION,
                "MPI_File_get_byte_offset on a file opened MPI_MODE_SEQUENTIAL",
            ));
        }
        let v = f.view();
        let at = v.stream_offset(offset)?;
        let byte = match v.filetype().size() {
            0 => v.disp(),
            _ => v.file_offset(at)?,
        };
        out(disp, byte as MPI_Offset)
    })
}

/// Moves the individual file pointer to `offset` etypes from the start of the view
/// (MPI_SEEK_SET), the current position (MPI_SEEK_CUR) or the end of the file (MPI_SEEK_END).
#[no_mangle]
pub unsafe extern "C" fn MPI_File_seek(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> c_int {
    run_on_file("File_seek", fh, |f| {
        f.seek(offset, whence_of(whence)?).map_err(Into::into)
    })
}

/// The individual file pointer, in etypes from the start of the view.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_position(fh: MPI_File, offset: *mut MPI_Offset) -> c_int {
    run_on_file("File_get_position", fh, |f| {
        require(offset, "offset")?;
        out(offset, f.position()?)
    })
}

/// Moves the shared file pointer as [`MPI_File_seek`] does the individual one. Collective:
/// every member passes the same arguments.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_seek_shared(
    fh: MPI_File,
    offset: MPI_Offset,
    whence: c_int,
) -> c_int {
    run_on_file("File_seek_shared", fh, |f| {
        f.seek_shared(offset, whence_of(whence)?)
            .map_err(Into::into)
    })
}

/// The shared file pointer, in etypes from the start of the view.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_position_shared(
    fh: MPI_File,
    offset: *mut MPI_Offset,
) -> c_int {
    run_on_file("File_get_position_shared", fh, |f| {
        require(offset, "offset")?;
        out(offset, f.position_shared()?)
    })
}
