//! A blocking collective that goes by messages on a communicator whose members share an area:
//! it still arrives there, saying so, and watches the others' ways.
//!
//! Which way a collective takes depends on its counts ([`super::way`]), which MPI makes equal
//! on every member. Where they differ (an erroneous program), some members may take the node's
//! path and others messages: those wait for messages that never come, these for words in the
//! area that are never written, and nothing would end the wait. So a member that goes by
//! messages notes it beside its arrival word ([`Area::took`], its shape
//! [`BY_MESSAGES`](super::BY_MESSAGES)), and the members on the node's path fail when they see
//! it ([`super::Op::given_up_on`]); and it
//! - sends to a member only once that member has said it goes by messages too ([`Watch::ready`]):
//!   a send to a member that took the node's path would never be received, and could not be
//!   taken back;
//! - stops waiting for messages once any member has said it took the node's path
//!   ([`Watch::broken`]), and takes nothing such a member would have sent
//!   ([`Watch::took_node`]).
//!
//! [`Area::took`]: super::area::Area::took

use super::record::{root_mismatch, Took};
use super::{Node, Op, Way};
use crate::error::{Error, Result};
use crate::schedule::Builder;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The collective going by messages on this member, that its direct builder watches: its
/// node collective, which only arrives ([`Way::Messages`]).
pub(crate) struct Watch(Op);

/// Notes in the area `node` of `b`'s communicator (if its members agreed on one) that `b`'s
/// collective goes by messages (with root `root`, if it has one), and has `b` watch the
/// others' ways. A collective that did part of its work through the area already (its number
/// is its tag's) is not watched.
pub(super) fn by_messages(b: &mut Builder, node: Option<Arc<Node>>, root: Option<usize>) {
    let (Some(node), Some(direct)) = (node, b.direct.as_mut()) else {
        return;
    };
    if node.started(b.tag) {
        return;
    }
    direct.watch(Watch(Op::start(node, b.tag, Way::Messages, 0, root)));
    b.began();
}

impl Watch {
    fn took(&self, k: usize) -> Took {
        let op = &self.0;
        Took::of(op.node.area.took(k, op.n).load(Ordering::Acquire), op.n)
    }

    /// The error, if member `k`'s record of the collective says it did not go by messages
    /// with this member's root; `None` if it went so, or has not started yet.
    fn refusal(&self, k: usize, took: Took) -> Option<Error> {
        match took {
            Took::NotYet => None,
            Took::Started {
                messages: true,
                root,
            } if root == self.0.root => None,
            Took::Started { messages: true, .. } => Some(root_mismatch(k, self.0.n)),
            Took::Started { .. } | Took::Past => Some(self.mismatch(k)),
        }
    }

    /// Whether this member may send member `k` its messages of the collective now (see
    /// [`Watch::ready`]): `None` while `k` has not started it.
    pub(crate) fn started(&self, k: usize) -> Option<Result<()>> {
        match self.took(k) {
            Took::NotYet => None,
            took => Some(self.refusal(k, took).map_or(Ok(()), Err)),
        }
    }

    /// Waits until member `k` has started the collective, as a node collective's waits do
    /// ([`Op::wait_until`]); fails if `k` took the node's path, so that this member does not
    /// send it a message: `k` would never take it; or if `k` gave it another root (it would
    /// not take the message, or not from here). (A member that went past the collective
    /// without this member's message did not go by messages either: in a correct program, it
    /// receives what this member sends it.)
    pub(crate) fn ready(&self, k: usize) -> Result<()> {
        let op = &self.0;
        let word = op.node.area.took(k, op.n);
        let at = op.wait_until(k, word, Took::started_from(op.n), || op.poll())?;
        self.refusal(k, Took::of(at, op.n)).map_or(Ok(()), Err)
    }

    /// The error, if some member took the node's path for the collective, or gave it another
    /// root.
    pub(crate) fn broken(&self) -> Option<Error> {
        (0..self.0.node.members).find_map(|k| match self.took(k) {
            Took::Past => None,
            took => self.refusal(k, took),
        })
    }

    /// Whether member `k` took the node's path for the collective: it sends no message of it.
    pub(crate) fn took_node(&self, k: usize) -> bool {
        matches!(
            self.took(k),
            Took::Started {
                messages: false,
                ..
            }
        )
    }

    fn mismatch(&self, k: usize) -> Error {
        Error::InvalidArgument(format!(
            "collective size mismatch: member {k} took the node's shared memory for collective \
             {}, where this member's counts took messages (the counts differ)",
            self.0.n
        ))
    }
}
