//! Node collectives on the caller's bytes, without a plan builder: the short way for a blocking
//! collective whose buffers are plain bytes (a predefined datatype's, contiguous) on a
//! communicator whose members agreed on an area already, at an earlier collective that went
//! through a builder ([`Communicator::direct`]). The steps are the same ([`super::bodies`]);
//! what is saved is the builder and the C layer's writer around it, most of an 8-byte
//! collective's cost.
//!
//! ```no_run
//! # use mpicd::schedule::select::Collective;
//! # let mpi = mpicd::init()?;
//! # let world = mpi.world();
//! let mut value = [0u8; 8];
//! match world.node_collective(Some(Collective::Bcast), 8, 8, Some(0)) {
//!     Some(op) => op.bcast(&mut value, 0)?,
//!     None => { /* the builder's way: world.direct() ... */ }
//! }
//! # Ok::<(), mpicd::Error>(())
//! ```

use super::bodies::{self, Span, Spans};
use super::{way, Node, Op, Way};
use crate::comm::Communicator;
use crate::error::{Error, Result};
use crate::reduction::Reduction;
use crate::schedule::select::{self, Collective};
use std::sync::Arc;

/// This member's turn in a blocking collective through the node's memory
/// ([`Communicator::node_collective`]): one of its methods does the collective.
pub struct NodeCollective(Op);

impl Communicator {
    /// The next blocking collective of this communicator through the node's memory, if its
    /// members agreed on an area, and a collective where a member puts `puts` bytes, in blocks
    /// of `block` bytes that only move (0 for a reduction), takes that path. Only then does
    /// it take the collective's turn (as [`Communicator::direct`] does), so with `None` the
    /// caller goes the builder's way. Every member must decide alike: `puts` and `block` are
    /// sizes the collective's rules make equal on every member. `root`: the collective's root,
    /// if it has one (a member that gave another fails the collective where it is waited for).
    pub fn node_collective(
        &self,
        coll: Option<Collective>,
        puts: usize,
        block: usize,
        root: Option<usize>,
    ) -> Option<NodeCollective> {
        let node = self.node.agreed()?;
        let way = way(node, coll, puts, block)?;
        Some(self.next_node_collective(Arc::clone(node), way, block, root))
    }

    /// The next blocking collective of this communicator, on `node`, the way `way` goes, with
    /// blocks of `block` bytes and root `root` (the same on every member).
    fn next_node_collective(
        &self,
        node: Arc<Node>,
        way: Way,
        block: usize,
        root: Option<usize>,
    ) -> NodeCollective {
        NodeCollective(Op::start(node, self.next_coll_tag(), way, block, root))
    }
}

impl Communicator {
    /// A blocking allreduce (`send`; `None`: in place in `recv`) through the node's memory, if
    /// the members agreed on an area and it takes that path: in one node collective when the
    /// operand fits the area's share, else in pieces of the share, one block of whole elements
    /// of `unit` bytes per member (`unit` 0: the element size is not known, no pieces). Each
    /// member reduces its block of a piece ([`NodeCollective::reduce_own_block`]), then copies
    /// the others' ([`NodeCollective::allgather`]): the pieces stay in the cache, and the
    /// members share the work of reducing them, as a ring or Rabenseifner's algorithm does, but
    /// move them through UCX's messages not at all (2-4 ranks on 2 cores, 256 KiB-4 MiB:
    /// 1.0-1.7x Open MPI; every member reducing every operand 0.9-1.6x, a ring 0.8-1.0x). A
    /// last piece that does not split into whole elements per member is reduced whole by
    /// every member. Every member decides alike: the length, `unit` and the area are the same
    /// on all (a reduction's members pass the same count, datatype and op, as MPI requires, so
    /// they all come here with the same unit, or all go the builder's way), and every piece
    /// takes the way of the first (`way` depends on nothing that differs between them).
    pub fn node_allreduce(
        &self,
        red: &Reduction,
        send: Option<&[u8]>,
        recv: &mut [u8],
        unit: usize,
    ) -> Option<Result<()>> {
        let node = self.node.agreed()?;
        let (len, cap, members) = (recv.len(), node.area.cap(), node.members);
        if len <= cap {
            let op = self.node_collective(Some(Collective::Allreduce), len, 0, None)?;
            return Some(op.allreduce(red, send, recv));
        }
        let whole = unit > 0 && len % unit == 0 && send.map_or(true, |s| s.len() == len);
        let block = cap.checked_div(unit * members).unwrap_or(0) * unit;
        if block == 0 || !whole {
            return None;
        }
        let mut at = 0;
        while at < len {
            let end = (at + block * members).min(len);
            let part = send.map(|s| &s[at..end]);
            let piece = &mut recv[at..end];
            let op = self.node_collective(Some(Collective::Allreduce), piece.len(), 0, None)?;
            let done = match piece.len() % (unit * members) {
                0 => {
                    let (node, way) = (Arc::clone(&op.0.node), op.0.way);
                    op.reduce_own_block(red, part, piece).and_then(|()| {
                        // The next collective, the same way (through the area).
                        self.next_node_collective(node, way, 0, None)
                            .allgather(None, piece)
                    })
                }
                _ => op.allreduce(red, part, piece),
            };
            if let Err(e) = done {
                return Some(Err(e));
            }
            at = end;
        }
        Some(Ok(()))
    }
}

impl Communicator {
    /// A blocking allgather (`mine`; `None`: already in its block of `all`) of equal blocks,
    /// `all` cut into one per member, through the node's memory, if the members agreed on an
    /// area: in one node collective where it takes that path, else (blocks longer than the
    /// area's share that may not be lent, where processes outnumber cores) in pieces of the
    /// share, one node collective a piece, in order: piece k is bytes `k * share..` of every
    /// member's block. The area's two copies beat messages there too (3 ranks on 2 cores,
    /// 256 KiB-2 MiB: 1.7-2.2x Open MPI, by messages 1.4-1.7x; 4 ranks, 256 KiB-1 MiB: 1.1x,
    /// by messages 0.8-1.0x). Every member decides alike: the length and the area are the same
    /// on all.
    pub fn node_allgather(&self, mine: Option<&[u8]>, all: &mut [u8]) -> Option<Result<()>> {
        let node = self.node.agreed()?;
        let members = node.members;
        let len = all.len() / members;
        if let Some(op) = self.node_collective(Some(Collective::Allgather), len, len, None) {
            return Some(op.allgather(mine, all));
        }
        let share = node.area.cap();
        let fits = all.len() % members == 0 && mine.map_or(true, |m| m.len() == len);
        if select::forced(Collective::Allgather) || share == 0 || !fits {
            return None;
        }
        let base = all.as_mut_ptr();
        let mut at = 0;
        while at < len {
            let n = (len - at).min(share);
            // SAFETY: bytes `at..at + n` of each member's block: disjoint parts of the exclusive
            // borrow `all`, held for the collective.
            let blocks: Spans = (0..members)
                .map(|j| unsafe { Span::new(base.add(j * len + at), n) })
                .collect();
            let own = mine.map(|m| lent(&m[at..at + n]));
            let op = self.next_node_collective(Arc::clone(node), Way::Area, n, None);
            if let Err(e) = op.run(|op| bodies::allgather(op, own, &blocks)) {
                return Some(Err(e));
            }
            at += n;
        }
        Some(Ok(()))
    }
}

/// The span of bytes the caller lends.
fn lent(bytes: &[u8]) -> Span {
    // SAFETY: borrowed for the whole collective (the methods below hold the borrow), and only
    // read: a shared borrow aliases no exclusive one.
    unsafe { Span::new(bytes.as_ptr() as *mut u8, bytes.len()) }
}

/// The span of bytes the caller lends to be written.
fn lent_mut(bytes: &mut [u8]) -> Span {
    // SAFETY: exclusively borrowed for the whole collective: no other span shares its bytes.
    unsafe { Span::new(bytes.as_mut_ptr(), bytes.len()) }
}

/// `all` cut into one block per member.
fn blocks(all: &mut [u8], members: usize) -> Result<Spans> {
    if all.len() % members != 0 {
        return Err(Error::InvalidArgument(format!(
            "{} bytes do not split into {members} equal blocks",
            all.len()
        )));
    }
    let len = all.len() / members;
    // SAFETY: the blocks are disjoint parts of an exclusive borrow held for the collective.
    Ok((0..members)
        .map(|j| unsafe { Span::new(all.as_mut_ptr().add(j * len), len) })
        .collect())
}

/// `all` cut into `members` blocks of `len` bytes, to be read.
fn parts(all: &[u8], members: usize, len: usize) -> Result<Spans> {
    if all.len() != len * members {
        return Err(super::mismatch(all.len(), len * members));
    }
    // SAFETY: parts of a shared borrow held for the collective (checked long enough), only
    // read.
    Ok((0..members)
        .map(|j| unsafe { Span::new(all.as_ptr().add(j * len) as *mut u8, len) })
        .collect())
}

impl NodeCollective {
    fn run(self, body: impl FnOnce(&Op) -> Result<()>) -> Result<()> {
        self.0.check().and_then(|()| body(&self.0))
    }

    pub fn barrier(self) -> Result<()> {
        self.run(bodies::barrier)
    }

    /// The root's `buf` into every member's.
    pub fn bcast(self, buf: &mut [u8], root: usize) -> Result<()> {
        self.run(|op| bodies::bcast(op, lent_mut(buf), root))
    }

    /// The reduction of every member's operand (`send`; `None`: in `recv`, in place) into the
    /// root's `recv` (`None` elsewhere), in rank order.
    pub fn reduce(
        self,
        red: &Reduction,
        send: Option<&[u8]>,
        recv: Option<&mut [u8]>,
        root: usize,
    ) -> Result<()> {
        self.run(|op| {
            let acc = recv.filter(|_| op.me() == root).map(lent_mut);
            let operand = send
                .map(lent)
                .or(acc)
                .ok_or_else(|| Error::InvalidArgument("a reduction without an operand".into()))?;
            bodies::reduce(op, red, operand, acc, 0..op.members(), 0)
        })
    }

    /// The reduction of every member's operand (`send`; `None`: in `recv`, in place) into
    /// every member's `recv`, in rank order.
    pub fn allreduce(self, red: &Reduction, send: Option<&[u8]>, recv: &mut [u8]) -> Result<()> {
        self.run(|op| {
            let acc = lent_mut(recv);
            bodies::reduce(
                op,
                red,
                send.map_or(acc, lent),
                Some(acc),
                0..op.members(),
                0,
            )
        })
    }

    /// The reduction of every member's operand (`send`; `None`: in `recv`, in place), block j
    /// of it into block j of member j's `recv` (`recv` cut into one block per member): the
    /// first half of an allreduce whose members each reduce one block of it
    /// ([`Communicator::node_allreduce`]), [`NodeCollective::allgather`] the second.
    fn reduce_own_block(self, red: &Reduction, send: Option<&[u8]>, recv: &mut [u8]) -> Result<()> {
        self.run(|op| {
            let len = blocks(recv, op.members())?[0].len();
            let at = op.me() * len;
            let operand = send.map_or(lent_mut(recv), lent);
            // SAFETY: block `me` of the exclusive borrow `recv`, held for the collective; in
            // place it lies inside the operand, which `reduce` reads whole before it writes.
            let acc = unsafe { Span::new(recv.as_mut_ptr().add(at), len) };
            bodies::reduce(op, red, operand, Some(acc), 0..op.members(), at)
        })
    }

    /// Prefix reduction of the operands (`send`; `None`: in `recv`, in place) into `recv`:
    /// of the members up to this one, or before it (`exclusive`; member 0's `recv` is then
    /// untouched).
    pub fn scan(
        self,
        red: &Reduction,
        send: Option<&[u8]>,
        recv: &mut [u8],
        exclusive: bool,
    ) -> Result<()> {
        self.run(|op| {
            let acc = lent_mut(recv);
            let last = op.me() + usize::from(!exclusive);
            bodies::reduce(op, red, send.map_or(acc, lent), Some(acc), 0..last, 0)
        })
    }

    /// The reduction of every member's `send`, block j of it (as long as `recv`) into member
    /// j's `recv`.
    pub fn reduce_scatter_block(self, red: &Reduction, send: &[u8], recv: &mut [u8]) -> Result<()> {
        self.run(|op| {
            let (members, len) = (op.members(), recv.len());
            if send.len() != len * members {
                return Err(super::mismatch(send.len(), len * members));
            }
            let at = op.me() * len;
            bodies::reduce(op, red, lent(send), Some(lent_mut(recv)), 0..members, at)
        })
    }

    /// Every member's `mine` (`None`: already in its block of `all`) into `all`, in rank
    /// order, on every member.
    pub fn allgather(self, mine: Option<&[u8]>, all: &mut [u8]) -> Result<()> {
        self.run(|op| bodies::allgather(op, mine.map(lent), &blocks(all, op.members())?))
    }

    /// Every member's `mine` into block j of the root's `all` (`None` elsewhere); `mine`
    /// `None` at the root: its block is in `all` already.
    pub fn gather(self, mine: Option<&[u8]>, all: Option<&mut [u8]>, root: usize) -> Result<()> {
        self.run(|op| {
            let blocks = match all.filter(|_| op.me() == root) {
                Some(all) => Some(blocks(all, op.members())?),
                None => None,
            };
            let mine = match (mine, &blocks) {
                (Some(m), _) => lent(m),
                (None, Some(b)) => b[root],
                (None, None) => return Err(no_block()),
            };
            bodies::gather(op, mine, blocks.as_deref(), root)
        })
    }

    /// Block j of the root's `all` (`None` elsewhere) into member j's `mine`; `mine` `None`
    /// at the root: its block stays in `all`.
    pub fn scatter(self, all: Option<&[u8]>, mine: Option<&mut [u8]>, root: usize) -> Result<()> {
        self.run(|op| {
            let members = op.members();
            let blocks = match all.filter(|_| op.me() == root) {
                Some(all) => Some(parts(all, members, all.len() / members)?),
                None => None,
            };
            let mine = match (mine, &blocks) {
                (Some(m), _) => lent_mut(m),
                (None, Some(b)) => b[root],
                (None, None) => return Err(no_block()),
            };
            bodies::scatter(op, blocks.as_deref(), mine, root)
        })
    }

    /// Block j of `send` to member j, block j of `recv` from member j (blocks of one size).
    pub fn alltoall(self, send: &[u8], recv: &mut [u8]) -> Result<()> {
        self.run(|op| {
            if send.len() != recv.len() {
                return Err(super::mismatch(send.len(), recv.len()));
            }
            let members = op.members();
            let inc = blocks(recv, members)?;
            let len = inc[0].len();
            bodies::alltoall(op, &parts(send, members, len)?, &inc, len)
        })
    }
}

fn no_block() -> Error {
    Error::InvalidArgument("a gather or scatter without this member's block".into())
}
