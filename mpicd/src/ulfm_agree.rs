//! The agreement of ULFM's `MPIX_Comm_agree` and `MPIX_Comm_shrink`: the live members of a
//! communicator agree on the AND of their flags, the largest of their context proposals, and
//! the set of failed members, although members fail.
//!
//! Messages travel point-to-point on the communicator's fault-tolerance context (which a
//! revocation leaves usable), under a tag of their own for each agreement. A coordinator (the
//! lowest member this process does not know failed) collects every live member's vote (flag,
//! proposal, known failures), decides, and sends the decision to every live member. Every
//! member that receives a decision passes it on to every member before it returns: so when a
//! coordinator fails after telling some members but not all, the others still learn that
//! decision, from those, and a later coordinator that waits for a vote from a member that
//! already returned gets its decision instead and adopts it. A member whose coordinator fails
//! before deciding sends its vote to the next one. It survives any one failure at any point;
//! two at once (a coordinator, and the only member it told before it passed the decision on)
//! may leave the others with a decision of their own, as in any agreement without a
//! consensus protocol (Open MPI's ERA survives that too).

use crate::collective::{send, take_vec};
use crate::comm::Communicator;
use crate::error::{Error, Result};
use crate::route::{Route, FAULT_OFFSET};
use crate::TAG_UB;
use std::collections::{BTreeMap, BTreeSet};
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
        let side = &self.side;
        let members = side.route.group.members();
        side.shared.with(|e| {
            e.watch_members(&members);
            Ok(())
        })?;
        let me = side.world_rank(side.rank)?;
        // The votes heard (this process may be, or become, their coordinator), and the
        // coordinator this process's vote went to.
        let mut heard: BTreeMap<u32, Agreed> = BTreeMap::new();
        let mut voted_to = None;
        loop {
            let known: BTreeSet<u32> = side.failed_members()?.members().into_iter().collect();
            let Some(&coordinator) = members.iter().find(|m| !known.contains(m)) else {
                return Err(Error::ProcFailed { rank: -1 });
            };
            if coordinator == me {
                let live_others = members.iter().filter(|&&m| m != me && !known.contains(&m));
                if live_others.clone().all(|m| heard.contains_key(m)) {
                    let mut decided = Agreed {
                        flag,
                        proposal,
                        failed: known.clone(),
                    };
                    for vote in heard.values() {
                        decided.flag &= vote.flag;
                        decided.proposal = decided.proposal.max(vote.proposal);
                        decided.failed.extend(&vote.failed);
                    }
                    let decision = encode(Kind::Decision, &decided);
                    self.spread(&decision, &members, me, None, &known, exit_after());
                    return Ok(decided);
                }
            } else if voted_to != Some(coordinator) {
                let vote = Agreed {
                    flag,
                    proposal,
                    failed: known.clone(),
                };
                let to = side.comm_rank_of(coordinator);
                match send(side, &encode(Kind::Vote, &vote), to, self.tag) {
                    Ok(()) => voted_to = Some(coordinator),
                    // Found failed: the next round picks the next coordinator.
                    Err(Error::ProcFailed { .. }) => continue,
                    Err(e) => return Err(e),
                }
            }
            let Some((from, bytes)) = self.next_message(known.len())? else {
                continue; // a failure found: maybe a new coordinator
            };
            match decode(&bytes)? {
                (Kind::Vote, vote) => {
                    heard.insert(from, vote);
                }
                (Kind::Decision, decided) => {
                    self.spread(&bytes, &members, me, Some(from), &known, None);
                    return Ok(decided);
                }
            }
        }
    }

    /// The next message of this agreement (its sender's world rank and bytes), or `None` as
    /// soon as more than `known` members are known failed.
    fn next_message(&self, known: usize) -> Result<Option<(u32, Vec<u8>)>> {
        let side = &self.side;
        let route = &side.coll;
        let got = side.shared.progress_until(|e| {
            if let Some((status, matched)) = e.probe(route, None, Some(self.tag), true)? {
                return Ok(Some(Some((status.source, matched))));
            }
            match e.failed_members(route).len() > known {
                true => Ok(Some(None)),
                false => Ok(None),
            }
        })?;
        let Some((source, matched)) = got else {
            return Ok(None);
        };
        let bytes = take_vec(side, matched)?;
        Ok(Some((route.group.world_rank(source)?, bytes)))
    }

    /// Sends the decision `bytes` to every member but this one (`me`), `skip` (who sent it)
    /// and those known failed; a member that failed meanwhile needs none. With `exit_after`
    /// (fault injection), the process exits like a crash before the one of that number.
    fn spread(
        &self,
        bytes: &[u8],
        members: &[u32],
        me: u32,
        skip: Option<u32>,
        known: &BTreeSet<u32>,
        exit_after: Option<usize>,
    ) {
        let side = &self.side;
        let to = members
            .iter()
            .filter(|&&m| m != me && Some(m) != skip && !known.contains(&m));
        for (sent, &m) in to.enumerate() {
            if exit_after == Some(sent + 1) {
                // SAFETY: _exit ends the process at once, as a crash would (fault injection).
                unsafe { libc::_exit(9) };
            }
            // A failure to send is a failed member: nothing to tell it.
            let _ = send(side, bytes, side.comm_rank_of(m), self.tag);
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

    /// The rank in this communicator of member `world` (a member by construction).
    fn comm_rank_of(&self, world: u32) -> i32 {
        self.route.group.comm_rank(world).unwrap_or(-1)
    }
}

/// `MPICD_FAULT_AGREE_EXIT`: before which decision sent (1: the first) a coordinator exits
/// (tests).
fn exit_after() -> Option<usize> {
    let knob = crate::config::FAULT_AGREE_EXIT;
    match knob.number(std::env::var(knob.name).ok().as_deref()) {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

/// What an agreement message carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A member's vote, to its coordinator.
    Vote = 0,
    /// The decision, from the coordinator or passed on by a member.
    Decision = 1,
}

fn encode(kind: Kind, a: &Agreed) -> Vec<u8> {
    let head = [kind as u32, a.flag, a.proposal, a.failed.len() as u32];
    head.into_iter()
        .chain(a.failed.iter().copied())
        .flat_map(u32::to_le_bytes)
        .collect()
}

fn decode(bytes: &[u8]) -> Result<(Kind, Agreed)> {
    let word = |i: usize| -> Result<u32> {
        bytes
            .get(4 * i..4 * i + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or_else(|| Error::Transport("a truncated agreement message".into()))
    };
    let kind = match word(0)? {
        0 => Kind::Vote,
        1 => Kind::Decision,
        k => {
            return Err(Error::Transport(format!(
                "an agreement message of kind {k}"
            )))
        }
    };
    let n = word(3)? as usize;
    if bytes.len() != 16 + 4 * n {
        return Err(Error::Transport("a malformed agreement message".into()));
    }
    let agreed = Agreed {
        flag: word(1)?,
        proposal: word(2)?,
        failed: (0..n).map(|i| word(4 + i)).collect::<Result<_>>()?,
    };
    Ok((kind, agreed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_messages_round_trip_and_bad_ones_are_refused() {
        let failed: BTreeSet<u32> = [3, 7].into_iter().collect();
        let a = Agreed {
            flag: 5,
            proposal: 900,
            failed: failed.clone(),
        };
        let (kind, b) = decode(&encode(Kind::Decision, &a)).unwrap();
        assert_eq!(
            (kind, b.flag, b.proposal, b.failed),
            (Kind::Decision, 5, 900, failed)
        );
        assert!(decode(&[1, 2, 3]).is_err());
        let mut long = encode(Kind::Vote, &b_empty());
        long.push(0);
        assert!(decode(&long).is_err());
        let mut strange = encode(Kind::Vote, &b_empty());
        strange[0] = 9;
        assert!(decode(&strange).is_err());
    }

    fn b_empty() -> Agreed {
        Agreed {
            flag: 1,
            proposal: 2,
            failed: BTreeSet::new(),
        }
    }
}
