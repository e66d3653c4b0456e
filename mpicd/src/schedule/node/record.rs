//! Each member's record of how it started each of its last [`super::area::WAYS`] node
//! collectives ([`super::area::Area::took`]): the collective's number, its root, and whether it
//! went by messages. Other members read it to tell that a member went another way
//! ([`super::watch`]) or gave the collective another root (an erroneous program, where the two
//! may wait for each other: both fail instead, [`Op::same_root`]).

use super::Op;
use crate::error::{Error, Result};
use std::sync::atomic::Ordering;

/// How a member started collective `n`, as its record ([`super::area::Area::took`]) tells: the
/// collective's number, then its root ([`root_code`], [`ROOT_BITS`] bits), then one bit if it
/// went by messages ([`super::watch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Took {
    /// It has not started it yet.
    NotYet,
    Started {
        messages: bool,
        root: u32,
    },
    /// It is [`super::area::WAYS`] collectives further: its record of this one is gone.
    Past,
}

/// Bits of a root in a member's record of its way ([`Took`]).
const ROOT_BITS: u32 = 20;

/// A collective's root as the members' records of their ways note it: one more than its rank,
/// modulo 2^[`ROOT_BITS`] (0: a collective without a root). Roots that differ by a multiple
/// of 2^20 look alike: an erroneous program on so many ranks may go undetected.
pub(super) fn root_code(root: Option<usize>) -> u32 {
    root.map_or(0, |r| ((r + 1) % (1 << ROOT_BITS)) as u32)
}

impl Took {
    /// The record of collective `n` that this word holds.
    pub(super) fn of(word: u64, n: u64) -> Took {
        match (word >> (ROOT_BITS + 1)).cmp(&n) {
            std::cmp::Ordering::Less => Took::NotYet,
            std::cmp::Ordering::Equal => Took::Started {
                messages: word & 1 == 1,
                root: (word >> 1) as u32 & ((1 << ROOT_BITS) - 1),
            },
            std::cmp::Ordering::Greater => Took::Past,
        }
    }

    /// The word that records collective `n` as started, by messages or not, with root `root`.
    pub(super) fn record(n: u64, messages: bool, root: u32) -> u64 {
        n << (ROOT_BITS + 1) | u64::from(root) << 1 | u64::from(messages)
    }

    /// The least word that records collective `n` as started.
    pub(super) fn started_from(n: u64) -> u64 {
        n << (ROOT_BITS + 1)
    }
}

/// Member `j` gave collective `n` another root than this member did.
pub(super) fn root_mismatch(j: usize, n: u64) -> Error {
    Error::InvalidArgument(format!(
        "collective root mismatch: member {j} gave collective {n} another root than this member"
    ))
}

impl Op {
    /// [`Op::same_root`] for every other member that arrived at this collective.
    pub(super) fn same_roots(&self) -> Result<()> {
        let node = &*self.node;
        (0..node.members)
            .filter(|&j| j != node.me && node.area.arrival(j).load(Ordering::Acquire) >= self.n)
            .try_for_each(|j| self.same_root(j))
    }

    /// Fails if member `j` started this collective with another root (an erroneous program,
    /// where `j` may wait for this member in turn). Its record of the collective must be
    /// written (it arrived); a record gone (it went [`super::area::WAYS`] further) tells nothing.
    pub(super) fn same_root(&self, j: usize) -> Result<()> {
        let word = self.node.area.took(j, self.n).load(Ordering::Acquire);
        match Took::of(word, self.n) {
            Took::Started { root, .. } if root != self.root => Err(root_mismatch(j, self.n)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_tells_its_collective_root_and_way() {
        let word = Took::record(7, true, root_code(Some(3)));
        assert_eq!(Took::of(word, 6), Took::Past);
        assert_eq!(Took::of(word, 8), Took::NotYet);
        assert_eq!(
            Took::of(word, 7),
            Took::Started {
                messages: true,
                root: 4
            }
        );
        assert!(word >= Took::started_from(7) && word < Took::started_from(8));
        let node = Took::record(7, false, root_code(None));
        assert_eq!(
            Took::of(node, 7),
            Took::Started {
                messages: false,
                root: 0
            }
        );
        assert_ne!(root_code(Some(0)), root_code(None));
        assert_ne!(root_code(Some(0)), root_code(Some(1)));
    }
}
