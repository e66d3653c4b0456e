//! New communicators from existing ones: [`Communicator::dup`] and [`Communicator::split`].
//! The members agree on a context id and exchange colors and keys through collectives, so this
//! sits above [`crate::collective`], which sits above [`crate::comm`].

use crate::comm::Communicator;
use crate::error::{Error, Result};
use crate::group::Group;
use std::sync::Arc;

impl Communicator {
    /// A new communicator with the same group and a new context.
    pub fn dup(&self) -> Result<Communicator> {
        let context = self.agree_on_context()?;
        let group = (*self.route.group).clone();
        Ok(Communicator::new(
            Arc::clone(&self.shared),
            context,
            group,
            self.rank,
        ))
    }

    /// Splits by `color` (processes with the same color form a communicator, ordered by `key`
    /// then by rank); `None` for `color == UNDEFINED`.
    pub fn split(&self, color: i32, key: i32) -> Result<Option<Communicator>> {
        if color < 0 && color != crate::UNDEFINED {
            return Err(Error::InvalidArgument(format!(
                "split color {color} is negative"
            )));
        }
        let context = self.agree_on_context()?;
        let mut mine = Vec::with_capacity(8);
        mine.extend_from_slice(&color.to_le_bytes());
        mine.extend_from_slice(&key.to_le_bytes());
        let all = crate::collective::allgather_bytes(self, &mine)?;
        if color == crate::UNDEFINED {
            return Ok(None);
        }
        let mut members: Vec<(i32, i32)> = Vec::new(); // (key, rank)
        for (rank, entry) in all.iter().enumerate() {
            let c = i32::from_le_bytes(
                entry[0..4]
                    .try_into()
                    .map_err(|_| Error::Transport("bad split entry".into()))?,
            );
            let k = i32::from_le_bytes(
                entry[4..8]
                    .try_into()
                    .map_err(|_| Error::Transport("bad split entry".into()))?,
            );
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
        Ok(Some(Communicator::new(
            Arc::clone(&self.shared),
            context,
            Group::from_members(world),
            my_rank,
        )))
    }

    /// Agrees with the other members on a context id unused by all of them.
    fn agree_on_context(&self) -> Result<u32> {
        let mine = self.shared.with(|e| Ok(e.next_context()))?;
        let all = crate::collective::allgather_bytes(self, &mine.to_le_bytes())?;
        let mut agreed = 0u32;
        for entry in all {
            let v = u32::from_le_bytes(
                entry[..4]
                    .try_into()
                    .map_err(|_| Error::Transport("bad context entry".into()))?,
            );
            agreed = agreed.max(v);
        }
        self.shared.with(|e| e.claim_contexts(agreed + 2))?;
        Ok(agreed)
    }
}
