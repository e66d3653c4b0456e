//! Runs collective [`Plan`]s: a run is an operation in the table (`Op::Schedule`, the run itself
//! in the engine's list of runs) that every progress call advances: it completes the messages of its current exchange, then runs the
//! local steps that follow and starts the next exchange, until its plan ends. A failed message
//! fails the run, which waits for what it started (the messages point into the run's
//! temporaries), then completes with the first error. Where a member is gone (dead, or the
//! communicator revoked) the run's other receives are cancelled first, as they may never be
//! matched; where the failure is the data's (a sender's callback failed), they are received,
//! since their senders, alive, wait for that. Where the members' arguments differ (a size, a
//! kind of message: [`disagrees`]) the member that finds it tells the others, whose runs of the
//! same collective then fail too, and every member drains the collective's tag
//! ([`super::abort`]): the receives are cancelled, as the messages they wait for may never be
//! sent.

use super::abort::{any_aborted, disagrees};
use super::{Engine, Op, OpId, Posted};
use crate::error::{Error, Result};
use crate::plan::PackState;
use crate::route::Route;
use crate::schedule::{check_size, Frame, Plan, Step, Xfer};
use crate::status::Status;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::Poll;

/// A plan being run.
pub(crate) struct Run {
    frame: Frame,
    cursor: usize,
    /// Messages of the current exchange in flight.
    waiting: Vec<Waiting>,
    /// The messages in flight come from a `Post`: local steps may run meanwhile.
    overlapping: bool,
    state: RunState,
}

/// A message of a run in flight.
#[derive(Clone, Copy)]
struct Waiting {
    id: OpId,
    /// A receive's expected size (`None`: a send, or a custom-typed receive).
    expected: Option<usize>,
    /// A receive's source (world rank).
    from: Option<u32>,
}

/// Whether a run goes on.
enum RunState {
    Running,
    /// A message failed: the others are awaited, then the run completes with the error.
    Failing(Error),
}

impl Run {
    /// Fails the run with `e` (the first failure stays); true if this was its first.
    fn fail(&mut self, e: Error) -> bool {
        let first = matches!(self.state, RunState::Running);
        if first {
            self.state = RunState::Failing(e);
        }
        first
    }
}

impl Engine {
    /// Starts a run of `plan`: its first messages are posted before this returns; it never
    /// waits.
    pub(crate) fn start_plan(&mut self, plan: &Arc<Plan>) -> Result<Posted> {
        // A collective over a member known dead fails at once on every member that knows,
        // rather than succeed on some (those whose part does not reach the dead one).
        self.check_revoked(&plan.route)?;
        let group = &plan.route.group;
        if let Some(&dead) = self
            .net
            .lost
            .iter()
            .find(|&&r| group.comm_rank(r).is_some())
        {
            // What the live members send it is still taken, so that they complete.
            for step in &plan.steps {
                if let Step::Exchange(xfers) | Step::Post(xfers) = step {
                    for x in xfers {
                        if let Xfer::Recv { from, .. } | Xfer::RecvObject { from, .. } = *x {
                            if let Ok(source) = group.world_rank(from) {
                                self.drop_next(&plan.route, source, plan.tag);
                            }
                        }
                    }
                }
            }
            return Ok(Posted::Done(Err(Error::ProcFailed { rank: dead as i32 })));
        }
        let mut run = Box::new(Run {
            frame: plan.frame(),
            cursor: 0,
            waiting: Vec::new(),
            overlapping: false,
            state: RunState::Running,
        });
        let id = self.table.insert(Op::Schedule);
        if !self.advance_run(id, &mut run) {
            self.schedules.push((id, run));
        }
        Ok(Posted::Pending(id))
    }

    /// Fails every run on a communicator that has `rank` (dead) as a member: a collective may
    /// wait on it through others, who stop when they see it fail. Receives still waiting are
    /// cancelled; what the run sent is awaited.
    pub(super) fn fail_runs_with(&mut self, rank: u32, dead: &Error) {
        let mut runs = std::mem::take(&mut self.schedules);
        for (_, run) in runs.iter_mut() {
            if run.frame.plan().route.group.comm_rank(rank).is_some() {
                self.fail_run(run, dead.clone());
            }
        }
        self.schedules = runs;
    }

    /// Fails every run on collective context `context` with `e` (a revoked communicator).
    pub(super) fn fail_runs_on(&mut self, context: u32, e: &Error) {
        let mut runs = std::mem::take(&mut self.schedules);
        for (_, run) in runs.iter_mut() {
            if run.frame.plan().route.context == context {
                self.fail_run(run, e.clone());
            }
        }
        self.schedules = runs;
    }

    /// Fails `run` with `e` (the first error stays) and cancels its receives still waiting;
    /// what it sent is awaited.
    fn fail_run(&mut self, run: &mut Run, e: Error) {
        run.fail(e);
        self.cancel_run_receives(run);
    }

    /// Fails `run` with `e` found by this member (the first error stays); if the members'
    /// arguments differ, tells the others and cancels the run's receives
    /// ([`Engine::give_up`]).
    fn run_failed(&mut self, run: &mut Run, e: Error) {
        let told = disagrees(&e);
        if run.fail(e) && told {
            let plan = Arc::clone(run.frame.plan());
            if let Some(seq) = plan.seq {
                self.give_up(&plan.route, seq);
                self.cancel_run_receives(run);
            }
        }
    }

    /// Fails `run` if another member gave its collective up.
    fn check_given_up(&mut self, run: &mut Run) {
        let plan = run.frame.plan();
        let Some(seq) = plan.seq else {
            return;
        };
        let route = plan.route.clone();
        if let Some(e) = self.barred_at(&route, seq) {
            self.fail_run(run, e);
        }
    }

    fn cancel_run_receives(&mut self, run: &Run) {
        for w in &run.waiting {
            if self.is_receive(w.id) {
                let _ = self.cancel(w.id);
            }
        }
    }

    /// Advances every run (a progress call).
    pub(super) fn advance_schedules(&mut self) {
        let mut runs = std::mem::take(&mut self.schedules);
        runs.retain_mut(|(id, run)| !self.advance_run(*id, run));
        debug_assert!(
            self.schedules.is_empty(),
            "no run starts while runs advance"
        );
        self.schedules = runs;
    }

    /// Advances run `id` as far as it goes now; true once it has completed (its table slot
    /// then holds its outcome).
    fn advance_run(&mut self, id: OpId, run: &mut Run) -> bool {
        match self.step_run(run) {
            Poll::Pending => false,
            Poll::Ready(outcome) => {
                let status = outcome.map(|()| Status::empty());
                if let Some(op) = self.table.get_mut(id) {
                    *op = Op::Finished(status);
                }
                true
            }
        }
    }

    fn step_run(&mut self, run: &mut Run) -> Poll<Result<()>> {
        let plan = Arc::clone(run.frame.plan());
        loop {
            self.collect_exchange(run);
            if matches!(run.state, RunState::Running) && any_aborted() {
                self.check_given_up(run);
            }
            let step = plan.steps.get(run.cursor);
            // Local steps after a `Post` run while its messages travel.
            let overlaps = run.overlapping && step.is_some_and(Step::is_local);
            if !run.waiting.is_empty() && !overlaps {
                return Poll::Pending;
            }
            if let RunState::Failing(e) = &run.state {
                if run.waiting.is_empty() {
                    return Poll::Ready(Err(e.clone()));
                }
                return Poll::Pending;
            }
            let Some(step) = step else {
                return Poll::Ready(Ok(()));
            };
            run.cursor += 1;
            run.overlapping = matches!(step, Step::Post(_)) || overlaps;
            match step {
                Step::Exchange(xfers) | Step::Post(xfers) => self.post_exchange(run, xfers),
                local => {
                    if let Err(e) = run.frame.run_local(local) {
                        self.run_failed(run, e);
                    }
                }
            }
        }
    }

    /// Collects the completed messages of the current exchange; a failure cancels the
    /// receives still waiting.
    fn collect_exchange(&mut self, run: &mut Run) {
        let mut i = 0;
        while i < run.waiting.len() {
            let w = run.waiting[i];
            match self.test(w.id) {
                Ok(None) => i += 1,
                Ok(Some(outcome)) => {
                    run.waiting.swap_remove(i);
                    if let (Ok(status), Some(source)) = (&outcome, w.from) {
                        if status.cancelled {
                            // Given up (a member died): its live sender's message is still
                            // taken, so that the send completes.
                            let plan = run.frame.plan();
                            self.drop_next(&plan.route, source, plan.tag);
                        }
                    }
                    match outcome.and_then(|s| check_size(&s, w.expected)) {
                        Ok(()) => {}
                        // The members are alive: their messages are received (a rendezvous
                        // sender waits for its receiver), then the run fails; unless their
                        // arguments differ (see `run_failed`).
                        Err(e) if !peer_gone(&e) => self.run_failed(run, e),
                        Err(e) => self.fail_run(run, e),
                    }
                }
                Err(e) => {
                    run.waiting.swap_remove(i);
                    self.run_failed(run, e);
                }
            }
        }
    }

    /// Starts the messages of an exchange (receives first).
    fn post_exchange(&mut self, run: &mut Run, xfers: &[Xfer]) {
        let plan = Arc::clone(run.frame.plan());
        let receives = |x: &&Xfer| matches!(x, Xfer::Recv { .. } | Xfer::RecvObject { .. });
        let ordered = xfers
            .iter()
            .filter(receives)
            .chain(xfers.iter().filter(|x| !receives(x)));
        for x in ordered {
            let posted = match *x {
                Xfer::Send { to, buf } => plan.route.group.world_rank(to).and_then(|dest| {
                    let p = run.frame.ptr(buf);
                    // SAFETY: the run's memory lives until the run completes, which waits for
                    // this message; raw memory is the caller's, lent for the run.
                    unsafe { self.post_coll_send(&plan.route, dest, plan.tag, p, buf.len(), false) }
                        .map(|p| (p, None, None))
                }),
                Xfer::Recv { from, buf } => plan.route.group.world_rank(from).and_then(|source| {
                    let p = run.frame.ptr(buf);
                    // SAFETY: as for a send; no local step touches it before it completes.
                    unsafe {
                        self.post_recv(&plan.route, Some(source), Some(plan.tag), p, buf.len())
                    }
                    .map(|p| (p, Some(buf.len()), Some(source)))
                }),
                Xfer::SendObject { to, obj } => plan.route.group.world_rank(to).and_then(|dest| {
                    // A state that could not be made still sends: a failure lead, so that the
                    // receiver fails rather than waits.
                    let state = plan
                        .object(obj)
                        .pack()
                        .unwrap_or_else(|e| Box::new(Unmade(Some(e))));
                    self.post_custom_send(&plan.route, dest, plan.tag, state, false)
                        .map(|op| (Posted::Pending(op), None, None))
                }),
                Xfer::RecvObject { from, obj } => {
                    plan.route.group.world_rank(from).and_then(|source| {
                        let state = plan.object(obj).unpack()?;
                        self.post_custom_recv(&plan.route, Some(source), Some(plan.tag), state)
                            .map(|op| (Posted::Pending(op), None, Some(source)))
                    })
                }
            };
            match posted {
                Ok((Posted::Pending(id), expected, from)) => {
                    run.waiting.push(Waiting { id, expected, from })
                }
                Ok((Posted::Done(outcome), expected, _)) => {
                    if let Err(e) = outcome.and_then(|s| check_size(&s, expected)) {
                        self.run_failed(run, e);
                    }
                }
                Err(e) => self.run_failed(run, e),
            }
            if !matches!(run.state, RunState::Running) {
                // Nothing more is started; what was is awaited.
                break;
            }
        }
    }
}

impl Engine {
    /// Takes and drops the next message of `source` with `tag` on `route`, in the background
    /// (an orphan, not the user's): for a collective this process gave up on a member's death,
    /// so that a live member's send to it completes (a rendezvous waits for its receiver). A
    /// receive of no bytes: a longer message is taken truncated, a custom-typed one drained
    /// with its private messages. Nothing to do for a source known dead.
    pub(crate) fn drop_next(&mut self, route: &Route, source: u32, tag: i32) {
        if self.net.has_failed(source) {
            return;
        }
        let nowhere = NonNull::<u8>::dangling().as_ptr();
        // SAFETY: a receive of no bytes writes nothing.
        let posted = unsafe { self.post_recv_on_any(route, Some(source), Some(tag), nowhere, 0) };
        if let Ok(Posted::Pending(id)) = posted {
            self.orphans.push(id);
        }
    }
}

/// Whether `e` says a member is gone (dead, or the communicator revoked): the run's other
/// receives may then never be matched, and are cancelled.
fn peer_gone(e: &Error) -> bool {
    matches!(
        e,
        Error::ProcFailed { .. }
            | Error::ProcFailedPending { .. }
            | Error::Revoked
            | Error::Cancelled
    )
}

/// The state of a send whose object could not make one (its state callback failed): the send
/// fails with that error after a failure lead (`ops/send.rs`).
struct Unmade(Option<Error>);

// SAFETY: it has no regions.
unsafe impl PackState for Unmade {
    fn packed_size(&mut self) -> Result<u64> {
        Err(self.0.take().unwrap_or(Error::RemoteFailure))
    }

    fn pack(&mut self, _: u64, _: &mut [u8]) -> Result<usize> {
        Err(Error::RemoteFailure)
    }

    fn regions(&mut self) -> Result<Vec<crate::plan::RawRegion>> {
        Err(Error::RemoteFailure)
    }
}
