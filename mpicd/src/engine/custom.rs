//! Custom-typed operations in the engine: starting a send or a receive ([`crate::ops`]), giving
//! a matched message its receive state, and polling the operations, in place in their slots,
//! when UCX filed a notice for one of their requests (see [`crate::transport::notices`]).
//! Their fragments and region messages are posted by mpicd, not by UCX, so without these polls
//! a pending receive would stall a blocking send to the same process (MPI's progress rule).

use super::{Engine, Matched, Net, Op, OpId, Route};
use crate::error::{Error, Result};
use crate::ops::{Context, RecvOp, SendOp};
use crate::plan::{PackState, UnpackState};
use crate::tag::{MessageKind, UserTag};
use crate::wire::Shape;
use std::task::Poll;

/// Every custom op is polled once in this many progress calls besides the notices: a backstop
/// that costs little and keeps any op from waiting on a notice that never comes.
pub(super) const FULL_CUSTOM_POLL: u32 = 256;

impl Net {
    /// Runs `f` with the context of an operation on `peer`, the UCX requests it posts marked as
    /// operation `id`'s (their completions get `id` polled).
    pub(super) fn on_behalf<R>(
        &mut self,
        id: OpId,
        peer: Option<u32>,
        f: impl FnOnce(&mut Context<'_>) -> R,
    ) -> R {
        let outer = self.worker.mark_requests(Some(id.token()));
        let r = f(&mut self.context(peer));
        self.worker.mark_requests(outer);
        r
    }
}

impl Engine {
    /// Starts a custom-typed send.
    pub(crate) fn post_custom_send(
        &mut self,
        route: &Route,
        dest: u32,
        tag: i32,
        state: Box<dyn PackState>,
        synchronous: bool,
    ) -> Result<OpId> {
        self.check_revoked(route)?;
        self.net.connect(dest)?;
        let to = crate::ops::Destination {
            context: route.context,
            rank: dest,
            tag,
            reach: self.net.reach(dest),
        };
        let id = self.start_custom(Some(dest), |ctx| {
            SendOp::start(ctx, to, state, synchronous).map(|op| Op::CustomSend(Box::new(op)))
        })?;
        crate::tool::pvar::CUSTOM_SENDS.add(1);
        Ok(id)
    }

    /// Posts a custom-typed receive. It matches messages of both kinds; one that takes a
    /// contiguous message fails with a datatype mismatch.
    pub(crate) fn post_custom_recv(
        &mut self,
        route: &Route,
        source: Option<u32>,
        tag: Option<i32>,
        state: Box<dyn UnpackState>,
    ) -> Result<OpId> {
        self.check_revoked(route)?;
        if let Some(peer) = source {
            self.connect_sender(peer)?;
        }
        let m = UserTag::matcher(route.context, source, tag);
        let id = self.start_custom(source, |ctx| {
            RecvOp::post(ctx, route, source, m, state).map(|op| Op::CustomRecv(Box::new(op)))
        })?;
        if let Some(peer) = source {
            self.settle_lost_sender(peer, id);
        }
        Ok(id)
    }

    /// Starts a custom op in a reserved slot, with the UCX requests `start` posts already
    /// marked as its own (a request may complete before the op is in its slot: its notice
    /// waits). The slot is released if the start fails.
    pub(super) fn start_custom(
        &mut self,
        peer: Option<u32>,
        start: impl FnOnce(&mut Context<'_>) -> Result<Op>,
    ) -> Result<OpId> {
        let id = self.table.vacant();
        match self.net.on_behalf(id, peer, start) {
            Ok(op) => {
                self.table.occupy(id, op);
                self.custom_active.push(id);
                self.noticed.push(id.token());
                Ok(id)
            }
            Err(e) => {
                self.table.retire(id);
                Err(e)
            }
        }
    }

    /// Receives a matched custom-typed message through `state`.
    pub(crate) fn post_custom_mrecv(
        &mut self,
        matched: Matched,
        state: Box<dyn UnpackState>,
    ) -> Result<OpId> {
        match matched {
            Matched::Custom(id) => {
                if let Some(Op::CustomRecv(r)) = self.table.get_mut(id) {
                    r.attach(state);
                }
                self.poll_custom(id);
                Ok(id)
            }
            matched @ Matched::Contiguous { .. } => {
                self.discard(matched);
                Err(Error::DatatypeMismatch {
                    message: MessageKind::Contiguous,
                })
            }
        }
    }

    /// Waits (progressing) until a matched custom message's lead has arrived; its shape.
    pub(crate) fn matched_shape(&mut self, id: OpId) -> Result<Option<Shape>> {
        loop {
            self.poll_custom(id);
            match self.table.get(id) {
                Some(Op::CustomRecv(r)) => {
                    if let Some(shape) = r.shape() {
                        return Ok(Some(shape.clone()));
                    }
                }
                // The lead's receive failed: the error stays for the receive to report.
                Some(Op::Finished(Err(e))) => return Err(e.clone()),
                _ => return Err(Error::InvalidMessage),
            }
            self.progress();
        }
    }

    /// Drops a matched custom message nobody will receive, draining its data.
    pub(super) fn discard_matched(&mut self, id: OpId) {
        if let Some(Op::CustomRecv(r)) = self.table.get_mut(id) {
            r.discard();
        }
        self.poll_custom(id);
        // The drain finishes in the background; nobody waits for its result.
        self.orphans.push(id);
    }

    /// Polls the custom ops that UCX filed a notice for (or that started or were aborted).
    pub(super) fn poll_noticed_custom(&mut self) {
        let mut noticed = std::mem::take(&mut self.noticed);
        // (An op with several notices is polled again at once, which finds nothing to do.)
        noticed.dedup();
        for token in noticed.drain(..) {
            let id = OpId::from_token(token);
            if self.poll_custom(id) {
                if let Some(at) = self.custom_active.iter().position(|&a| a == id) {
                    self.custom_active.swap_remove(at);
                }
            }
        }
        // (The buffer is kept, for its capacity.)
        noticed.append(&mut self.noticed);
        self.noticed = noticed;
    }

    /// Polls every custom op in flight (the backstop to notices, and the liveness check).
    pub(super) fn poll_every_custom(&mut self) {
        self.noticed.clear();
        // Taken out (no copy) while the ops are polled, kept in place, and put back with any
        // op started meanwhile.
        let mut active = std::mem::take(&mut self.custom_active);
        active.retain(|&id| !self.poll_custom(id));
        active.append(&mut self.custom_active);
        self.custom_active = active;
    }

    /// Advances custom op `id` in its slot, with the requests it posts marked as its own.
    /// True once it is over (finished, its outcome waiting in its slot, or gone).
    pub(super) fn poll_custom(&mut self, id: OpId) -> bool {
        let Some(op) = self.table.get_mut(id) else {
            return true;
        };
        let outcome = match op {
            Op::CustomSend(s) => {
                let peer = Some(s.peer());
                self.net.on_behalf(id, peer, |ctx| s.poll(ctx))
            }
            Op::CustomRecv(r) => {
                let peer = r.peer();
                self.net.on_behalf(id, peer, |ctx| r.poll(ctx))
            }
            _ => return true,
        };
        match outcome {
            Poll::Pending => false,
            Poll::Ready(result) => {
                // Frees the custom state exactly once.
                *op = Op::Finished(result);
                true
            }
        }
    }
}
