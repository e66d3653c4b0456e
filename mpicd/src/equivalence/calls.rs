//! The safe point-to-point calls over slices of [`Equivalence`] values: blocking, scoped
//! non-blocking, and the receives of a matched probe's message.

use super::Equivalence;
use crate::comm::{Communicator, SendMode};
use crate::error::{Error, Result};
use crate::message::Message;
use crate::plan::derived::{Datatype, TypedBuf};
use crate::request::{Request, Scope};
use crate::status::Status;
use crate::typed::check_within;
use std::mem::size_of;

/// `T`'s datatype, checked against `T`'s size, and that `len` values of it fit their slice.
pub(super) fn datatype_of<T: Equivalence>(len: usize) -> Result<Datatype> {
    let ty = T::equivalent_datatype();
    if ty.extent() != size_of::<T>() as i64 || ty.lb() != 0 {
        return Err(Error::InvalidArgument(format!(
            "the datatype of {} has lower bound {} and extent {}, not 0 and its size {}",
            std::any::type_name::<T>(),
            ty.lb(),
            ty.extent(),
            size_of::<T>()
        )));
    }
    check_within(&ty, len as u64, size_of::<T>() * len)?;
    Ok(ty)
}

/// The values of `buf` as a derived-typed buffer.
pub(super) fn values<T: Equivalence>(buf: &[T]) -> Result<TypedBuf> {
    let ty = datatype_of::<T>(buf.len())?;
    Ok(TypedBuf::new(buf.as_ptr().cast(), buf.len() as u64, &ty))
}

/// The values of `buf` as a derived-typed buffer to receive into (its address from the
/// exclusive borrow).
pub(super) fn values_mut<T: Equivalence>(buf: &mut [T]) -> Result<TypedBuf> {
    let ty = datatype_of::<T>(buf.len())?;
    let at: *mut u8 = buf.as_mut_ptr().cast();
    Ok(TypedBuf::new(at, buf.len() as u64, &ty))
}

impl Communicator {
    /// Sends the values of `buf` as one message (standard mode).
    pub fn send_values<T: Equivalence>(&self, buf: &[T], dest: i32, tag: i32) -> Result<()> {
        self.send_values_in(buf, dest, tag, SendMode::Standard)
    }

    /// Sends the values of `buf` and returns once the receiver has matched the message.
    pub fn ssend_values<T: Equivalence>(&self, buf: &[T], dest: i32, tag: i32) -> Result<()> {
        self.send_values_in(buf, dest, tag, SendMode::Synchronous)
    }

    /// Sends one value.
    pub fn send_value<T: Equivalence>(&self, value: &T, dest: i32, tag: i32) -> Result<()> {
        self.send_values(std::slice::from_ref(value), dest, tag)
    }

    fn send_values_in<T: Equivalence>(
        &self,
        buf: &[T],
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<()> {
        let typed = values(buf)?;
        // SAFETY: the type map is inside `buf` and names only initialized bytes (T's
        // contract); the request is waited for (or, on unwinding, dropped, which waits too)
        // before the borrow ends.
        let posted = unsafe { self.post_send_typed(typed, dest, tag, mode) }?;
        Request::posted(&self.shared, posted).wait().map(drop)
    }

    /// Receives at most `buf.len()` values into `buf`; [`Status::count_values`] tells how many
    /// arrived. A longer message fails with [`Error::Truncated`].
    pub fn recv_values<T: Equivalence>(
        &self,
        buf: &mut [T],
        source: i32,
        tag: i32,
    ) -> Result<Status> {
        let typed = values_mut(buf)?;
        // SAFETY: the type map is inside `buf`, whose values stay valid whatever bytes land
        // (T's contract); the request is waited for before the exclusive borrow ends.
        let posted = unsafe { self.post_recv_typed(typed, source, tag) }?;
        Request::posted(&self.shared, posted).wait()
    }

    /// Receives one value.
    pub fn recv_value<T: Equivalence>(
        &self,
        value: &mut T,
        source: i32,
        tag: i32,
    ) -> Result<Status> {
        self.recv_values(std::slice::from_mut(value), source, tag)
    }

    /// Starts a standard-mode send of the values of `buf` in `scope` (see [`crate::scope`]).
    ///
    /// The buffer cannot be changed until the scope has returned:
    ///
    /// ```compile_fail,E0506
    /// let mpi = mpicd::init()?;
    /// let world = mpi.world();
    /// let mut buf = [1.5f64; 4];
    /// mpicd::scope(|s| {
    ///     let r = world.isend_values(s, &buf, 0, 0)?;
    ///     buf[0] = 2.5; // refused: the send may still be reading it
    ///     r.wait()
    /// })?;
    /// # Ok::<(), mpicd::Error>(())
    /// ```
    pub fn isend_values<'s, 'a, T: Equivalence>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        self.isend_values_in(scope, buf, dest, tag, SendMode::Standard)
    }

    /// Starts a synchronous send of the values of `buf` in `scope`.
    pub fn issend_values<'s, 'a, T: Equivalence>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        self.isend_values_in(scope, buf, dest, tag, SendMode::Synchronous)
    }

    fn isend_values_in<'s, 'a, T: Equivalence>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a [T],
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Request<'s>> {
        let typed = values(buf)?;
        // SAFETY: the type map is inside `buf` and names only initialized bytes; `buf` is
        // borrowed for the scope's 'a, and the scope completes the operation before it
        // returns, even if the request is forgotten.
        let posted = unsafe { self.post_send_typed(typed, dest, tag, mode) }?;
        Ok(scope.request(&self.shared, posted))
    }

    /// Posts a receive of at most `buf.len()` values into `buf` in `scope`.
    ///
    /// The buffer is lent to the scope: it cannot be read, written or dropped until the scope
    /// has returned, when the receive is complete (or cancelled, if its request was forgotten):
    ///
    /// ```compile_fail,E0503
    /// let mpi = mpicd::init()?;
    /// let world = mpi.world();
    /// let mut buf = [0u32; 4];
    /// mpicd::scope(|s| {
    ///     let r = world.irecv_values(s, &mut buf, 0, 0)?;
    ///     let early = buf[0]; // refused: the receive may be writing it
    ///     r.wait()
    /// })?;
    /// # Ok::<(), mpicd::Error>(())
    /// ```
    pub fn irecv_values<'s, 'a, T: Equivalence>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a mut [T],
        source: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        let typed = values_mut(buf)?;
        // SAFETY: the type map is inside `buf`, borrowed exclusively for the scope's 'a, and
        // the scope completes (or cancels) the receive before it returns.
        let posted = unsafe { self.post_recv_typed(typed, source, tag) }?;
        Ok(scope.request(&self.shared, posted))
    }
}

impl Message {
    /// Receives the message into at most `buf.len()` values.
    pub fn recv_values<T: Equivalence>(mut self, buf: &mut [T]) -> Result<Status> {
        let typed = values_mut(buf)?;
        // SAFETY: as in `Communicator::recv_values`.
        let posted = unsafe { self.post_into(typed) }?;
        Request::posted(self.shared(), posted).wait()
    }

    /// Starts receiving the message into at most `buf.len()` values, in `scope`.
    pub fn irecv_values<'s, 'a, T: Equivalence>(
        mut self,
        scope: &'s Scope<'a>,
        buf: &'a mut [T],
    ) -> Result<Request<'s>> {
        let typed = values_mut(buf)?;
        // SAFETY: as in `Communicator::irecv_values`.
        let posted = unsafe { self.post_into(typed) }?;
        Ok(scope.request(self.shared(), posted))
    }
}

impl Status {
    /// Number of whole values of `T` in the message (its bytes over the size of `T`'s
    /// datatype, which leaves out padding).
    pub fn count_values<T: Equivalence>(&self) -> Option<u64> {
        self.count_of(&T::equivalent_datatype())
    }
}
