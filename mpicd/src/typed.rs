//! Point-to-point with derived datatypes: `count` instances of a [`Datatype`] sent as one
//! message of the type signature's bytes (so it matches any receive of the same signature:
//! plain elements, another layout, a matched probe), packed and placed fragment by fragment by
//! the plan's walker, or moved in place when the instances are one contiguous run.
//!
//! The raw calls are what the C library uses; the safe ones check that the type map stays
//! inside the slice they are given.

use crate::comm::{Communicator, SendMode};
use crate::datatype::{bytes_of, bytes_of_mut, Primitive};
use crate::engine::Posted;
use crate::error::{Error, Result};
use crate::message::Message;
use crate::plan::derived::{Datatype, TypedBuf};
use crate::request::Request;
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
fn check_within(ty: &Datatype, count: u64, len: usize) -> Result<()> {
    match span(ty, count) {
        Some((lo, hi)) if lo >= 0 && hi <= len as i128 => Ok(()),
        _ => Err(Error::InvalidArgument(format!(
            "{count} instances of the datatype reach outside a buffer of {len} bytes"
        ))),
    }
}

impl Communicator {
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
        if let Some((at, len)) = typed.contiguous() {
            // SAFETY: forwarded from the caller: the run is the type map.
            return unsafe { self.isend_raw(at, len, dest, tag, mode) };
        }
        let Some((dest, tag)) = self.send_target(dest, tag)? else {
            return Ok(Request::posted(&self.shared, Posted::null()));
        };
        let sync = mode == SendMode::Synchronous;
        // SAFETY: forwarded from the caller.
        let posted = self
            .shared
            .with(|e| unsafe { e.post_send_typed(&self.route, dest, tag, typed, sync) })?;
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
        let typed = TypedBuf::new(buf, count, ty);
        if let Some((at, len)) = typed.contiguous() {
            // SAFETY: forwarded from the caller.
            return unsafe { self.irecv_raw(at, len, source, tag) };
        }
        let Some((from, tag)) = self.recv_filter(source, tag)? else {
            return Ok(Request::posted(&self.shared, Posted::null()));
        };
        // SAFETY: forwarded from the caller.
        let posted = self
            .shared
            .with(|e| unsafe { e.post_recv_typed(&self.route, from, tag, typed) })?;
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
        // SAFETY: the type map is inside `buf`, and the request is waited for (or, on
        // unwinding, dropped, which waits too) before its borrow ends.
        let r = unsafe { self.isend_typed_raw(bytes.as_ptr(), count, ty, dest, tag, SendMode::Standard) }?;
        r.wait().map(drop)
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
        // SAFETY: as in `send_typed`.
        let r = unsafe { self.irecv_typed_raw(bytes.as_mut_ptr(), count, ty, source, tag) }?;
        r.wait()
    }
}

impl Message {
    /// Receives the message into at most `count` instances of `ty` at `buf`.
    ///
    /// # Safety
    /// As for [`Communicator::irecv_typed_raw`].
    pub unsafe fn irecv_typed_raw(
        self,
        buf: *mut u8,
        count: u64,
        ty: &Datatype,
    ) -> Result<Request<'static>> {
        let typed = TypedBuf::new(buf, count, ty);
        // SAFETY: forwarded from the caller.
        unsafe { self.irecv_into(typed) }
    }

    /// Receives the message into at most `count` instances of `ty` laid over `buf`.
    pub fn recv_typed<T: Primitive>(self, buf: &mut [T], count: u64, ty: &Datatype) -> Result<Status> {
        let bytes = bytes_of_mut(buf);
        check_within(ty, count, bytes.len())?;
        // SAFETY: the type map is inside `buf`; the request is waited for before its borrow
        // ends.
        let r = unsafe { self.irecv_typed_raw(bytes.as_mut_ptr(), count, ty) }?;
        r.wait()
    }
}
