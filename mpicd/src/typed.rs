//! Point-to-point with derived datatypes: `count` instances of a [`Datatype`] sent as one
//! message of the type signature's bytes (so it matches any receive of the same signature:
//! plain elements, another layout, a matched probe), packed and placed fragment by fragment by
//! the plan's walker, or moved in place when the instances are one contiguous run.
//!
//! The raw calls are what the C library uses; the safe ones check that the type map stays
//! inside the slice they are given, and the scoped ones follow [`crate::request`]'s rule: the
//! buffer is borrowed for the scope, which completes the operation before the borrow ends.

use crate::comm::{Communicator, SendMode};
use crate::datatype::{bytes_of, bytes_of_mut, Primitive};
use crate::engine::{Posted, Shared};
use crate::error::{Error, Result};
use crate::message::Message;
use crate::plan::derived::{Datatype, TypedBuf};
use crate::request::{wait_posted, Request, Scope};
use crate::route::Route;
use crate::status::Status;

/// The byte range `[lo, hi)` relative to the buffer that `count` instances of `ty` touch.
fn span(ty: &Datatype, count: u64) -> Option<(i128, i128)> {
    if count == 0 || ty.size() == 0 {
        return Some((0, 0));
    }
    let reach = (count as i128 - 1) * ty.extent() as i128;
    let lo = ty.true_lb() as i128 + reach.min(0);
    let hi = ty.true_lb() as i128 + ty.true_extent() as i128 + reach.max(0);
    Some((lo, hi))
}

/// Checks that `count` instances of `ty` stay within `len` bytes.
pub(crate) fn check_within(ty: &Datatype, count: u64, len: usize) -> Result<()> {
    match span(ty, count) {
        Some((lo, hi)) if lo >= 0 && hi <= len as i128 => Ok(()),
        _ => Err(Error::InvalidArgument(format!(
            "{count} instances of the datatype reach outside a buffer of {len} bytes"
        ))),
    }
}

/// Posts a send of a derived-typed buffer to world rank `dest` on `route` (in place when it
/// is one run).
///
/// # Safety
/// Every byte of the type map must stay valid and unchanged until the operation completes.
pub(crate) unsafe fn post_send_on(
    shared: &Shared,
    route: &Route,
    typed: TypedBuf,
    dest: u32,
    tag: i32,
    synchronous: bool,
) -> Result<Posted> {
    // SAFETY: forwarded from the caller: the run is the type map.
    shared.with(|e| unsafe {
        match typed.contiguous() {
            Some((at, len)) => e.post_send(route, dest, tag, at, len, synchronous),
            None => e.post_send_typed(route, dest, tag, typed, synchronous),
        }
    })
}

/// Posts a receive into a derived-typed buffer on `route` (in place when it is one run).
///
/// # Safety
/// Every byte of the type map must stay valid and untouched until the operation completes.
pub(crate) unsafe fn post_recv_on(
    shared: &Shared,
    route: &Route,
    typed: TypedBuf,
    from: Option<u32>,
    tag: Option<i32>,
) -> Result<Posted> {
    // SAFETY: forwarded from the caller.
    shared.with(|e| unsafe {
        match typed.contiguous() {
            Some((at, len)) => e.post_recv(route, from, tag, at, len),
            None => e.post_recv_typed(route, from, tag, typed),
        }
    })
}

impl Communicator {
    /// Posts a send of a derived-typed buffer (in place when it is one run).
    ///
    /// # Safety
    /// Every byte of the type map must stay valid and unchanged until the operation completes.
    pub(crate) unsafe fn post_send_typed(
        &self,
        typed: TypedBuf,
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Posted> {
        let Some((dest, tag)) = self.send_target(dest, tag)? else {
            return Ok(Posted::null());
        };
        let sync = mode == SendMode::Synchronous;
        // SAFETY: forwarded from the caller.
        unsafe { post_send_on(&self.shared, &self.route, typed, dest, tag, sync) }
    }

    /// Posts a receive into a derived-typed buffer (in place when it is one run).
    ///
    /// # Safety
    /// Every byte of the type map must stay valid and untouched until the operation completes.
    pub(crate) unsafe fn post_recv_typed(
        &self,
        typed: TypedBuf,
        source: i32,
        tag: i32,
    ) -> Result<Posted> {
        let Some((from, tag)) = self.recv_filter(source, tag)? else {
            return Ok(Posted::null());
        };
        // SAFETY: forwarded from the caller.
        unsafe { post_recv_on(&self.shared, &self.route, typed, from, tag) }
    }

    /// Starts a send of `count` instances of `ty` at `buf` (the form the C library uses).
    ///
    /// # Safety
    /// Every byte of the type map must stay valid and unchanged until the request completes,
    /// even if the request is forgotten.
    pub unsafe fn isend_typed_raw(
        &self,
        buf: *const u8,
        count: u64,
        ty: &Datatype,
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Request<'static>> {
        let typed = TypedBuf::new(buf, count, ty);
        // SAFETY: forwarded from the caller.
        let posted = unsafe { self.post_send_typed(typed, dest, tag, mode) }?;
        Ok(Request::posted(&self.shared, posted))
    }

    /// Posts a receive of at most `count` instances of `ty` at `buf`.
    ///
    /// # Safety
    /// Every byte of the type map must stay valid and untouched until the request completes,
    /// even if the request is forgotten.
    pub unsafe fn irecv_typed_raw(
        &self,
        buf: *mut u8,
        count: u64,
        ty: &Datatype,
        source: i32,
        tag: i32,
    ) -> Result<Request<'static>> {
        // SAFETY: forwarded from the caller.
        let posted = unsafe { self.post_recv_typed(TypedBuf::new(buf, count, ty), source, tag) }?;
        Ok(Request::posted(&self.shared, posted))
    }

    /// Sends `count` instances of `ty` laid over `buf` (the type map must stay inside it).
    pub fn send_typed<T: Primitive>(
        &self,
        buf: &[T],
        count: u64,
        ty: &Datatype,
        dest: i32,
        tag: i32,
    ) -> Result<()> {
        let bytes = bytes_of(buf);
        check_within(ty, count, bytes.len())?;
        let typed = TypedBuf::new(bytes.as_ptr(), count, ty);
        // SAFETY: the type map is inside `buf`, and the request is waited for (or, on
        // unwinding, dropped, which waits too) before its borrow ends.
        let posted = unsafe { self.post_send_typed(typed, dest, tag, SendMode::Standard) }?;
        wait_posted(&self.shared, posted).map(drop)
    }

    /// Receives at most `count` instances of `ty` laid over `buf` (the type map must stay
    /// inside it). The status counts bytes; [`Status::count_of`] turns them into instances.
    pub fn recv_typed<T: Primitive>(
        &self,
        buf: &mut [T],
        count: u64,
        ty: &Datatype,
        source: i32,
        tag: i32,
    ) -> Result<Status> {
        let bytes = bytes_of_mut(buf);
        check_within(ty, count, bytes.len())?;
        let typed = TypedBuf::new(bytes.as_mut_ptr(), count, ty);
        // SAFETY: as in `send_typed`.
        let posted = unsafe { self.post_recv_typed(typed, source, tag) }?;
        wait_posted(&self.shared, posted)
    }

    /// Starts a standard-mode send of `count` instances of `ty` laid over `buf` in `scope` (see
    /// [`crate::scope`]).
    pub fn isend_typed<'s, 'a, T: Primitive>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a [T],
        count: u64,
        ty: &Datatype,
        dest: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        self.isend_typed_in(
            scope,
            bytes_of(buf),
            count,
            ty,
            (dest, tag),
            SendMode::Standard,
        )
    }

    /// Starts a synchronous send of `count` instances of `ty` laid over `buf` in `scope`.
    pub fn issend_typed<'s, 'a, T: Primitive>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a [T],
        count: u64,
        ty: &Datatype,
        dest: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        self.isend_typed_in(
            scope,
            bytes_of(buf),
            count,
            ty,
            (dest, tag),
            SendMode::Synchronous,
        )
    }

    /// Starts a send of `count` instances of `ty` over `bytes` in `scope`, to `(dest, tag)`.
    fn isend_typed_in<'s, 'a>(
        &self,
        scope: &'s Scope<'a>,
        bytes: &'a [u8],
        count: u64,
        ty: &Datatype,
        (dest, tag): (i32, i32),
        mode: SendMode,
    ) -> Result<Request<'s>> {
        check_within(ty, count, bytes.len())?;
        let typed = TypedBuf::new(bytes.as_ptr(), count, ty);
        // SAFETY: the type map is inside `bytes`, borrowed for the scope's 'a, and the scope
        // completes the operation before it returns, even if the request is forgotten.
        let posted = unsafe { self.post_send_typed(typed, dest, tag, mode) }?;
        Ok(scope.request(&self.shared, posted))
    }

    /// Posts a receive of at most `count` instances of `ty` laid over `buf` in `scope`.
    pub fn irecv_typed<'s, 'a, T: Primitive>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a mut [T],
        count: u64,
        ty: &Datatype,
        source: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        let bytes = bytes_of_mut(buf);
        check_within(ty, count, bytes.len())?;
        let typed = TypedBuf::new(bytes.as_mut_ptr(), count, ty);
        // SAFETY: the type map is inside `buf`, borrowed exclusively for the scope's 'a, and
        // the scope completes (or cancels) the receive before it returns.
        let posted = unsafe { self.post_recv_typed(typed, source, tag) }?;
        Ok(scope.request(&self.shared, posted))
    }
}

impl Message {
    /// Receives the message into at most `count` instances of `ty` at `buf`.
    ///
    /// # Safety
    /// As for [`Communicator::irecv_typed_raw`].
    pub unsafe fn irecv_typed_raw(
        mut self,
        buf: *mut u8,
        count: u64,
        ty: &Datatype,
    ) -> Result<Request<'static>> {
        // SAFETY: forwarded from the caller.
        let posted = unsafe { self.post_into(TypedBuf::new(buf, count, ty)) }?;
        Ok(Request::posted(self.shared(), posted))
    }

    /// Receives the message into at most `count` instances of `ty` laid over `buf`.
    pub fn recv_typed<T: Primitive>(
        mut self,
        buf: &mut [T],
        count: u64,
        ty: &Datatype,
    ) -> Result<Status> {
        let bytes = bytes_of_mut(buf);
        check_within(ty, count, bytes.len())?;
        // SAFETY: the type map is inside `buf`; the request is waited for before its borrow
        // ends.
        let posted = unsafe { self.post_into(TypedBuf::new(bytes.as_mut_ptr(), count, ty)) }?;
        Request::posted(self.shared(), posted).wait()
    }

    /// Starts receiving the message into at most `count` instances of `ty` laid over `buf`,
    /// in `scope` (see [`crate::scope`]).
    pub fn irecv_typed<'s, 'a, T: Primitive>(
        mut self,
        scope: &'s Scope<'a>,
        buf: &'a mut [T],
        count: u64,
        ty: &Datatype,
    ) -> Result<Request<'s>> {
        let bytes = bytes_of_mut(buf);
        check_within(ty, count, bytes.len())?;
        // SAFETY: the type map is inside `buf`, borrowed exclusively for the scope's 'a, and
        // the scope completes the receive before it returns.
        let posted = unsafe { self.post_into(TypedBuf::new(bytes.as_mut_ptr(), count, ty)) }?;
        Ok(scope.request(self.shared(), posted))
    }
}

impl Status {
    /// Number of whole instances of `ty` in the message (bytes over the type's size), if its
    /// size is known and divisible; `Some(0)` for a type of size 0.
    pub fn count_of(&self, ty: &Datatype) -> Option<u64> {
        match ty.size() {
            0 => Some(0),
            size => self.bytes.filter(|b| b % size == 0).map(|b| b / size),
        }
    }
}
