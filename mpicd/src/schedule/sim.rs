//! Runs the plans of every member of a communicator in memory, for tests: messages match in
//! order per (sender, receiver) pair, and a send completes only once its receive is posted
//! (as a rendezvous does), so a plan that could deadlock on a network deadlocks here and is
//! reported.

use super::{Frame, Plan, Step, Xfer};
use crate::error::{Error, Result};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

struct Member {
    frame: Frame,
    cursor: usize,
    /// Messages of the current exchange not yet matched.
    open: usize,
}

/// A posted message: its member, and for a receive where the bytes go.
struct Posted {
    member: usize,
    xfer: Xfer,
}

/// Runs `plans[r]` as member r; returns each member's frame once all plans are done.
pub(super) fn run(plans: &[Arc<Plan>]) -> Result<Vec<Frame>> {
    let mut members: Vec<Member> = plans
        .iter()
        .map(|p| Member {
            frame: p.frame(),
            cursor: 0,
            open: 0,
        })
        .collect();
    let mut sends: HashMap<(i32, i32), VecDeque<Posted>> = HashMap::new();
    let mut recvs: HashMap<(i32, i32), VecDeque<Posted>> = HashMap::new();
    loop {
        let mut moved = false;
        for (r, m) in members.iter_mut().enumerate() {
            while m.open == 0 {
                let plan = Arc::clone(&m.frame.plan);
                let Some(step) = plan.steps.get(m.cursor) else {
                    break;
                };
                m.cursor += 1;
                moved = true;
                match step {
                    Step::Exchange(xfers) => {
                        m.open = xfers.len();
                        for x in xfers {
                            let (key, queue) = match *x {
                                Xfer::Send { to, .. } => ((r as i32, to), &mut sends),
                                Xfer::Recv { from, .. } => ((from, r as i32), &mut recvs),
                                Xfer::SendObject { .. } | Xfer::RecvObject { .. } => {
                                    return Err(Error::InvalidArgument(
                                        "objects need the engine".into(),
                                    ))
                                }
                            };
                            queue.entry(key).or_default().push_back(Posted {
                                member: r,
                                xfer: *x,
                            });
                        }
                    }
                    local => m.frame.run_local(local)?,
                }
            }
        }
        // Match the heads of every pair's queues.
        for (key, queue) in sends.iter_mut() {
            let Some(waiting) = recvs.get_mut(key) else {
                continue;
            };
            while let (Some(s), Some(rv)) = (queue.front(), waiting.front()) {
                let (Xfer::Send { buf: from, .. }, Xfer::Recv { buf: into, .. }) =
                    (s.xfer, rv.xfer)
                else {
                    unreachable!("queues hold their own kind");
                };
                if from.len() != into.len() {
                    return Err(Error::InvalidArgument(format!(
                        "{key:?}: {} bytes sent, {} expected",
                        from.len(),
                        into.len()
                    )));
                }
                let data = members[s.member].frame.bytes_mut(from).to_vec();
                members[rv.member]
                    .frame
                    .bytes_mut(into)
                    .copy_from_slice(&data);
                members[s.member].open -= 1;
                members[rv.member].open -= 1;
                queue.pop_front();
                waiting.pop_front();
                moved = true;
            }
        }
        let done = members
            .iter()
            .all(|m| m.open == 0 && m.cursor == m.frame.plan.steps.len());
        if done {
            let stray = sends.values().chain(recvs.values()).any(|q| !q.is_empty());
            if stray {
                return Err(Error::InvalidArgument("unmatched messages".into()));
            }
            return Ok(members.into_iter().map(|m| m.frame).collect());
        }
        if !moved {
            return Err(Error::InvalidArgument("the plans deadlock".into()));
        }
    }
}
