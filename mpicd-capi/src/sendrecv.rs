//! Send-receive calls: MPI_Sendrecv, MPI_Sendrecv_replace, the MPI-4 non-blocking
//! MPI_Isendrecv and MPI_Isendrecv_replace, and their `_c` forms. Each starts its receive, then
//! its send, as one [`Pair`] that completes when both have; its status is the receive's. The
//! `_replace` forms receive into a temporary of the message's size (predefined and derived
//! types) and place it in the buffer once the send from that buffer is done.

use crate::abi::*;
use crate::blocks::Elem;
use crate::comms::{errh, run_on, run_on_with};
use crate::detached::Detached;
use crate::env::{out, require};
use crate::errors::{CResult, Fail};
use crate::p2p::{recv_tag, start_recv, start_send, Incoming, Outgoing};
use crate::requests::{failed, insert_work, outcome_to_c, wait_step, Finished, Owned, Work};
use crate::status;
use mpicd::{Communicator, SendMode};
use std::ffi::{c_int, c_void};

/// Where a `_replace` call's message goes once both halves are done.
struct Placement {
    incoming: Vec<u8>,
    elem: Elem,
    /// The user's buffer (its address).
    buf: usize,
    count: i64,
}

/// A send and a receive started together; done when both are.
pub(crate) struct Pair {
    recv: Owned,
    send: Owned,
    custom_count: Option<i64>,
    /// The receive's outcome, and the bytes it brought.
    received: Option<(Finished, u64)>,
    /// The send's failure, if any, once done.
    sent: Option<Option<Fail>>,
    place: Option<Placement>,
    /// Its outcome was reported (nothing of it is pending any more).
    finished: bool,
}

/// `_replace` pairs freed unfinished (MPI_Request_free, finalize): progressed by every
/// completion call until done, since they own the buffer their receive writes into, and they
/// still place the message.
static DETACHED: Detached<Pair> = Detached::new();

/// Progresses the detached pairs; drops those done.
pub(crate) fn sweep() {
    DETACHED.sweep(|p| p.test().is_none());
}

/// After finalize: nothing writes into the pairs' buffers any more.
pub(crate) fn release() {
    for mut p in DETACHED.take_all() {
        p.finished = true;
        drop(p);
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        if self.finished || self.place.is_none() {
            return;
        }
        DETACHED.push(Pair {
            recv: self.recv.take(),
            send: self.send.take(),
            custom_count: self.custom_count,
            received: self.received.take(),
            sent: self.sent.take(),
            place: self.place.take(),
            finished: false,
        });
    }
}

impl Pair {
    /// One check of both halves; the receive's status (or the first failure) once both are
    /// done.
    pub(crate) fn test(&mut self) -> Option<Finished> {
        if self.received.is_none() {
            match self.recv.test() {
                Ok(None) => {}
                Ok(Some(s)) => {
                    let bytes = s.bytes.unwrap_or(0);
                    self.received = Some((outcome_to_c(Ok(s), self.custom_count), bytes));
                }
                Err(e) => self.received = Some((outcome_to_c(Err(e), None), 0)),
            }
        }
        if self.sent.is_none() {
            match self.send.test() {
                Ok(None) => {}
                Ok(Some(_)) => self.sent = Some(None),
                Err(e) => self.sent = Some(Some(e.into())),
            }
        }
        let (Some(((s, recv_failure), bytes)), Some(send_failure)) =
            (self.received.clone(), self.sent.clone())
        else {
            return None;
        };
        self.finished = true;
        if let Some(f) = recv_failure.or(send_failure) {
            return Some(failed(f));
        }
        match self.place.take().map(|p| p.write(bytes)) {
            Some(Err(f)) => Some(failed(f)),
            _ => Some((s, None)),
        }
    }

    /// Asks the receive to cancel (the send completes normally).
    pub(crate) fn cancel(&self) -> CResult<()> {
        self.recv.cancel().map_err(Into::into)
    }

    fn wait(mut self) -> Finished {
        let mut idle = mpicd::Idle::default();
        loop {
            if let Some(done) = self.test() {
                return done;
            }
            if let Err(f) = wait_step(&mut idle) {
                return failed(f);
            }
        }
    }
}

impl Placement {
    fn write(self, bytes: u64) -> CResult<()> {
        let n = (bytes as usize).min(self.incoming.len());
        // SAFETY: the buffer holds `count` elements (MPI's rule for the call), and the send
        // from it is complete.
        unsafe {
            self.elem
                .write(self.buf as *mut c_void, self.count, &self.incoming[..n])
        }
    }
}

// SAFETY: the buffer address is the C caller's, used under MPI's rules for the call whichever
// thread completes it; everything else is owned.
unsafe impl Send for Pair {}

/// Starts the receive of `incoming`, then the send of `outgoing`, as one pair.
///
/// # Safety
/// MPI's rules for both buffers until the pair completes.
unsafe fn start_pair(c: &Communicator, outgoing: Outgoing, incoming: Incoming) -> CResult<Pair> {
    // SAFETY: forwarded from the caller.
    let (recv, custom_count) = unsafe { start_recv(c, incoming) }?;
    // SAFETY: as above.
    let send = match unsafe { start_send(c, outgoing, SendMode::Standard) } {
        Ok(s) => s,
        Err(f) => {
            // Cancelled, then detached: it completes in the background.
            let _ = recv.cancel();
            drop(Owned::new(recv));
            return Err(f);
        }
    };
    Ok(Pair {
        recv: Owned::new(recv),
        send: Owned::new(send),
        custom_count,
        received: None,
        sent: None,
        place: None,
        finished: false,
    })
}

/// Starts the pair of a `_replace` call: the message is received into a temporary.
///
/// # Safety
/// MPI's rules for the buffer until the pair completes.
unsafe fn start_replace(c: &Communicator, r: Replace) -> CResult<Pair> {
    let Replace {
        buf,
        count,
        datatype,
        dest,
        sendtag,
        source,
        recvtag,
    } = r;
    let elem = Elem::of(datatype)?;
    let len = elem.packed(count)?;
    let mut incoming = vec![0u8; len];
    let tag = recv_tag(recvtag)?;
    // SAFETY: `incoming` moves into the pair with the request (its heap block does not move),
    // and the pair keeps it until the receive has completed (see `Drop for Pair`).
    let recv = unsafe { c.irecv_raw(incoming.as_mut_ptr(), len, source, tag) }?;
    let outgoing = Outgoing::new(buf, count, datatype, dest, sendtag);
    // SAFETY: forwarded from the caller.
    let send = match unsafe { start_send(c, outgoing, SendMode::Standard) } {
        Ok(s) => s,
        Err(f) => {
            let _ = recv.cancel();
            // Waited for here (cancelled, it ends at once), since `incoming` is dropped.
            let _ = recv.wait();
            return Err(f);
        }
    };
    Ok(Pair {
        recv: Owned::new(recv),
        send: Owned::new(send),
        custom_count: None,
        received: None,
        sent: None,
        place: Some(Placement {
            incoming,
            elem,
            buf: buf as usize,
            count,
        }),
        finished: false,
    })
}

/// Shared body of MPI_Sendrecv(_c).
///
/// # Safety
/// MPI's rules for the buffers and the status.
unsafe fn sendrecv(
    name: &'static str,
    outgoing: Outgoing,
    incoming: Incoming,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    run_on(name, comm, |c| {
        // SAFETY: both buffers are valid for the duration of this blocking call.
        let pair = unsafe { start_pair(&c, outgoing, incoming) }?;
        finish(pair.wait(), status)
    })
}

/// A blocking call's outcome: the status stored, or the failure.
fn finish((s, failure): Finished, status: *mut MPI_Status) -> CResult<()> {
    if let Some(f) = failure {
        return Err(f);
    }
    // SAFETY: MPI_STATUS_IGNORE or a writable status (MPI's rule for the call).
    unsafe { status::store(status, s) };
    Ok(())
}

/// Shared body of MPI_Isendrecv(_c).
///
/// # Safety
/// MPI's rules for the buffers until the request completes.
unsafe fn isendrecv(
    name: &'static str,
    outgoing: Outgoing,
    incoming: Incoming,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    run_on_with(name, comm, |c, errh| {
        require(request, "request pointer")?;
        // SAFETY: forwarded from the caller.
        let pair = unsafe { start_pair(&c, outgoing, incoming) }?;
        out(request, insert_work(Work::Pair(Box::new(pair)), errh, None))
    })
}

/// The arguments of a `_replace` call.
#[derive(Clone, Copy)]
struct Replace {
    buf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
}

/// Sends and receives at once (no deadlock whatever the order of the peers).
#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let outgoing = Outgoing::new(sendbuf, sendcount, sendtype, dest, sendtag);
    let incoming = Incoming::new(recvbuf, recvcount, recvtype, source, recvtag);
    // SAFETY: MPI's rules for the arguments.
    unsafe { sendrecv("Sendrecv", outgoing, incoming, comm, status) }
}

/// Starts a send and a receive as one request (MPI-4); its status is the receive's.
#[no_mangle]
pub unsafe extern "C" fn MPI_Isendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let outgoing = Outgoing::new(sendbuf, sendcount, sendtype, dest, sendtag);
    let incoming = Incoming::new(recvbuf, recvcount, recvtype, source, recvtag);
    // SAFETY: MPI's rules for the arguments.
    unsafe { isendrecv("Isendrecv", outgoing, incoming, comm, request) }
}

/// [`MPI_Sendrecv`] with MPI_Count counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let outgoing = Outgoing::new(sendbuf, sendcount, sendtype, dest, sendtag);
    let incoming = Incoming::new(recvbuf, recvcount, recvtype, source, recvtag);
    // SAFETY: MPI's rules for the arguments.
    unsafe { sendrecv("Sendrecv_c", outgoing, incoming, comm, status) }
}

/// [`MPI_Isendrecv`] with MPI_Count counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Isendrecv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let outgoing = Outgoing::new(sendbuf, sendcount, sendtype, dest, sendtag);
    let incoming = Incoming::new(recvbuf, recvcount, recvtype, source, recvtag);
    // SAFETY: MPI's rules for the arguments.
    unsafe { isendrecv("Isendrecv_c", outgoing, incoming, comm, request) }
}

/// Sends the buffer and replaces it with the received message (predefined and derived types;
/// the message is received into a buffer of its data's size, then placed).
#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let r = Replace {
        buf,
        count: count.into(),
        datatype,
        dest,
        sendtag,
        source,
        recvtag,
    };
    run_on("Sendrecv_replace", comm, |c| {
        // SAFETY: the buffer is valid for the duration of this blocking call.
        let pair = unsafe { start_replace(&c, r) }?;
        finish(pair.wait(), status)
    })
}

/// Starts [`MPI_Sendrecv_replace`] as a request (MPI-4): the message is placed in the buffer
/// when both halves are done.
#[no_mangle]
pub unsafe extern "C" fn MPI_Isendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let r = Replace {
        buf,
        count: count.into(),
        datatype,
        dest,
        sendtag,
        source,
        recvtag,
    };
    run_on("Isendrecv_replace", comm, |c| {
        require(request, "request pointer")?;
        // SAFETY: MPI's rules for the buffer until the request completes.
        let pair = unsafe { start_replace(&c, r) }?;
        out(
            request,
            insert_work(Work::Pair(Box::new(pair)), errh(comm), None),
        )
    })
}

/// [`MPI_Sendrecv_replace`] with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv_replace_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    let r = Replace {
        buf,
        count,
        datatype,
        dest,
        sendtag,
        source,
        recvtag,
    };
    run_on("Sendrecv_replace_c", comm, |c| {
        // SAFETY: the buffer is valid for the duration of this blocking call.
        let pair = unsafe { start_replace(&c, r) }?;
        finish(pair.wait(), status)
    })
}

/// [`MPI_Isendrecv_replace`] with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Isendrecv_replace_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let r = Replace {
        buf,
        count,
        datatype,
        dest,
        sendtag,
        source,
        recvtag,
    };
    run_on("Isendrecv_replace_c", comm, |c| {
        require(request, "request pointer")?;
        // SAFETY: MPI's rules for the buffer until the request completes.
        let pair = unsafe { start_replace(&c, r) }?;
        out(
            request,
            insert_work(Work::Pair(Box::new(pair)), errh(comm), None),
        )
    })
}
