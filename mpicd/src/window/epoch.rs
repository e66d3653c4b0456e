//! The epochs a process is in on a window ([`Epoch`]: a fence epoch, passive-target locks, a
//! PSCW access or exposure group): the state both the access checks of the communication calls
//! ([`super::access`]) and the synchronization calls ([`super::sync`]) read and change, and
//! its summary per target ([`AccessMap`]: what each target allows now, one atomic each), which
//! the lock-free calls of mapped windows ([`super::hot`]) read instead of taking the state's
//! mutex.

use std::sync::atomic::{AtomicU8, Ordering};

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

/// What this process may do to one target now, as the epochs allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Access {
    /// No epoch covers it: no communication call.
    Closed = 0,
    /// A fence epoch or a PSCW access group: communication calls, no flush.
    Active = 1,
    /// A passive-target lock (its own or lock-all): communication calls and flushes.
    Passive = 2,
}

impl Access {
    fn from_u8(v: u8) -> Access {
        match v {
            2 => Access::Passive,
            1 => Access::Active,
            _ => Access::Closed,
        }
    }
}

/// [`Access`] of every target, readable without the window's state mutex. Written (under
/// that mutex) by each synchronization call that changes an epoch; read by the calls of the
/// epoch, which the program orders after it (in one thread, or through its own
/// synchronization between threads): relaxed loads see the value.
pub(crate) struct AccessMap {
    ranks: Box<[AtomicU8]>,
    /// [`Access::Passive`] if any target is, else [`Access::Closed`] (the flush-all check).
    any_passive: AtomicU8,
}

impl AccessMap {
    pub(crate) fn new(members: usize) -> AccessMap {
        AccessMap {
            ranks: (0..members).map(|_| AtomicU8::new(0)).collect(),
            any_passive: AtomicU8::new(0),
        }
    }

    /// What target `rank` allows (`Closed` for a rank out of range).
    #[inline]
    pub(crate) fn get(&self, rank: usize) -> Access {
        match self.ranks.get(rank) {
            Some(a) => Access::from_u8(a.load(Ordering::Relaxed)),
            None => Access::Closed,
        }
    }

    /// Whether some target is in a passive-target epoch.
    #[inline]
    pub(crate) fn any_passive(&self) -> bool {
        Access::from_u8(self.any_passive.load(Ordering::Relaxed)) == Access::Passive
    }

    /// Sets every target's access from `epoch`.
    pub(crate) fn publish(&self, epoch: &Epoch) {
        let mut any = Access::Closed;
        for (r, slot) in self.ranks.iter().enumerate() {
            let in_group = epoch.access.as_ref().is_some_and(|g| g.contains(&r));
            let a = match (epoch.passive(r), epoch.fence || in_group) {
                (true, _) => Access::Passive,
                (false, true) => Access::Active,
                (false, false) => Access::Closed,
            };
            if a == Access::Passive {
                any = Access::Passive;
            }
            slot.store(a as u8, Ordering::Relaxed);
        }
        self.any_passive.store(any as u8, Ordering::Relaxed);
    }
}
