//! Collective schedules: a collective operation written down as a fixed list of [`Step`]s
//! (exchanges of messages with other members, local copies, reductions, and the caller's own
//! local work such as packing a derived type) over the memory it names ([`Buf`]s in temporaries
//! of a run or in the caller's memory). A [`Plan`] is pure data: the engine runs it during
//! progress (`engine::schedule`), one step after the other, so that a non-blocking collective
//! never blocks its initiating call, a blocking one is start-then-wait, and a persistent one
//! runs the same plan at every start. A test runs plans of every member in memory
//! (`sim`), without a network.
//!
//! - [`algorithms`]: the plans of every collective, several algorithms each;
//! - [`collectives`]: one function per collective, which picks the algorithm;
//! - [`few`]: one-round algorithms for few members and short messages;
//! - [`objects`]: the collectives that move objects of custom datatypes;
//! - [`select`]: which algorithm a collective uses, by message and communicator size, in one
//!   table that `MPICD_COLL_*` variables override;
//! - [`inter`]: the collectives of inter-communicators, whose plans name the members of the
//!   remote group as well ([`Builder::inter`], [`Builder::remote`]);
//! - [`neighbor`]: the neighbourhood collectives of a topology's neighbours;
//! - `direct`: a blocking collective's steps done as its algorithm writes them, without a plan;
//! - `node`: blocking collectives through the node's shared memory, when every member runs on
//!   this node;
//! - `number`: a collective's number, given back by a call whose arguments failed before it
//!   began.

pub mod algorithms;
pub mod collectives;
mod direct;
pub mod few;
pub mod inter;
pub mod neighbor;
mod node;
mod number;
pub mod objects;
pub mod scans;
pub mod select;
#[cfg(test)]
mod sim;
mod spare;
#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use crate::plan::{PackState, UnpackState};
use crate::reduction::Order;
pub use crate::reduction::{CombineFn, Reduction};
use crate::route::Route;
use direct::Direct;
pub(crate) use node::NodeCell;
pub use node::{NodeCollective, NodeObjects};
pub(crate) use number::Claim;
use smallvec::SmallVec;
use std::sync::Arc;

/// Work a step does on the run's memory (packing or unpacking a derived type, say).
pub type LocalFn = dyn Fn(&mut Frame) -> Result<()> + Send + Sync;

/// An object of a custom datatype (the caller's buffer of it): a plan sends it, or receives
/// into it, as one custom-typed message, whose receiver learns its shape from the message.
/// Each run makes the operation's state afresh.
pub trait Object: Send + Sync {
    /// The state of a send of the object.
    fn pack(&self) -> Result<Box<dyn PackState>>;
    /// The state of a receive into the object.
    fn unpack(&self) -> Result<Box<dyn UnpackState>>;
}

/// An object a plan names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjId(usize);

/// Bytes of a run's memory: `len` bytes at `offset` of memory `mem`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buf {
    mem: usize,
    offset: usize,
    len: usize,
}

impl Buf {
    pub fn len(self) -> usize {
        self.len
    }

    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// `len` bytes from `offset` of this buffer.
    pub fn part(self, offset: usize, len: usize) -> Buf {
        assert!(offset + len <= self.len, "a part lies within its buffer");
        Buf {
            mem: self.mem,
            offset: self.offset + offset,
            len,
        }
    }

    /// True if the two share a byte.
    fn overlaps(self, other: Buf) -> bool {
        self.mem == other.mem
            && self.offset < other.offset + other.len
            && other.offset < self.offset + self.len
            && self.len > 0
            && other.len > 0
    }
}

/// Memory a plan names.
enum Mem {
    /// A temporary of `len` bytes, made for each run.
    Temp(usize),
    /// The caller's memory, valid while any run of the plan is in flight.
    Raw(RawBytes),
    /// A temporary of `len` bytes of a builder that does its steps as they are written: its
    /// `slot` there ([`direct`]). (A plan made of it anyway gives it a temporary of each run.)
    Slot { slot: usize, len: usize },
}

/// A pointer into the caller's memory.
#[derive(Clone, Copy)]
struct RawBytes(*mut u8);

// SAFETY: the memory belongs to the operation while it runs (the caller of `Builder::raw`
// promises it); the engine behind its lock is the only one touching it then.
unsafe impl Send for RawBytes {}
// SAFETY: as above; a plan is only read while shared.
unsafe impl Sync for RawBytes {}

/// A message of an exchange, with the member (communicator rank) on the other side. On an
/// inter-communicator the members of the remote group come after the local group's
/// ([`Builder::remote`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Xfer {
    Send {
        to: i32,
        buf: Buf,
    },
    /// Receives exactly `buf.len()` bytes.
    Recv {
        from: i32,
        buf: Buf,
    },
    /// Sends an object as one custom-typed message.
    SendObject {
        to: i32,
        obj: ObjId,
    },
    /// Receives a custom-typed message into an object, of whatever shape it has.
    RecvObject {
        from: i32,
        obj: ObjId,
    },
}

/// One step of a plan.
pub enum Step {
    /// Messages started together; the step ends when all have completed.
    Exchange(Vec<Xfer>),
    /// Messages started together; the local steps that follow run while they travel (they
    /// must not touch those messages' bytes), and the next exchange, post or the end of the
    /// plan waits for them.
    Post(Vec<Xfer>),
    Copy {
        from: Buf,
        to: Buf,
    },
    /// `acc = acc op inc` with the plan's reduction.
    Combine {
        acc: Buf,
        inc: Buf,
    },
    Local(Arc<LocalFn>),
    /// An object moved into another of this member's without a message (a collective's own
    /// block): the receiving one resized to the sending one's shape.
    Transfer {
        from: ObjId,
        to: ObjId,
    },
}

impl Step {
    /// A step that moves no message.
    pub(crate) fn is_local(&self) -> bool {
        !matches!(self, Step::Exchange(_) | Step::Post(_))
    }
}

/// A collective operation's schedule: what one member does, on one communicator.
pub struct Plan {
    pub(crate) route: Route,
    /// The tag of every message of the plan (on the communicator's collective context).
    pub(crate) tag: i32,
    /// The collective's number on its communicator, whose low bits are the tag (`None`: a
    /// plan of the runtime's own, an agreement's).
    pub(crate) seq: Option<u32>,
    mems: Vec<Mem>,
    objects: Vec<Arc<dyn Object>>,
    pub(crate) steps: Vec<Step>,
    reduction: Option<Reduction>,
}

impl Plan {
    pub(crate) fn object(&self, id: ObjId) -> &dyn Object {
        &*self.objects[id.0]
    }

    /// The memory of a new run: fresh temporaries, the caller's memory.
    pub(crate) fn frame(self: &Arc<Plan>) -> Frame {
        let temps = self
            .mems
            .iter()
            .map(|m| match m {
                Mem::Temp(len) | Mem::Slot { len, .. } => vec![0u8; *len],
                Mem::Raw(_) => Vec::new(),
            })
            .collect();
        Frame {
            plan: Arc::clone(self),
            temps,
        }
    }

    /// The number of messages this member sends and receives, for tests and traces.
    pub fn messages(&self) -> usize {
        self.steps
            .iter()
            .map(|s| match s {
                Step::Exchange(x) | Step::Post(x) => x.len(),
                _ => 0,
            })
            .sum()
    }
}

/// The memory of one run of a plan.
pub struct Frame {
    plan: Arc<Plan>,
    temps: Vec<Vec<u8>>,
}

impl Frame {
    pub(crate) fn plan(&self) -> &Arc<Plan> {
        &self.plan
    }

    /// The address of `buf`'s first byte.
    pub(crate) fn ptr(&mut self, buf: Buf) -> *mut u8 {
        let base = match &self.plan.mems[buf.mem] {
            Mem::Temp(_) | Mem::Slot { .. } => self.temps[buf.mem].as_mut_ptr(),
            Mem::Raw(raw) => raw.0,
        };
        if buf.len == 0 {
            return base;
        }
        // SAFETY: `buf` lies within its memory (checked when it was made).
        unsafe { base.add(buf.offset) }
    }

    /// The bytes of `buf`, to read or write.
    pub fn bytes_mut(&mut self, buf: Buf) -> &mut [u8] {
        if buf.len == 0 {
            return &mut [];
        }
        let p = self.ptr(buf);
        // SAFETY: a temporary is ours; raw memory is the caller's, lent to the run. No message
        // of the run is in flight while a local step runs.
        unsafe { std::slice::from_raw_parts_mut(p, buf.len) }
    }

    /// Copies `from` into `to` (equal lengths; they may be the same bytes).
    pub fn copy(&mut self, from: Buf, to: Buf) -> Result<()> {
        copy_with(from, to, |b| self.ptr(b))
    }

    /// `acc = acc op inc` with the plan's reduction.
    pub(crate) fn combine(&mut self, acc: Buf, inc: Buf) -> Result<()> {
        let plan = Arc::clone(&self.plan);
        combine_with(plan.reduction.as_ref(), acc, inc, |b| self.ptr(b))
    }

    /// Runs a local step (not an exchange).
    pub(crate) fn run_local(&mut self, step: &Step) -> Result<()> {
        match step {
            Step::Copy { from, to } => self.copy(*from, *to),
            Step::Combine { acc, inc } => self.combine(*acc, *inc),
            Step::Local(f) => f(self),
            Step::Transfer { from, to } => {
                let plan = Arc::clone(&self.plan);
                let mut send = plan.object(*from).pack()?;
                let mut recv = plan.object(*to).unpack()?;
                crate::plan::local::transfer(&mut *send, &mut *recv)
            }
            Step::Exchange(_) | Step::Post(_) => Err(Error::InvalidArgument(
                "an exchange is not a local step".into(),
            )),
        }
    }
}

/// Copies `from` into `to` (equal lengths; they may be the same bytes), `ptr` giving the
/// address of a buffer.
fn copy_with(from: Buf, to: Buf, mut ptr: impl FnMut(Buf) -> *mut u8) -> Result<()> {
    if from.len != to.len {
        return Err(Error::InvalidArgument(format!(
            "schedule copy of {} bytes into {}",
            from.len, to.len
        )));
    }
    if from == to || from.len == 0 {
        return Ok(());
    }
    let (src, dst) = (ptr(from), ptr(to));
    // SAFETY: both lie in the memory of the run (or direct collective); `copy` allows overlap.
    unsafe { std::ptr::copy(src, dst, from.len) };
    Ok(())
}

/// `acc = acc op inc` with `reduction`, `ptr` giving the address of a buffer.
fn combine_with(
    reduction: Option<&Reduction>,
    acc: Buf,
    inc: Buf,
    mut ptr: impl FnMut(Buf) -> *mut u8,
) -> Result<()> {
    let reduction = reduction
        .ok_or_else(|| Error::InvalidArgument("a schedule combines without a reduction".into()))?;
    if acc.overlaps(inc) || acc.len != inc.len {
        return Err(Error::InvalidArgument(
            "schedule reduction operands overlap or differ in size".into(),
        ));
    }
    if acc.len == 0 {
        return Ok(());
    }
    let (a, i) = (ptr(acc), ptr(inc) as *const u8);
    // SAFETY: disjoint ranges of the memory (checked above).
    let (a, i) = unsafe {
        (
            std::slice::from_raw_parts_mut(a, acc.len),
            std::slice::from_raw_parts(i, inc.len),
        )
    };
    (reduction.combine)(a, i)
}

/// Writes a plan, step by step, for member `rank` of `size`.
pub struct Builder {
    rank: i32,
    size: i32,
    route: Route,
    tag: i32,
    seq: Option<u32>,
    /// The number taken from the communicator, given back if the builder is dropped before
    /// the collective began ([`number`]).
    claim: Claim,
    /// Inline for the usual few (a collective run directly allocates none).
    mems: SmallVec<[Mem; 4]>,
    objects: Vec<Arc<dyn Object>>,
    steps: Vec<Step>,
    reduction: Option<Reduction>,
    /// Set when the steps are done as they are written rather than kept ([`direct`]).
    direct: Option<Direct>,
}

impl Builder {
    pub(crate) fn new(route: Route, rank: i32, tag: i32) -> Builder {
        Builder {
            rank,
            size: route.group.size(),
            route,
            tag,
            seq: None,
            claim: Claim::none(),
            mems: SmallVec::new(),
            objects: Vec::new(),
            steps: Vec::new(),
            reduction: None,
            direct: None,
        }
    }

    /// An object the plan sends or receives whole.
    pub fn object(&mut self, obj: Arc<dyn Object>) -> ObjId {
        self.objects.push(obj);
        ObjId(self.objects.len() - 1)
    }

    /// A plan on an inter-communicator: `route`'s group is the `local` members of this
    /// process's group, which [`Builder::rank`] and [`Builder::size`] describe (so that every
    /// algorithm of [`algorithms`] runs among them), followed by the remote group's, which the
    /// plan names with [`Builder::remote`].
    pub(crate) fn inter(route: Route, local: i32, rank: i32, tag: i32) -> Builder {
        let mut b = Builder::new(route, rank, tag);
        b.size = local;
        b
    }

    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// The members (of the local group, on an inter-communicator).
    pub fn size(&self) -> i32 {
        self.size
    }

    /// How the plan names member `r` of an inter-communicator's remote group.
    pub fn remote(&self, r: i32) -> i32 {
        self.size + r
    }

    /// The members of an inter-communicator's remote group (0 on an intra-communicator).
    pub fn remote_size(&self) -> i32 {
        self.route.group.size() - self.size
    }

    /// Sets the reduction that `combine` steps apply.
    pub fn reduce_with(&mut self, reduction: Reduction) {
        self.reduction = Some(reduction);
    }

    pub(crate) fn reduction(&self) -> Option<&Reduction> {
        self.reduction.as_ref()
    }

    /// A temporary of `len` bytes, zeroed at the start of each run (in a builder that does its
    /// steps as they are written, of unspecified contents).
    pub fn temp(&mut self, len: usize) -> Buf {
        let mem = match &mut self.direct {
            Some(d) => Mem::Slot {
                slot: d.add(len),
                len,
            },
            None => Mem::Temp(len),
        };
        self.mems.push(mem);
        Buf {
            mem: self.mems.len() - 1,
            offset: 0,
            len,
        }
    }

    /// The caller's `len` bytes at `ptr`.
    ///
    /// # Safety
    /// While a run of the plan is in flight, the memory must stay valid, and untouched by
    /// anyone else where the plan writes into it.
    pub unsafe fn raw(&mut self, ptr: *mut u8, len: usize) -> Buf {
        self.mems.push(Mem::Raw(RawBytes(ptr)));
        Buf {
            mem: self.mems.len() - 1,
            offset: 0,
            len,
        }
    }

    /// Messages started together (nothing if `xfers` is empty).
    pub fn exchange(&mut self, xfers: Vec<Xfer>) {
        if !xfers.is_empty() && !self.xfers_now(&xfers, true) {
            self.steps.push(Step::Exchange(xfers));
        }
    }

    /// Waits for the messages of the last [`Builder::post`] before the steps written next.
    pub fn wait(&mut self) {
        if let Some(d) = &mut self.direct {
            d.settle();
            return;
        }
        let posted = self
            .steps
            .iter()
            .rev()
            .take_while(|s| !matches!(s, Step::Exchange(_)))
            .any(|s| matches!(s, Step::Post(_)));
        if posted {
            self.steps.push(Step::Exchange(Vec::new()));
        }
    }

    /// Messages started together, which the local steps written next overlap (see
    /// [`Step::Post`]).
    pub fn post(&mut self, xfers: Vec<Xfer>) {
        if !xfers.is_empty() && !self.xfers_now(&xfers, false) {
            self.steps.push(Step::Post(xfers));
        }
    }

    /// [`Builder::exchange`] of borrowed messages (a builder that does its steps as they are
    /// written copies nothing).
    pub fn exchange_all(&mut self, xfers: &[Xfer]) {
        if !xfers.is_empty() && !self.xfers_now(xfers, true) {
            self.exchange(xfers.to_vec());
        }
    }

    /// [`Builder::post`] of borrowed messages.
    pub fn post_all(&mut self, xfers: &[Xfer]) {
        if !xfers.is_empty() && !self.xfers_now(xfers, false) {
            self.post(xfers.to_vec());
        }
    }

    pub fn send(&mut self, to: i32, buf: Buf) {
        let xfer = Xfer::Send { to, buf };
        if !self.xfers_now(&[xfer], true) {
            self.exchange(vec![xfer]);
        }
    }

    pub fn recv(&mut self, from: i32, buf: Buf) {
        let xfer = Xfer::Recv { from, buf };
        if !self.xfers_now(&[xfer], true) {
            self.exchange(vec![xfer]);
        }
    }

    /// Sends `out` to `to` while receiving `into` from `from`.
    pub fn sendrecv(&mut self, out: Buf, to: i32, into: Buf, from: i32) {
        let xfers = [Xfer::Recv { from, buf: into }, Xfer::Send { to, buf: out }];
        if !self.xfers_now(&xfers, true) {
            self.exchange(xfers.to_vec());
        }
    }

    pub fn copy(&mut self, from: Buf, to: Buf) {
        if from != to && from.len > 0 {
            let step = Step::Copy { from, to };
            if !self.local_now(&step) {
                self.steps.push(step);
            }
        }
    }

    /// `acc = acc op inc`.
    pub fn combine(&mut self, acc: Buf, inc: Buf) {
        let step = Step::Combine { acc, inc };
        if !self.local_now(&step) {
            self.steps.push(step);
        }
    }

    /// Merges the partial result `inc` into `acc`; `inc_first` when `inc` covers lower ranks
    /// than `acc` (it then goes first if the op is not commutative; `inc` is overwritten).
    pub fn merge(&mut self, acc: Buf, inc: Buf, inc_first: bool) {
        let ordered = self.reduction.as_ref().map(|r| r.order) == Some(Order::Ranks);
        if ordered && inc_first {
            self.combine(inc, acc);
            self.copy(inc, acc);
        } else {
            self.combine(acc, inc);
        }
    }

    /// Moves object `from` into object `to`, locally (see [`Step::Transfer`]).
    pub fn transfer(&mut self, from: ObjId, to: ObjId) {
        let step = Step::Transfer { from, to };
        if !self.local_now(&step) {
            self.steps.push(step);
        }
    }

    /// The caller's own local work (refused by a builder that does its steps as they are
    /// written: its caller does such work itself, see [`Builder::bytes_now`]).
    pub fn local(&mut self, f: Arc<LocalFn>) {
        let step = Step::Local(f);
        if !self.local_now(&step) {
            self.steps.push(step);
        }
    }

    pub fn finish(mut self) -> Arc<Plan> {
        self.began();
        Arc::new(Plan {
            route: self.route,
            tag: self.tag,
            seq: self.seq,
            mems: self.mems.into_vec(),
            objects: self.objects,
            steps: self.steps,
            reduction: self.reduction,
        })
    }
}

/// A collective's receive must get exactly the bytes it expects.
pub(crate) fn check_size(status: &crate::status::Status, expected: Option<usize>) -> Result<()> {
    match (expected, status.bytes) {
        (None, _) => Ok(()),
        (Some(n), Some(got)) if got == n as u64 => Ok(()),
        (Some(n), got) => Err(Error::InvalidArgument(format!(
            "collective size mismatch: {} bytes arrived where {n} were expected",
            got.map_or("unknown".into(), |g| g.to_string())
        ))),
    }
}
