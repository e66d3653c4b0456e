//! A communicator's custom-typed point-to-point calls: sends and receives through custom
//! datatype states, and of [`CustomSend`]/[`CustomRecv`] objects (blocking, and in a scope).

use super::{Communicator, SendMode};
use crate::custom::parts::{pack_borrowed, unpack_borrowed};
use crate::custom::{CustomRecv, CustomSend, PackState, UnpackState};
use crate::engine::Posted;
use crate::error::Result;
use crate::request::{wait_posted, Request, Scope};
use crate::status::Status;

impl Communicator {
    /// Posts a send through a custom datatype state.
    fn post_state_send(
        &self,
        state: Box<dyn PackState>,
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Posted> {
        let Some((dest, tag)) = self.send_target(dest, tag)? else {
            return Ok(Posted::null());
        };
        let sync = mode == SendMode::Synchronous;
        self.shared
            .with(|e| e.post_custom_send(&self.route, dest, tag, state, sync))
            .map(Posted::Pending)
    }

    /// Posts a receive through a custom datatype state.
    fn post_state_recv(
        &self,
        state: Box<dyn UnpackState>,
        source: i32,
        tag: i32,
    ) -> Result<Posted> {
        let Some((from, tag)) = self.recv_filter(source, tag)? else {
            return Ok(Posted::null());
        };
        self.shared
            .with(|e| e.post_custom_recv(&self.route, from, tag, state))
            .map(Posted::Pending)
    }

    /// Starts a send through a custom datatype state (the form the C library uses).
    pub fn isend_state(
        &self,
        state: Box<dyn PackState>,
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Request<'static>> {
        let posted = self.post_state_send(state, dest, tag, mode)?;
        Ok(Request::posted(&self.shared, posted))
    }

    /// Posts a receive through a custom datatype state (the form the C library uses).
    pub fn irecv_state(
        &self,
        state: Box<dyn UnpackState>,
        source: i32,
        tag: i32,
    ) -> Result<Request<'static>> {
        let posted = self.post_state_recv(state, source, tag)?;
        Ok(Request::posted(&self.shared, posted))
    }

    /// Starts a send of a custom-typed value in `scope`: one message, however many parts it
    /// has.
    pub fn isend_custom<'s, 'a, S: CustomSend + ?Sized>(
        &self,
        scope: &'s Scope<'a>,
        value: &'a S,
        dest: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        // SAFETY: `value` is borrowed for the scope's 'a, and the scope completes the operation
        // (which drops the state) before it returns, even if the request is forgotten.
        let state = unsafe { pack_borrowed(value) }?;
        let posted = self.post_state_send(state, dest, tag, SendMode::Standard)?;
        Ok(scope.request(&self.shared, posted))
    }

    /// Sends a custom-typed value.
    pub fn send_custom<S: CustomSend + ?Sized>(
        &self,
        value: &S,
        dest: i32,
        tag: i32,
    ) -> Result<()> {
        // SAFETY: the request is waited for before `value`'s borrow ends (or, on unwinding,
        // dropped, which waits too).
        let state = unsafe { pack_borrowed(value) }?;
        let posted = self.post_state_send(state, dest, tag, SendMode::Standard)?;
        wait_posted(&self.shared, posted).map(drop)
    }

    /// Posts a receive of a custom-typed value in `scope`; a dynamic type resizes to what
    /// arrives.
    pub fn irecv_custom<'s, 'a, R: CustomRecv + ?Sized>(
        &self,
        scope: &'s Scope<'a>,
        value: &'a mut R,
        source: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        // SAFETY: as in `isend_custom`, with an exclusive borrow.
        let state = unsafe { unpack_borrowed(value) };
        let posted = self.post_state_recv(state, source, tag)?;
        Ok(scope.request(&self.shared, posted))
    }

    /// Receives a custom-typed value.
    pub fn recv_custom<R: CustomRecv + ?Sized>(
        &self,
        value: &mut R,
        source: i32,
        tag: i32,
    ) -> Result<Status> {
        // SAFETY: as in `send_custom`.
        let state = unsafe { unpack_borrowed(value) };
        let posted = self.post_state_recv(state, source, tag)?;
        wait_posted(&self.shared, posted)
    }
}
