//! Communicators and their point-to-point calls. Every call checks its arguments here and
//! returns a specific error before anything reaches the engine.

use crate::custom::parts::RecvAdapter;
use crate::custom::{CustomRecv, CustomSend, PackState, Shape, UnpackState};
use crate::datatype::{bytes_of, bytes_of_mut, Primitive};
use crate::engine::{Matched, OpId, Shared};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::request::Request;
use crate::route::Route;
use crate::status::Status;
use crate::{ANY_SOURCE, ANY_TAG, PROC_NULL, TAG_UB};
use std::sync::Arc;

/// Send modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendMode {
    /// Standard: may complete before the receive is posted.
    Standard,
    /// Synchronous: completes only once the receive has matched.
    Synchronous,
}

/// A group of processes with its own matching context: no message crosses communicators.
pub struct Communicator {
    pub(crate) shared: Arc<Shared>,
    pub(crate) route: Route,
    pub(crate) coll: Route,
    pub(crate) rank: i32,
}

/// The source a receive accepts.
#[derive(Debug, Clone, Copy)]
enum Source {
    Any,
    Rank(u32),
    Null,
}

impl Communicator {
    pub(crate) fn new(shared: Arc<Shared>, context: u32, group: Group, rank: i32) -> Communicator {
        let group = Arc::new(group);
        Communicator {
            shared,
            route: Route {
                context,
                group: Arc::clone(&group),
            },
            coll: Route {
                context: context + 1,
                group,
            },
            rank,
        }
    }

    /// This process's rank in the communicator.
    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// Number of processes in the communicator.
    pub fn size(&self) -> i32 {
        self.route.group.size()
    }

    /// The world rank of communicator rank `rank`.
    pub fn world_rank(&self, rank: i32) -> Result<u32> {
        self.route.group.world_rank(rank)
    }

    fn dest(&self, dest: i32) -> Result<Option<u32>> {
        if dest == PROC_NULL {
            return Ok(None);
        }
        self.route.group.world_rank(dest).map(Some)
    }

    fn source(&self, source: i32) -> Result<Source> {
        match source {
            ANY_SOURCE => Ok(Source::Any),
            PROC_NULL => Ok(Source::Null),
            r => self.route.group.world_rank(r).map(Source::Rank),
        }
    }

    fn send_tag(tag: i32) -> Result<i32> {
        if (0..=TAG_UB).contains(&tag) {
            Ok(tag)
        } else {
            Err(Error::InvalidTag(tag))
        }
    }

    fn recv_tag(tag: i32) -> Result<Option<i32>> {
        if tag == ANY_TAG {
            Ok(None)
        } else {
            Self::send_tag(tag).map(Some)
        }
    }

    fn source_filter(source: Source) -> Option<u32> {
        match source {
            Source::Rank(r) => Some(r),
            _ => None,
        }
    }

    fn null_status() -> Status {
        Status::empty()
    }

    // ----- contiguous point-to-point -----

    /// Starts a send of `len` bytes at `buf` (the form the C library uses).
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unchanged until the request completes.
    pub unsafe fn isend_raw(
        &self,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Request<'static>> {
        let tag = Self::send_tag(tag)?;
        let Some(dest) = self.dest(dest)? else {
            return Ok(Request::done(&self.shared, Ok(Self::null_status())));
        };
        if buf.is_null() && len > 0 {
            return Err(Error::NullBuffer);
        }
        let sync = mode == SendMode::Synchronous;
        // SAFETY: forwarded from the caller.
        let id = self
            .shared
            .with(|e| unsafe { e.post_send(&self.route, dest, tag, buf, len, sync) })?;
        Ok(Request::posted(&self.shared, id))
    }

    /// Posts a receive of at most `len` bytes into `buf` (the form the C library uses).
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and untouched until the request completes.
    pub unsafe fn irecv_raw(
        &self,
        buf: *mut u8,
        len: usize,
        source: i32,
        tag: i32,
    ) -> Result<Request<'static>> {
        let tag = Self::recv_tag(tag)?;
        let source = self.source(source)?;
        if let Source::Null = source {
            return Ok(Request::done(&self.shared, Ok(Self::null_status())));
        }
        if buf.is_null() && len > 0 {
            return Err(Error::NullBuffer);
        }
        let from = Self::source_filter(source);
        // SAFETY: forwarded from the caller.
        let id = self
            .shared
            .with(|e| unsafe { e.post_recv(&self.route, from, tag, buf, len) })?;
        Ok(Request::posted(&self.shared, id))
    }

    /// Starts a standard-mode send of `buf`.
    pub fn isend<'a, T: Primitive>(
        &self,
        buf: &'a [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'a>> {
        let bytes = bytes_of(buf);
        // SAFETY: the request borrows `buf` for 'a, and dropping it waits for completion.
        unsafe { self.isend_raw(bytes.as_ptr(), bytes.len(), dest, tag, SendMode::Standard) }
    }

    /// Starts a synchronous send of `buf`.
    pub fn issend<'a, T: Primitive>(
        &self,
        buf: &'a [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'a>> {
        let bytes = bytes_of(buf);
        // SAFETY: as in `isend`.
        unsafe {
            self.isend_raw(
                bytes.as_ptr(),
                bytes.len(),
                dest,
                tag,
                SendMode::Synchronous,
            )
        }
    }

    /// Posts a receive into `buf`.
    pub fn irecv<'a, T: Primitive>(
        &self,
        buf: &'a mut [T],
        source: i32,
        tag: i32,
    ) -> Result<Request<'a>> {
        let bytes = bytes_of_mut(buf);
        // SAFETY: the request borrows `buf` exclusively for 'a; dropping it cancels and waits.
        unsafe { self.irecv_raw(bytes.as_mut_ptr(), bytes.len(), source, tag) }
    }

    /// Sends `buf` to `dest` (standard mode).
    pub fn send<T: Primitive>(&self, buf: &[T], dest: i32, tag: i32) -> Result<()> {
        self.isend(buf, dest, tag)?.wait().map(drop)
    }

    /// Sends `buf` to `dest` and returns once the receiver has matched it.
    pub fn ssend<T: Primitive>(&self, buf: &[T], dest: i32, tag: i32) -> Result<()> {
        self.issend(buf, dest, tag)?.wait().map(drop)
    }

    /// Receives into `buf`.
    pub fn recv<T: Primitive>(&self, buf: &mut [T], source: i32, tag: i32) -> Result<Status> {
        self.irecv(buf, source, tag)?.wait()
    }

    /// Sends and receives at once (no deadlock whatever the order of the peers).
    #[allow(clippy::too_many_arguments)]
    pub fn sendrecv<S: Primitive, R: Primitive>(
        &self,
        send: &[S],
        dest: i32,
        send_tag: i32,
        recv: &mut [R],
        source: i32,
        recv_tag: i32,
    ) -> Result<Status> {
        let r = self.irecv(recv, source, recv_tag)?;
        let s = self.isend(send, dest, send_tag)?;
        let status = r.wait();
        s.wait()?;
        status
    }

    // ----- wire-plan measurement (not part of the API) -----

    // ----- custom-typed point-to-point -----

    /// Starts a send through a custom datatype state (the form the C library uses).
    pub fn isend_state(
        &self,
        state: Box<dyn PackState>,
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Request<'static>> {
        let tag = Self::send_tag(tag)?;
        let Some(dest) = self.dest(dest)? else {
            return Ok(Request::done(&self.shared, Ok(Self::null_status())));
        };
        let sync = mode == SendMode::Synchronous;
        let id = self
            .shared
            .with(|e| e.post_custom_send(&self.route, dest, tag, state, sync))?;
        Ok(Request::pending(&self.shared, id))
    }

    /// Posts a receive through a custom datatype state (the form the C library uses).
    pub fn irecv_state(
        &self,
        state: Box<dyn UnpackState>,
        source: i32,
        tag: i32,
    ) -> Result<Request<'static>> {
        let tag = Self::recv_tag(tag)?;
        let source = self.source(source)?;
        if let Source::Null = source {
            return Ok(Request::done(&self.shared, Ok(Self::null_status())));
        }
        let from = Self::source_filter(source);
        let id = self
            .shared
            .with(|e| e.post_custom_recv(&self.route, from, tag, state))?;
        Ok(Request::pending(&self.shared, id))
    }

    /// Starts a send of a custom-typed value: one message, however many parts it has.
    pub fn isend_custom<'a, S: CustomSend + ?Sized>(
        &self,
        value: &'a S,
        dest: i32,
        tag: i32,
    ) -> Result<Request<'a>> {
        let parts = value.parts()?;
        let state: Box<dyn PackState + 'a> = Box::new(parts);
        // SAFETY: the state borrows `value` for 'a; the returned request carries 'a, and the
        // engine drops the state when the operation completes, which dropping the request
        // waits for.
        let state: Box<dyn PackState> = unsafe { std::mem::transmute(state) };
        self.isend_state(state, dest, tag, SendMode::Standard)
    }

    /// Sends a custom-typed value.
    pub fn send_custom<S: CustomSend + ?Sized>(
        &self,
        value: &S,
        dest: i32,
        tag: i32,
    ) -> Result<()> {
        self.isend_custom(value, dest, tag)?.wait().map(drop)
    }

    /// Posts a receive of a custom-typed value; a dynamic type resizes to what arrives.
    pub fn irecv_custom<'a, R: CustomRecv + ?Sized>(
        &self,
        value: &'a mut R,
        source: i32,
        tag: i32,
    ) -> Result<Request<'a>> {
        let state: Box<dyn UnpackState + 'a> = Box::new(RecvAdapter::new(value));
        // SAFETY: as in `isend_custom`, with an exclusive borrow.
        let state: Box<dyn UnpackState> = unsafe { std::mem::transmute(state) };
        self.irecv_state(state, source, tag)
    }

    /// Receives a custom-typed value.
    pub fn recv_custom<R: CustomRecv + ?Sized>(
        &self,
        value: &mut R,
        source: i32,
        tag: i32,
    ) -> Result<Status> {
        self.irecv_custom(value, source, tag)?.wait()
    }

    // ----- probes -----

    fn probe_step(
        &self,
        source: i32,
        tag: i32,
        remove: bool,
    ) -> Result<Option<(Status, Option<Message>)>> {
        let tag = Self::recv_tag(tag)?;
        let source = self.source(source)?;
        if let Source::Null = source {
            let message = remove.then(|| Message {
                shared: Arc::clone(&self.shared),
                matched: None,
            });
            return Ok(Some((Self::null_status(), message)));
        }
        let from = Self::source_filter(source);
        let found = self
            .shared
            .with(|e| e.probe(&self.route, from, tag, remove))?;
        Ok(found.map(|(status, matched)| {
            let message = matched.map(|m| Message {
                shared: Arc::clone(&self.shared),
                matched: Some(m),
            });
            (status, message)
        }))
    }

    /// Checks for a matching message without receiving it.
    pub fn iprobe(&self, source: i32, tag: i32) -> Result<Option<Status>> {
        Ok(self.probe_step(source, tag, false)?.map(|(s, _)| s))
    }

    /// Waits for a matching message without receiving it.
    pub fn probe(&self, source: i32, tag: i32) -> Result<Status> {
        loop {
            if let Some(s) = self.iprobe(source, tag)? {
                return Ok(s);
            }
        }
    }

    /// Takes a matching message if one is there: no other receive can match it afterwards.
    pub fn improbe(&self, source: i32, tag: i32) -> Result<Option<(Message, Status)>> {
        Ok(self
            .probe_step(source, tag, true)?
            .and_then(|(s, m)| m.map(|m| (m, s))))
    }

    /// Waits for a matching message and takes it.
    pub fn mprobe(&self, source: i32, tag: i32) -> Result<(Message, Status)> {
        loop {
            if let Some(found) = self.improbe(source, tag)? {
                return Ok(found);
            }
        }
    }

    // ----- communicator management -----

    /// Frees the communicator; its pending operations still complete.
    pub fn free(self) {}
}

/// A message taken by a matched probe. Receive it with [`Message::recv`] or
/// [`Message::recv_custom`]; dropping it unreceived discards its data.
pub struct Message {
    shared: Arc<Shared>,
    matched: Option<Matched>,
}

impl Message {
    /// For a custom-typed message: the sender's packed size and region lengths, learned from
    /// the message itself before any buffer is provided. `None` for a contiguous message.
    pub fn shape(&self) -> Result<Option<Shape>> {
        match &self.matched {
            Some(Matched::Custom(id)) => self.shared.with(|e| e.matched_shape(*id)),
            _ => Ok(None),
        }
    }

    /// Receives a contiguous message into `buf`.
    pub fn recv<T: Primitive>(self, buf: &mut [T]) -> Result<Status> {
        self.irecv(buf)?.wait()
    }

    /// Starts receiving a contiguous message into `buf`.
    pub fn irecv<'a, T: Primitive>(self, buf: &'a mut [T]) -> Result<Request<'a>> {
        let bytes = bytes_of_mut(buf);
        // SAFETY: the request borrows `buf` exclusively for 'a.
        unsafe { self.irecv_raw(bytes.as_mut_ptr(), bytes.len()) }
    }

    /// Starts receiving a contiguous message into raw memory (the C library's form).
    ///
    /// # Safety
    /// As for [`Communicator::irecv_raw`].
    pub unsafe fn irecv_raw(mut self, buf: *mut u8, len: usize) -> Result<Request<'static>> {
        let Some(matched) = self.matched.take() else {
            return Ok(Request::done(&self.shared, Ok(Status::empty())));
        };
        if buf.is_null() && len > 0 {
            self.matched = Some(matched);
            return Err(Error::NullBuffer);
        }
        // SAFETY: forwarded from the caller.
        let id = self
            .shared
            .with(|e| unsafe { e.post_mrecv(matched, buf, len) })?;
        Ok(Request::pending(&self.shared, id))
    }

    /// Receives a custom-typed message; a dynamic type resizes to its shape.
    pub fn recv_custom<R: CustomRecv + ?Sized>(self, value: &mut R) -> Result<Status> {
        self.irecv_custom(value)?.wait()
    }

    /// Starts receiving a custom-typed message.
    pub fn irecv_custom<'a, R: CustomRecv + ?Sized>(self, value: &'a mut R) -> Result<Request<'a>> {
        let state: Box<dyn UnpackState + 'a> = Box::new(RecvAdapter::new(value));
        // SAFETY: as in `Communicator::isend_custom`.
        let state: Box<dyn UnpackState> = unsafe { std::mem::transmute(state) };
        self.irecv_state(state)
    }

    /// Starts receiving a custom-typed message through a state (the C library's form).
    pub fn irecv_state(mut self, state: Box<dyn UnpackState>) -> Result<Request<'static>> {
        let Some(matched) = self.matched.take() else {
            return Ok(Request::done(&self.shared, Ok(Status::empty())));
        };
        let id: OpId = self.shared.with(|e| e.post_custom_mrecv(matched, state))?;
        Ok(Request::pending(&self.shared, id))
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
