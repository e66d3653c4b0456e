//! Collectives run as they are written: a [`Builder`] made by
//! `Communicator::direct` does each step when the algorithm writes it, instead of keeping a
//! [`Plan`](super::Plan) for the engine to run. An exchange's messages are posted at once and
//! awaited before the next exchange (a `Post`'s while the local steps that follow run); a copy or
//! a combination is done on the spot. A blocking collective takes this path: for messages of a
//! few bytes, writing the plan, its run and their allocations cost more than the messages. The
//! messages are the plan's, in the same order under the same tag, so a member running the plan
//! of a collective meets a member running it directly.
//!
//! Failures are those of a run: a failed message fails the collective, the receives still
//! waiting are cancelled and what was sent is awaited (the messages point into the
//! temporaries); a member known dead or a revoked communicator fails it, when it starts an
//! exchange or while it waits. A member that fails it on its own (the members' arguments
//! differ) tells the others before it waits for what it sent, and they fail it too
//! ([`Engine::give_up`]): none waits for ever for a member that has left.

use super::node::Watch;
use super::spare::{give_back, take_temp};
use super::Claim;
use super::{check_size, combine_with, copy_with, Buf, Builder, Mem, NodeCell, Step, Xfer};
use crate::engine::{disagrees, tag_of, Engine, OpId, Posted, Shared};
use crate::error::{Error, Result};
use crate::route::Route;
use smallvec::SmallVec;
use std::sync::Arc;

/// Messages in flight, with a receive's expected size.
/// Messages in flight: each one's id, a receive's expected size, and a receive's source and
/// tag (whose message is still taken if the receive is given up: [`Engine::drop_next`]).
type Waiting = SmallVec<[InFlight; 4]>;

/// A message just posted: as [`InFlight`], with its outcome if it completed at once.
type Posting = (Posted, Option<usize>, Option<(u32, i32)>);

/// A message in flight (see [`Waiting`]).
type InFlight = (OpId, Option<usize>, Option<(u32, i32)>);

/// The state of a collective being run directly.
pub(crate) struct Direct {
    shared: Arc<Shared>,
    route: Route,
    /// The collective's number on its communicator.
    seq: u32,
    /// The communicator's shared-memory area ([`super::node`]).
    node: Arc<NodeCell>,
    /// The temporaries, by slot (see `Mem::Slot`).
    temps: SmallVec<[Vec<u8>; 2]>,
    /// Messages in flight, with a receive's expected size.
    waiting: Waiting,
    /// The first failure: the steps written after it do nothing.
    failed: Option<Error>,
    /// The members agree on their node's area ([`super::node`], in their first collective):
    /// another member's notice that it gave the collective up does not fail these exchanges,
    /// which every member must finish alike (a member that left the agreement would take no
    /// area where the others took one).
    agreeing: bool,
    /// Some exchange was started (its start checked the communicator).
    started: bool,
    /// The other members' ways, for a collective that goes by messages on a communicator
    /// whose members share an area ([`Watch`]).
    watch: Option<Watch>,
}

impl Direct {
    pub(crate) fn new(shared: Arc<Shared>, route: Route, node: Arc<NodeCell>, seq: u32) -> Direct {
        Direct {
            shared,
            route,
            seq,
            node,
            temps: SmallVec::new(),
            waiting: Waiting::new(),
            failed: None,
            agreeing: false,
            started: false,
            watch: None,
        }
    }

    /// Runs the agreement on the node's area (`true`) or the collective itself (see
    /// `agreeing`).
    pub(super) fn set_agreeing(&mut self, agreeing: bool) {
        self.agreeing = agreeing;
    }

    /// Why the collective cannot go on: see [`Engine::barred_at`] (and `agreeing`).
    fn barred(e: &mut Engine, route: &Route, seq: u32, agreeing: bool) -> Option<Error> {
        match agreeing {
            true => e.barred(route),
            false => e.barred_at(route, seq),
        }
    }

    /// Has the collective watch the other members' ways ([`Watch`]).
    pub(super) fn watch(&mut self, watch: Watch) {
        self.watch = Some(watch);
    }

    /// A new temporary of `len` bytes (of unspecified contents): its slot.
    pub(crate) fn add(&mut self, len: usize) -> usize {
        self.temps.push(match len {
            0 => Vec::new(),
            n => take_temp(n),
        });
        self.temps.len() - 1
    }

    pub(crate) fn failed(&self) -> bool {
        self.failed.is_some()
    }

    /// The engine and the collective's route.
    pub(super) fn engine(&self) -> (&Arc<Shared>, &Route) {
        (&self.shared, &self.route)
    }

    /// The communicator's shared-memory area.
    pub(super) fn node_cell(&self) -> &Arc<NodeCell> {
        &self.node
    }

    /// The address of `buf`'s first byte.
    pub(crate) fn ptr(&mut self, mems: &[Mem], buf: Buf) -> *mut u8 {
        addr(&mut self.temps, mems, buf)
    }

    /// The bytes of `buf`, to read or write (no message of the collective is in flight into
    /// them: the caller's promise).
    pub(crate) fn bytes_mut(&mut self, mems: &[Mem], buf: Buf) -> &mut [u8] {
        if buf.len == 0 {
            return &mut [];
        }
        let p = self.ptr(mems, buf);
        // SAFETY: a temporary is ours; raw memory is the caller's, lent to the collective.
        unsafe { std::slice::from_raw_parts_mut(p, buf.len) }
    }

    /// Fails the collective with `e` (the first failure stays).
    pub(crate) fn fail(&mut self, e: Error) {
        self.failed.get_or_insert(e);
    }

    /// Starts the messages of an exchange, receives first, once those still in flight have
    /// completed. A watched collective's sends wait until their members have said they go by
    /// messages too ([`Watch::ready`]).
    pub(crate) fn start(&mut self, mems: &[Mem], tag: i32, xfers: &[Xfer]) {
        self.settle();
        if self.failed.is_some() {
            // Given up: what live members send in this exchange is still taken.
            let (route, watch) = (&self.route, self.watch.as_ref());
            let _ = self.shared.with(|e| {
                drop_receives(e, route, tag, xfers, watch);
                Ok(())
            });
            return;
        }
        self.started = true;
        let receives = |x: &&Xfer| matches!(x, Xfer::Recv { .. } | Xfer::RecvObject { .. });
        let sends = xfers.iter().filter(|x| !receives(x));
        if self.watch.is_none() {
            self.post_each(
                mems,
                tag,
                xfers,
                xfers.iter().filter(receives).chain(sends),
                true,
            );
            return;
        }
        self.post_each(mems, tag, xfers, xfers.iter().filter(receives), true);
        let watch = self.watch.take();
        if let Some(w) = &watch {
            self.send_when_ready(mems, tag, xfers, w, sends.collect());
        }
        self.watch = watch;
    }

    /// Posts each of `sends` (of exchange `xfers`) as soon as the member it goes to has said it
    /// goes by messages too, waiting for the first that has not; fails if one took the node's
    /// path ([`Watch::ready`]).
    fn send_when_ready(
        &mut self,
        mems: &[Mem],
        tag: i32,
        xfers: &[Xfer],
        watch: &Watch,
        mut sends: SmallVec<[&Xfer; 4]>,
    ) {
        while !sends.is_empty() && self.failed.is_none() {
            let mut now = SmallVec::<[&Xfer; 4]>::new();
            let mut refused = None;
            sends.retain(|x| match watch.started(member_of(x)) {
                None => true,
                Some(Ok(())) => {
                    now.push(*x);
                    false
                }
                Some(Err(err)) => {
                    refused.get_or_insert(err);
                    false
                }
            });
            self.post_each(mems, tag, xfers, now.into_iter(), false);
            if let (None, Some(&first)) = (&refused, sends.first()) {
                refused = watch.ready(member_of(first)).err();
            }
            if let Some(err) = refused {
                self.failed.get_or_insert(err);
                let waiting = &self.waiting;
                let _ = self.shared.with(|e| {
                    cancel_receives(e, waiting);
                    Ok(())
                });
            }
        }
    }

    /// Posts `each` of the messages of exchange `xfers` (`first`: none of it is posted yet),
    /// unless the collective cannot go on or one fails.
    fn post_each<'x>(
        &mut self,
        mems: &[Mem],
        tag: i32,
        xfers: &[Xfer],
        each: impl Iterator<Item = &'x Xfer>,
        first: bool,
    ) {
        let Direct {
            shared,
            route,
            seq,
            temps,
            waiting,
            failed,
            watch,
            agreeing,
            ..
        } = self;
        let outcome = shared.with(|e| {
            if let Some(bar) = Direct::barred(e, route, *seq, *agreeing) {
                failed.get_or_insert(bar);
                match first {
                    true => drop_receives(e, route, tag, xfers, watch.as_ref()),
                    false => cancel_receives(e, waiting),
                }
                return Ok(());
            }
            for x in each {
                let posted = post(e, route, temps, mems, tag, x);
                match posted {
                    Ok((Posted::Pending(op), expected, from)) => waiting.push((op, expected, from)),
                    Ok((Posted::Done(outcome), expected, _)) => {
                        if let Err(err) = outcome.and_then(|s| check_size(&s, expected)) {
                            failed.get_or_insert(err);
                            cancel_receives(e, waiting);
                        }
                    }
                    Err(err) => {
                        failed.get_or_insert(err);
                        cancel_receives(e, waiting);
                    }
                }
                if failed.is_some() {
                    // Nothing more is started; what was is awaited.
                    break;
                }
            }
            Ok(())
        });
        if let Err(e) = outcome {
            failed.get_or_insert(e);
        }
    }

    /// Waits for the messages in flight.
    pub(crate) fn settle(&mut self) {
        if self.waiting.is_empty() {
            return;
        }
        let (route, seq, waiting, agreeing) =
            (&self.route, self.seq, &mut self.waiting, self.agreeing);
        let failed = &mut self.failed;
        let watch = self.watch.as_ref();
        let outcome = self.shared.progress_until(|e| {
            collect(e, route, waiting, failed, watch);
            tell(e, route, seq, failed);
            if waiting.is_empty() {
                return Ok(Some(()));
            }
            if failed.is_none() {
                let broken = Direct::barred(e, route, seq, agreeing)
                    .or_else(|| watch.and_then(Watch::broken));
                if let Some(err) = broken {
                    failed.get_or_insert(err);
                    cancel_receives(e, waiting);
                }
            }
            Ok(None)
        });
        if let Err(e) = outcome {
            // The engine is gone, and the messages with it.
            failed.get_or_insert(e);
            waiting.clear();
        }
    }

    /// Waits for the messages in flight; the collective's outcome. One that moved no message
    /// (a lone member's) still fails on a revoked communicator or a dead member, as a run does.
    pub(crate) fn complete(&mut self) -> Result<()> {
        self.settle();
        if !self.started && self.failed.is_none() {
            let (route, seq) = (&self.route, self.seq);
            match self.shared.with(|e| Ok(e.barred_at(route, seq))) {
                Ok(Some(e)) | Err(e) => self.fail(e),
                Ok(None) => {}
            }
        }
        if self.failed.is_some() {
            let (route, seq, failed) = (&self.route, self.seq, &self.failed);
            let _ = self.shared.with(|e| {
                tell(e, route, seq, failed);
                Ok(())
            });
        }
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Direct {
    /// A collective left unfinished (an error of its caller) cancels its receives and waits
    /// for its messages: they point into its temporaries. The temporaries are kept for reuse.
    fn drop(&mut self) {
        if !self.waiting.is_empty() {
            let waiting = &self.waiting;
            let _ = self.shared.with(|e| {
                cancel_receives(e, waiting);
                Ok(())
            });
            self.settle();
        }
        for t in self.temps.drain(..) {
            give_back(t);
        }
    }
}

impl Builder {
    /// A builder that does each step as it is written, on the engine of `shared` (see
    /// [`Direct`]): [`Builder::complete`] ends it.
    pub(crate) fn direct(
        shared: Arc<crate::engine::Shared>,
        route: Route,
        node: Arc<NodeCell>,
        rank: i32,
        claim: Claim,
    ) -> Builder {
        let seq = claim.seq();
        // One literal: the builder (some 460 bytes) is made where it stays, not moved.
        Builder {
            direct: Some(Direct::new(shared, route.clone(), node, seq)),
            tag: tag_of(seq),
            seq: Some(seq),
            claim,
            ..Builder::new(route, rank, 0)
        }
    }

    /// True if the steps are done as they are written (no plan is kept).
    pub fn is_direct(&self) -> bool {
        self.direct.is_some()
    }

    /// The bytes of `buf` now, in a builder that does its steps as they are written (`None`
    /// in one that writes a plan, or after a failure). No message may be in flight into them.
    pub fn bytes_now(&mut self, buf: Buf) -> Option<&mut [u8]> {
        match &mut self.direct {
            Some(d) if !d.failed() => Some(d.bytes_mut(&self.mems, buf)),
            _ => None,
        }
    }

    /// Ends a builder that does its steps as they are written: waits for its messages and
    /// gives its outcome (a builder that writes a plan has done nothing: an error).
    pub fn complete(&mut self) -> Result<()> {
        self.began();
        match &mut self.direct {
            Some(d) => d.complete(),
            None => Err(Error::InvalidArgument(
                "a plan is run with start_plan, not completed".into(),
            )),
        }
    }

    /// True in a builder that does its steps as they are written and has not failed.
    pub(super) fn ok_now(&self) -> bool {
        self.direct.as_ref().is_some_and(|d| !d.failed())
    }

    /// Records a collective done without messages (through the node's memory: see
    /// [`super::node`]), failed with `e` if there is one.
    pub(super) fn did_without_messages(&mut self, e: Option<Error>) {
        self.began();
        if let Some(d) = &mut self.direct {
            d.started = true;
            if let Some(e) = e {
                d.fail(e);
            }
        }
    }

    /// Waits for the messages in flight, in a builder that does its steps as they are written.
    pub fn settle(&mut self) {
        if let Some(d) = &mut self.direct {
            d.settle();
        }
    }

    /// Does a local step now, in a builder that does its steps as they are written; `false`
    /// in one that writes a plan.
    pub(super) fn local_now(&mut self, step: &Step) -> bool {
        let Some(d) = &mut self.direct else {
            return false;
        };
        if d.failed() {
            return true;
        }
        let outcome = match *step {
            Step::Copy { from, to } => copy_with(from, to, |b| d.ptr(&self.mems, b)),
            Step::Combine { acc, inc } => {
                combine_with(self.reduction.as_ref(), acc, inc, |b| d.ptr(&self.mems, b))
            }
            _ => Err(Error::InvalidArgument(
                "a collective run directly has no local closure or object transfer".into(),
            )),
        };
        if let Err(e) = outcome {
            d.fail(e);
        }
        true
    }

    /// Starts messages now, in a builder that does its steps as they are written; `false` in
    /// one that writes a plan.
    pub(super) fn xfers_now(&mut self, xfers: &[Xfer], wait: bool) -> bool {
        let Some(d) = &mut self.direct else {
            return false;
        };
        // The collective begins: its number stays taken ([`Builder::began`], on the field
        // alone while `d` borrows the builder).
        self.claim.keep();
        d.start(&self.mems, self.tag, xfers);
        if wait {
            d.settle();
        }
        true
    }
}

/// The address of `buf`'s first byte, `temps` holding the temporaries.
fn addr(temps: &mut [Vec<u8>], mems: &[Mem], buf: Buf) -> *mut u8 {
    let base = match &mems[buf.mem] {
        Mem::Slot { slot, .. } => temps[*slot].as_mut_ptr(),
        Mem::Raw(raw) => raw.0,
        // Not made by a builder that does its steps as they are written: never here.
        Mem::Temp(_) => std::ptr::null_mut(),
    };
    if buf.len == 0 {
        return base;
    }
    // SAFETY: `buf` lies within its memory (checked when it was made).
    unsafe { base.add(buf.offset) }
}

/// Posts one message of an exchange.
fn post(
    e: &mut Engine,
    route: &Route,
    temps: &mut [Vec<u8>],
    mems: &[Mem],
    tag: i32,
    x: &Xfer,
) -> Result<Posting> {
    match *x {
        Xfer::Send { to, buf } => {
            let dest = route.group.world_rank(to)?;
            let p = addr(temps, mems, buf);
            // SAFETY: the memory lives until the collective completes, which waits for this
            // message; raw memory is the caller's, lent for the collective.
            unsafe { e.post_coll_send(route, dest, tag, p, buf.len(), false) }
                .map(|p| (p, None, None))
        }
        Xfer::Recv { from, buf } => {
            let source = route.group.world_rank(from)?;
            let p = addr(temps, mems, buf);
            // SAFETY: as for a send; no local step touches it before it completes.
            unsafe { e.post_recv(route, Some(source), Some(tag), p, buf.len()) }
                .map(|p| (p, Some(buf.len()), Some((source, tag))))
        }
        Xfer::SendObject { .. } | Xfer::RecvObject { .. } => Err(Error::InvalidArgument(
            "a collective of objects runs as a plan".into(),
        )),
    }
}

/// The member a message of an exchange goes to or comes from.
fn member_of(x: &Xfer) -> usize {
    match *x {
        Xfer::Send { to, .. } | Xfer::SendObject { to, .. } => to as usize,
        Xfer::Recv { from, .. } | Xfer::RecvObject { from, .. } => from as usize,
    }
}

/// Takes and drops what the live members send in `xfers`, an exchange given up (not what a
/// member that took the node's path would have sent: it sends nothing, [`Watch`]).
fn drop_receives(e: &mut Engine, route: &Route, tag: i32, xfers: &[Xfer], watch: Option<&Watch>) {
    for x in xfers {
        if let Xfer::Recv { from, .. } = *x {
            if watch.is_some_and(|w| w.took_node(from as usize)) {
                continue;
            }
            if let Ok(source) = route.group.world_rank(from) {
                e.drop_next(route, source, tag);
            }
        }
    }
}

/// Tells the other members that this one gave up collective `seq` on `route`, if it failed
/// for a disagreement of the members' arguments ([`disagrees`]) and they do not know yet
/// ([`Engine::give_up`] tells once, and not those a notice told it of).
fn tell(e: &mut Engine, route: &Route, seq: u32, failed: &Option<Error>) {
    if failed.as_ref().is_some_and(disagrees) {
        e.give_up(route, seq);
    }
}

fn cancel_receives(e: &mut Engine, waiting: &[InFlight]) {
    for &(op, _, _) in waiting {
        if e.is_receive(op) {
            let _ = e.cancel(op);
        }
    }
}

/// Collects the completed messages; a failure cancels the receives still waiting.
fn collect(
    e: &mut Engine,
    route: &Route,
    waiting: &mut Waiting,
    failed: &mut Option<Error>,
    watch: Option<&Watch>,
) {
    let mut i = 0;
    while i < waiting.len() {
        let (op, expected, from) = waiting[i];
        match e.test(op) {
            Ok(None) => i += 1,
            Ok(Some(outcome)) => {
                waiting.swap_remove(i);
                if let (Ok(status), Some((source, tag))) = (&outcome, from) {
                    let sends = |w: &Watch| {
                        let k = route.group.comm_rank(source);
                        !k.is_some_and(|k| w.took_node(k as usize))
                    };
                    if status.cancelled && watch.map_or(true, sends) {
                        // Given up: the live sender's message is still taken.
                        e.drop_next(route, source, tag);
                    }
                }
                if let Err(err) = outcome.and_then(|s| check_size(&s, expected)) {
                    failed.get_or_insert(err);
                    cancel_receives(e, waiting);
                }
            }
            Err(err) => {
                waiting.swap_remove(i);
                failed.get_or_insert(err);
            }
        }
    }
}
