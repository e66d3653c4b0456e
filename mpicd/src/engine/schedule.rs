//! Runs collective [`Plan`]s: a run is an operation in the table (`Op::Schedule`) that every
//! progress call advances: it completes the messages of its current exchange, then runs the
//! local steps that follow and starts the next exchange, until its plan ends. A failed message
//! fails the run, which first cancels its other receives and waits for what it started (the
//! messages point into the run's temporaries), then completes with the first error.

use super::{Engine, Op, OpId, Posted};
use crate::error::{Error, Result};
use crate::schedule::{Frame, Plan, Step, Xfer};
use crate::status::Status;
use std::sync::Arc;
use std::task::Poll;

/// A plan being run.
pub(crate) struct Run {
    frame: Frame,
    cursor: usize,
    /// Messages of the current exchange in flight, with a receive's expected size.
    waiting: Vec<(OpId, Option<usize>)>,
    state: RunState,
}

/// Whether a run goes on.
enum RunState {
    Running,
    /// A message failed: the others are awaited, then the run completes with the error.
    Failing(Error),
}

impl Run {
    fn fail(&mut self, e: Error) {
        if matches!(self.state, RunState::Running) {
            self.state = RunState::Failing(e);
        }
    }
}

impl Engine {
    /// Starts a run of `plan`: its first messages are posted before this returns; it never
    /// waits.
    pub(crate) fn start_plan(&mut self, plan: &Arc<Plan>) -> Result<Posted> {
        let run = Run {
            frame: plan.frame(),
            cursor: 0,
            waiting: Vec::new(),
            state: RunState::Running,
        };
        let id = self.table.insert(Op::Schedule(Box::new(run)));
        self.schedules.push(id);
        self.advance_schedule(id);
        Ok(Posted::Pending(id))
    }

    /// Advances every run (a progress call).
    pub(super) fn advance_schedules(&mut self) {
        let mut i = 0;
        while i < self.schedules.len() {
            if self.advance_schedule(self.schedules[i]) {
                self.schedules.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Advances run `id` as far as it goes now; true once it has completed.
    fn advance_schedule(&mut self, id: OpId) -> bool {
        let Some(Op::Schedule(_)) = self.table.get(id) else {
            return true;
        };
        let Ok(Op::Schedule(mut run)) = self.table.take(id) else {
            return true;
        };
        match self.step_run(&mut run) {
            Poll::Pending => {
                self.table.put_back(id, Op::Schedule(run));
                false
            }
            Poll::Ready(outcome) => {
                drop(run); // nothing of it is in flight any more
                let status = outcome.map(|()| Status::empty());
                self.table.put_back(id, Op::Finished(status));
                true
            }
        }
    }

    fn step_run(&mut self, run: &mut Run) -> Poll<Result<()>> {
        loop {
            self.collect_exchange(run);
            if !run.waiting.is_empty() {
                return Poll::Pending;
            }
            if let RunState::Failing(e) = &run.state {
                return Poll::Ready(Err(e.clone()));
            }
            let plan = Arc::clone(run.frame.plan());
            let Some(step) = plan.steps.get(run.cursor) else {
                return Poll::Ready(Ok(()));
            };
            run.cursor += 1;
            match step {
                Step::Exchange(xfers) => self.post_exchange(run, xfers),
                local => {
                    if let Err(e) = run.frame.run_local(local) {
                        run.fail(e);
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
            let (op, expected) = run.waiting[i];
            match self.test(op) {
                Ok(None) => i += 1,
                Ok(Some(outcome)) => {
                    run.waiting.swap_remove(i);
                    if let Err(e) = outcome.and_then(|s| check_size(&s, expected)) {
                        run.fail(e);
                        for &(other, _) in &run.waiting {
                            if self.is_receive(other) {
                                let _ = self.cancel(other);
                            }
                        }
                    }
                }
                Err(e) => {
                    run.waiting.swap_remove(i);
                    run.fail(e);
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
                    unsafe { self.post_send(&plan.route, dest, plan.tag, p, buf.len(), false) }
                        .map(|p| (p, None))
                }),
                Xfer::Recv { from, buf } => plan.route.group.world_rank(from).and_then(|source| {
                    let p = run.frame.ptr(buf);
                    // SAFETY: as for a send; no local step touches it before it completes.
                    unsafe {
                        self.post_recv(&plan.route, Some(source), Some(plan.tag), p, buf.len())
                    }
                    .map(|p| (p, Some(buf.len())))
                }),
                Xfer::SendObject { to, obj } => plan.route.group.world_rank(to).and_then(|dest| {
                    let state = (plan.object(obj).send)()?;
                    self.post_custom_send(&plan.route, dest, plan.tag, state, false)
                        .map(|op| (Posted::Pending(op), None))
                }),
                Xfer::RecvObject { from, obj } => {
                    plan.route.group.world_rank(from).and_then(|source| {
                        let state = (plan.object(obj).recv)()?;
                        self.post_custom_recv(&plan.route, Some(source), Some(plan.tag), state)
                            .map(|op| (Posted::Pending(op), None))
                    })
                }
            };
            match posted {
                Ok((Posted::Pending(op), expected)) => run.waiting.push((op, expected)),
                Ok((Posted::Done(outcome), expected)) => {
                    if let Err(e) = outcome.and_then(|s| check_size(&s, expected)) {
                        run.fail(e);
                    }
                }
                Err(e) => run.fail(e),
            }
            if !matches!(run.state, RunState::Running) {
                // Nothing more is started; what was is awaited.
                break;
            }
        }
    }
}

/// A collective's receive must get exactly the bytes it expects.
fn check_size(status: &Status, expected: Option<usize>) -> Result<()> {
    match (expected, status.bytes) {
        (None, _) => Ok(()),
        (Some(n), Some(got)) if got == n as u64 => Ok(()),
        (Some(n), got) => Err(Error::InvalidArgument(format!(
            "collective size mismatch: {} bytes arrived where {n} were expected",
            got.map_or("unknown".into(), |g| g.to_string())
        ))),
    }
}
