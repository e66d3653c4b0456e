//! A message taken by a matched probe ([`crate::Communicator::mprobe`]) and its receives: the message
//! is already matched, so its receive names no source or tag. Must not know how the engine
//! matched it.

use crate::custom::parts::unpack_borrowed;
use crate::custom::{CustomRecv, Shape, UnpackState};
use crate::datatype::{bytes_of_mut, Primitive};
use crate::engine::{Matched, Posted, Shared};
use crate::error::{Error, Result};
use crate::plan::derived::TypedBuf;
use crate::request::{wait_posted, Request, Scope};
use crate::status::Status;
use std::sync::Arc;

/// A message taken by a matched probe. Receive it with [`Message::recv`] or
/// [`Message::recv_custom`]; dropping it unreceived discards its data.
pub struct Message {
    shared: Arc<Shared>,
    matched: Option<Matched>,
}

impl Message {
    pub(crate) fn new(shared: &Arc<Shared>, matched: Option<Matched>) -> Message {
        Message {
            shared: Arc::clone(shared),
            matched,
        }
    }

    /// For a custom-typed message: the sender's packed size and region lengths, learned from
    /// the message itself before any buffer is provided. `None` for a contiguous message.
    pub fn shape(&self) -> Result<Option<Shape>> {
        match &self.matched {
            Some(Matched::Custom(id)) => self.shared.with(|e| e.matched_shape(*id)),
            _ => Ok(None),
        }
    }

    /// Posts the receive of the message into `len` bytes at `buf`.
    ///
    /// # Safety
    /// As for [`crate::Communicator::irecv_raw`].
    unsafe fn post_recv(&mut self, buf: *mut u8, len: usize) -> Result<Posted> {
        let Some(matched) = self.matched.take() else {
            return Ok(Posted::null());
        };
        if buf.is_null() && len > 0 {
            self.matched = Some(matched);
            return Err(Error::NullBuffer);
        }
        // SAFETY: forwarded from the caller.
        self.shared
            .with(|e| unsafe { e.post_mrecv(matched, buf, len, None) })
            .map(Posted::Pending)
    }

    /// The engine the message belongs to.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Posts the receive of the message into a derived-typed buffer (in place when it is one
    /// run).
    ///
    /// # Safety
    /// Every byte of the buffer's type map must stay valid and untouched until the operation
    /// completes.
    pub(crate) unsafe fn post_into(&mut self, typed: TypedBuf) -> Result<Posted> {
        if let Some((at, len)) = typed.contiguous() {
            // SAFETY: forwarded from the caller.
            return unsafe { self.post_recv(at, len) };
        }
        let Some(matched) = self.matched.take() else {
            return Ok(Posted::null());
        };
        let len = match usize::try_from(typed.packed_size()) {
            Ok(len) => len,
            Err(_) => {
                self.matched = Some(matched);
                return Err(Error::InvalidCount(-1));
            }
        };
        // SAFETY: forwarded from the caller.
        self.shared
            .with(|e| unsafe { e.post_mrecv(matched, std::ptr::null_mut(), len, Some(typed)) })
            .map(Posted::Pending)
    }

    /// Posts the receive of the message through a custom datatype state.
    fn post_state_recv(&mut self, state: Box<dyn UnpackState>) -> Result<Posted> {
        let Some(matched) = self.matched.take() else {
            return Ok(Posted::null());
        };
        self.shared
            .with(|e| e.post_custom_mrecv(matched, state))
            .map(Posted::Pending)
    }

    /// Receives a contiguous message into `buf`.
    pub fn recv<T: Primitive>(mut self, buf: &mut [T]) -> Result<Status> {
        let bytes = bytes_of_mut(buf);
        // SAFETY: the request is waited for before `buf`'s borrow ends (or, on unwinding,
        // dropped, which waits too).
        let posted = unsafe { self.post_recv(bytes.as_mut_ptr(), bytes.len()) }?;
        wait_posted(&self.shared, posted)
    }

    /// Starts receiving a contiguous message into `buf` in `scope` (see [`crate::scope`]).
    pub fn irecv<'s, 'a, T: Primitive>(
        mut self,
        scope: &'s Scope<'a>,
        buf: &'a mut [T],
    ) -> Result<Request<'s>> {
        let bytes = bytes_of_mut(buf);
        // SAFETY: `buf` is borrowed exclusively for the scope's 'a, and the scope completes the
        // receive before it returns, even if the request is forgotten.
        let posted = unsafe { self.post_recv(bytes.as_mut_ptr(), bytes.len()) }?;
        Ok(scope.request(&self.shared, posted))
    }

    /// Starts receiving a contiguous message into raw memory (the C library's form).
    ///
    /// # Safety
    /// As for [`crate::Communicator::irecv_raw`].
    pub unsafe fn irecv_raw(mut self, buf: *mut u8, len: usize) -> Result<Request<'static>> {
        // SAFETY: forwarded from the caller.
        let posted = unsafe { self.post_recv(buf, len) }?;
        Ok(Request::posted(&self.shared, posted))
    }

    /// Receives a custom-typed message; a dynamic type resizes to its shape.
    pub fn recv_custom<R: CustomRecv + ?Sized>(mut self, value: &mut R) -> Result<Status> {
        // SAFETY: the request is waited for before `value`'s borrow ends (or, on unwinding,
        // dropped, which waits too).
        let state = unsafe { unpack_borrowed(value) };
        let posted = self.post_state_recv(state)?;
        wait_posted(&self.shared, posted)
    }

    /// Starts receiving a custom-typed message in `scope`.
    pub fn irecv_custom<'s, 'a, R: CustomRecv + ?Sized>(
        mut self,
        scope: &'s Scope<'a>,
        value: &'a mut R,
    ) -> Result<Request<'s>> {
        // SAFETY: `value` is borrowed exclusively for the scope's 'a, and the scope completes
        // the receive (which drops the state) before it returns.
        let state = unsafe { unpack_borrowed(value) };
        let posted = self.post_state_recv(state)?;
        Ok(scope.request(&self.shared, posted))
    }

    /// Starts receiving a custom-typed message through a state (the C library's form).
    pub fn irecv_state(mut self, state: Box<dyn UnpackState>) -> Result<Request<'static>> {
        let posted = self.post_state_recv(state)?;
        Ok(Request::posted(&self.shared, posted))
    }
}

impl Drop for Message {
    fn drop(&mut self) {
        if let Some(matched) = self.matched.take() {
            let _ = self.shared.with(|e| {
                e.discard(matched);
                Ok(())
            });
        }
    }
}
