//! Process groups: ordered sets of distinct world ranks. A communicator's members are a group
//! (a member's communicator rank is its position in the group), and MPI's group calls make new
//! groups from old ones ([`Group::union`], [`Group::incl`], [`Group::range_excl`], ...) locally,
//! without communicating. New communicators are made from groups by
//! [`crate::Communicator::create`] and [`crate::Communicator::create_group`].

use crate::error::{Error, Result};
use crate::{PROC_NULL, UNDEFINED};
use std::collections::{HashMap, HashSet};

/// An ordered set of processes, named by world rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    repr: Repr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Repr {
    /// Every process of the job, rank = world rank (no table, whatever the job's size).
    World { size: u32 },
    /// An explicit list of world ranks, and the position of each.
    Ranks {
        members: Vec<u32>,
        index: HashMap<u32, i32>,
    },
}

/// How two groups relate ([`Group::compare`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// The same members in the same order.
    Ident,
    /// The same members in another order.
    Similar,
    /// Different members.
    Unequal,
}

/// One `(first, last, stride)` triplet of [`Group::range_incl`] and [`Group::range_excl`].
pub type RankRange = [i32; 3];

impl Group {
    /// Every process of a job of `size` processes.
    pub(crate) fn world(size: u32) -> Group {
        Group {
            repr: Repr::World { size },
        }
    }

    /// The group of `members` in this order; the caller guarantees they are distinct.
    pub(crate) fn from_members(members: Vec<u32>) -> Group {
        let index = members
            .iter()
            .enumerate()
            .map(|(i, w)| (*w, i as i32))
            .collect();
        Group {
            repr: Repr::Ranks { members, index },
        }
    }

    /// The group of the world ranks `members`, in this order; each may appear once.
    pub fn new(members: Vec<u32>) -> Result<Group> {
        let mut seen = HashSet::with_capacity(members.len());
        if let Some(dup) = members.iter().find(|w| !seen.insert(**w)) {
            return Err(Error::DuplicateRank(*dup as i32));
        }
        Ok(Group::from_members(members))
    }

    /// The group without members (`MPI_GROUP_EMPTY`).
    pub fn empty() -> Group {
        Group::from_members(Vec::new())
    }

    /// Number of members.
    pub fn size(&self) -> i32 {
        match &self.repr {
            Repr::World { size } => *size as i32,
            Repr::Ranks { members, .. } => members.len() as i32,
        }
    }

    /// True without members.
    pub fn is_empty(&self) -> bool {
        self.size() == 0
    }

    /// The world rank of member `rank`.
    pub fn world_rank(&self, rank: i32) -> Result<u32> {
        let size = self.size();
        if rank < 0 || rank >= size {
            return Err(Error::InvalidRank { rank, size });
        }
        Ok(match &self.repr {
            Repr::World { .. } => rank as u32,
            Repr::Ranks { members, .. } => members[rank as usize],
        })
    }

    /// The rank in this group (in its communicator) of world rank `world`, if it is a member.
    pub fn comm_rank(&self, world: u32) -> Option<i32> {
        match &self.repr {
            Repr::World { size } => (world < *size).then_some(world as i32),
            Repr::Ranks { index, .. } => index.get(&world).copied(),
        }
    }

    /// The world ranks of the members, in rank order.
    pub fn members(&self) -> Vec<u32> {
        match &self.repr {
            Repr::World { size } => (0..*size).collect(),
            Repr::Ranks { members, .. } => members.clone(),
        }
    }

    /// True if `world` is a member.
    pub fn contains(&self, world: u32) -> bool {
        self.comm_rank(world).is_some()
    }

    /// True if every member of this group is a member of `other`.
    pub fn is_subset_of(&self, other: &Group) -> bool {
        self.members().iter().all(|w| other.contains(*w))
    }

    /// The ranks in `other` of this group's members `ranks` (`MPI_Group_translate_ranks`):
    /// [`UNDEFINED`] for a process that is not in `other`, `PROC_NULL` for `PROC_NULL`.
    pub fn translate(&self, ranks: &[i32], other: &Group) -> Result<Vec<i32>> {
        ranks
            .iter()
            .map(|&r| {
                if r == PROC_NULL {
                    return Ok(PROC_NULL);
                }
                let world = self.world_rank(r)?;
                Ok(other.comm_rank(world).unwrap_or(UNDEFINED))
            })
            .collect()
    }

    /// Whether `other` has the same members, in the same order or not.
    pub fn compare(&self, other: &Group) -> Comparison {
        if self.size() != other.size() {
            return Comparison::Unequal;
        }
        let (a, b) = (self.members(), other.members());
        if a == b {
            Comparison::Ident
        } else if a.iter().all(|w| other.contains(*w)) {
            Comparison::Similar
        } else {
            Comparison::Unequal
        }
    }

    /// This group's members, then those of `other` that are not in this one.
    pub fn union(&self, other: &Group) -> Group {
        let mut members = self.members();
        members.extend(other.members().into_iter().filter(|w| !self.contains(*w)));
        Group::from_members(members)
    }

    /// This group's members that are also in `other`, in this group's order.
    pub fn intersection(&self, other: &Group) -> Group {
        self.keep(|w| other.contains(w))
    }

    /// This group's members that are not in `other`, in this group's order.
    pub fn difference(&self, other: &Group) -> Group {
        self.keep(|w| !other.contains(w))
    }

    fn keep(&self, f: impl Fn(u32) -> bool) -> Group {
        Group::from_members(self.members().into_iter().filter(|w| f(*w)).collect())
    }

    /// The members of ranks `ranks`, in that order (`MPI_Group_incl`): each must be a rank of
    /// this group, and appear once.
    pub fn incl(&self, ranks: &[i32]) -> Result<Group> {
        self.check_distinct(ranks)?;
        let members = ranks
            .iter()
            .map(|&r| self.world_rank(r))
            .collect::<Result<_>>()?;
        Ok(Group::from_members(members))
    }

    /// This group without the members of ranks `ranks` (`MPI_Group_excl`), in this group's
    /// order: each must be a rank of this group, and appear once.
    pub fn excl(&self, ranks: &[i32]) -> Result<Group> {
        self.check_distinct(ranks)?;
        let drop: HashSet<i32> = ranks.iter().copied().collect();
        let members = (0..self.size())
            .filter(|r| !drop.contains(r))
            .map(|r| self.world_rank(r))
            .collect::<Result<_>>()?;
        Ok(Group::from_members(members))
    }

    /// The members of the ranks the triplets name, in that order (`MPI_Group_range_incl`).
    pub fn range_incl(&self, ranges: &[RankRange]) -> Result<Group> {
        self.incl(&self.expand(ranges)?)
    }

    /// This group without the members of the ranks the triplets name (`MPI_Group_range_excl`).
    pub fn range_excl(&self, ranges: &[RankRange]) -> Result<Group> {
        self.excl(&self.expand(ranges)?)
    }

    /// The ranks `first, first + stride, ..., first + ⌊(last - first) / stride⌋ · stride` of
    /// each triplet, in order. The stride may be negative (then `first >= last`) but not zero; a
    /// triplet whose stride leads away from `last` names no rank of the group and is refused.
    fn expand(&self, ranges: &[RankRange]) -> Result<Vec<i32>> {
        let mut ranks = Vec::new();
        for (i, &[first, last, stride]) in ranges.iter().enumerate() {
            if stride == 0 {
                return Err(Error::InvalidArgument(format!(
                    "range {i} ({first}, {last}, {stride}) has stride 0"
                )));
            }
            let span = last as i64 - first as i64;
            if span != 0 && (span < 0) != (stride < 0) {
                return Err(Error::InvalidArgument(format!(
                    "range {i} ({first}, {last}, {stride}): the stride leads away from the last rank"
                )));
            }
            // At most one rank more than the group has members: then some rank repeats or lies
            // outside the group, which the caller's check finds (and no triplet makes a huge
            // list).
            let room = self.size() as i64 + 1 - ranks.len() as i64;
            let count = (span / stride as i64 + 1).min(room.max(0));
            ranks.extend((0..count).map(|k| (first as i64 + k * stride as i64) as i32));
        }
        Ok(ranks)
    }

    /// Fails unless each of `ranks` is a rank of this group and appears once.
    fn check_distinct(&self, ranks: &[i32]) -> Result<()> {
        let size = self.size();
        let mut seen = HashSet::with_capacity(ranks.len());
        for &r in ranks {
            if r < 0 || r >= size {
                return Err(Error::InvalidRank { rank: r, size });
            }
            if !seen.insert(r) {
                return Err(Error::DuplicateRank(r));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(m: &[u32]) -> Group {
        Group::new(m.to_vec()).unwrap()
    }

    #[test]
    fn translates_both_ways() {
        let g = g(&[5, 2, 9]);
        assert_eq!(g.size(), 3);
        assert_eq!(g.world_rank(1).unwrap(), 2);
        assert_eq!(g.comm_rank(9), Some(2));
        assert_eq!(g.comm_rank(3), None);
        assert!(g.world_rank(3).is_err());
        assert!(g.world_rank(-1).is_err());
        let w = Group::world(4);
        assert_eq!(w.world_rank(3).unwrap(), 3);
        assert_eq!(w.comm_rank(4), None);
        assert_eq!(
            g.translate(&[0, 1, 2, PROC_NULL], &w).unwrap(),
            vec![UNDEFINED, 2, UNDEFINED, PROC_NULL]
        );
        assert!(g.translate(&[3], &w).is_err());
        assert_eq!(Group::new(vec![1, 1]), Err(Error::DuplicateRank(1)));
    }

    #[test]
    fn set_operations_keep_the_standard_order() {
        let (a, b) = (g(&[3, 1, 4, 0]), g(&[5, 4, 2, 1]));
        assert_eq!(a.union(&b).members(), vec![3, 1, 4, 0, 5, 2]);
        assert_eq!(a.intersection(&b).members(), vec![1, 4]);
        assert_eq!(a.difference(&b).members(), vec![3, 0]);
        assert!(a.difference(&a).is_empty());
        assert_eq!(a.compare(&a.clone()), Comparison::Ident);
        assert_eq!(a.compare(&g(&[0, 1, 3, 4])), Comparison::Similar);
        assert_eq!(a.compare(&b), Comparison::Unequal);
        assert_eq!(Group::world(3).compare(&g(&[0, 1, 2])), Comparison::Ident);
        assert!(g(&[1, 4]).is_subset_of(&a) && !b.is_subset_of(&a));
    }

    #[test]
    fn incl_and_excl_check_their_ranks() {
        let w = Group::world(6);
        assert_eq!(w.incl(&[4, 0, 2]).unwrap().members(), vec![4, 0, 2]);
        assert_eq!(w.excl(&[4, 0, 2]).unwrap().members(), vec![1, 3, 5]);
        assert!(w.incl(&[]).unwrap().is_empty());
        assert_eq!(w.excl(&[]).unwrap(), Group::from_members((0..6).collect()));
        assert_eq!(w.incl(&[1, 1]), Err(Error::DuplicateRank(1)));
        assert!(matches!(
            w.excl(&[6]),
            Err(Error::InvalidRank { rank: 6, .. })
        ));
        assert!(matches!(w.incl(&[-1]), Err(Error::InvalidRank { .. })));
    }

    #[test]
    fn ranges_expand_as_the_standard_says() {
        let w = Group::world(10);
        let r = |t: &[RankRange]| w.range_incl(t).map(|g| g.members());
        assert_eq!(r(&[[0, 9, 3]]).unwrap(), vec![0, 3, 6, 9]);
        assert_eq!(r(&[[0, 8, 3]]).unwrap(), vec![0, 3, 6]);
        assert_eq!(r(&[[9, 0, -4]]).unwrap(), vec![9, 5, 1]);
        assert_eq!(r(&[[2, 2, 1], [7, 5, -1]]).unwrap(), vec![2, 7, 6, 5]);
        // The last rank need not be a member: only the ranks named must be.
        assert_eq!(r(&[[8, 12, 5]]).unwrap(), vec![8]);
        assert!(matches!(r(&[[0, 9, 0]]), Err(Error::InvalidArgument(_))));
        assert!(matches!(r(&[[5, 1, 1]]), Err(Error::InvalidArgument(_))));
        assert!(matches!(r(&[[8, 11, 1]]), Err(Error::InvalidRank { .. })));
        assert_eq!(r(&[[0, 9, 1], [0, 0, 1]]), Err(Error::DuplicateRank(0)));
        assert_eq!(r(&[[0, 4, 2], [2, 2, 1]]), Err(Error::DuplicateRank(2)));
        let big = w.range_incl(&[[0, i32::MAX, 1]]);
        assert!(matches!(big, Err(Error::InvalidRank { .. })));
        assert_eq!(
            w.range_excl(&[[1, 9, 2]]).unwrap().members(),
            vec![0, 2, 4, 6, 8]
        );
    }
}
