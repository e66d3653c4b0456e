//! The epochs a process is in on a window ([`Epoch`]: a fence epoch, passive-target locks, a
//! PSCW access or exposure group): the state both the access checks of the communication calls
//! ([`super::access`]) and the synchronization calls ([`super::sync`]) read and change.

/// A passive-target lock type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    Shared,
    Exclusive,
}

/// A lock this process holds on a target: its type, and whether the lock word was taken
/// (not with `MPI_MODE_NOCHECK`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Held {
    pub(super) kind: LockKind,
    pub(super) taken: bool,
}

/// The epochs this process is in on a window.
pub(crate) struct Epoch {
    /// A fence opened an access epoch (closed by a fence with `MPI_MODE_NOSUCCEED`).
    pub(super) fence: bool,
    pub(super) locks: Vec<Option<Held>>,
    /// Inside `MPI_Win_lock_all` (whether the lock words were taken).
    pub(super) lock_all: Option<bool>,
    /// The targets of `MPI_Win_start`, until `MPI_Win_complete`.
    pub(super) access: Option<Vec<usize>>,
    /// The origins of `MPI_Win_post`, until `MPI_Win_wait`.
    pub(super) exposure: Option<Vec<usize>>,
    /// Posts and completions accounted for by start and wait so far.
    pub(super) posts_seen: u64,
    pub(super) completes_seen: u64,
}

impl Epoch {
    pub(crate) fn new(members: usize) -> Epoch {
        Epoch {
            fence: false,
            locks: vec![None; members],
            lock_all: None,
            access: None,
            exposure: None,
            posts_seen: 0,
            completes_seen: 0,
        }
    }

    pub(super) fn passive(&self, rank: usize) -> bool {
        self.lock_all.is_some() || self.locks[rank].is_some()
    }
}
