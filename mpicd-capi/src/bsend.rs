//! Buffered mode: MPI_Buffer_attach/_detach/_flush/_iflush, the MPI 4.1 communicator buffers
//! (MPI_Comm_attach_buffer and its kin), MPI_Bsend and MPI_Ibsend (MPI_Bsend_init is in
//! [`crate::p2p_persistent`]), with their `_c` forms; the session buffers' calls are in
//! [`crate::bsend_session`].
//!
//! A buffered send packs its message (any predefined or derived datatype; a custom one is
//! MPI_ERR_TYPE, as for MPI_Pack) into space taken from the attached buffer, starts an ordinary
//! send from that copy and returns: the call is complete at once. The space (the packed size
//! plus [`MPI_BSEND_OVERHEAD`] bytes, as MPI_Buffer_attach's sizing rule counts) is taken
//! first-fit and given back when the send completes; a message that does not fit is
//! MPI_ERR_BUFFER, and so is a buffered send with no buffer attached. The pending sends are
//! progressed by every completion call (and every buffered send), and waited for by detach,
//! flush and MPI_Finalize. With MPI_BUFFER_AUTOMATIC, each message gets its own heap copy.
//!
//! A send on a communicator uses the communicator's buffer if one is attached, else the buffer
//! of the session the communicator derives from (`CommEntry::session`) if it has one, else the
//! process's (MPI 4.1 section 3.6). (Freeing a communicator does not detach its buffer: detach
//! it first. Finalizing a session does, after its sends completed.)

use crate::abi::*;
use crate::comms::{default_errh, errh, run_on};
use crate::env::{check_live, out, require};
use crate::errors::{fail, run, CResult};
use crate::p2p::{count_of, Outgoing};
use crate::requests::{insert_work, Work};
use crate::types::pack::{check_base, packed_len};
use mpicd::{Communicator, Datatype, Request, SendMode, TypedBuf};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

pub(crate) use crate::types::pack::packable;

/// Bytes of bookkeeping counted per message.
const OVERHEAD: usize = MPI_BSEND_OVERHEAD as usize;

/// Whose buffer: the process's, a session's or a communicator's (by handle value).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) enum Owner {
    Process,
    Session(usize),
    Comm(usize),
}

/// An attached buffer.
struct Pool {
    /// The user's buffer (its address), or none for MPI_BUFFER_AUTOMATIC.
    base: Option<usize>,
    size: usize,
    /// The ranges in use, `(offset, length)`, sorted by offset.
    used: Vec<(usize, usize)>,
}

impl Pool {
    /// The offset of the first gap of `len` bytes.
    fn take(&mut self, len: usize) -> Option<usize> {
        let mut at = 0;
        let mut slot = self.used.len();
        for (i, &(o, l)) in self.used.iter().enumerate() {
            if o - at >= len {
                slot = i;
                break;
            }
            at = o + l;
        }
        if slot == self.used.len() && self.size.checked_sub(at)? < len {
            return None;
        }
        self.used.insert(slot, (at, len));
        Some(at)
    }

    fn give_back(&mut self, offset: usize) {
        self.used.retain(|&(o, _)| o != offset);
    }
}

/// Where a buffered message's copy lives.
enum Space {
    /// In the owner's attached buffer, at this offset.
    Attached(usize),
    /// Its own heap block (MPI_BUFFER_AUTOMATIC).
    Heap(#[allow(dead_code)] Vec<u8>),
}

/// A buffered send in flight.
struct Pending {
    request: Request<'static>,
    owner: Owner,
    copy: Space,
}

#[derive(Default)]
struct Buffers {
    pools: BTreeMap<Owner, Pool>,
    pending: Vec<Pending>,
}

static BUFFERS: Mutex<Buffers> = Mutex::new(Buffers {
    pools: BTreeMap::new(),
    pending: Vec::new(),
});

/// False only while no buffered send is pending: completion calls, which all sweep, then skip
/// the lock (set and cleared under it).
static ANY_PENDING: AtomicBool = AtomicBool::new(false);

fn buffers() -> MutexGuard<'static, Buffers> {
    BUFFERS.lock().unwrap_or_else(|p| p.into_inner())
}

impl Buffers {
    /// Progresses the pending sends; frees the space of those that completed.
    fn sweep(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.retain_mut(|p| {
            if matches!(p.request.test(), Ok(None)) {
                return true;
            }
            if let (Space::Attached(offset), Some(pool)) = (&p.copy, self.pools.get_mut(&p.owner)) {
                pool.give_back(*offset);
            }
            false
        });
        ANY_PENDING.store(!pending.is_empty(), Ordering::Release);
        self.pending = pending;
    }

    fn pending_of(&self, owner: Owner) -> usize {
        self.pending.iter().filter(|p| p.owner == owner).count()
    }
}

/// Progresses the pending buffered sends (every completion call does).
pub(crate) fn sweep() {
    if !ANY_PENDING.load(Ordering::Acquire) {
        return;
    }
    let mut b = buffers();
    if !b.pending.is_empty() {
        b.sweep();
    }
}

/// True once none of `owner`'s buffered sends is pending (the iflush calls' requests).
pub(crate) fn flushed(owner: Owner) -> bool {
    let mut b = buffers();
    b.sweep();
    b.pending_of(owner) == 0
}

/// Waits until `owner`'s buffered sends (every one with `None`) have completed.
pub(crate) fn flush(owner: Option<Owner>) {
    loop {
        let mut b = buffers();
        b.sweep();
        let left = match owner {
            Some(o) => b.pending_of(o),
            None => b.pending.len(),
        };
        if left == 0 {
            return;
        }
        drop(b);
        std::thread::yield_now();
    }
}

/// A session's end: waits for the buffered sends from its buffer, then forgets the buffer.
pub(crate) fn release(owner: Owner) {
    flush(Some(owner));
    buffers().pools.remove(&owner);
}

/// Finalize: waits for every buffered send, then forgets the buffers.
pub(crate) fn finish() {
    flush(None);
    buffers().pools.clear();
}

/// Sends `m` in buffered mode on `c` (handle value `comm`): packs it with `ty` into the
/// attached buffer and starts the send from there.
///
/// # Safety
/// `m.buf` must hold `m.count` elements of `ty` (read before this returns).
pub(crate) unsafe fn bsend(
    c: &Communicator,
    comm: usize,
    m: Outgoing,
    ty: &Datatype,
) -> CResult<()> {
    let count = count_of(m.count)?;
    let len = usize::try_from(packed_len(count, ty)?)
        .map_err(|_| fail(MPI_ERR_COUNT, "message too large"))?;
    check_base(m.buf, ty, len as u64)?;
    if m.dest == MPI_PROC_NULL {
        return Ok(());
    }
    let session = crate::comms::session_of(comm as MPI_Comm).map(Owner::Session);
    let mut b = buffers();
    b.sweep();
    let owner = [Some(Owner::Comm(comm)), session]
        .into_iter()
        .flatten()
        .find(|o| b.pools.contains_key(o))
        .unwrap_or(Owner::Process);
    let pool = b
        .pools
        .get_mut(&owner)
        .ok_or_else(|| fail(MPI_ERR_BUFFER, "no buffer attached for a buffered send"))?;
    let (mut copy, at) = match pool.base {
        None => {
            let mut heap = vec![0u8; len];
            let at = heap.as_mut_ptr();
            (Space::Heap(heap), at)
        }
        Some(base) => {
            let need = len.saturating_add(OVERHEAD);
            let offset = pool.take(need).ok_or_else(|| {
                fail(
                    MPI_ERR_BUFFER,
                    format!(
                        "a buffered message of {len} bytes (+{OVERHEAD} overhead) does not fit in the {} bytes attached ({} in use)",
                        pool.size,
                        pool.used.iter().map(|u| u.1).sum::<usize>()
                    ),
                )
            })?;
            (Space::Attached(offset), (base + offset) as *mut u8)
        }
    };
    if len > 0 {
        // SAFETY: `at` has `len` bytes reserved for this message (in the attached buffer the
        // user gave for the purpose, or a fresh heap block).
        let dst = unsafe { std::slice::from_raw_parts_mut(at, len) };
        // SAFETY: the caller's promise about `m.buf`.
        unsafe { TypedBuf::new(m.buf as *const u8, count as u64, ty).pack(0, dst) };
    }
    // SAFETY: the copy stays reserved, unchanged, until the send completes (`sweep`).
    let sent = unsafe { c.isend_raw(at, len, m.dest, m.tag, SendMode::Standard) };
    match sent {
        Ok(request) => {
            ANY_PENDING.store(true, Ordering::Release);
            b.pending.push(Pending {
                request,
                owner,
                copy,
            });
            Ok(())
        }
        Err(e) => {
            if let (Space::Attached(offset), Some(pool)) = (&mut copy, b.pools.get_mut(&owner)) {
                pool.give_back(*offset);
            }
            Err(e.into())
        }
    }
}

/// Shared body of MPI_Bsend(_c) and MPI_Ibsend(_c).
///
/// # Safety
/// `m.buf` must hold the message during the call.
unsafe fn bsend_call(
    name: &'static str,
    m: Outgoing,
    comm: MPI_Comm,
    request: Option<*mut MPI_Request>,
) -> c_int {
    run_on(name, comm, |c| {
        if let Some(r) = request {
            require(r, "request pointer")?;
        }
        let ty = packable(m.datatype)?;
        // SAFETY: forwarded from the caller.
        unsafe { bsend(&c, comm as usize, m, &ty) }?;
        match request {
            Some(r) => out(r, insert_work(Work::done(), errh(comm), None)),
            None => Ok(()),
        }
    })
}

/// Sends in buffered mode: the message is copied into the attached buffer and the call
/// returns at once (MPI_ERR_BUFFER if it does not fit).
#[no_mangle]
pub unsafe extern "C" fn MPI_Bsend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { bsend_call("Bsend", m, comm, None) }
}

/// [`MPI_Bsend`] with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Bsend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { bsend_call("Bsend_c", m, comm, None) }
}

/// Starts a buffered send: the message is copied at once, so the request is already complete.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ibsend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { bsend_call("Ibsend", m, comm, Some(request)) }
}

/// [`MPI_Ibsend`] with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Ibsend_c(
    buf: *const c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let m = Outgoing::new(buf, count, datatype, dest, tag);
    // SAFETY: MPI's rules for the buffer.
    unsafe { bsend_call("Ibsend_c", m, comm, Some(request)) }
}

/// Attaches `buffer` (`size` bytes, or MPI_BUFFER_AUTOMATIC) as `owner`'s.
pub(crate) fn attach(owner: Owner, buffer: *mut c_void, size: i64) -> CResult<()> {
    let automatic = buffer == MPI_BUFFER_AUTOMATIC;
    let size = usize::try_from(size)
        .map_err(|_| fail(MPI_ERR_ARG, format!("negative buffer size {size}")))?;
    if buffer.is_null() && size > 0 && !automatic {
        return Err(fail(MPI_ERR_BUFFER, "null buffer"));
    }
    let mut b = buffers();
    if b.pools.contains_key(&owner) {
        return Err(fail(MPI_ERR_BUFFER, "a buffer is already attached"));
    }
    let pool = Pool {
        base: (!automatic).then_some(buffer as usize),
        size: if automatic { 0 } else { size },
        used: Vec::new(),
    };
    b.pools.insert(owner, pool);
    Ok(())
}

/// Detaches `owner`'s buffer once its buffered sends have completed: its address and size.
pub(crate) fn detach(owner: Owner) -> CResult<(*mut c_void, usize)> {
    if !buffers().pools.contains_key(&owner) {
        return Err(fail(MPI_ERR_BUFFER, "no buffer is attached"));
    }
    flush(Some(owner));
    let pool = buffers()
        .pools
        .remove(&owner)
        .ok_or_else(|| fail(MPI_ERR_BUFFER, "no buffer is attached"))?;
    Ok(match pool.base {
        Some(base) => (base as *mut c_void, pool.size),
        None => (MPI_BUFFER_AUTOMATIC, 0),
    })
}

/// Writes a detached buffer's address at `buffer_addr` (a `void **` in disguise) and its size.
pub(crate) fn report<T: TryFrom<usize>>(
    (addr, size): (*mut c_void, usize),
    buffer_addr: *mut c_void,
    out_size: *mut T,
) -> CResult<()> {
    let size = T::try_from(size).map_err(|_| fail(MPI_ERR_COUNT, "the size does not fit"))?;
    out(buffer_addr as *mut *mut c_void, addr)?;
    out(out_size, size)
}

/// Attaches `buffer` of `size` bytes for the process's buffered sends (MPI_BUFFER_AUTOMATIC:
/// MPI allocates what each needs). MPI_ERR_BUFFER if one is attached already.
#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
    run("Buffer_attach", default_errh(), |_| {
        check_live()?;
        attach(Owner::Process, buffer, size.into())
    })
}

/// [`MPI_Buffer_attach`] with an MPI_Count size.
#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_attach_c(buffer: *mut c_void, size: MPI_Count) -> c_int {
    run("Buffer_attach_c", default_errh(), |_| {
        check_live()?;
        attach(Owner::Process, buffer, size)
    })
}

/// Waits for the buffered sends to complete, then detaches the process's buffer: its address
/// at `*(void **)buffer_addr` and its size at `*size`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    run("Buffer_detach", default_errh(), |_| {
        check_live()?;
        report(detach(Owner::Process)?, buffer_addr, size)
    })
}

/// [`MPI_Buffer_detach`] with an MPI_Count size.
#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_detach_c(
    buffer_addr: *mut c_void,
    size: *mut MPI_Count,
) -> c_int {
    run("Buffer_detach_c", default_errh(), |_| {
        check_live()?;
        report(detach(Owner::Process)?, buffer_addr, size)
    })
}

/// Waits until the buffered sends from the process's buffer have completed.
#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_flush() -> c_int {
    run("Buffer_flush", default_errh(), |_| {
        check_live()?;
        flush(Some(Owner::Process));
        Ok(())
    })
}

/// A request that completes once the buffered sends from the process's buffer have.
#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_iflush(request: *mut MPI_Request) -> c_int {
    run("Buffer_iflush", default_errh(), |_| {
        check_live()?;
        require(request, "request pointer")?;
        let work = Work::Flush(Owner::Process);
        out(request, insert_work(work, default_errh(), None))
    })
}

/// Attaches `buffer` of `size` bytes for the buffered sends on `comm` (MPI 4.1).
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_attach_buffer(
    comm: MPI_Comm,
    buffer: *mut c_void,
    size: c_int,
) -> c_int {
    run_on("Comm_attach_buffer", comm, |_| {
        attach(Owner::Comm(comm as usize), buffer, size.into())
    })
}

/// [`MPI_Comm_attach_buffer`] with an MPI_Count size.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_attach_buffer_c(
    comm: MPI_Comm,
    buffer: *mut c_void,
    size: MPI_Count,
) -> c_int {
    run_on("Comm_attach_buffer_c", comm, |_| {
        attach(Owner::Comm(comm as usize), buffer, size)
    })
}

/// Waits for the buffered sends from `comm`'s buffer, then detaches it (see
/// [`MPI_Buffer_detach`]).
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_detach_buffer(
    comm: MPI_Comm,
    buffer_addr: *mut c_void,
    size: *mut c_int,
) -> c_int {
    run_on("Comm_detach_buffer", comm, |_| {
        report(detach(Owner::Comm(comm as usize))?, buffer_addr, size)
    })
}

/// [`MPI_Comm_detach_buffer`] with an MPI_Count size.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_detach_buffer_c(
    comm: MPI_Comm,
    buffer_addr: *mut c_void,
    size: *mut MPI_Count,
) -> c_int {
    run_on("Comm_detach_buffer_c", comm, |_| {
        report(detach(Owner::Comm(comm as usize))?, buffer_addr, size)
    })
}

/// Waits until the buffered sends from `comm`'s buffer have completed.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_flush_buffer(comm: MPI_Comm) -> c_int {
    run_on("Comm_flush_buffer", comm, |_| {
        flush(Some(Owner::Comm(comm as usize)));
        Ok(())
    })
}

/// A request that completes once the buffered sends from `comm`'s buffer have.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_iflush_buffer(
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    run_on("Comm_iflush_buffer", comm, |_| {
        require(request, "request pointer")?;
        let work = Work::Flush(Owner::Comm(comm as usize));
        out(request, insert_work(work, errh(comm), None))
    })
}
