//! The end of a process's network: the operations left cancelled (the drains of given-up
//! collectives only after the fence), the finalize fence over the processes still alive, and
//! the discarding of messages nobody received before the worker is destroyed.

use super::{Engine, Net, Op, Peer};
use crate::error::{Error, Result};
use crate::ops::Stranded;
use std::collections::BTreeSet;
use std::time::Duration;

impl Net {
    /// The fence of finalize, over the processes not known dead (so that no survivor closes
    /// its connections while another still reads from them), begun again over fewer when one
    /// is found dead meanwhile (the launcher says so, or a process of this node is gone). With
    /// a process lost, finalizing succeeds whatever the fence's outcome (as in ULFM).
    pub(super) fn finalize_fence(&mut self) -> Result<()> {
        // Every process of this node is watched by pid while waiting.
        let all: Vec<u32> = (0..self.size).filter(|&r| r != self.rank).collect();
        self.identify_all(&all);
        let dead = |peers: &[Peer], r: usize| {
            let p = &peers[r];
            p.failed
                || p.local_pid
                    .is_some_and(|pid| !crate::liveness::is_alive(pid))
        };
        for rank in crate::launch_events::take_terminated() {
            self.worker.failures.report(rank);
        }
        let mut reported: BTreeSet<u32> = BTreeSet::new();
        loop {
            reported.extend(self.worker.failures.take());
            for &r in &reported {
                if let Some(p) = self.peers.get_mut(r as usize) {
                    p.failed = true; // its endpoint is then closed at once
                }
            }
            let lost: BTreeSet<u32> = (0..self.size)
                .filter(|&r| {
                    r != self.rank && (reported.contains(&r) || dead(&self.peers, r as usize))
                })
                .collect();
            let live: Vec<u32> = (0..self.size).filter(|r| !lost.contains(r)).collect();
            let deaths = crate::launch_events::terminations();
            let mut polls = 0u32;
            let (peers, worker) = (&self.peers, &self.worker);
            let ranks = (!lost.is_empty()).then_some(live.as_slice());
            let outcome = self.boot.fence_unless(ranks, || {
                // Messages in flight keep moving while the others come: a live sender of a
                // long message to a collective this process gave up on waits for this
                // process's side of the rendezvous (its drain: `Engine::drop_next`) before it
                // can reach finalize.
                worker.progress();
                polls += 1;
                crate::launch_events::terminations() != deaths
                    || (polls % 50 == 0
                        && live
                            .iter()
                            .any(|&r| r != self.rank && dead(peers, r as usize)))
            });
            match outcome {
                Ok(true) => return Ok(()),
                // Someone died meanwhile: again, over the processes still alive.
                Ok(false) => {
                    for rank in crate::launch_events::take_terminated() {
                        reported.insert(rank);
                    }
                    continue;
                }
                Err(_) if !lost.is_empty() => return Ok(()),
                Err(e) => {
                    let now_lost = live
                        .iter()
                        .any(|&r| r != self.rank && dead(&self.peers, r as usize));
                    return if now_lost { Ok(()) } else { Err(e) };
                }
            }
        }
    }

    /// Takes the messages nobody received (those of a collective that failed, or sent by a
    /// process that then died) off the worker, so that UCX does not warn about them when it is
    /// destroyed. A message whose data never comes (its sender died) is given up after a
    /// second, its buffer stranded with its request (see [`Stranded`]).
    pub(super) fn discard_unexpected(&mut self) {
        let any = crate::tag::TagMatch { tag: 0, mask: 0 };
        while let Some((info, Some(handle))) = self.worker.probe(any, true) {
            let mut buf = vec![0u8; info.length];
            // SAFETY: `buf` lives until the request completes, or is leaked below.
            let Ok(req) = (unsafe { self.worker.msg_recv(buf.as_mut_ptr(), buf.len(), handle) })
            else {
                continue;
            };
            let mut req = Some(req);
            let deadline = std::time::Instant::now() + Duration::from_secs(1);
            while self.worker.poll_recv(&mut req).is_pending() {
                if std::time::Instant::now() > deadline {
                    // UCX may still write into the buffer: it stays with the request, freed
                    // only if UCX ever completes it.
                    if let Some(r) = req.take() {
                        self.stranded.push(Stranded::new(r, Box::new(buf)));
                    }
                    break;
                }
                self.worker.progress();
            }
        }
    }
}

impl Engine {
    /// Cancels the operations left (in finalize), the orphans too if `orphans`.
    pub(super) fn cancel_all(&mut self, orphans: bool) {
        let (worker, kept) = (&self.net.worker, &self.orphans);
        for (id, op) in self.table.iter_mut() {
            if !orphans && kept.contains(&id) {
                continue;
            }
            match op {
                Op::Recv { req: Some(r), .. } | Op::Send { req: Some(r), .. } => worker.cancel(r),
                Op::CustomSend(s) => s.abort(worker, Error::Cancelled),
                Op::CustomRecv(r) => r.abort(worker, Error::Cancelled),
                _ => {}
            }
        }
    }

    /// Progresses until no operation is left (but the orphans, unless `orphans`), for `most`
    /// at most (in finalize).
    pub(super) fn settle_ops(&mut self, orphans: bool, most: Duration) {
        let deadline = std::time::Instant::now() + most;
        let left = |e: &Engine| match orphans {
            true => e.table.occupied(),
            false => e.table.occupied().saturating_sub(e.orphans.len()),
        };
        while left(self) > 0 && std::time::Instant::now() < deadline {
            self.progress();
            for id in self.table.ids() {
                if orphans || !self.orphans.contains(&id) {
                    let _ = self.test(id);
                }
            }
        }
    }
}
