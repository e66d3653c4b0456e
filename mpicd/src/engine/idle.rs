//! How a blocking wait spends the time when progress finds nothing to do (`MPICD_WAIT`): poll
//! again at once, give the core away, or, after a while without events, sleep on the UCX
//! worker's event file descriptor until the transport has something or a short limit passes.
//!
//! Only blocking waits sleep (MPI_Wait and its kin, blocking calls): a test returns at once
//! whatever the policy. The sleep happens outside the engine's lock, so other threads go on.
//!
//! Nor do they sleep while the process has a window that is not mapped, which UCX's remote
//! memory access reaches ([`super::helper::exposed`]; the node collectives' waits do not nap
//! then either): the origins' small puts, gets and accumulates come as active messages into
//! this process's shared-memory FIFO, and when it is full the rest wait in the origin's
//! pending queue. UCX 1.13 wakes no sleeper as the FIFO empties (its shared-memory interfaces
//! arm without looking at that queue), so the target served 64 of them per nap or per helper
//! period: a strided 256 KiB MPI_Put to a target waiting in MPI_Win_fence took 2 s instead of
//! 33 ms at 4 ranks on 2 cores. Such a process spends its blocked time polling and yielding.

use super::Engine;
use crate::transport::Armed;
use std::os::raw::c_int;
use std::time::{Duration, Instant};

/// What a process does when progress finds nothing to do, resolved from `MPICD_WAIT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitPolicy {
    /// Poll again at once: the process has a core of its own.
    Spin,
    /// Give the core away (`sched_yield`) when progress keeps finding nothing (16 calls in a
    /// row), then poll again.
    Yield,
    /// Yield, and once a wait has seen no event for [`SLEEP_AFTER`], sleep on the worker's
    /// event file descriptor.
    Sleep,
}

/// Time without events after which a blocking wait sleeps (policy [`WaitPolicy::Sleep`]): a
/// reply that comes sooner is met by polling, one that comes later wakes the sleeper.
pub(crate) const SLEEP_AFTER: Duration = Duration::from_micros(100);

/// Longest sleep: a waiter wakes at least this often for what the transport does not signal
/// (another thread's completion of a generalized request, the liveness checks of local peers).
const NAP_LIMIT_MS: c_int = 2;

/// The idle time of one blocking wait: kept by the waiter across its progress steps.
#[derive(Debug, Default)]
pub struct Idle {
    /// When the wait last saw nothing happen after something had (`None`: it just did).
    since: Option<Instant>,
}

/// A sleep the waiting thread takes after it has released the engine's lock.
#[must_use]
pub(crate) struct Nap {
    fd: c_int,
}

impl Nap {
    /// Sleeps until the worker signals an event or [`NAP_LIMIT_MS`] pass.
    pub(crate) fn take(self) {
        let mut poll = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; the descriptor is the worker's and stays open while the
        // engine lives (a finalize meanwhile only makes poll report it, which ends the nap).
        unsafe { libc::poll(&mut poll, 1, NAP_LIMIT_MS) };
    }
}

impl Engine {
    /// After a blocking wait's progress call (`active`: it found something to do): whether the
    /// wait sleeps before its next step. Arms the worker when it does.
    pub(crate) fn idle(&mut self, idle: &mut Idle, active: bool) -> Option<Nap> {
        if active || self.wait != WaitPolicy::Sleep || super::helper::exposed() {
            idle.since = None;
            return None;
        }
        let now = Instant::now();
        let since = *idle.since.get_or_insert(now);
        if now.duration_since(since) < SLEEP_AFTER {
            return None;
        }
        match self.net.worker.arm() {
            Armed::Fd(fd) => {
                // Sleeping makes progress calls rare: the next one checks local peers.
                self.net.watch.hurry();
                Some(Nap { fd })
            }
            Armed::Busy | Armed::Unavailable => None,
        }
    }
}
