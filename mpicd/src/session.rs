//! What MPI's sessions model reaches of a runtime ([`Session`]): the process sets
//! `mpi://WORLD` and `mpi://SELF` as groups, and the communicators made from a group alone,
//! collectively over its members only, with no parent communicator
//! ([`Session::create_from_group`], [`Session::intercomm_from_groups`]).
//!
//! The members of such a call talk on a context set apart for them
//! ([`crate::route::FROM_GROUP_CONTEXT`], addressed by world rank), under a tag made from the
//! caller's string tag; calls that may run at the same time over overlapping groups need
//! different string tags, as MPI requires. Two string tags that hash alike, or members that
//! pass different groups or tags, are told apart by a fingerprint every member checks: the
//! call then fails instead of making a wrong communicator.

use crate::comm::Communicator;
use crate::engine::{Idle, Shared};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::newcomm::Proposal;
use crate::route::FROM_GROUP_CONTEXT;
use crate::tag::TAG_UB;
use std::sync::Arc;

/// A handle on a running runtime for the sessions model; cheap to clone. It stops working
/// when its runtime is finalized.
#[derive(Clone)]
pub struct Session {
    pub(crate) shared: Arc<Shared>,
    pub(crate) rank: u32,
    pub(crate) size: u32,
}

/// The process sets every runtime has, in the order `MPI_Session_get_nth_pset` lists them.
pub const PROCESS_SETS: [&str; 2] = ["mpi://WORLD", "mpi://SELF"];

impl Session {
    /// The group of a process set: `mpi://WORLD` (every process of the job) or `mpi://SELF`
    /// (this one); the names are compared without regard to case. `None` for another name.
    pub fn pset_group(&self, name: &str) -> Option<Group> {
        if name.eq_ignore_ascii_case(PROCESS_SETS[0]) {
            Some(Group::world(self.size))
        } else if name.eq_ignore_ascii_case(PROCESS_SETS[1]) {
            Some(Group::from_members(vec![self.rank]))
        } else {
            None
        }
    }

    /// This process's world rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// Progresses the runtime once (every operation in flight).
    pub fn progress(&self) -> Result<()> {
        self.shared.with(|e| {
            e.progress();
            Ok(())
        })
    }

    /// One step of a blocking wait for something the runtime cannot see (a generalized
    /// request, several requests of a binding): progresses once, then, when `idle` shows the
    /// wait found nothing to do for a while, sleeps as `MPICD_WAIT` says (see [`Idle`]).
    pub fn wait_step(&self, idle: &mut Idle) -> Result<()> {
        self.shared.wait_step(idle)
    }

    /// The number of processes of the job.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// A communicator of `group`'s members, in `group`'s order (`MPI_Comm_create_from_group`:
    /// every member calls it with the same group and `stringtag`; nobody else takes part).
    /// `None` for the empty group; a caller outside a non-empty group is an error.
    pub fn create_from_group(
        &self,
        group: &Group,
        stringtag: &str,
    ) -> Result<Option<Communicator>> {
        if group.is_empty() {
            return Ok(None);
        }
        let rank = self.member_rank(group, "the group")?;
        let tag = tag_of(stringtag);
        let print = fingerprint(stringtag, &[group]);
        let side = self.side(group.clone(), rank);
        let mine = Proposal::new(&self.shared)?;
        let all = side.max_among_members(&[mine.value(), print, !print], tag)?;
        check_print(&all)?;
        let agreed = mine.settle(all[0], |v| side.max_among_members(v, tag))?;
        Ok(Some(side.with_context(agreed, group.clone(), rank)))
    }

    /// An inter-communicator between `local` (which has this process) and `remote`, two
    /// disjoint groups (`MPI_Intercomm_create_from_groups`: every member of both calls it with
    /// the same `stringtag`, each group naming its leader and the other's by their ranks in
    /// those groups).
    pub fn intercomm_from_groups(
        &self,
        local: &Group,
        local_leader: i32,
        remote: &Group,
        remote_leader: i32,
        stringtag: &str,
    ) -> Result<Communicator> {
        let rank = self.member_rank(local, "the local group")?;
        let their_leader = remote.world_rank(remote_leader)?;
        local.world_rank(local_leader)?;
        if remote.is_empty() || remote.members().iter().any(|w| local.contains(*w)) {
            return Err(Error::InvalidGroup(
                "the two groups of an inter-communicator must be disjoint and not empty".into(),
            ));
        }
        let tag = tag_of(stringtag);
        let print = fingerprint(stringtag, &[local, remote]);
        let side = self.side(local.clone(), rank);
        // The largest of every member's values in both groups: the local group's largest, the
        // leaders' swap, and the leader's result to all.
        let across = |values: &[u32]| -> Result<Vec<u32>> {
            let ours = side.max_among_members(values, tag)?;
            let mut both = vec![0; values.len()];
            if rank == local_leader {
                let pair = self.side(Group::from_members(vec![self.rank, their_leader]), 0);
                let mut theirs = vec![0u32; values.len()];
                crate::request::scope(|s| {
                    let sent = pair.isend(s, &ours, 1, tag)?;
                    pair.recv(&mut theirs, 1, tag)?;
                    sent.wait().map(drop)
                })?;
                both = ours.iter().zip(&theirs).map(|(a, b)| *a.max(b)).collect();
            }
            side.max_among_members(&both, tag)
        };
        let mine = Proposal::new(&self.shared)?;
        let all = across(&[mine.value(), print, !print])?;
        check_print(&all)?;
        let agreed = mine.settle(all[0], across)?;
        Ok(Communicator::new_inter(
            Arc::clone(&self.shared),
            agreed,
            local.clone(),
            remote.clone(),
            rank,
        ))
    }

    /// This process's rank in `group`, which it must be a member of.
    fn member_rank(&self, group: &Group, what: &str) -> Result<i32> {
        group
            .comm_rank(self.rank)
            .ok_or_else(|| Error::InvalidGroup(format!("this process is not a member of {what}")))
    }

    /// `group`'s members talking on the from-group context.
    fn side(&self, group: Group, rank: i32) -> Communicator {
        Communicator::new(Arc::clone(&self.shared), FROM_GROUP_CONTEXT, group, rank)
    }
}

/// The tag of a string tag (FNV-1a, cut to the tag bits).
fn tag_of(stringtag: &str) -> i32 {
    (fnv(0x811c_9dc5, stringtag.as_bytes()) & TAG_UB as u32) as i32
}

/// What every member must pass alike: the string tag and the groups (in either order).
fn fingerprint(stringtag: &str, groups: &[&Group]) -> u32 {
    let mut print = fnv(0x811c_9dc5, stringtag.as_bytes());
    for g in groups {
        let bytes: Vec<u8> = g.members().iter().flat_map(|w| w.to_le_bytes()).collect();
        print ^= fnv(0x0100_0193, &bytes);
    }
    print
}

fn fnv(seed: u32, bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(seed, |h, b| (h ^ *b as u32).wrapping_mul(0x0100_0193))
}

/// Fails unless every member's fingerprint was the same (its largest and smallest agree).
fn check_print(all: &[u32]) -> Result<()> {
    if all[1] != !all[2] {
        return Err(Error::InvalidArgument(
            "the members passed different groups or string tags (or two concurrent calls' \
             string tags collide)"
                .into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_ignore_group_order_and_see_tags() {
        let (a, b) = (
            Group::from_members(vec![0, 1]),
            Group::from_members(vec![2]),
        );
        assert_eq!(fingerprint("t", &[&a, &b]), fingerprint("t", &[&b, &a]));
        assert_ne!(fingerprint("t", &[&a, &b]), fingerprint("u", &[&a, &b]));
        assert!((0..=TAG_UB).contains(&tag_of("org.mpi-forum.example")));
    }
}
