//! The request table: every operation in flight, in a slot named by an [`OpId`] (index and
//! generation, so that a stale id never reaches a later operation), and what each kind of
//! operation holds ([`Op`]).

use crate::error::Result;
use crate::ops::{RecvOp, SendOp};
use crate::route::Route;
use crate::status::Status;
use crate::transport::{OwnedPort, RecvTarget, UcxRequest};

/// The identity of an operation in the engine's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct OpId {
    index: u32,
    generation: u32,
}

impl OpId {
    /// The value that marks this operation's UCX requests (see
    /// [`crate::transport::notices`]).
    pub(super) fn token(self) -> usize {
        ((self.index as usize) << 32) | self.generation as usize
    }

    pub(super) fn from_token(token: usize) -> OpId {
        OpId {
            index: (token >> 32) as u32,
            generation: token as u32,
        }
    }
}

/// One operation in flight.
pub(crate) enum Op {
    Send {
        req: Option<UcxRequest>,
        peer: u32,
        /// The stream end a derived-typed send packs through (after the request, which uses it).
        port: Option<OwnedPort>,
    },
    Recv {
        // The request first: it is released before the target it writes to.
        req: Option<UcxRequest>,
        target: RecvTarget,
        capacity: usize,
        route: Route,
        peer: Option<u32>,
    },
    CustomSend(Box<SendOp>),
    CustomRecv(Box<RecvOp>),
    /// A collective's plan being run, or a non-blocking context agreement; the run itself is
    /// in the engine's list of runs (see [`super::schedule`]) or of agreements (see
    /// [`super::agree`]), which advances it without moving it in and out of the table.
    Schedule,
    /// An operation that finished during progress, its outcome kept for the test that reports
    /// it (a custom op's state is already freed).
    Finished(Result<Status>),
}

impl Op {
    /// The world rank this operation depends on, if it names one.
    pub(super) fn peer(&self) -> Option<u32> {
        match self {
            Op::Send { peer, .. } => Some(*peer),
            Op::Recv { peer, .. } => *peer,
            Op::CustomSend(op) => Some(op.peer()),
            Op::CustomRecv(op) => op.peer(),
            Op::Schedule | Op::Finished(_) => None,
        }
    }

    pub(super) fn is_receive(&self) -> bool {
        matches!(self, Op::Recv { .. } | Op::CustomRecv(_))
    }
}

struct Slot {
    generation: u32,
    op: Option<Op>,
}

/// The slots, and the free ones.
#[derive(Default)]
pub(super) struct Table {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

impl Table {
    /// Reserves an empty slot: the identity of an operation about to start.
    pub(super) fn vacant(&mut self) -> OpId {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    op: None,
                });
                (self.slots.len() - 1) as u32
            }
        };
        crate::tool::pvar::requests(self.slots.len() - self.free.len());
        OpId {
            index,
            generation: self.slots[index as usize].generation,
        }
    }

    /// Puts a new operation in a new slot.
    pub(super) fn insert(&mut self, op: Op) -> OpId {
        let id = self.vacant();
        self.occupy(id, op);
        id
    }

    /// Puts an operation in the slot reserved for it.
    pub(super) fn occupy(&mut self, id: OpId, op: Op) {
        self.slots[id.index as usize].op = Some(op);
    }

    /// The operation `id`, if it is still in its slot.
    pub(super) fn get_mut(&mut self, id: OpId) -> Option<&mut Op> {
        self.slots
            .get_mut(id.index as usize)
            .filter(|s| s.generation == id.generation)
            .and_then(|s| s.op.as_mut())
    }

    pub(super) fn get(&self, id: OpId) -> Option<&Op> {
        self.slots
            .get(id.index as usize)
            .filter(|s| s.generation == id.generation)
            .and_then(|s| s.op.as_ref())
    }

    /// Takes operation `id` out of its slot (the slot stays reserved); `None` if it is not
    /// there.
    pub(super) fn take(&mut self, id: OpId) -> Option<Op> {
        self.slots
            .get_mut(id.index as usize)
            .filter(|s| s.generation == id.generation)
            .and_then(|s| s.op.take())
    }

    /// Puts operation `id` back into the slot it was taken from.
    pub(super) fn put_back(&mut self, id: OpId, op: Op) {
        self.slots[id.index as usize].op = Some(op);
    }

    /// Frees the slot of `id`: a later operation gets a new generation.
    pub(super) fn retire(&mut self, id: OpId) {
        let slot = &mut self.slots[id.index as usize];
        slot.op = None;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(id.index);
        crate::tool::pvar::requests(self.slots.len() - self.free.len());
    }

    /// The ids of every operation in a slot.
    pub(super) fn ids(&self) -> Vec<OpId> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.op.is_some())
            .map(|(i, s)| OpId {
                index: i as u32,
                generation: s.generation,
            })
            .collect()
    }

    /// Number of operations in slots.
    pub(super) fn occupied(&self) -> usize {
        self.slots.iter().filter(|s| s.op.is_some()).count()
    }

    /// True if a custom-typed operation is in a slot (its transport callbacks run user code).
    pub(super) fn has_custom(&self) -> bool {
        self.slots
            .iter()
            .any(|s| matches!(s.op, Some(Op::CustomSend(_)) | Some(Op::CustomRecv(_))))
    }

    /// Every operation in a slot, with its id.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (OpId, &mut Op)> {
        self.slots.iter_mut().enumerate().filter_map(|(i, s)| {
            let id = OpId {
                index: i as u32,
                generation: s.generation,
            };
            s.op.as_mut().map(|op| (id, op))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_its_operation_and_generation() {
        for (index, generation) in [(0, 0), (1, 0), (0, 1), (7, u32::MAX), (u32::MAX, 3)] {
            let id = OpId { index, generation };
            assert_eq!(OpId::from_token(id.token()), id);
        }
        // A later generation of the same slot is another operation.
        let old = OpId {
            index: 5,
            generation: 1,
        };
        let new = OpId {
            index: 5,
            generation: 2,
        };
        assert_ne!(old.token(), new.token());
    }

    #[test]
    fn a_retired_slot_refuses_its_old_id() {
        let mut table = Table::default();
        let id = table.vacant();
        table.occupy(id, Op::Finished(Ok(Status::empty())));
        assert!(table.get(id).is_some());
        assert_eq!(table.ids(), vec![id]);
        assert!(table.take(id).is_some());
        table.retire(id);
        assert!(table.get(id).is_none());
        assert!(table.take(id).is_none());
        let reused = table.vacant();
        assert_eq!(reused.index, id.index);
        assert_ne!(reused, id);
        assert_eq!(table.occupied(), 0);
    }
}
