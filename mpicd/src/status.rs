//! The status of a completed receive or a probe: source, tag, size, kind of message.

use crate::error::{Envelope, Error, Result};
use crate::group::Group;
use crate::tag::{MessageKind, UserTag};
use crate::{ANY_TAG, PROC_NULL};

/// What MPI reports about a received or probed message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The sender's rank in the communicator.
    pub source: i32,
    /// The message tag.
    pub tag: i32,
    /// Bytes of the message; `None` when not known yet (a probed custom-typed message).
    pub bytes: Option<u64>,
    /// Contiguous, or custom-typed.
    pub kind: MessageKind,
    /// True when the operation was cancelled.
    pub cancelled: bool,
}

impl Status {
    /// The status of an operation that carries no message (a send, or `PROC_NULL`).
    pub fn empty() -> Status {
        Status {
            source: PROC_NULL,
            tag: ANY_TAG,
            bytes: Some(0),
            kind: MessageKind::Contiguous,
            cancelled: false,
        }
    }

    pub(crate) fn cancelled() -> Status {
        Status {
            cancelled: true,
            ..Status::empty()
        }
    }

    /// Decodes the sender and tag of a user-level message tag.
    pub(crate) fn from_tag(bits: u64, group: &Group, bytes: Option<u64>) -> Result<Status> {
        let t = UserTag::decode(bits)
            .ok_or_else(|| Error::Transport("private message reached a user receive".into()))?;
        let source = group.comm_rank(t.source).ok_or_else(|| {
            Error::Transport(format!(
                "message from world rank {} outside the communicator",
                t.source
            ))
        })?;
        Ok(Status {
            source,
            tag: t.tag,
            bytes,
            kind: t.kind,
            cancelled: false,
        })
    }

    /// Its sender and tag (what a failed receive of the message still reports).
    pub fn envelope(&self) -> Envelope {
        Envelope {
            source: self.source,
            tag: self.tag,
        }
    }

    /// Number of whole elements of `T` in the message, if its size is known and divisible.
    pub fn count<T>(&self) -> Option<u64> {
        let size = std::mem::size_of::<T>().max(1) as u64;
        self.bytes.filter(|b| b % size == 0).map(|b| b / size)
    }
}
