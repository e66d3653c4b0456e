//! Collectives given up because the members' arguments disagree (counts or roots that differ:
//! an erroneous program, which MPI leaves undefined): the notice that tells the other members,
//! and the drains that take what they still send, so that no member waits for ever for one
//! that has left.
//!
//! A member whose collective (run directly, or a plan's run: a non-blocking or persistent one)
//! fails on its own for a disagreement ([`disagrees`]: a message of the wrong size, a member
//! that took another path) tells every other member of the communicator, by a notice on the notice context ([`ABORT_TAG`]: the collective's context and
//! number), before it waits for what it sent. A member that knows of it (the one that failed
//! too):
//! - fails that collective when it starts it or while it waits in it; its receives there are
//!   cancelled (and their messages still taken, as for any collective given up);
//! - keeps a standing receive on the collective's context and tag that takes whatever arrives
//!   there and drops it: a member whose counts took it to another algorithm may send messages
//!   nobody expects, and a long one waits for its receiver (UCX cannot take back a send).
//!
//! Without this, the members that did not see the mismatch themselves waited for ever: at 3
//! ranks over tcp, an allreduce, scan, exscan or allgather of 8 B on one member and 64 KiB or
//! 1 MiB on the others hung on two of the three.
//!
//! A collective is named by its number on the communicator (`coll_seq`, whose low bits are its
//! messages' tag): the tag comes round again after [`crate::tag::TAG_UB`] collectives, so a drain
//! is cancelled once its communicator is that far on (half of it: [`STALE_AFTER`]).

use super::{Engine, OpId, Posted, Route};
use crate::error::Error;
use crate::tag::TAG_UB;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once any collective was given up here: lets a hot path skip the engine's list.
static ANY_ABORTED: AtomicBool = AtomicBool::new(false);

/// Whether any collective was given up here (a hint read without the engine's lock).
#[inline]
pub(crate) fn any_aborted() -> bool {
    ANY_ABORTED.load(Ordering::Acquire)
}

/// The tag of a given-up collective's notice on the notice context (a revocation's is 0).
pub(super) const ABORT_TAG: i32 = 1;

/// How many collectives a communicator runs after one given up before that one's drain goes
/// (its messages' tag then names a collective to come).
const STALE_AFTER: u32 = 1 << (TAG_UB.count_ones() - 1);

/// The most collectives given up that are remembered; the oldest goes first.
const MOST: usize = 64;

/// A collective given up.
struct Abort {
    /// Its communicator's collective context.
    context: u32,
    /// Its number on the communicator.
    seq: u32,
    /// The member that gave it up first (world rank), as far as this process knows.
    origin: u32,
    /// The standing receive that takes what arrives for it.
    drain: Option<OpId>,
}

/// What the engine knows of collectives given up.
#[derive(Default)]
pub(super) struct Aborts {
    given_up: Vec<Abort>,
}

impl Aborts {
    /// The operations in the table that are the engine's own (the drains).
    pub(super) fn standing(&self) -> usize {
        self.given_up.iter().filter(|a| a.drain.is_some()).count()
    }
}

/// Whether `e`, a collective's failure on one member, says the members' arguments differ (a
/// message of another size than expected, of another kind): the others are then told.
pub(crate) fn disagrees(e: &Error) -> bool {
    matches!(
        e,
        Error::InvalidArgument(_) | Error::Truncated { .. } | Error::DatatypeMismatch { .. }
    )
}

/// The tag of collective number `seq`'s messages.
pub(crate) fn tag_of(seq: u32) -> i32 {
    (seq % (TAG_UB as u32 + 1)) as i32
}

impl Engine {
    /// Why collective number `seq` on `route` cannot go on: as [`Engine::barred`], or a member
    /// gave it up. Also lets go of the drains of collectives given up long ago on `route`.
    pub(crate) fn barred_at(&mut self, route: &Route, seq: u32) -> Option<Error> {
        if let Some(e) = self.barred(route) {
            return Some(e);
        }
        if !any_aborted() {
            return None;
        }
        self.forget_stale(route.context, seq);
        let a = self.find_abort(route.context, seq)?;
        let origin = a.origin;
        let who = match route.group.comm_rank(origin) {
            Some(r) if origin == self.net.rank => format!("this member ({r})"),
            Some(r) => format!("member {r}"),
            None => format!("process {origin}"),
        };
        Some(Error::InvalidArgument(format!(
            "collective given up: {who} found that the members' arguments differ"
        )))
    }

    /// This member gives up collective number `seq` on `route` (its arguments and another
    /// member's differ): it drains the collective's tag and tells every other member; nothing
    /// if the collective is known given up already (by this member, or another's notice).
    pub(crate) fn give_up(&mut self, route: &Route, seq: u32) {
        if !self.note_abort(route.context, seq, self.net.rank) {
            return;
        }
        let notice = encode(route.context, seq);
        for m in route.group.members() {
            if m != self.net.rank && !self.net.has_failed(m) {
                self.send_notice(m, ABORT_TAG, notice.as_slice().into());
            }
        }
    }

    /// A notice from world rank `from` that it gave up a collective.
    pub(super) fn abort_noticed(&mut self, bytes: &[u8], from: u32) {
        if let Some((context, seq)) = decode(bytes) {
            self.note_abort(context, seq, from);
        }
    }

    /// Reposts the drains that took a message (a progress call that did something).
    pub(super) fn advance_aborts(&mut self) {
        for i in 0..self.aborts.given_up.len() {
            let Some(id) = self.aborts.given_up[i].drain else {
                continue;
            };
            match self.test(id) {
                Ok(None) => {}
                // Cancelled (by finalize).
                Ok(Some(Ok(status))) if status.cancelled => self.aborts.given_up[i].drain = None,
                // Took a message (whole, or cut short): take the next one.
                Ok(Some(_)) => {
                    let a = &self.aborts.given_up[i];
                    self.aborts.given_up[i].drain = self.drain_tag(a.context, tag_of(a.seq));
                }
                Err(_) => self.aborts.given_up[i].drain = None,
            }
        }
    }

    /// Records that collective `seq` on `context` was given up (by world rank `origin`), and
    /// drains its tag; false if it already was.
    fn note_abort(&mut self, context: u32, seq: u32, origin: u32) -> bool {
        if self.find_abort(context, seq).is_some() {
            return false;
        }
        self.forget_stale(context, seq);
        if self.aborts.given_up.len() >= MOST {
            let oldest = self.aborts.given_up.remove(0);
            self.stop_drain(oldest.drain);
        }
        let drain = self.drain_tag(context, tag_of(seq));
        self.aborts.given_up.push(Abort {
            context,
            seq,
            origin,
            drain,
        });
        ANY_ABORTED.store(true, Ordering::Release);
        true
    }

    fn find_abort(&self, context: u32, seq: u32) -> Option<&Abort> {
        self.aborts
            .given_up
            .iter()
            .find(|a| a.context == context && a.seq == seq)
    }

    /// Lets go of the collectives given up on `context` that collective `seq` is far past (not
    /// those still to come here: a notice may come before its collective starts).
    fn forget_stale(&mut self, context: u32, seq: u32) {
        let stale = |a: &Abort| a.context == context && is_far_past(a.seq, seq);
        if !self.aborts.given_up.iter().any(stale) {
            return;
        }
        let (old, kept) = std::mem::take(&mut self.aborts.given_up)
            .into_iter()
            .partition::<Vec<_>, _>(stale);
        self.aborts.given_up = kept;
        for a in old {
            self.stop_drain(a.drain);
        }
    }

    /// Cancels a drain; it completes among the orphans (the drains of given-up receives).
    fn stop_drain(&mut self, drain: Option<OpId>) {
        if let Some(id) = drain {
            let _ = self.cancel(id);
            self.orphans.push(id);
        }
    }

    /// Posts a receive of no bytes on `context` and `tag` from any member: it takes the next
    /// message there (a longer one fails it as truncated; a custom-typed one is drained with
    /// its private messages).
    fn drain_tag(&mut self, context: u32, tag: i32) -> Option<OpId> {
        let route = Route {
            context,
            group: std::sync::Arc::clone(&self.notice_route().group),
        };
        let nowhere = NonNull::<u8>::dangling().as_ptr();
        // SAFETY: a receive of 0 bytes writes nothing.
        match unsafe { self.post_recv_on_any(&route, None, Some(tag), nowhere, 0) } {
            Ok(Posted::Pending(id)) => Some(id),
            _ => None,
        }
    }
}

/// True if collective `then` is [`STALE_AFTER`] or more collectives before `now` (numbers wrap:
/// one less than half the range behind counts as before, the rest as to come).
fn is_far_past(then: u32, now: u32) -> bool {
    (STALE_AFTER..1 << 31).contains(&now.wrapping_sub(then))
}

/// A notice: the collective context, then the collective's number.
fn encode(context: u32, seq: u32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&context.to_le_bytes());
    b[4..].copy_from_slice(&seq.to_le_bytes());
    b
}

/// The context and number of a notice; `None` if it is malformed.
fn decode(bytes: &[u8]) -> Option<(u32, u32)> {
    let b: [u8; 8] = bytes.try_into().ok()?;
    let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    Some((word(0), word(4)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_round_trip_and_tags_wrap() {
        assert_eq!(decode(&encode(40, 7)), Some((40, 7)));
        assert_eq!(decode(&[0; 7]), None);
        assert_eq!(decode(&[0; 12]), None);
        assert_eq!(tag_of(TAG_UB as u32 + 3), 2);
        assert_eq!(tag_of(5), 5);
        assert_eq!(u64::from(STALE_AFTER) * 2, TAG_UB as u64 + 1);
    }

    #[test]
    fn only_collectives_far_behind_are_stale() {
        assert!(!is_far_past(10, 10));
        assert!(!is_far_past(10, 11));
        // A notice of a collective this member has not started yet.
        assert!(!is_far_past(11, 10));
        assert!(!is_far_past(u32::MAX, 3));
        assert!(is_far_past(10, 10 + STALE_AFTER));
        assert!(is_far_past(u32::MAX - 5, STALE_AFTER));
        assert!(!is_far_past(10 + STALE_AFTER, 10));
    }
}
