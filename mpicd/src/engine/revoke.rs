//! Revoked communicators (ULFM's `MPIX_Comm_revoke`): which contexts are revoked, the notices
//! that tell the other members, and what a revocation does to the operations in flight.
//!
//! A revocation covers a communicator's point-to-point and collective contexts; its
//! fault-tolerance context ([`FAULT_OFFSET`](crate::route::FAULT_OFFSET)), where agreement and shrink run, stays usable.
//! Once a process knows of it:
//! - a new operation on a covered context fails with [`Error::Revoked`] when posted;
//! - a receive waiting there is cancelled and completes with `Revoked`; a collective run
//!   there fails with it;
//! - a send in flight completes when its receiver drains it: every process keeps a standing
//!   receive on each revoked context that takes what arrives there and drops it (a custom-typed
//!   message with its private messages), so that no sender waits for a receive that will never
//!   be posted;
//! - the members are told by a notice: a message on [`NOTICE_CONTEXT`] carrying the
//!   communicator's context and its processes (world ranks). A process that learns of the
//!   revocation from a notice passes it on to every process of the communicator but itself
//!   and the sender, so it reaches every live member even if its origin dies while sending
//!   (ULFM's reliable broadcast, at the cost of a notice per pair of members).
//!
//! Every process keeps a standing receive of notices, posted when the engine starts; the
//! standing operations (that receive, the drains, notices being sent) are not the user's and
//! are not counted as pending at finalize.

use super::{Engine, Op, OpId, Posted, Route};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::route::{COLL_OFFSET, NOTICE_CONTEXT};
use crate::status::Status;
use std::collections::BTreeSet;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Set once any communicator is known revoked here: lets a hot path skip the engine's lock to
/// ask about its communicator while none ever was.
static ANY_REVOKED: AtomicBool = AtomicBool::new(false);

/// Whether any communicator is known revoked (a hint read without the engine's lock).
#[inline]
pub(crate) fn any_revoked() -> bool {
    ANY_REVOKED.load(Ordering::Acquire)
}

/// The tag of a revocation notice on the notice context.
const REVOKE_TAG: i32 = 0;

/// What the engine knows and keeps for revocations.
pub(super) struct Revocations {
    /// The contexts revoked (point-to-point and collective ones).
    revoked: BTreeSet<u32>,
    /// The notice context, over every process of the job.
    route: Route,
    /// The standing receive of notices and the buffer it fills (room for a communicator of
    /// every process of the job); none before start and after finalize cancelled it.
    notice: Option<(OpId, Box<[u8]>)>,
    /// The standing receives that drain revoked contexts.
    drains: Vec<(OpId, u32)>,
    /// Notices in flight, with their bytes.
    sending: Vec<(OpId, Box<[u8]>)>,
    /// Custom-typed receives cancelled by a revocation: they complete with `Revoked`.
    cancelled: Vec<OpId>,
}

impl Revocations {
    pub(super) fn new(size: u32) -> Revocations {
        Revocations {
            revoked: BTreeSet::new(),
            route: Route {
                context: NOTICE_CONTEXT,
                group: Arc::new(Group::world(size)),
            },
            notice: None,
            drains: Vec::new(),
            sending: Vec::new(),
            cancelled: Vec::new(),
        }
    }

    /// True if `context` is revoked.
    pub(super) fn covers(&self, context: u32) -> bool {
        !self.revoked.is_empty() && self.revoked.contains(&context)
    }

    /// The operations in the table that are the engine's own, not the user's.
    pub(super) fn standing(&self) -> usize {
        usize::from(self.notice.is_some()) + self.drains.len() + self.sending.len()
    }
}

impl Engine {
    /// Posts the standing receive of notices (when the engine starts).
    pub(super) fn listen_for_notices(&mut self) -> Result<()> {
        let buf = vec![0u8; 4 * (self.net.size as usize + 1)].into_boxed_slice();
        self.post_notice_receive(buf)
    }

    /// Posts the receive of the next notice into `buf`.
    fn post_notice_receive(&mut self, mut buf: Box<[u8]>) -> Result<()> {
        let route = self.revocations.route.clone();
        // SAFETY: the buffer is kept with the receive's id until the receive completes (the
        // engine tests it at every progress call that did something, and at finalize).
        let posted = unsafe { self.post_recv(&route, None, None, buf.as_mut_ptr(), buf.len()) }?;
        let Posted::Pending(id) = posted else {
            return Err(Error::Transport(
                "a notice receive completed when posted".into(),
            ));
        };
        self.revocations.notice = Some((id, buf));
        Ok(())
    }

    /// Fails with [`Error::Revoked`] if `route`'s context is revoked.
    pub(super) fn check_revoked(&self, route: &Route) -> Result<()> {
        match self.revocations.covers(route.context) {
            true => Err(Error::Revoked),
            false => Ok(()),
        }
    }

    /// True if the communicator on `context` (its point-to-point context) is revoked.
    pub(crate) fn is_revoked(&self, context: u32) -> bool {
        self.revocations.covers(context)
    }

    /// Revokes the communicator on `context` (its point-to-point context) whose processes
    /// are `members` (world ranks; both groups of an inter-communicator), and tells them.
    pub(crate) fn revoke(&mut self, context: u32, members: &[u32]) -> Result<()> {
        self.progress();
        if self.revoke_here(context) {
            self.notify(&encode(context, members), None);
        }
        Ok(())
    }

    /// Revokes `context` here; false if it already was.
    fn revoke_here(&mut self, context: u32) -> bool {
        let contexts = [context, context + COLL_OFFSET];
        if self.revocations.revoked.contains(&context) {
            return false;
        }
        let worker = &self.net.worker;
        for (id, op) in self.table.iter_mut() {
            match op {
                Op::Recv {
                    req: Some(r),
                    route,
                    ..
                } if contexts.contains(&route.context) => worker.cancel(r),
                Op::CustomRecv(r) if contexts.contains(&r.context()) => {
                    r.cancel(worker);
                    self.noticed.push(id.token());
                    self.revocations.cancelled.push(id);
                }
                _ => {}
            }
        }
        self.fail_runs_on(context + COLL_OFFSET, &Error::Revoked);
        self.revocations.revoked.extend(contexts);
        ANY_REVOKED.store(true, Ordering::Release);
        for c in contexts {
            self.drain(c);
        }
        true
    }

    /// Posts a standing receive that takes whatever arrives on `context` (being revoked).
    fn drain(&mut self, context: u32) {
        let route = Route {
            context,
            group: Arc::clone(&self.revocations.route.group),
        };
        // A receive of no bytes: a longer message is taken and fails it as truncated, a
        // custom-typed one is drained with its private messages (see `settle_contiguous`).
        let nowhere = NonNull::<u8>::dangling().as_ptr();
        // SAFETY: a receive of 0 bytes writes nothing.
        if let Ok(Posted::Pending(id)) =
            unsafe { self.post_recv_on_any(&route, None, None, nowhere, 0) }
        {
            self.revocations.drains.push((id, context));
        }
    }

    /// Sends the notice `bytes` to every process it names but this one, `skip` (the process
    /// it came from) and those known failed.
    fn notify(&mut self, bytes: &[u8], skip: Option<u32>) {
        let Some((_, members)) = decode(bytes) else {
            return;
        };
        for m in members {
            if m == self.net.rank || Some(m) == skip || self.net.has_failed(m) {
                continue;
            }
            self.send_notice(m, REVOKE_TAG, bytes.into());
        }
    }

    /// Sends notice `bytes` to world rank `to` under `tag` (a revocation's, or a given-up
    /// collective's: [`super::abort`]).
    pub(super) fn send_notice(&mut self, to: u32, tag: i32, bytes: Box<[u8]>) {
        let route = self.revocations.route.clone();
        // SAFETY: the bytes are kept with the send's id until it completes.
        let sent = unsafe { self.post_send(&route, to, tag, bytes.as_ptr(), bytes.len(), false) };
        // A process that cannot be reached needs no notice.
        if let Ok(Posted::Pending(id)) = sent {
            self.revocations.sending.push((id, bytes));
        }
    }

    /// The notice context's route, over every process of the job.
    pub(super) fn notice_route(&self) -> &Route {
        &self.revocations.route
    }

    /// Takes the notices that arrived, passing on those of revocations new here, and reaps
    /// the drains and the notices sent (a progress call that did something).
    pub(super) fn advance_revocations(&mut self) {
        while let Some((id, _)) = &self.revocations.notice {
            let status = match self.test(*id) {
                Ok(None) => break,
                Ok(Some(Ok(status))) if !status.cancelled => Some(status),
                // A malformed notice (too long): the next one is awaited.
                Ok(Some(Err(_))) => None,
                // Cancelled (by finalize), or gone.
                Ok(Some(Ok(_))) | Err(_) => {
                    self.revocations.notice = None;
                    break;
                }
            };
            let Some((_, buf)) = self.revocations.notice.take() else {
                break;
            };
            if let Some(status) = status {
                let len = (status.bytes.unwrap_or(0) as usize).min(buf.len());
                let from = u32::try_from(status.source).ok();
                match (status.tag, from) {
                    (super::abort::ABORT_TAG, Some(from)) => self.abort_noticed(&buf[..len], from),
                    (REVOKE_TAG, _) => {
                        if let Some((context, _)) = decode(&buf[..len]) {
                            if self.revoke_here(context) {
                                self.notify(&buf[..len], from);
                            }
                        }
                    }
                    _ => {}
                }
            }
            if self.post_notice_receive(buf).is_err() {
                break;
            }
        }
        let drains = std::mem::take(&mut self.revocations.drains);
        for (id, context) in drains {
            match self.test(id) {
                Ok(None) => self.revocations.drains.push((id, context)),
                // Cancelled by finalize.
                Ok(Some(Ok(status))) if status.cancelled => {}
                // Took a message: take the next one.
                Ok(Some(_)) => self.drain(context),
                Err(_) => {}
            }
        }
        let sending = std::mem::take(&mut self.revocations.sending);
        for (id, bytes) in sending {
            if let Ok(None) = self.test(id) {
                self.revocations.sending.push((id, bytes));
            }
        }
    }

    /// Operation `id` completed with `outcome`: `Revoked` if a revocation cancelled it (a
    /// custom-typed receive). It leaves the list of those either way, also when it completed
    /// normally because its message had already matched.
    pub(super) fn revoked_outcome(&mut self, id: OpId, outcome: Result<Status>) -> Result<Status> {
        let cancelled = &mut self.revocations.cancelled;
        if cancelled.is_empty() {
            return outcome;
        }
        let Some(i) = cancelled.iter().position(|&c| c == id) else {
            return outcome;
        };
        cancelled.swap_remove(i);
        match outcome {
            Ok(s) if s.cancelled => Err(Error::Revoked),
            other => other,
        }
    }
}

/// A notice: the revoked communicator's context, then its processes.
fn encode(context: u32, members: &[u32]) -> Vec<u8> {
    std::iter::once(context)
        .chain(members.iter().copied())
        .flat_map(u32::to_le_bytes)
        .collect()
}

/// The context and processes of a notice; `None` if it is malformed.
fn decode(bytes: &[u8]) -> Option<(u32, Vec<u32>)> {
    if bytes.len() < 4 || bytes.len() % 4 != 0 {
        return None;
    }
    let mut words = bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    let context = words.next()?;
    Some((context, words.collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_round_trip_and_malformed_ones_are_refused() {
        assert_eq!(decode(&encode(12, &[0, 3, 5])), Some((12, vec![0, 3, 5])));
        assert_eq!(decode(&encode(16, &[])), Some((16, vec![])));
        assert_eq!(decode(&[1, 2, 3]), None);
        assert_eq!(decode(&[1, 2, 3, 4, 5]), None);
    }
}
