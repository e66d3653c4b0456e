//! [`Course`]: how an operation is going, the one state every send and receive shares besides
//! its own phases.

use crate::error::{Error, Result};

/// How an operation is going. The first error is the one reported.
#[derive(Debug, Default)]
pub(crate) enum Course {
    /// No error so far.
    #[default]
    Running,
    /// Something failed: the rest of the message still travels (zeros or empty messages on the
    /// sender, drains on the receiver), so that the peer completes; then the operation fails
    /// with this error.
    Failed(Error),
    /// Stopped early (cancelled, or the runtime is finalizing): nothing more is posted; the
    /// operation fails with this error once what is in flight has ended.
    Stopped(Error),
    /// The peer died: nothing more is posted, and what is in flight is not awaited where it
    /// need not be (a send leaves it to the engine); the operation fails with this error.
    PeerLost(Error),
}

impl Course {
    /// Records a failure (the first error is kept; a stopped operation stays stopped).
    pub(crate) fn fail(&mut self, error: Error) {
        if let Course::Running = self {
            *self = Course::Failed(error);
        }
    }

    /// Stops the operation for `cause` (a dead peer, [`Error::ProcFailed`], makes it
    /// [`Course::PeerLost`]), keeping an earlier error as the one reported.
    pub(crate) fn stop(&mut self, cause: Error) {
        let lost = matches!(cause, Error::ProcFailed { .. }) || matches!(self, Course::PeerLost(_));
        let error = match std::mem::take(self) {
            Course::Running => cause,
            Course::Failed(e) | Course::Stopped(e) | Course::PeerLost(e) => e,
        };
        *self = if lost {
            Course::PeerLost(error)
        } else {
            Course::Stopped(error)
        };
    }

    /// True while no error was recorded.
    pub(crate) fn is_running(&self) -> bool {
        matches!(self, Course::Running)
    }

    /// True once stopped, for whatever cause: nothing more may be posted.
    pub(crate) fn is_stopped(&self) -> bool {
        matches!(self, Course::Stopped(_) | Course::PeerLost(_))
    }

    /// True once the peer is known dead.
    pub(crate) fn peer_lost(&self) -> bool {
        matches!(self, Course::PeerLost(_))
    }

    /// The recorded error, if any.
    pub(crate) fn error(&self) -> Option<&Error> {
        match self {
            Course::Running => None,
            Course::Failed(e) | Course::Stopped(e) | Course::PeerLost(e) => Some(e),
        }
    }

    /// The outcome so far: `ok` while running, else the recorded error (taken: the operation is
    /// over).
    pub(crate) fn outcome<T>(&mut self, ok: T) -> Result<T> {
        match std::mem::take(self) {
            Course::Running => Ok(ok),
            Course::Failed(e) | Course::Stopped(e) | Course::PeerLost(e) => Err(e),
        }
    }
}
