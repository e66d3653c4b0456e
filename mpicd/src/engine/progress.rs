//! The progress loop, and what completes operations: tests, cancels, and peer failures (every
//! operation that depends on a dead peer completes with [`Error::ProcFailed`]).

use super::custom::FULL_CUSTOM_POLL;
use super::idle::WaitPolicy;
use super::{Engine, Net, Op, OpId};
use crate::error::{Error, Result};
use crate::ops::Stranded;
use crate::status::Status;
use std::sync::atomic::Ordering;
use std::task::Poll;

/// Progress calls between two advances of the collective runs when nothing happened.
const SCHEDULE_POLL: u32 = 64;

/// Where processes outnumber cores, progress calls in a row that find nothing before one gives
/// the core away (`sched_yield`). At every such call, 4 ranks on 2 cores switched 460 000 times
/// in the 0.7 s of the randomized message rate (`bench/fairness`; Open MPI 38 000) and reached
/// 22 000 msg/s; after 8-32 calls, 27 000-28 000. After 64 the rate gains a little more, but a
/// collective by messages, whose members go in lock step, takes up to twice as long (8 B
/// allreduce, 4 ranks: 4.7 us after 8 or 16 calls, 6.9-13 after 64).
const YIELD_AFTER: u32 = 16;

impl Engine {
    /// Progresses the transport and the multi-step operations; true if the transport had
    /// something to do.
    pub(crate) fn progress(&mut self) -> bool {
        // What the background helper progressed counts as this call's activity (see
        // [`super::helper`]): its callbacks may have filed failures.
        let active = self.net.worker.progress() | std::mem::take(&mut self.background_active);
        let due = self.net.watch.due() || crate::transport::take_copy_failure();
        if due {
            self.net.check_local_peers();
        }
        if active || due || self.net.worker.failures.is_pending() {
            // Failures are reported by UCX callbacks during progress, by the local check, or
            // by a connect that found its peer gone.
            self.handle_failures();
            if !self.net.stranded.is_empty() {
                let worker = &self.net.worker;
                self.net.stranded.retain_mut(|s| !s.release_if_done(worker));
            }
        }
        if self.net.worker.take_custom_alert() {
            self.settle_custom_leads();
        }
        let complete = crate::transport::notices::take_into(&mut self.noticed);
        self.progress_calls = self.progress_calls.wrapping_add(1);
        self.beat.store(self.progress_calls, Ordering::Relaxed);
        let mut custom_polled = true;
        if !complete || due || self.progress_calls % FULL_CUSTOM_POLL == 0 {
            self.poll_every_custom();
        } else if !self.noticed.is_empty() {
            self.poll_noticed_custom();
        } else {
            custom_polled = false;
        }
        if !self.orphans.is_empty() {
            self.reap_orphans();
        }
        // A run's messages complete in the transport's callbacks, a custom operation's in its
        // polls, a failure in handle_failures: a call with none of them leaves every run where
        // it was, and testing each run's messages again would only slow the waiting loop. The
        // rare completion from elsewhere (a cancel) is seen within SCHEDULE_POLL calls.
        let maybe_moved = active || due || custom_polled;
        if !self.schedules.is_empty() && (maybe_moved || self.progress_calls % SCHEDULE_POLL == 0) {
            self.advance_schedules();
        }
        if !self.agreements.is_empty() {
            self.advance_agreements();
        }
        if active || due || self.progress_calls % SCHEDULE_POLL == 0 {
            self.advance_revocations();
            self.advance_aborts();
        }
        self.idle_streak = match active {
            true => 0,
            false => self.idle_streak.wrapping_add(1),
        };
        if self.wait != WaitPolicy::Spin && self.idle_streak % YIELD_AFTER == YIELD_AFTER - 1 {
            // More processes than cores on this node: the peer this one waits for may need
            // this core to make its progress.
            std::thread::yield_now();
        }
        active
    }

    fn reap_orphans(&mut self) {
        let orphans = std::mem::take(&mut self.orphans);
        for id in orphans {
            if let Ok(None) = self.test(id) {
                self.orphans.push(id);
            }
        }
    }

    /// Takes `ranks`, which an agreement found failed (another member saw them fail), as
    /// failed here too: every operation on them fails, and `MPIX_Comm_get_failed` names them.
    pub(crate) fn learn_failures(&mut self, ranks: impl IntoIterator<Item = u32>) {
        for rank in ranks {
            if !self.net.has_failed(rank) {
                self.net.worker.failures.report(rank);
            }
        }
        self.handle_failures();
    }

    /// Completes operations that depend on peers whose endpoint failed.
    pub(super) fn handle_failures(&mut self) {
        for rank in self.net.worker.failures.take() {
            let Some(peer) = self.net.peers.get_mut(rank as usize) else {
                continue;
            };
            if peer.failed {
                continue;
            }
            peer.failed = true;
            super::failed::note_failure();
            self.net.lost.push(rank);
            crate::tool::pvar::PEERS_FAILED.add(1);
            crate::tool::event::peer_failed(rank);
            let dead = Error::ProcFailed { rank: rank as i32 };
            self.fail_runs_with(rank, &dead);
            self.fail_ops_on(rank, &dead, None);
        }
    }

    /// Before a receive from `peer` is posted: connects, so that a dead sender is noticed
    /// while the receive waits. A sender known failed does not fail the post: the receive
    /// may still match a message it sent before, and fails at its completion otherwise
    /// ([`Engine::settle_lost_sender`]), as those waiting when it failed did.
    pub(super) fn connect_sender(&mut self, peer: u32) -> Result<()> {
        match self.net.connect(peer) {
            Err(Error::ProcFailed { .. }) => Ok(()),
            other => other,
        }
    }

    /// After receive `id` from `peer` was posted: if `peer` is known failed, the receive fails
    /// unless it already took a whole message.
    pub(super) fn settle_lost_sender(&mut self, peer: u32, id: OpId) {
        self.handle_failures();
        if self.net.has_failed(peer) {
            self.fail_ops_on(peer, &Error::ProcFailed { rank: peer as i32 }, Some(id));
        }
    }

    /// Fails the operations on dead `rank` still in flight (`only` that one, if given).
    fn fail_ops_on(&mut self, rank: u32, dead: &Error, only: Option<OpId>) {
        let worker = &self.net.worker;
        let mut receiving = false;
        for (id, op) in self.table.iter_mut() {
            if op.peer() != Some(rank) || only.is_some_and(|o| o != id) {
                continue;
            }
            match op {
                Op::Recv { req: Some(r), .. } => {
                    worker.cancel(r);
                    receiving = true;
                }
                Op::Send { req, port, .. } => {
                    // Released now (UCX frees a pending request when it completes); the
                    // user's buffer is not kept: a dead peer reads nothing more. A stream
                    // end is: UCX may still call it, so it is stranded, detached.
                    match (req.take(), port.take()) {
                        (Some(r), Some(p)) => self
                            .net
                            .stranded
                            .push(Stranded::new(r, Box::new(p.detach()))),
                        (Some(r), None) => worker.cancel(&r),
                        _ => {}
                    }
                    *op = Op::Finished(Err(dead.clone()));
                }
                Op::CustomSend(s) => {
                    s.abort(worker, dead.clone());
                    self.noticed.push(id.token());
                }
                Op::CustomRecv(r) => {
                    r.abort(worker, dead.clone());
                    self.noticed.push(id.token());
                }
                Op::Recv { req: None, .. } | Op::Schedule | Op::Finished(_) => {}
            }
        }
        if receiving {
            self.fail_matched_receives(rank, dead);
        }
    }

    /// Fails the receives from dead `rank` that its cancel did not complete: they had matched a
    /// message of which the rest can never come (a rendezvous through shared-memory segments, an
    /// eager message of several fragments). The worker is first drained, so that every fragment
    /// the peer finished writing before it died has landed; nothing more can reach the buffer
    /// after that, and the request is stranded with its target until UCX lets it go.
    fn fail_matched_receives(&mut self, rank: u32, dead: &Error) {
        while self.net.worker.progress() {}
        let worker = &self.net.worker;
        for (_, op) in self.table.iter_mut() {
            let stuck = matches!(op, Op::Recv { req: Some(r), peer: Some(p), .. }
                if *p == rank && worker.is_pending(r));
            if !stuck {
                continue;
            }
            let failed = Op::Finished(Err(dead.clone()));
            if let Op::Recv {
                req: Some(r),
                target,
                ..
            } = std::mem::replace(op, failed)
            {
                self.net.stranded.push(Stranded::new(r, Box::new(target)));
            }
        }
    }

    /// Tests an operation; on completion it is removed and its outcome returned.
    pub(crate) fn test(&mut self, id: OpId) -> Result<Option<Result<Status>>> {
        // Fast path: an operation still in flight is checked in place.
        let pending = match self.table.get(id) {
            Some(Op::Send { req: Some(r), .. }) | Some(Op::Recv { req: Some(r), .. }) => {
                self.net.worker.is_pending(r)
            }
            // Custom operations are advanced by progress calls, which every waiting loop makes
            // between tests, and then become `Finished`.
            // So are collective runs.
            Some(Op::CustomSend(_)) | Some(Op::CustomRecv(_)) | Some(Op::Schedule) => true,
            _ => false,
        };
        if pending {
            return Ok(None);
        }
        if let Some(Op::Recv { peer, .. }) = self.table.get(id) {
            let peer = *peer;
            let outcome = self.poll_contiguous(id);
            if outcome.is_some() {
                self.table.retire(id);
            }
            return Ok(outcome.map(|r| r.map_err(|e| self.net.name_lost_peer(peer, e))));
        }
        let mut op = self.table.take(id).ok_or(Error::InvalidRequest)?;
        let peer = op.peer();
        let outcome = match &mut op {
            Op::Send { req, peer, .. } => match self.net.worker.poll_send(req) {
                Poll::Pending => None,
                Poll::Ready(r) => Some(
                    r.map_err(|e| self.net.failed_peer(Some(*peer)).unwrap_or(e))
                        .map(|()| Status::empty()),
                ),
            },
            Op::Recv { .. } | Op::CustomSend(_) | Op::CustomRecv(_) | Op::Schedule => None,
            Op::Finished(r) => Some(std::mem::replace(r, Err(Error::InvalidRequest))),
        };
        let outcome = outcome.map(|r| self.revoked_outcome(id, r));
        match outcome {
            None => {
                self.table.put_back(id, op);
                Ok(None)
            }
            Some(result) => {
                self.table.retire(id);
                drop(op); // frees the custom state exactly once
                Ok(Some(result.map_err(|e| self.net.name_lost_peer(peer, e))))
            }
        }
    }

    /// Asks a pending receive to cancel; it then completes as cancelled. A send cannot be
    /// withdrawn once posted (UCX 1.13's `ucp_request_cancel` acts on expected receives only),
    /// so cancelling one is accepted and does nothing: it completes normally, not cancelled,
    /// which MPI allows (and MPI 4.1 deprecates cancelling sends).
    pub(crate) fn cancel(&mut self, id: OpId) -> Result<()> {
        let worker = &self.net.worker;
        match self.table.get_mut(id).ok_or(Error::InvalidRequest)? {
            Op::Recv { req: Some(r), .. } => worker.cancel(r),
            Op::CustomRecv(r) => {
                r.cancel(worker);
                self.noticed.push(id.token());
            }
            // Already complete (possibly settled during progress): nothing to cancel.
            Op::Recv { .. } | Op::Finished(_) | Op::Send { .. } | Op::CustomSend(_) => {}
            Op::Schedule => {
                return Err(Error::InvalidArgument(
                    "a collective operation cannot be cancelled".into(),
                ))
            }
        }
        Ok(())
    }

    /// True if `id` is a receive (a request dropped unfinished is cancelled, not awaited).
    pub(crate) fn is_receive(&self, id: OpId) -> bool {
        self.table.get(id).is_some_and(Op::is_receive)
    }

    /// Operations still in flight, not counting drains of discarded messages.
    pub(crate) fn pending(&self) -> usize {
        self.table.occupied()
            - self.orphans.len()
            - self.revocations.standing()
            - self.aborts.standing()
    }
}

impl Net {
    /// Reports connected processes of this node that no longer exist, and the processes the
    /// launcher reported terminated.
    fn check_local_peers(&mut self) {
        for rank in crate::launch_events::take_terminated() {
            self.worker.failures.report(rank);
        }
        for (rank, p) in self.peers.iter().enumerate() {
            if let (Some(pid), false) = (p.local_pid, p.failed) {
                if !crate::liveness::is_alive(pid) {
                    self.worker.failures.report(rank as u32);
                }
            }
        }
    }

    /// `e`, with the peer named when the transport reported a lost peer without knowing which
    /// (`ProcFailed` of rank -1): the peer is then reported failed, so that every other
    /// operation on it fails too.
    pub(super) fn name_lost_peer(&self, peer: Option<u32>, e: Error) -> Error {
        match (e, peer) {
            (Error::ProcFailed { rank: -1 }, Some(p)) => {
                if !self.has_failed(p) {
                    self.worker.failures.report(p);
                }
                Error::ProcFailed { rank: p as i32 }
            }
            (e, _) => e,
        }
    }

    /// The error of an operation that depends on `peer` if that peer failed.
    pub(super) fn failed_peer(&self, peer: Option<u32>) -> Option<Error> {
        peer.filter(|&p| self.has_failed(p))
            .map(|p| Error::ProcFailed { rank: p as i32 })
    }
}
