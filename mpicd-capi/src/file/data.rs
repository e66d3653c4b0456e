//! The data access calls (MPI 4.1 section 14.4): reads and writes at explicit offsets
//! (`_at`), at the individual file pointer, at the shared file pointer (`_shared`) and in rank
//! order (`_ordered`), blocking, nonblocking (`MPI_File_i*`: the transfer is done when the call
//! returns, and the request is complete, as the standard allows) and collective (`_all`, split
//! `_begin`/`_end`). [`access`] is the one body; the entry points only name their form.

use super::{errh, get, view::io_type, with_entry};
use crate::abi::*;
use crate::env::{out, require};
use crate::errors::{fail, run, CResult};
use crate::status;
use mpicd::file::Pointer;
use mpicd::TypedBuf;
use std::ffi::{c_int, c_void};

/// Where an access starts: the core's pointer, before an explicit offset is known.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    At,
    Individual,
    Shared,
    Ordered,
}

/// How an access completes.
pub(crate) enum Done {
    /// Blocking: the status goes here (or nowhere, MPI_STATUS_IGNORE).
    Status(*mut MPI_Status),
    /// Nonblocking: a complete request goes here.
    Request(*mut MPI_Request),
    /// The begin of a split collective: the status waits for the end.
    Begin,
}

/// One data access call: its form and arguments.
pub(crate) struct Call {
    pub name: &'static str,
    pub fh: MPI_File,
    pub via: Via,
    pub offset: MPI_Offset,
    pub write: bool,
    pub collective: bool,
    pub buf: *const c_void,
    pub count: MPI_Count,
    pub datatype: MPI_Datatype,
}

/// The body of every data access call.
///
/// # Safety
/// MPI's rules for the buffer: `count` instances of `datatype` at `buf`, readable for a write
/// and writable for a read.
pub(crate) unsafe fn access(c: Call, done: Done) -> c_int {
    run(c.name, errh(c.fh), |_| {
        let f = get(c.fh)?;
        let pointer = match c.via {
            Via::At => Pointer::Explicit(c.offset),
            Via::Individual => Pointer::Individual,
            Via::Shared => Pointer::Shared,
            Via::Ordered => Pointer::Ordered,
        };
        let checked = (|| {
            if c.count < 0 {
                return Err(fail(MPI_ERR_COUNT, format!("negative count {}", c.count)));
            }
            let ty = io_type(c.datatype)?;
            if c.buf.is_null()
                && c.count > 0
                && ty.size() > 0
                && crate::types::is_predefined(c.datatype)
            {
                return Err(fail(MPI_ERR_BUFFER, "null buffer with a non-zero count"));
            }
            if let Done::Request(r) = done {
                require(r, "request")?;
            }
            let conv = super::datarep::conversion(f.view().datarep(), &ty, c.datatype, c.buf)?;
            if let Done::Begin = done {
                f.begin_split()?;
            }
            Ok((ty, conv))
        })();
        let (ty, conv) = match checked {
            Ok(x) => x,
            Err(e) => {
                // The other members of a collective call must not wait for this one.
                if c.collective {
                    f.join_failed(pointer)?;
                }
                return Err(e);
            }
        };
        let conv = conv.as_deref();
        let buf = TypedBuf::new(c.buf as *const u8, c.count as u64, &ty);
        // SAFETY: MPI's rules for the buffer, as the caller promises.
        let moved = unsafe {
            match c.write {
                true => f.write(pointer, &buf, c.collective, conv),
                false => f.read(pointer, &buf, c.collective, conv),
            }
        };
        let bytes = match moved {
            Ok(b) => b,
            Err(e) => {
                if let Done::Begin = done {
                    let _ = f.end_split();
                }
                return Err(e.into());
            }
        };
        let st = status::of_bytes(bytes);
        match done {
            // SAFETY: MPI_STATUS_IGNORE or a writable status.
            Done::Status(p) => unsafe { status::store(p, st) },
            Done::Request(r) => out(r, crate::requests::insert_complete(st, errh(c.fh)))?,
            Done::Begin => with_entry(c.fh, |e| e.split = Some(st))?,
        }
        Ok(())
    })
}

/// The body of the ends of split collectives: the status of the begin.
///
/// # Safety
/// `st` is MPI_STATUS_IGNORE or a writable status.
pub(crate) unsafe fn end(name: &'static str, fh: MPI_File, st: *mut MPI_Status) -> c_int {
    run(name, errh(fh), |_| -> CResult<()> {
        let f = get(fh)?;
        f.end_split()?;
        let s = with_entry(fh, |e| e.split.take())?.unwrap_or_else(status::empty);
        // SAFETY: as the caller promises.
        unsafe { status::store(st, s) };
        Ok(())
    })
}

/// Ends the split collective begun by `MPI_File_read_all_begin` and gives its status. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_all_end(
    fh: MPI_File,
    buf: *mut c_void,
    status: *mut MPI_Status,
) -> c_int {
    let _ = buf;
    // SAFETY: MPI_STATUS_IGNORE or a writable status.
    unsafe { end("File_read_all_end", fh, status) }
}

/// Ends the split collective begun by `MPI_File_read_at_all_begin` and gives its status. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_at_all_end(
    fh: MPI_File,
    buf: *mut c_void,
    status: *mut MPI_Status,
) -> c_int {
    let _ = buf;
    // SAFETY: MPI_STATUS_IGNORE or a writable status.
    unsafe { end("File_read_at_all_end", fh, status) }
}

/// Ends the split collective begun by `MPI_File_read_ordered_begin` and gives its status. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_read_ordered_end(
    fh: MPI_File,
    buf: *mut c_void,
    status: *mut MPI_Status,
) -> c_int {
    let _ = buf;
    // SAFETY: MPI_STATUS_IGNORE or a writable status.
    unsafe { end("File_read_ordered_end", fh, status) }
}

/// Ends the split collective begun by `MPI_File_write_all_begin` and gives its status. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_all_end(
    fh: MPI_File,
    buf: *const c_void,
    status: *mut MPI_Status,
) -> c_int {
    let _ = buf;
    // SAFETY: MPI_STATUS_IGNORE or a writable status.
    unsafe { end("File_write_all_end", fh, status) }
}

/// Ends the split collective begun by `MPI_File_write_at_all_begin` and gives its status. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_at_all_end(
    fh: MPI_File,
    buf: *const c_void,
    status: *mut MPI_Status,
) -> c_int {
    let _ = buf;
    // SAFETY: MPI_STATUS_IGNORE or a writable status.
    unsafe { end("File_write_at_all_end", fh, status) }
}

/// Ends the split collective begun by `MPI_File_write_ordered_begin` and gives its status. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_File_write_ordered_end(
    fh: MPI_File,
    buf: *const c_void,
    status: *mut MPI_Status,
) -> c_int {
    let _ = buf;
    // SAFETY: MPI_STATUS_IGNORE or a writable status.
    unsafe { end("File_write_ordered_end", fh, status) }
}
