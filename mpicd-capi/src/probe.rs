//! Probes and matched receives: Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv (and their `_c`
//! forms), the message handle table, and the extension `MPIX_Message_shape`, which tells the
//! receiver of a matched custom-typed message its packed size and region lengths before it
//! provides buffers.

use crate::abi::*;
use crate::comms::{default_errh, errh, run_on};
use crate::custom::Operation;
use crate::env::{out, read_arg, require};
use crate::errors::{fail, run, CResult, Errh};
use crate::handles::{Table, MESSAGE_BASE};
use crate::p2p::{check_buf, count_of, recv_tag};
use crate::requests::{complete_now, insert, insert_complete};
use crate::status;
use crate::types::{self, byte_len, Dtype};
use mpicd::{Message, Request};
use std::ffi::{c_int, c_void};

/// A matched message and the error handler of its communicator.
struct MsgEntry {
    msg: Message,
    errh: Errh,
}

static MESSAGES: Table<MsgEntry> = Table::new(MESSAGE_BASE);

/// Drops every unreceived message (finalize).
pub(crate) fn discard_all() {
    drop(MESSAGES.drain());
}

/// Checks for a message without receiving it.
#[no_mangle]
pub unsafe extern "C" fn MPI_Iprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    run_on("Iprobe", comm, |c| {
        require(flag, "flag")?;
        match c.iprobe(source, recv_tag(tag)?)? {
            Some(s) => {
                // SAFETY: MPI_STATUS_IGNORE or a writable status.
                unsafe { status::store(status, status::from_core(&s, None)) };
                out(flag, 1)
            }
            None => out(flag, 0),
        }
    })
}

/// Waits for a message without receiving it.
#[no_mangle]
pub unsafe extern "C" fn MPI_Probe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    run_on("Probe", comm, |c| {
        let s = c.probe(source, recv_tag(tag)?)?;
        // SAFETY: MPI_STATUS_IGNORE or a writable status.
        unsafe { status::store(status, status::from_core(&s, None)) };
        Ok(())
    })
}

fn message_handle(found: Message, s: &mpicd::Status, errh: Errh) -> MPI_Message {
    if s.source == mpicd::PROC_NULL {
        MPI_MESSAGE_NO_PROC
    } else {
        MESSAGES.insert(MsgEntry { msg: found, errh }) as MPI_Message
    }
}

/// Takes a matching message if there is one; receive it with MPI_Mrecv or MPI_Imrecv.
#[no_mangle]
pub unsafe extern "C" fn MPI_Improbe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    run_on("Improbe", comm, |c| {
        if flag.is_null() || message.is_null() {
            return Err(fail(MPI_ERR_ARG, "null flag or message"));
        }
        match c.improbe(source, recv_tag(tag)?)? {
            Some((m, s)) => {
                out(message, message_handle(m, &s, errh(comm)))?;
                // SAFETY: MPI_STATUS_IGNORE or a writable status.
                unsafe { status::store(status, status::from_core(&s, None)) };
                out(flag, 1)
            }
            None => out(flag, 0),
        }
    })
}

/// Waits for a matching message and takes it.
#[no_mangle]
pub unsafe extern "C" fn MPI_Mprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    run_on("Mprobe", comm, |c| {
        require(message, "message")?;
        let (m, s) = c.mprobe(source, recv_tag(tag)?)?;
        out(message, message_handle(m, &s, errh(comm)))?;
        // SAFETY: MPI_STATUS_IGNORE or a writable status.
        unsafe { status::store(status, status::from_core(&s, None)) };
        Ok(())
    })
}

/// Starts receiving the message of `*message` (NO_PROC: completes at once); sets the handle
/// to MPI_MESSAGE_NULL.
///
/// # Safety
/// `buf` must be writable and untouched until the request completes.
unsafe fn start_mrecv(
    buf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
) -> CResult<Option<(Request<'static>, Option<i64>, Errh)>> {
    let h = read_arg(message, "message pointer")?;
    let dtype = types::get(datatype)?;
    if h == MPI_MESSAGE_NO_PROC {
        out(message, MPI_MESSAGE_NULL)?;
        return Ok(None);
    }
    let entry = MESSAGES
        .remove(h as usize)
        .ok_or_else(|| fail(MPI_ERR_REQUEST, "unknown or already received message"))?;
    out(message, MPI_MESSAGE_NULL)?;
    let (req, cc) = match dtype {
        Dtype::Basic(b) => {
            let len = byte_len(count, b)?;
            check_buf(buf, len)?;
            // SAFETY: forwarded from the caller.
            (unsafe { entry.msg.irecv_raw(buf as *mut u8, len) }?, None)
        }
        Dtype::Custom(t) => {
            let count = count_of(count)?;
            let op = Operation::start(t, buf, count)?;
            (entry.msg.irecv_state(Box::new(op))?, Some(count))
        }
        Dtype::Derived(t) => {
            let count = count_of(count)? as u64;
            // SAFETY: forwarded from the caller.
            (
                unsafe { entry.msg.irecv_typed_raw(buf as *mut u8, count, &t) }?,
                None,
            )
        }
    };
    Ok(Some((req, cc, entry.errh)))
}

fn message_errh(message: *mut MPI_Message) -> Errh {
    if message.is_null() {
        return default_errh();
    }
    // SAFETY: checked non-null.
    let h = unsafe { *message } as usize;
    MESSAGES.with(h, |e| e.errh).unwrap_or_else(default_errh)
}

/// Shared body of [`MPI_Mrecv`] and [`MPI_Mrecv_c`].
///
/// # Safety
/// `buf` must be writable for the duration of the call.
unsafe fn mrecv(
    name: &'static str,
    buf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    run(name, message_errh(message), |_| {
        // SAFETY: the buffer is valid for this blocking call.
        match unsafe { start_mrecv(buf, count, datatype, message) }? {
            // SAFETY: MPI_STATUS_IGNORE or a writable status.
            Some((req, cc, _)) => unsafe { complete_now(req, cc, status) },
            None => {
                // SAFETY: as above.
                unsafe { status::store(status, status::proc_null()) };
                Ok(())
            }
        }
    })
}

/// Shared body of [`MPI_Imrecv`] and [`MPI_Imrecv_c`].
///
/// # Safety
/// `buf` must stay writable and untouched until the request completes.
unsafe fn imrecv(
    name: &'static str,
    buf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> c_int {
    run(name, message_errh(message), |_| {
        require(request, "request pointer")?;
        // SAFETY: MPI requires the buffer to stay valid until completion.
        let started = unsafe { start_mrecv(buf, count, datatype, message) }?;
        let h = match started {
            Some((req, cc, e)) => insert(req, e, cc),
            // MPI_MESSAGE_NO_PROC: a receive from MPI_PROC_NULL, complete at once.
            None => insert_complete(status::proc_null(), default_errh()),
        };
        out(request, h)
    })
}

/// Receives a message taken by a matched probe.
#[no_mangle]
pub unsafe extern "C" fn MPI_Mrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: MPI's rules for the buffer.
    unsafe { mrecv("Mrecv", buf, count as i64, datatype, message, status) }
}

/// [`MPI_Mrecv`] with an MPI_Count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Mrecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: MPI's rules for the buffer.
    unsafe { mrecv("Mrecv_c", buf, count, datatype, message, status) }
}

/// Starts receiving a message taken by a matched probe.
#[no_mangle]
pub unsafe extern "C" fn MPI_Imrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: MPI's rules for the buffer.
    unsafe { imrecv("Imrecv", buf, count as i64, datatype, message, request) }
}

/// [`MPI_Imrecv`] with an MPI_Count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Imrecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: MPI's rules for the buffer.
    unsafe { imrecv("Imrecv_c", buf, count, datatype, message, request) }
}

/// mpicd extension: the shape of a matched custom-typed message, before receiving it: its
/// packed size in bytes, its number of regions, and (for the first `max_regions`) each
/// region's length in elements of its type and that type (a predefined one). Arrays may be
/// NULL when `max_regions` is 0. A contiguous message gives MPI_ERR_TYPE.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Message_shape(
    message: MPI_Message,
    packed_size: *mut MPI_Count,
    region_count: *mut MPI_Count,
    max_regions: MPI_Count,
    region_lens: *mut MPI_Count,
    region_types: *mut MPI_Datatype,
) -> c_int {
    let mut m = message;
    run("MPIX_Message_shape", message_errh(&mut m), |_| {
        if max_regions < 0 {
            return Err(fail(MPI_ERR_COUNT, "negative max_regions"));
        }
        if max_regions > 0 && (region_lens.is_null() || region_types.is_null()) {
            return Err(fail(MPI_ERR_ARG, "null region arrays"));
        }
        let shape = MESSAGES
            .with(message as usize, |e| e.msg.shape())
            .ok_or_else(|| fail(MPI_ERR_REQUEST, "unknown or already received message"))??
            .ok_or_else(|| fail(MPI_ERR_TYPE, "not a custom-typed message"))?;
        out(packed_size, shape.packed_bytes as MPI_Count)?;
        out(region_count, shape.region_count() as MPI_Count)?;
        for (i, r) in shape.regions().take(max_regions as usize).enumerate() {
            // SAFETY: the caller gives room for `max_regions` entries in each array.
            unsafe {
                region_lens.add(i).write(r.len() as MPI_Count);
                region_types.add(i).write(types::handle_of(r.elem));
            }
        }
        Ok(())
    })
}
