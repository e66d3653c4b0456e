//! Serde calls on communicators and matched messages: send any `T: Serialize` and receive any
//! `T: DeserializeOwned` as one custom-typed message, without declaring a custom type. The
//! encoding and its [`Region`](crate::custom::serde::Region) payloads are described in
//! [`crate::custom::serde`].
//!
//! ```no_run
//! use mpicd::SerdeExt;
//! use std::collections::BTreeMap;
//!
//! let mpi = mpicd::init()?;
//! let world = mpi.world();
//! if world.rank() == 0 {
//!     let table: BTreeMap<String, Vec<u32>> = [("a".to_string(), vec![1, 2])].into();
//!     world.send_serde(&table, 1, 5)?;
//! } else if world.rank() == 1 {
//!     let table: BTreeMap<String, Vec<u32>> = world.recv_serde(0, 5)?;
//!     assert_eq!(table["a"], vec![1, 2]);
//! }
//! # Ok::<(), mpicd::Error>(())
//! ```

use crate::custom::serde::{encode_progressing, SerdeBuffer};
use crate::error::Result;
use crate::{Communicator, Message, Request, SendMode, Status};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Serde sends and receives on a [`Communicator`].
pub trait SerdeExt {
    /// Sends `value` (standard mode).
    fn send_serde<T: Serialize + ?Sized>(&self, value: &T, dest: i32, tag: i32) -> Result<()>;

    /// Starts sending `value`. The value is encoded before this returns (its
    /// [`Region`](crate::custom::serde::Region)s are shared with the send, not borrowed), so the
    /// request does not borrow it: the message is the value as it was at the call. The message
    /// is also started on its way (one pass of progress) before this returns.
    fn isend_serde<T: Serialize + ?Sized>(
        &self,
        value: &T,
        dest: i32,
        tag: i32,
    ) -> Result<Request<'static>>;

    /// Receives a `T`, whatever its size: one message, buffers sized from the message itself.
    fn recv_serde<T: DeserializeOwned>(&self, source: i32, tag: i32) -> Result<T> {
        self.recv_serde_with_status(source, tag).map(|(v, _)| v)
    }

    /// Receives a `T` and the status (source and tag, for wildcard receives).
    fn recv_serde_with_status<T: DeserializeOwned>(
        &self,
        source: i32,
        tag: i32,
    ) -> Result<(T, Status)>;

    /// Receives a `T` into `place`, reusing its allocations where serde can (a `Vec` keeps its
    /// buffer): for messages received again and again into the same object. See
    /// [`SerdeBuffer::decode_into`].
    fn recv_serde_into<T: DeserializeOwned>(
        &self,
        place: &mut T,
        source: i32,
        tag: i32,
    ) -> Result<Status>;
}

impl SerdeExt for Communicator {
    fn send_serde<T: Serialize + ?Sized>(&self, value: &T, dest: i32, tag: i32) -> Result<()> {
        self.isend_serde(value, dest, tag)?.wait().map(drop)
    }

    fn isend_serde<T: Serialize + ?Sized>(
        &self,
        value: &T,
        dest: i32,
        tag: i32,
    ) -> Result<Request<'static>> {
        // The engine progresses while a large value is encoded: the transfers of the messages
        // sent before go on (measured: a window of 64 messages of 8 MiB, whose receiver
        // otherwise waited for each encoding).
        let mut failed = None;
        let mut progress = || {
            if failed.is_none() {
                failed = self.progress().err();
            }
        };
        let encoded = encode_progressing(value, Some(&mut progress));
        if let Some(e) = failed {
            return Err(e);
        }
        let parts = encoded?.into_parts();
        let request = self.isend_state(Box::new(parts), dest, tag, SendMode::Standard)?;
        // Start moving it now: the caller is likely to encode the next message before it
        // waits, and the receiver can decode this one meanwhile (measured: up to twice the
        // bandwidth of a window of 16-32 KiB messages, no loss for small ones).
        self.progress()?;
        Ok(request)
    }

    fn recv_serde_with_status<T: DeserializeOwned>(
        &self,
        source: i32,
        tag: i32,
    ) -> Result<(T, Status)> {
        let mut buffer = SerdeBuffer::new();
        let status = self.recv_custom(&mut buffer, source, tag)?;
        Ok((buffer.decode()?, status))
    }

    fn recv_serde_into<T: DeserializeOwned>(
        &self,
        place: &mut T,
        source: i32,
        tag: i32,
    ) -> Result<Status> {
        let mut buffer = SerdeBuffer::new();
        let status = self.recv_custom(&mut buffer, source, tag)?;
        buffer.decode_into(place)?;
        Ok(status)
    }
}

/// Serde receive of a message taken by a matched probe.
pub trait MessageSerdeExt {
    /// Receives the message as a `T`.
    fn recv_serde<T: DeserializeOwned>(self) -> Result<(T, Status)>;
}

impl MessageSerdeExt for Message {
    fn recv_serde<T: DeserializeOwned>(self) -> Result<(T, Status)> {
        let mut buffer = SerdeBuffer::new();
        let status = self.recv_custom(&mut buffer)?;
        Ok((buffer.decode()?, status))
    }
}
