//! File handles (MPI 4.1 chapter 14): the table, each file's error handler and view handles,
//! the default error handler of files (the one on `MPI_FILE_NULL`, `MPI_ERRORS_RETURN` until
//! changed, as the standard says), and the calls that open, close, delete and describe files
//! (`MPI_File_open`, `_close`, `_delete`, `_set_size`, `_preallocate`, `_get_size`, `_sync`,
//! `_get_group`, `_get_amode`, info, atomicity and error handlers). What a file does is
//! [`mpicd::file::File`]'s; views and pointers are in [`view`], data access in [`data`] (the
//! entry points in [`read`], [`write`](mod@write) and their large-count forms [`read_c`], [`write_c`]),
//! data representations in [`datarep`].

pub mod data;
pub mod datarep;
pub mod read;
pub mod read_c;
pub mod view;
pub mod write;
pub mod write_c;

use crate::abi::*;
use crate::comms::{default_errh, run_on};
use crate::env::{check_live, out, require};
use crate::errhandlers::{create, release, resolve_for, retain, ObjKind, UserFn};
use crate::errors::{fail, run, CResult, Errh};
use crate::handles::{Table, FILE_BASE};
use mpicd::file::{Access, Amode, File};
use mpicd::Info;
use std::ffi::{c_char, c_int, CStr};
use std::sync::{Arc, Mutex};

/// A live file, its error handler, the handles of its view's types, and the status of a split
/// collective begun on it.
pub(crate) struct FileEntry {
    pub file: Arc<File>,
    pub errh: Errh,
    /// The etype and filetype handles given to `MPI_File_set_view`.
    pub etype: MPI_Datatype,
    pub filetype: MPI_Datatype,
    pub split: Option<MPI_Status>,
}

// SAFETY: the handles are plain values, only handed back to the application.
unsafe impl Send for FileEntry {}

pub(crate) static FILES: Table<FileEntry> = Table::new(FILE_BASE);

/// The error handler of files opened from now on, and of calls on `MPI_FILE_NULL`.
static DEFAULT: Mutex<Errh> = Mutex::new(Errh::Return);

fn default_file_errh() -> Errh {
    DEFAULT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .bound_to(MPI_FILE_NULL as usize)
}

fn no_file() -> crate::errors::Fail {
    fail(MPI_ERR_FILE, "unknown or closed file")
}

/// The file of a handle.
pub(crate) fn get(h: MPI_File) -> CResult<Arc<File>> {
    check_live()?;
    if h == MPI_FILE_NULL || h.is_null() {
        return Err(fail(MPI_ERR_FILE, "MPI_FILE_NULL is not a file"));
    }
    FILES
        .with(h as usize, |e| Arc::clone(&e.file))
        .ok_or_else(no_file)
}

/// Runs `f` on the entry of `h`.
pub(crate) fn with_entry<R>(h: MPI_File, f: impl FnOnce(&mut FileEntry) -> R) -> CResult<R> {
    FILES.with(h as usize, f).ok_or_else(no_file)
}

/// The error handler of `h`, or the default one of files for an invalid handle.
pub(crate) fn errh(h: MPI_File) -> Errh {
    FILES
        .with(h as usize, |e| e.errh.bound_to(h as usize))
        .unwrap_or_else(default_file_errh)
}

/// Runs a call on file `fh` under its error handler.
pub(crate) fn run_on_file(
    name: &'static str,
    fh: MPI_File,
    body: impl FnOnce(Arc<File>) -> CResult<()>,
) -> c_int {
    run(name, errh(fh), |_| body(get(fh)?))
}

/// The hints of an info argument (MPI_INFO_NULL: none).
fn hints(info: MPI_Info) -> CResult<Info> {
    match info == MPI_INFO_NULL {
        true => Ok(Info::new()),
        false => crate::info::with(info, Info::clone),
    }
}

/// A C string argument.
fn c_str(p: *const c_char, what: &str) -> CResult<String> {
    require(p, what)?;
    // SAFETY: non-null; MPI requires a NUL-terminated string.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The access mode of `MPI_File_open`'s bits.
fn amode_of(bits: c_int) -> CResult<Amode> {
    let known = MPI_MODE_APPEND
        | MPI_MODE_CREATE
        | MPI_MODE_DELETE_ON_CLOSE
        | MPI_MODE_EXCL
        | MPI_MODE_RDONLY
        | MPI_MODE_RDWR
        | MPI_MODE_SEQUENTIAL
        | MPI_MODE_UNIQUE_OPEN
        | MPI_MODE_WRONLY;
    if bits & !known != 0 {
        return Err(fail(
            MPI_ERR_AMODE,
            format!("unknown access mode bits {bits:#x}"),
        ));
    }
    let access = match (
        bits & MPI_MODE_RDONLY != 0,
        bits & MPI_MODE_WRONLY != 0,
        bits & MPI_MODE_RDWR != 0,
    ) {
        (true, false, false) => Access::ReadOnly,
        (false, true, false) => Access::WriteOnly,
        (false, false, true) => Access::ReadWrite,
        _ => {
            return Err(fail(
                MPI_ERR_AMODE,
                "exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR is required",
            ))
        }
    };
    let has = |b: c_int| bits & b != 0;
    Ok(Amode {
        access,
        create: has(MPI_MODE_CREATE),
        excl: has(MPI_MODE_EXCL),
        delete_on_close: has(MPI_MODE_DELETE_ON_CLOSE),
        unique_open: has(MPI_MODE_UNIQUE_OPEN),
        sequential: has(MPI_MODE_SEQUENTIAL),
        append: has(MPI_MODE_APPEND),
    })
}

/// The bits of an access mode.
fn bits_of(a: Amode) -> c_int {
    let mut bits = match a.access {
        Access::ReadOnly => MPI_MODE_RDONLY,
        Access::WriteOnly => MPI_MODE_WRONLY,
        Access::ReadWrite => MPI_MODE_RDWR,
    };
    for (on, b) in [
        (a.create, MPI_MODE_CREATE),
        (a.excl, MPI_MODE_EXCL),
        (a.delete_on_close, MPI_MODE_DELETE_ON_CLOSE),
        (a.unique_open, MPI_MODE_UNIQUE_OPEN),
        (a.sequential, MPI_MODE_SEQUENTIAL),
        (a.append, MPI_MODE_APPEND),
    ] {
        if on {
            bits |= b;
        }
    }
    bits
}

/// Opens the file `filename` on every member of `comm` with access mode `amode` (`MPI_MODE_*`
/// bits) and hints `info`. Collective. Errors go to the default file error handler (the one
/// on MPI_FILE_NULL); a failure leaves `*fh` as it was.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_open(
    comm: MPI_Comm,
    filename: *const c_char,
    amode: c_int,
    info: MPI_Info,
    fh: *mut MPI_File,
) -> c_int {
    // A bad communicator is the communicator's error; the rest are the files' default's.
    let mut opened = None;
    let code = run_on("File_open", comm, |c| {
        opened = Some(c);
        Ok(())
    });
    let Some(c) = opened else {
        return code;
    };
    run("File_open", default_file_errh(), |_| {
        require(fh, "fh")?;
        let name = c_str(filename, "filename")?;
        let mode = amode_of(amode)?;
        let hints = hints(info)?;
        if c.is_inter() {
            return Err(fail(MPI_ERR_COMM, "MPI_File_open on an intercommunicator"));
        }
        let file = File::open(&c, &name, mode, hints)?;
        let errh = *DEFAULT.lock().unwrap_or_else(|p| p.into_inner());
        retain(errh);
        let h = FILES.insert(FileEntry {
            file: Arc::new(file),
            errh,
            etype: MPI_BYTE,
            filetype: MPI_BYTE,
            split: None,
        });
        out(fh, h as MPI_File)
    })
}

/// Closes a file (collective) and sets the handle to MPI_FILE_NULL; with
/// MPI_MODE_DELETE_ON_CLOSE the file is deleted.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_close(fh: *mut MPI_File) -> c_int {
    let h = if fh.is_null() {
        MPI_FILE_NULL
    } else {
        // SAFETY: non-null; MPI requires a readable handle.
        unsafe { *fh }
    };
    run("File_close", errh(h), |_| {
        require(fh, "fh")?;
        get(h)?;
        let entry = FILES.remove(h as usize).ok_or_else(no_file)?;
        release(entry.errh);
        out(fh, MPI_FILE_NULL)?;
        match Arc::try_unwrap(entry.file) {
            Ok(f) => f.close().map_err(Into::into),
            // Another thread is inside a call on it: that call finishes with it.
            Err(_) => Err(fail(MPI_ERR_FILE, "the file is in use by another thread")),
        }
    })
}

/// Deletes the file `filename` (MPI_ERR_NO_SUCH_FILE if there is none).
#[no_mangle]
pub unsafe extern "C" fn MPI_File_delete(filename: *const c_char, info: MPI_Info) -> c_int {
    run("File_delete", default_file_errh(), |_| {
        check_live()?;
        let name = c_str(filename, "filename")?;
        hints(info)?;
        File::delete(&name).map_err(Into::into)
    })
}

/// Truncates or extends the file to `size` bytes. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_set_size(fh: MPI_File, size: MPI_Offset) -> c_int {
    run_on_file("File_set_size", fh, |f| {
        let size =
            u64::try_from(size).map_err(|_| fail(MPI_ERR_ARG, format!("negative size {size}")))?;
        f.set_size(size).map_err(Into::into)
    })
}

/// Makes the file at least `size` bytes, with its storage allocated. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_preallocate(fh: MPI_File, size: MPI_Offset) -> c_int {
    run_on_file("File_preallocate", fh, |f| {
        let size =
            u64::try_from(size).map_err(|_| fail(MPI_ERR_ARG, format!("negative size {size}")))?;
        f.preallocate(size).map_err(Into::into)
    })
}

/// The size of the file in bytes.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_size(fh: MPI_File, size: *mut MPI_Offset) -> c_int {
    run_on_file("File_get_size", fh, |f| {
        require(size, "size")?;
        out(size, f.size()? as MPI_Offset)
    })
}

/// Transfers the data every member wrote to storage. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_sync(fh: MPI_File) -> c_int {
    run_on_file("File_sync", fh, |f| f.sync().map_err(Into::into))
}

/// The group of the members that opened the file (a new group handle).
#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_group(fh: MPI_File, group: *mut MPI_Group) -> c_int {
    run_on_file("File_get_group", fh, |f| {
        require(group, "group")?;
        out(group, crate::groups::insert(f.group(), None))
    })
}

/// The access mode the file was opened with.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_amode(fh: MPI_File, amode: *mut c_int) -> c_int {
    run_on_file("File_get_amode", fh, |f| {
        require(amode, "amode")?;
        out(amode, bits_of(f.amode()))
    })
}

/// Makes accesses atomic (`flag` true: each holds a lock on the file) or not. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_set_atomicity(fh: MPI_File, flag: c_int) -> c_int {
    run_on_file("File_set_atomicity", fh, |f| {
        f.set_atomicity(flag != 0).map_err(Into::into)
    })
}

/// Whether accesses are atomic.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_atomicity(fh: MPI_File, flag: *mut c_int) -> c_int {
    run_on_file("File_get_atomicity", fh, |f| {
        require(flag, "flag")?;
        out(flag, f.atomicity() as c_int)
    })
}

/// Replaces the file's hints (mpicd keeps them and acts on none). Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_set_info(fh: MPI_File, info: MPI_Info) -> c_int {
    run_on_file("File_set_info", fh, |f| {
        f.set_info(hints(info)?);
        Ok(())
    })
}

/// A new info object with the file's hints.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_info(fh: MPI_File, info_used: *mut MPI_Info) -> c_int {
    run_on_file("File_get_info", fh, |f| {
        require(info_used, "info_used")?;
        out(info_used, crate::info::insert(f.info()))
    })
}

/// A new error handler for files calling `file_errhandler_fn(&file, &code)`.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_create_errhandler(
    file_errhandler_fn: MPI_File_errhandler_function,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    run("File_create_errhandler", default_errh(), |_| {
        check_live()?;
        let f = file_errhandler_fn.ok_or_else(|| fail(MPI_ERR_ARG, "null function"))?;
        require(errhandler, "errhandler")?;
        out(errhandler, create(UserFn::File(f)))
    })
}

/// Attaches an error handler to `file`; on MPI_FILE_NULL, sets the default handler of files
/// opened later (and of calls given no valid file).
#[no_mangle]
pub unsafe extern "C" fn MPI_File_set_errhandler(
    file: MPI_File,
    errhandler: MPI_Errhandler,
) -> c_int {
    run("File_set_errhandler", errh(file), |_| {
        check_live()?;
        let new = resolve_for(errhandler, ObjKind::File)?;
        retain(new);
        let old = match file {
            MPI_FILE_NULL => Some(std::mem::replace(
                &mut *DEFAULT.lock().unwrap_or_else(|p| p.into_inner()),
                new,
            )),
            _ => FILES.with(file as usize, |e| std::mem::replace(&mut e.errh, new)),
        };
        match old {
            Some(old) => {
                release(old);
                Ok(())
            }
            None => {
                release(new);
                Err(no_file())
            }
        }
    })
}

/// The error handler of `file` (of files by default for MPI_FILE_NULL); a new reference.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_errhandler(
    file: MPI_File,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    run("File_get_errhandler", errh(file), |_| {
        check_live()?;
        require(errhandler, "errhandler")?;
        let e = match file {
            MPI_FILE_NULL => *DEFAULT.lock().unwrap_or_else(|p| p.into_inner()),
            _ => with_entry(file, |e| e.errh)?,
        };
        retain(e);
        out(errhandler, e.handle())
    })
}

/// Invokes the file's error handler (the default one of files for MPI_FILE_NULL) with
/// `errorcode`; returns MPI_SUCCESS when the handler returns.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_call_errhandler(fh: MPI_File, errorcode: c_int) -> c_int {
    let handler = errh(fh);
    run("File_call_errhandler", handler, |_| {
        check_live()?;
        if fh != MPI_FILE_NULL {
            get(fh)?;
        }
        let what = fail(errorcode, "raised by MPI_File_call_errhandler");
        crate::errors::raise("File_call_errhandler", handler, what);
        Ok(())
    })
}

/// Closes every file left open at finalize (without synchronization).
pub(crate) fn free_all() {
    for e in FILES.drain() {
        drop(e);
    }
}
