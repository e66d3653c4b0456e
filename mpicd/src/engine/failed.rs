//! What the engine knows of failed processes for ULFM: which members of a communicator failed,
//! which of those failures the communicator acknowledged, and whether a receive from any
//! source is blocked by one not acknowledged. Failures are found and operations failed in
//! [`super::progress`]; this file only answers questions about them.

use super::{Engine, Op, OpId, Route};
use crate::error::Error;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once any process of the job is known failed: lets a hot path skip the engine's lock
/// to ask about a peer while nobody ever failed.
static ANY_FAILED: AtomicBool = AtomicBool::new(false);

/// Whether any process is known failed (a hint read without the engine's lock).
#[inline]
pub(crate) fn any_failed() -> bool {
    ANY_FAILED.load(Ordering::Acquire)
}

/// Records that a process is known failed.
pub(super) fn note_failure() {
    ANY_FAILED.store(true, Ordering::Release);
}

impl Engine {
    /// The members of `route`'s group (world ranks) known failed, in the order found.
    pub(crate) fn failed_members(&self, route: &Route) -> Vec<u32> {
        self.net
            .lost
            .iter()
            .copied()
            .filter(|&r| route.group.comm_rank(r).is_some())
            .collect()
    }

    /// Why a collective on `route` cannot go on: its communicator is revoked, or a member is
    /// known dead (then it fails on every member that knows, as a plan's run does).
    pub(crate) fn barred(&self, route: &Route) -> Option<Error> {
        if self.is_revoked(route.context) {
            return Some(Error::Revoked);
        }
        if !any_failed() {
            return None;
        }
        let dead = *self.failed_members(route).first()?;
        Some(Error::ProcFailed { rank: dead as i32 })
    }

    /// Acknowledges, for the communicator of `route`, every failure known now; returns how
    /// many failures this process knows (the mark the acknowledgment set).
    pub(crate) fn ack_failures(&mut self, route: &Route) -> usize {
        self.progress();
        let known = self.net.lost.len();
        self.acked.insert(route.context, known);
        known
    }

    /// Acknowledges, for the communicator of `route`, its first `count` failed members (in
    /// the order found; more than there are acknowledges all); returns how many of its failed
    /// members are acknowledged afterwards. It never takes an acknowledgment back.
    pub(crate) fn ack_first_failures(&mut self, route: &Route, count: usize) -> usize {
        self.progress();
        let lost = &self.net.lost;
        let in_group = |r: &u32| route.group.comm_rank(*r).is_some();
        let mut mark = match count {
            0 => 0,
            n => match lost
                .iter()
                .enumerate()
                .filter(|(_, r)| in_group(r))
                .nth(n - 1)
            {
                Some((i, _)) => i + 1,
                None => lost.len(),
            },
        };
        let previous = self.acked.get(&route.context).copied().unwrap_or(0);
        mark = mark.max(previous);
        self.acked.insert(route.context, mark);
        lost[..mark].iter().filter(|r| in_group(r)).count()
    }

    /// The members of `route`'s group whose failure its communicator acknowledged.
    pub(crate) fn acked_members(&self, route: &Route) -> Vec<u32> {
        let mark = self.acked.get(&route.context).copied().unwrap_or(0);
        self.net.lost[..mark.min(self.net.lost.len())]
            .iter()
            .copied()
            .filter(|&r| route.group.comm_rank(r).is_some())
            .collect()
    }

    /// If `id` is a pending receive from any source on a communicator with a failed member
    /// whose failure it did not acknowledge, that member's world rank (as an `i32`).
    pub(crate) fn any_source_blocked(&self, id: OpId) -> Option<i32> {
        if self.net.lost.is_empty() {
            return None;
        }
        let Some(Op::Recv {
            peer: None, route, ..
        }) = self.table.get(id)
        else {
            return None;
        };
        let mark = self.acked.get(&route.context).copied().unwrap_or(0);
        self.net.lost[mark.min(self.net.lost.len())..]
            .iter()
            .find(|&&r| route.group.comm_rank(r).is_some())
            .map(|&r| r as i32)
    }
}
