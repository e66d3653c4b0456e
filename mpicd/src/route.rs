//! [`Route`]: where a message goes or comes from, a communicator's context id and its group;
//! the context ids every process reserves, and [`ContextIds`], the ids this process has
//! given to communicators. Below the operations and the engine, which address messages with
//! it, and above nothing but groups.

use crate::error::{Error, Result};
use crate::group::Group;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Context ids each communicator reserves, at these offsets from its first: point-to-point,
/// collectives, making communicators of its subgroups ([`crate::Communicator::create_group`],
/// whose tags must not meet point-to-point's), and fault tolerance (ULFM's agreement, which
/// must still run on a revoked communicator, see [`crate::ulfm`]).
pub(crate) const CONTEXTS_PER_COMM: u32 = 4;
/// The offset of a communicator's collective context.
pub(crate) const COLL_OFFSET: u32 = 1;
/// The offset of the context where the members of a subgroup make their communicator.
pub(crate) const SUBGROUP_OFFSET: u32 = 2;
/// The offset of the context of the fault-tolerance agreement.
pub(crate) const FAULT_OFFSET: u32 = 3;
/// The context of `MPI_COMM_WORLD`.
pub(crate) const WORLD_CONTEXT: u32 = 0;
/// The context of `MPI_COMM_SELF`.
pub(crate) const SELF_CONTEXT: u32 = WORLD_CONTEXT + CONTEXTS_PER_COMM;
/// The contexts of the calls that make a communicator from a group alone
/// (`MPI_Comm_create_from_group`, `MPI_Intercomm_create_from_groups`): their members talk
/// there, addressed by world rank, under a tag made of the caller's string tag.
pub(crate) const FROM_GROUP_CONTEXT: u32 = SELF_CONTEXT + CONTEXTS_PER_COMM;
/// The context of the engine's own notices between processes (a communicator's revocation),
/// addressed by world rank.
pub(crate) const NOTICE_CONTEXT: u32 = FROM_GROUP_CONTEXT + CONTEXTS_PER_COMM;
/// The context of the handshakes of MPI's dynamic processes (connect, accept, spawn): the
/// roots of the two sides talk there, under tags their processes give
/// ([`crate::dynamic`]).
pub(crate) const PORT_CONTEXT: u32 = NOTICE_CONTEXT + CONTEXTS_PER_COMM;
/// The first context id a new communicator may get.
pub(crate) const FIRST_FREE_CONTEXT: u32 = PORT_CONTEXT + CONTEXTS_PER_COMM;

/// Where a message goes or comes from: a communicator's context and group.
#[derive(Clone)]
pub(crate) struct Route {
    pub context: u32,
    pub group: Arc<Group>,
}

/// The context ids of this process: the next one never used, the bases of those given to
/// communicators (ids are never reused), and the proposals of the agreements without rounds in
/// flight.
///
/// An agreement takes the largest of the members' proposals, each at least its member's next
/// id. Other agreements may complete meanwhile (non-blocking ones, or other threads'), so
/// each member checks the outcome when it arrives ([`ContextIds::try_hold`]): it holds it if no
/// communicator has it and no agreement without rounds in flight here may end on it, and the
/// members then learn whether all of them held it (if not, they try again with new
/// proposals: [`crate::newcomm::Proposal`]). An agreement without rounds (one that spans
/// groups through their leaders) takes the largest proposal as it is: it is at least this
/// process's next id, so it is free here.
pub(crate) struct ContextIds {
    next: u32,
    taken: BTreeSet<u32>,
    /// The proposals of blocking agreements in flight (one entry each).
    floors: Vec<u32>,
}

impl Default for ContextIds {
    fn default() -> Self {
        ContextIds {
            next: FIRST_FREE_CONTEXT,
            taken: BTreeSet::new(),
            floors: Vec::new(),
        }
    }
}

impl ContextIds {
    /// The proposal of a blocking agreement without rounds: the next id never used. Until
    /// [`ContextIds::assign`] or [`ContextIds::withdraw`], no other agreement holds an id from
    /// there up.
    pub(crate) fn propose(&mut self) -> u32 {
        self.floors.push(self.next);
        self.next
    }

    /// Forgets a blocking agreement's proposal (the agreement failed).
    pub(crate) fn withdraw(&mut self, proposal: u32) {
        if let Some(i) = self.floors.iter().position(|&f| f == proposal) {
            self.floors.swap_remove(i);
        }
    }

    /// Ends a blocking agreement that proposed `proposal`: its communicator has `agreed`.
    pub(crate) fn assign(&mut self, proposal: u32, agreed: u32) -> Result<()> {
        self.withdraw(proposal);
        self.take(agreed)
    }

    /// A non-blocking agreement's proposal, reserved at once.
    pub(crate) fn reserve(&mut self) -> Result<u32> {
        let proposal = self.next;
        Self::check_room(proposal)?;
        self.next += CONTEXTS_PER_COMM;
        Ok(proposal)
    }

    /// Holds `candidate` for a non-blocking agreement if nothing here has or may take it;
    /// false if it cannot.
    pub(crate) fn try_hold(&mut self, candidate: u32) -> bool {
        let end = candidate.saturating_add(CONTEXTS_PER_COMM);
        let overlaps = self
            .taken
            .range(candidate.saturating_sub(CONTEXTS_PER_COMM - 1)..end)
            .next()
            .is_some();
        let blocked = self.floors.iter().any(|&f| f < end);
        if overlaps || blocked || candidate < FIRST_FREE_CONTEXT {
            return false;
        }
        self.take(candidate).is_ok()
    }

    /// Lets go of a candidate held by [`ContextIds::try_hold`] that not every member held.
    pub(crate) fn release(&mut self, candidate: u32) {
        self.taken.remove(&candidate);
    }

    /// This member's part in a round of an agreement on `candidate` (a blocking one's,
    /// [`crate::newcomm::Proposal::settle`], and `MPI_Comm_idup`'s alike): it tries to hold it,
    /// and votes whether it refused and, if so, the next id it could hold. The members then
    /// reduce their ballots with MAX and [`ContextIds::tally`] the result.
    pub(crate) fn stand(&mut self, candidate: u32) -> Stand {
        let held = self.try_hold(candidate);
        // A refusal proposes without reserving: a communicator of one member, whose rounds end
        // at once, would otherwise run through the ids while another agreement holds them up.
        let ballot = match held {
            true => [0, 0],
            false => [1, self.next],
        };
        Stand {
            candidate,
            held,
            ballot,
        }
    }

    /// The outcome of a round from the members' largest ballots: the agreed id, or the next
    /// candidate (after letting go of this one if it was held here).
    pub(crate) fn tally(&mut self, stand: &Stand, largest: [u32; 2]) -> Tally {
        if largest[0] == 0 {
            return Tally::Agreed(stand.candidate);
        }
        self.abandon(stand);
        Tally::Again(largest[1])
    }

    /// Lets go of a round's candidate that will not be agreed (the round failed).
    pub(crate) fn abandon(&mut self, stand: &Stand) {
        if stand.held {
            self.release(stand.candidate);
        }
    }

    fn take(&mut self, base: u32) -> Result<()> {
        Self::check_room(base)?;
        self.next = self.next.max(base + CONTEXTS_PER_COMM);
        self.taken.insert(base);
        Ok(())
    }

    fn check_room(base: u32) -> Result<()> {
        if base + CONTEXTS_PER_COMM > crate::tag::MAX_CONTEXTS {
            return Err(Error::InvalidCommunicator);
        }
        Ok(())
    }
}

/// A member's part in one round of an agreement ([`ContextIds::stand`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stand {
    candidate: u32,
    held: bool,
    /// Whether this member refused the candidate (1), and the next id it proposes if so.
    pub ballot: [u32; 2],
}

impl Stand {
    /// Whether this member refused the round's candidate.
    pub(crate) fn refused(&self) -> bool {
        !self.held
    }
}

/// What a round of an agreement came to ([`ContextIds::tally`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tally {
    Agreed(u32),
    /// Not every member held the candidate: the next round's candidate.
    Again(u32),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_ids_are_not_taken_twice() {
        let mut ids = ContextIds::default();
        let a = ids.reserve().unwrap();
        assert!(ids.try_hold(a));
        assert!(!ids.try_hold(a), "held once");
        let b = ids.propose();
        assert!(b > a);
        // A blocking agreement in flight from b: nothing from b up may be held.
        assert!(!ids.try_hold(b + 30));
        ids.assign(b, b + 30).unwrap();
        assert!(!ids.try_hold(b + 30), "assigned");
        assert!(ids.try_hold(b + 60));
        ids.release(b + 60);
        assert!(ids.try_hold(b + 60), "released");
        let c = ids.propose();
        ids.withdraw(c);
        assert!(ids.try_hold(c));
    }

    #[test]
    fn a_round_agrees_or_names_the_next_candidate() {
        let mut ids = ContextIds::default();
        let a = ids.reserve().unwrap();
        let first = ids.stand(a);
        assert!(!first.refused() && first.ballot == [0, 0]);
        assert_eq!(ids.tally(&first, [0, 0]), Tally::Agreed(a));
        // Taken now: another agreement on it is refused here, with the next free id.
        let again = ids.stand(a);
        assert!(again.refused() && again.ballot == [1, a + CONTEXTS_PER_COMM]);
        // Held here but refused elsewhere: let go, and the others' next id is the candidate.
        let b = ids.reserve().unwrap();
        let held = ids.stand(b);
        assert_eq!(ids.tally(&held, [1, b + 40]), Tally::Again(b + 40));
        assert!(ids.try_hold(b), "let go");
    }
}
