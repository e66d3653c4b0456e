//! New communicators from existing ones: [`Communicator::dup`], [`Communicator::idup`],
//! [`Communicator::split`], [`Communicator::split_type`], [`Communicator::create`] and
//! [`Communicator::create_group`].
//!
//! A new communicator needs a context id unused by every member: each process proposes the
//! next id it has never used, the members take the largest, check that each of them can hold
//! it (threads may be making other communicators at once: [`Proposal`]), and each then marks
//! the ids up to that one's reservation ([`crate::route::CONTEXTS_PER_COMM`]) as used. Ids are
//! never reused, so two communicators that share a process never share an id, which is all
//! matching needs (a message only travels between members of its communicator). Dup, split, split_type and
//! create agree through collectives on the parent, so this sits above [`crate::collective`];
//! create_group, which only the new group's members call, agrees by point-to-point among them
//! on the parent's third context, under the caller's tag. Dup, split and create of an
//! inter-communicator agree across its two groups ([`crate::intercomm`]). Idup agrees without
//! blocking, in rounds the engine runs (`engine::agree`), and every blocking agreement keeps
//! its [`Proposal`] registered while it runs, so that the two never end on the same id.

use crate::comm::{Communicator, Sides};
use crate::datatype::ElementType;
use crate::engine::Shared;
use crate::error::{Error, Result};
use crate::group::Group;
use crate::liveness::Identity;
use crate::reduction::ReduceOp;
use crate::request::Request;
use crate::route::{Route, Tally, SUBGROUP_OFFSET};
use crate::{TAG_UB, UNDEFINED};
use std::sync::{Arc, OnceLock};

/// This process's proposal for a blocking agreement on a context id, and the agreement's end.
///
/// Most agreements ([`Proposal::new`]) end in rounds that check the candidate on every member,
/// as `MPI_Comm_idup`'s do (`engine::agree`): the members exchange their proposals (an id
/// reserved here) with whatever else the call exchanges, the largest is the candidate, each
/// member tries to hold it ([`crate::route::ContextIds::try_hold`]: threads may be making other
/// communicators meanwhile) and [`Proposal::settle`] votes on whether all did, retrying with
/// new proposals if not. No agreement waits for another, so threads that make communicators
/// at once, each holding a lock of the program's, cannot deadlock.
///
/// Agreements that have no second round (connect and accept, which span two jobs through
/// their roots, and shrink, which runs inside ULFM's agreement; `MPI_Intercomm_create` and
/// `_from_groups` run their rounds through their leaders) propose with
/// [`Proposal::alone`]: the next id never used, kept as a floor until the agreement ends
/// ([`Proposal::assign`]) or fails (dropped), so that no other agreement holds an id it may
/// end on meanwhile. Two of them in
/// flight at once here could end on one id.
pub(crate) struct Proposal {
    shared: Arc<Shared>,
    value: u32,
    /// A floor to withdraw when dropped ([`Proposal::alone`]'s, until assigned).
    floor: bool,
}

impl Proposal {
    /// A proposal for an agreement that ends with [`Proposal::settle`].
    pub(crate) fn new(shared: &Arc<Shared>) -> Result<Proposal> {
        let value = shared.with(|e| e.contexts().reserve())?;
        Ok(Proposal {
            shared: Arc::clone(shared),
            value,
            floor: false,
        })
    }

    /// A proposal for an agreement that has no second round: it ends with
    /// [`Proposal::assign`].
    pub(crate) fn alone(shared: &Arc<Shared>) -> Result<Proposal> {
        let value = shared.with(|e| Ok(e.contexts().propose()))?;
        Ok(Proposal {
            shared: Arc::clone(shared),
            value,
            floor: true,
        })
    }

    /// What this member puts into the exchange.
    pub(crate) fn value(&self) -> u32 {
        self.value
    }

    /// An agreement of [`Proposal::alone`] ended on `agreed` (the largest proposal): this
    /// process gives it to the new communicator.
    pub(crate) fn assign(mut self, agreed: u32) -> Result<()> {
        self.floor = false;
        self.shared
            .with(|e| e.contexts().assign(self.value, agreed))
    }

    /// The id the members agree on, from the largest of their [`Proposal::value`]s, in rounds
    /// through `max` (the largest of the members' values, element by element, on every
    /// member; every member calls it alike).
    pub(crate) fn settle(
        self,
        largest: u32,
        mut max: impl FnMut(&[u32]) -> Result<Vec<u32>>,
    ) -> Result<u32> {
        let shared = Arc::clone(&self.shared);
        drop(self);
        let mut candidate = largest;
        loop {
            let stand = shared.with(|e| Ok(e.contexts().stand(candidate)))?;
            if stand.refused() {
                std::thread::yield_now(); // let the agreement that holds it up run
            }
            let tally = max(&stand.ballot).and_then(|v| match v[..] {
                [refused, next] => {
                    Ok(shared.with(|e| Ok(e.contexts().tally(&stand, [refused, next])))?)
                }
                _ => Err(Error::Transport(
                    "a context agreement's round lost its votes".into(),
                )),
            });
            match tally {
                Ok(Tally::Agreed(id)) => return Ok(id),
                Ok(Tally::Again(next)) => candidate = next,
                Err(e) => {
                    let _ = shared.with(|c| {
                        c.contexts().abandon(&stand);
                        Ok(())
                    });
                    return Err(e);
                }
            }
        }
    }
}

impl Drop for Proposal {
    fn drop(&mut self) {
        if self.floor {
            let _ = self.shared.with(|e| {
                e.contexts().withdraw(self.value);
                Ok(())
            });
        }
    }
}

/// A communicator [`Communicator::idup`] is making: it exists once its request completed.
pub struct PendingComm {
    shared: Arc<Shared>,
    agreed: Arc<OnceLock<u32>>,
    shape: Shape,
}

/// The groups of a communicator being made, and this process's rank.
enum Shape {
    Intra(Group, i32),
    Inter(Group, Group, i32),
}

impl PendingComm {
    /// The new communicator, once the request of [`Communicator::idup`] has completed
    /// successfully; `None` before (each call makes a new handle on the same communicator).
    pub fn get(&self) -> Option<Communicator> {
        let context = *self.agreed.get()?;
        let shared = Arc::clone(&self.shared);
        Some(match &self.shape {
            Shape::Intra(group, rank) => Communicator::new(shared, context, group.clone(), *rank),
            Shape::Inter(local, remote, rank) => {
                Communicator::new_inter(shared, context, local.clone(), remote.clone(), *rank)
            }
        })
    }
}

/// How [`Communicator::split_type`] groups the processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitType {
    /// The processes that can share memory: those on the same node (`MPI_COMM_TYPE_SHARED`).
    Shared,
    /// The processes on the same node, where they are fewer than the communicator's members;
    /// no communicator where they are all of them (`MPI_COMM_TYPE_HW_UNGUIDED`: each new
    /// communicator a strict subset).
    SharedStrict,
    /// No new communicator for this process (`MPI_UNDEFINED`); it still takes part.
    Undefined,
}

impl Communicator {
    /// A new communicator with the same group and a new context.
    pub fn dup(&self) -> Result<Communicator> {
        if self.is_inter() {
            return self.inter_dup();
        }
        let context = self.agree_on_context()?;
        Ok(self.with_context(context, self.group(), self.rank))
    }

    /// Starts a [`Communicator::dup`] that never blocks (`MPI_Comm_idup`): the new
    /// communicator comes from the [`PendingComm`] once the request has completed. Every
    /// member starts it in the same order as its other collectives on this communicator.
    pub fn idup(&self) -> Result<(PendingComm, Request<'static>)> {
        let tag = self.next_coll_tag();
        // The members of both groups agree, in one order both groups see alike.
        let (route, rank, shape) = match &self.sides {
            Sides::Intra => (
                self.coll.clone(),
                self.rank,
                Shape::Intra(self.group(), self.rank),
            ),
            Sides::Inter { local } => {
                let remote = &self.route.group;
                let local_first = local.world_rank(0)? < remote.world_rank(0)?;
                let (first, second, rank) = match local_first {
                    true => (local, remote, self.rank),
                    false => (remote, local, remote.size() + self.rank),
                };
                let mut members = first.members();
                members.extend(second.members());
                let route = Route {
                    context: self.coll.context,
                    group: Arc::new(Group::from_members(members)),
                };
                let shape = Shape::Inter((**local).clone(), (**remote).clone(), self.rank);
                (route, rank, shape)
            }
        };
        self.watch_members();
        let agreed = Arc::new(OnceLock::new());
        let posted = self
            .shared
            .with(|e| e.start_agreement(route, rank, tag, Arc::clone(&agreed)))?;
        let pending = PendingComm {
            shared: Arc::clone(&self.shared),
            agreed,
            shape,
        };
        Ok((pending, Request::posted(&self.shared, posted)))
    }

    /// Splits by `color` (processes with the same color form a communicator, ordered by `key`
    /// then by rank); `None` for `color == UNDEFINED`. On an inter-communicator, each group
    /// splits so, and the processes of a color in one group are joined to those of the same
    /// color in the other group (`None` if the other group has no process of that color).
    pub fn split(&self, color: i32, key: i32) -> Result<Option<Communicator>> {
        if color < 0 && color != UNDEFINED {
            return Err(Error::InvalidArgument(format!(
                "split color {color} is negative"
            )));
        }
        if self.is_inter() {
            return self.inter_split(color, key);
        }
        let context = self.agree_on_context()?;
        let mut mine = Vec::with_capacity(8);
        mine.extend_from_slice(&color.to_le_bytes());
        mine.extend_from_slice(&key.to_le_bytes());
        let all = crate::collective::allgather_bytes(self, &mine)?;
        if color == UNDEFINED {
            return Ok(None);
        }
        let mut members: Vec<(i32, i32)> = Vec::new(); // (key, rank)
        for (rank, entry) in all.iter().enumerate() {
            let (c, k) = (read_i32(entry, 0)?, read_i32(entry, 4)?);
            if c == color {
                members.push((k, rank as i32));
            }
        }
        members.sort();
        let world: Vec<u32> = members
            .iter()
            .map(|(_, r)| self.route.group.world_rank(*r))
            .collect::<Result<_>>()?;
        let my_rank = members
            .iter()
            .position(|(_, r)| *r == self.rank)
            .unwrap_or(0) as i32;
        Ok(Some(self.with_context(
            context,
            Group::from_members(world),
            my_rank,
        )))
    }

    /// Splits by where the processes run (see [`SplitType`]), each new communicator ordered by
    /// `key` then by rank; `None` for [`SplitType::Undefined`] (collective: every member calls
    /// it, with any type).
    ///
    /// On an inter-communicator, each group splits by node and the processes of a node in one
    /// group are joined to those of the same node in the other group, as [`Self::split`] joins
    /// colors ([`SplitType::SharedStrict`] splits as [`SplitType::Shared`] there).
    pub fn split_type(&self, kind: SplitType, key: i32) -> Result<Option<Communicator>> {
        if self.is_inter() {
            let color = match kind {
                SplitType::Undefined => UNDEFINED,
                SplitType::Shared | SplitType::SharedStrict => {
                    node_color(&Identity::current().node)
                }
            };
            return self.inter_split(color, key);
        }
        // Each member's entry: whether it wants a communicator, then its node.
        let mut mine = vec![(kind != SplitType::Undefined) as u8];
        if kind != SplitType::Undefined {
            mine.extend_from_slice(Identity::current().node.as_bytes());
        }
        let all = crate::collective::allgather_bytes(self, &mine)?;
        let color = match kind {
            SplitType::Undefined => UNDEFINED,
            SplitType::Shared | SplitType::SharedStrict => {
                let mut same = (0..).zip(&all).filter(|(_, e)| **e == mine).map(|(r, _)| r);
                let first = same.next().unwrap_or(self.rank);
                let count = 1 + same.count() as i32;
                if kind == SplitType::SharedStrict && count == self.size() {
                    UNDEFINED
                } else {
                    first
                }
            }
        };
        self.split(color, key)
    }

    /// A communicator of `group`'s members, in `group`'s order (collective over this
    /// communicator: every member calls it). `group` must be a subgroup of this
    /// communicator's; members may pass different groups if those are disjoint. `None` for a
    /// process that is not in its `group` (for example one that passes an empty group). On an
    /// inter-communicator, every member of each group passes the same subgroup of its own
    /// group, and the new inter-communicator joins the two subgroups (`None` where either is
    /// empty).
    pub fn create(&self, group: &Group) -> Result<Option<Communicator>> {
        if self.is_inter() {
            return self.inter_create(group);
        }
        // Agree first, so that a process whose group is wrong does not leave the others waiting.
        let context = self.agree_on_context()?;
        self.check_subgroup(group)?;
        Ok(self
            .my_rank_in(group)?
            .map(|rank| self.with_context(context, group.clone(), rank)))
    }

    /// A communicator of `group`'s members, in `group`'s order, made by them alone: every
    /// member of `group` calls it with the same group and `tag`; the other processes of this
    /// communicator need not call it (and get `None` if they do). Calls that may run at the
    /// same time on this communicator need different tags; the tag never meets point-to-point
    /// messages.
    pub fn create_group(&self, group: &Group, tag: i32) -> Result<Option<Communicator>> {
        self.require_intra("create_group")?;
        if !(0..=TAG_UB).contains(&tag) {
            return Err(Error::InvalidTag(tag));
        }
        self.check_subgroup(group)?;
        let Some(rank) = self.my_rank_in(group)? else {
            return Ok(None);
        };
        // The members talk on this communicator's third context, addressed by group rank.
        let side = self.with_context(self.route.context + SUBGROUP_OFFSET, group.clone(), rank);
        let mine = Proposal::new(&self.shared)?;
        let largest = side.max_among_members(&[mine.value()], tag)?[0];
        let agreed = mine.settle(largest, |v| side.max_among_members(v, tag))?;
        Ok(Some(self.with_context(agreed, group.clone(), rank)))
    }

    /// A communicator on the same engine with `context`, `group` and this process's `rank`.
    pub(crate) fn with_context(&self, context: u32, group: Group, rank: i32) -> Communicator {
        Communicator::new(Arc::clone(&self.shared), context, group, rank)
    }

    /// This process's rank in `group`, if it is a member.
    fn my_rank_in(&self, group: &Group) -> Result<Option<i32>> {
        Ok(group.comm_rank(self.world_rank(self.rank)?))
    }

    fn check_subgroup(&self, group: &Group) -> Result<()> {
        if group.is_subset_of(&self.route.group) {
            Ok(())
        } else {
            Err(Error::InvalidGroup(format!(
                "a group of {} processes that is not a subgroup of the communicator's {}",
                group.size(),
                self.size()
            )))
        }
    }

    /// Agrees with the other members on a context id unused by all of them.
    fn agree_on_context(&self) -> Result<u32> {
        let mine = Proposal::new(&self.shared)?;
        let largest = self.collective_max(&[mine.value()])?[0];
        mine.settle(largest, |v| self.collective_max(v))
    }

    /// The largest of the members' `values`, element by element, on every member (an
    /// allreduce: every member passes as many values).
    pub(crate) fn collective_max(&self, values: &[u32]) -> Result<Vec<u32>> {
        let mut bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        crate::collective::allreduce(self, &mut bytes, ElementType::U32, ReduceOp::Max)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| u32::from_ne_bytes(b.try_into().expect("4 bytes")))
            .collect())
    }

    /// The largest of the members' `values`, element by element, on every member: a binomial
    /// reduction to rank 0 and a binomial broadcast back, by point-to-point under `tag`
    /// (messages go to lower ranks in the first half and to higher ones in the second, so they
    /// never meet). Every member passes as many values.
    pub(crate) fn max_among_members(&self, values: &[u32], tag: i32) -> Result<Vec<u32>> {
        let (rank, size) = (self.rank, self.size());
        let mut value = values.to_vec();
        let mut theirs = vec![0u32; values.len()];
        let mut mask = 1;
        while mask < size {
            if rank & mask != 0 {
                self.send(&value, rank - mask, tag)?;
                break;
            }
            if rank + mask < size {
                self.recv(&mut theirs, rank + mask, tag)?;
                for (v, t) in value.iter_mut().zip(&theirs) {
                    *v = (*v).max(*t);
                }
            }
            mask <<= 1;
        }
        let mut mask = 1;
        while mask < size {
            if rank & mask != 0 {
                self.recv(&mut value, rank - mask, tag)?;
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if rank + mask < size {
                self.send(&value, rank + mask, tag)?;
            }
            mask >>= 1;
        }
        Ok(value)
    }
}

/// The little-endian i32 at `at` in a member's entry.
fn read_i32(entry: &[u8], at: usize) -> Result<i32> {
    entry
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map(i32::from_le_bytes)
        .ok_or_else(|| Error::Transport("short entry in a communicator agreement".into()))
}

/// A color that every process of a node computes alike, in both groups of an inter-communicator:
/// a hash of the node's name (the same build's `DefaultHasher` gives the same value in every
/// process), made non-negative.
fn node_color(node: &str) -> i32 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    node.hash(&mut h);
    (h.finish() & 0x7fff_ffff) as i32
}
