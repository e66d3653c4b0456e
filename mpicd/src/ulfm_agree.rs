//! The agreement of ULFM's `MPIX_Comm_agree` and `MPIX_Comm_shrink`: the live members of a
//! communicator agree on the AND of their flags, the largest of their context proposals, and
//! the set of failed members, although members fail.
//!
//! A coordinator (the lowest member none knows failed) collects every live member's flag,
//! proposal and failures, point-to-point on the communicator's fault-tolerance context (which a
//! revocation leaves usable), and sends the outcome back; a member it cannot hear from is failed. A member whose coordinator fails
//! before answering moves to the next coordinator. What it does not survive: a coordinator
//! that fails after answering some members but not all (the others' next coordinator already
//! returned); ULFM's own agreement (Open MPI's ERA) survives that too.

use crate::collective::{recv_vec, send};
use crate::comm::Communicator;
use crate::error::{Error, Result};
use crate::route::{Route, FAULT_OFFSET};
use crate::TAG_UB;
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

/// What the live members agreed on.
pub(crate) struct Agreed {
    /// The AND of their flags.
    pub flag: u32,
    /// The largest of their proposals.
    pub proposal: u32,
    /// The failed members (world ranks) any of them knew of.
    pub failed: BTreeSet<u32>,
}

/// An agreement ready to run: the communicator on its fault-tolerance context, the tag the
/// agreement took (in the order of the communicator's agreements and shrinks), and the communicator's own
/// route, whose acknowledged failures count. It owns what it needs, so it may run on another
/// thread (`MPIX_Comm_iagree`).
pub(crate) struct AgreementRun {
    side: Communicator,
    tag: i32,
    acks: Route,
}

impl Communicator {
    /// Prepares an agreement (collective: each member prepares its agreements in the same
    /// order).
    pub(crate) fn prepare_agreement(&self) -> Result<AgreementRun> {
        self.require_intra("MPIX_Comm_agree")?;
        Ok(AgreementRun {
            side: self.fault_side(),
            tag: (self.fault_seq.fetch_add(1, Ordering::Relaxed) % (TAG_UB as u32 + 1)) as i32,
            acks: self.route.clone(),
        })
    }
}

impl AgreementRun {
    /// The communicator on its fault-tolerance context (the same group and rank).
    pub(crate) fn side(&self) -> &Communicator {
        &self.side
    }

    /// Runs the agreement with this member's `flag` and `proposal`.
    pub(crate) fn run(&self, flag: u32, proposal: u32) -> Result<Agreed> {
        let (side, tag) = (&self.side, self.tag);
        let members = side.route.group.members();
        side.shared.with(|e| {
            e.watch_members(&members);
            Ok(())
        })?;
        let me = side.world_rank(side.rank)?;
        loop {
            let known: BTreeSet<u32> = side.failed_members()?.members().into_iter().collect();
            let Some(&coordinator) = members.iter().find(|m| !known.contains(m)) else {
                return Err(Error::ProcFailed { rank: -1 });
            };
            if coordinator == me {
                return side.coordinate(&members, known, flag, proposal, tag);
            }
            let to = side.comm_rank_of(coordinator);
            let mine = encode(flag, proposal, &known);
            let answer = send(side, &mine, to, tag).and_then(|()| recv_vec(side, to, tag));
            match answer {
                Ok(bytes) => return decode(&bytes),
                // The coordinator failed: the next one takes over.
                Err(Error::ProcFailed { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// `MPIX_Comm_agree`'s outcome: the AND of the live members' `flag`s, and
    /// [`Error::ProcFailed`] if a member failed whose failure the communicator did not
    /// acknowledge (the flag is the agreed one all the same, as in ULFM).
    pub(crate) fn agree(&self, flag: u32) -> (u32, Result<()>) {
        let agreed = match self.run(flag, 0) {
            Ok(a) => a,
            Err(e) => return (flag, Err(e)),
        };
        let acked = match self.side.shared.with(|e| Ok(e.acked_members(&self.acks))) {
            Ok(acked) => acked,
            Err(e) => return (agreed.flag, Err(e)),
        };
        let outcome = match agreed.failed.iter().find(|r| !acked.contains(r)) {
            Some(&r) => Err(Error::ProcFailed { rank: r as i32 }),
            None => Ok(()),
        };
        (agreed.flag, outcome)
    }
}

impl Communicator {
    /// This communicator on its fault-tolerance context: the agreement's messages travel
    /// there (`send` and `recv_vec` use a communicator's collective route).
    fn fault_side(&self) -> Communicator {
        let mut side = self.with_context(
            self.route.context + FAULT_OFFSET,
            (*self.route.group).clone(),
            self.rank,
        );
        side.coll.context = side.route.context;
        side
    }

    /// The coordinator's part: hears every live member, then answers each.
    fn coordinate(
        &self,
        members: &[u32],
        mut failed: BTreeSet<u32>,
        mut flag: u32,
        mut proposal: u32,
        tag: i32,
    ) -> Result<Agreed> {
        let me = self.world_rank(self.rank)?;
        let others: Vec<u32> = members
            .iter()
            .copied()
            .filter(|m| *m != me && !failed.contains(m))
            .collect();
        let mut heard = Vec::new();
        for &m in &others {
            match recv_vec(self, self.comm_rank_of(m), tag) {
                Ok(bytes) => {
                    let theirs = decode(&bytes)?;
                    flag &= theirs.flag;
                    proposal = proposal.max(theirs.proposal);
                    failed.extend(theirs.failed);
                    heard.push(m);
                }
                Err(Error::ProcFailed { .. }) => {
                    failed.insert(m);
                }
                Err(e) => return Err(e),
            }
        }
        let outcome = encode(flag, proposal, &failed);
        for &m in heard.iter().filter(|m| !failed.contains(m)) {
            match send(self, &outcome, self.comm_rank_of(m), tag) {
                Ok(()) | Err(Error::ProcFailed { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Agreed {
            flag,
            proposal,
            failed,
        })
    }

    /// The rank in this communicator of member `world` (a member by construction).
    fn comm_rank_of(&self, world: u32) -> i32 {
        self.route.group.comm_rank(world).unwrap_or(-1)
    }
}

fn encode(flag: u32, proposal: u32, failed: &BTreeSet<u32>) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + 4 * failed.len());
    for v in [flag, proposal, failed.len() as u32]
        .into_iter()
        .chain(failed.iter().copied())
    {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

fn decode(bytes: &[u8]) -> Result<Agreed> {
    let word = |i: usize| -> Result<u32> {
        bytes
            .get(4 * i..4 * i + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or_else(|| Error::Transport("a truncated agreement message".into()))
    };
    let n = word(2)? as usize;
    if bytes.len() != 12 + 4 * n {
        return Err(Error::Transport("a malformed agreement message".into()));
    }
    Ok(Agreed {
        flag: word(0)?,
        proposal: word(1)?,
        failed: (0..n).map(|i| word(3 + i)).collect::<Result<_>>()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_messages_round_trip_and_bad_ones_are_refused() {
        let failed: BTreeSet<u32> = [3, 7].into_iter().collect();
        let a = decode(&encode(5, 900, &failed)).unwrap();
        assert_eq!((a.flag, a.proposal, a.failed), (5, 900, failed));
        assert!(decode(&[1, 2, 3]).is_err());
        let mut long = encode(1, 2, &BTreeSet::new());
        long.push(0);
        assert!(decode(&long).is_err());
    }
}
