//! Non-blocking agreements on a new communicator's context id (`MPI_Comm_idup`): an operation
//! in the table (`Op::Schedule`) that progress advances round by round, each round an
//! allreduce plan (MAX of two numbers) on the parent's collective context, so it never blocks
//! and overlaps anything else in flight.
//!
//! Round 1 carries every member's proposal (an id reserved here, see
//! [`crate::route::ContextIds`]); the largest is the candidate. Each member then tries to hold
//! the candidate and the next round carries whether it could not, with the next id it could
//! hold if so ([`crate::route::ContextIds::stand`]: other agreements may have completed since
//! the proposals were made). When nobody refused, the candidate is agreed; else those who held
//! it let go, and the largest new proposal is the next candidate
//! ([`crate::route::ContextIds::tally`], shared with the blocking agreements'
//! [`crate::newcomm::Proposal::settle`]). Every round uses the tag the
//! agreement took when it started: a member starts a round only after it has completed the one
//! before, and messages between two members match in order.

use super::{Engine, Op, OpId, Posted, Route};
use crate::datatype::ElementType;
use crate::error::Result;
use crate::reduction::{ReduceOp, Reduction};
use crate::route::{Stand, Tally};
use crate::schedule::{collectives, Builder, Frame};
use crate::status::Status;
use std::sync::{Arc, Mutex, OnceLock};

/// The numbers a round reduces (MAX): whether some member refused the candidate, and the
/// largest new proposal.
type Vote = [u32; 2];

/// An agreement in flight.
pub(crate) struct Agreement {
    route: Route,
    rank: i32,
    tag: i32,
    /// This member's vote before a round, the reduced votes after it.
    vote: Arc<Mutex<Vote>>,
    /// This member's part in the round in flight (none in the first round).
    stand: Option<Stand>,
    round: Round,
    /// Where the agreed id goes.
    agreed: Arc<OnceLock<u32>>,
}

/// A round's allreduce.
enum Round {
    Running(OpId),
    /// It completed when it started (a communicator of one member).
    Ended(Result<()>),
}

fn lock(vote: &Mutex<Vote>) -> std::sync::MutexGuard<'_, Vote> {
    vote.lock().unwrap_or_else(|p| p.into_inner())
}

impl Engine {
    /// Starts an agreement among `route`'s members (this one has `rank`), whose messages
    /// carry `tag` on `route`'s context; the agreed id goes to `agreed` when the operation
    /// completes.
    pub(crate) fn start_agreement(
        &mut self,
        route: Route,
        rank: i32,
        tag: i32,
        agreed: Arc<OnceLock<u32>>,
    ) -> Result<Posted> {
        let proposal = self.net.contexts.reserve()?;
        let mut agreement = Agreement {
            route,
            rank,
            tag,
            vote: Arc::new(Mutex::new([0, proposal])),
            stand: None,
            round: Round::Ended(Ok(())),
            agreed,
        };
        agreement.round = self.start_round(&agreement)?;
        let id = self.table.insert(Op::Schedule);
        if !self.advance_agreement(id, &mut agreement) {
            self.agreements.push((id, agreement));
        }
        Ok(Posted::Pending(id))
    }

    /// Advances every agreement (a progress call).
    pub(super) fn advance_agreements(&mut self) {
        let mut list = std::mem::take(&mut self.agreements);
        list.retain_mut(|(id, a)| !self.advance_agreement(*id, a));
        list.append(&mut self.agreements);
        self.agreements = list;
    }

    /// Advances agreement `id` as far as it goes now; true once it has completed (its table
    /// slot then holds its outcome).
    fn advance_agreement(&mut self, id: OpId, a: &mut Agreement) -> bool {
        loop {
            let ended = match &a.round {
                Round::Running(op) => match self.test(*op) {
                    Ok(None) => return false,
                    Ok(Some(outcome)) => outcome.map(drop),
                    Err(e) => Err(e),
                },
                Round::Ended(outcome) => outcome.clone(),
            };
            let next = ended.and_then(|()| self.next_round(a));
            let outcome = match next {
                // A member that refused lets the agreement that holds it up run first: the
                // next progress call goes on (a round of one member ends at once).
                Ok(true) if a.stand.is_some_and(|s| s.refused()) => return false,
                Ok(true) => continue,
                Ok(false) => Ok(Status::empty()),
                Err(e) => {
                    if let Some(stand) = &a.stand {
                        self.net.contexts.abandon(stand);
                    }
                    Err(e)
                }
            };
            if let Some(op) = self.table.get_mut(id) {
                *op = Op::Finished(outcome);
            }
            return true;
        }
    }

    /// After a round: agreed (false), or the next round started (true).
    fn next_round(&mut self, a: &mut Agreement) -> Result<bool> {
        let votes = *lock(&a.vote);
        let candidate = match &a.stand {
            // The first round carried the proposals: the largest is the candidate.
            None => votes[1],
            Some(stand) => match self.net.contexts.tally(stand, votes) {
                Tally::Agreed(id) => {
                    let _ = a.agreed.set(id);
                    return Ok(false);
                }
                Tally::Again(next) => next,
            },
        };
        let stand = self.net.contexts.stand(candidate);
        *lock(&a.vote) = stand.ballot;
        a.stand = Some(stand);
        a.round = self.start_round(a)?;
        Ok(true)
    }

    /// Starts a round: the allreduce (MAX) of the members' votes, in place in `a.vote`.
    fn start_round(&mut self, a: &Agreement) -> Result<Round> {
        let mut b = Builder::new(a.route.clone(), a.rank, a.tag);
        b.reduce_with(Reduction::predefined(ReduceOp::Max, ElementType::U32));
        let buf = b.temp(8);
        let vote = Arc::clone(&a.vote);
        b.local(Arc::new(move |f: &mut Frame| {
            let v = *lock(&vote);
            let bytes = f.bytes_mut(buf);
            bytes[..4].copy_from_slice(&v[0].to_ne_bytes());
            bytes[4..].copy_from_slice(&v[1].to_ne_bytes());
            Ok(())
        }));
        collectives::allreduce(&mut b, None, buf);
        let vote = Arc::clone(&a.vote);
        b.local(Arc::new(move |f: &mut Frame| {
            let bytes = f.bytes_mut(buf);
            let word = |at: usize| {
                let mut w = [0u8; 4];
                w.copy_from_slice(&bytes[at..at + 4]);
                u32::from_ne_bytes(w)
            };
            *lock(&vote) = [word(0), word(4)];
            Ok(())
        }));
        Ok(match self.start_plan(&b.finish())? {
            Posted::Pending(op) => Round::Running(op),
            Posted::Done(outcome) => Round::Ended(outcome.map(drop)),
        })
    }
}
