//! Process groups: which world ranks make up a communicator, and the translation between a
//! communicator rank and a world rank.

use crate::error::{Error, Result};
use std::collections::HashMap;

/// The members of a communicator, in communicator-rank order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Group {
    /// Every process of the job, communicator rank = world rank.
    World { size: u32 },
    /// An explicit list of world ranks.
    Ranks {
        members: Vec<u32>,
        index: HashMap<u32, i32>,
    },
}

impl Group {
    pub(crate) fn from_members(members: Vec<u32>) -> Group {
        let index = members
            .iter()
            .enumerate()
            .map(|(i, w)| (*w, i as i32))
            .collect();
        Group::Ranks { members, index }
    }

    pub(crate) fn size(&self) -> i32 {
        match self {
            Group::World { size } => *size as i32,
            Group::Ranks { members, .. } => members.len() as i32,
        }
    }

    /// The world rank of communicator rank `rank`.
    pub(crate) fn world_rank(&self, rank: i32) -> Result<u32> {
        let size = self.size();
        if rank < 0 || rank >= size {
            return Err(Error::InvalidRank { rank, size });
        }
        Ok(match self {
            Group::World { .. } => rank as u32,
            Group::Ranks { members, .. } => members[rank as usize],
        })
    }

    /// The communicator rank of world rank `world`, if it is a member.
    pub(crate) fn comm_rank(&self, world: u32) -> Option<i32> {
        match self {
            Group::World { size } => (world < *size).then_some(world as i32),
            Group::Ranks { index, .. } => index.get(&world).copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translates_both_ways() {
        let g = Group::from_members(vec![5, 2, 9]);
        assert_eq!(g.size(), 3);
        assert_eq!(g.world_rank(1).unwrap(), 2);
        assert_eq!(g.comm_rank(9), Some(2));
        assert_eq!(g.comm_rank(3), None);
        assert!(g.world_rank(3).is_err());
        assert!(g.world_rank(-1).is_err());
        let w = Group::World { size: 4 };
        assert_eq!(w.world_rank(3).unwrap(), 3);
        assert_eq!(w.comm_rank(4), None);
    }
}
