//! Blocking collectives through the node's shared memory, when every member of the
//! communicator runs on this node: each member writes its part once
//! into its slot of the communicator's area ([`area`], agreed on at the first such collective:
//! [`setup`]) and reads the others' parts where they lie. No message, no matching: a two-member
//! barrier or 8-byte allreduce costs about a cache line's trip each way.
//!
//! The protocol. A node collective is numbered as the collective itself is (the communicator's
//! collective count, which every member takes alike, widened to 64 bits), so members that
//! skip a collective (one that failed on some members after it began; a call whose arguments
//! fail before takes no number: [`crate::schedule::number`]) still agree on the next.
//! Collective `n` uses each member's slot `n % SLOTS` ([`area::SLOTS`]).
//! - Every member starts by storing `n` in its arrival word: it is done with every earlier
//!   collective.
//! - A member that puts data in its slot first waits until every other member has arrived
//!   past the last collective that put data in that slot ([`Op::gate`]): none still reads it.
//!   (That collective is [`area::SLOTS`] back, whose arrival was usually seen already: a
//!   broadcast's root or a reduction's non-roots run that far ahead of their readers.)
//! - It then writes the data and stores `n`, with release ordering, as the slot's sequence
//!   number. A member reads another's data of `n` once it has read a sequence number of at
//!   least `n` there, with acquire ordering.
//!
//! Waits spin. Every [`POLL_SPINS`] checks they progress the engine, so that this process's
//! point-to-point messages keep moving (MPI's progress rule), and fail if a member is known
//! dead or the communicator revoked: a dead member fails the collective, never hangs it.
//! Where processes outnumber cores (`MPICD_WAIT` resolved to yield or sleep) they progress
//! every [`SHARED_POLL_SPINS`] checks, giving the core away each time, and under sleep a long
//! wait naps between checks ([`NAP_MIN`]). There each member also notes the processor it runs
//! on beside its arrival word, and a wait for a member that last ran on the waiter's own
//! processor gives the core away at every check: that member cannot be running, and every spin
//! keeps it from the core (3-4 ranks on 2 cores, 8-512 B, barrier and collective together:
//! 1.03-1.45x faster; 6-8 ranks 1.1-1.6x).
//!
//! Reductions combine the members' operands in rank order on every member (an allreduce past
//! the area's share: each block of it on one member, then copied, [`caller`])
//! (`x0 op x1 op ... op x(p-1)`): non-commutative ops are right, and every member gets the same
//! bits. A plan builder's collectives come in through [`entries`], the caller's slices through
//! [`caller`].
//!
//! Only a blocking collective whose data a member puts fits the agreed size (a quarter of it
//! for blocks that only move and could be lent: [`MOVE_SHARE`]) takes this path, or a
//! broadcast, allgather,
//! all-to-all, gather or scatter of longer blocks, which the members then copy straight from
//! each other's buffers where they may ([`Way::SingleCopy`], [`lend`]);
//! the choice depends on what every member knows alike (sizes the standard makes equal on all
//! members), so that all take it or none.

mod area;
mod bodies;
mod caller;
mod cma;
mod entries;
mod lend;
mod objects;
mod record;
mod setup;
mod watch;

use super::select::{self, Collective};
use super::Builder;
use crate::engine::{any_failed, any_revoked, exposed, Shared, WaitPolicy, SLEEP_AFTER};
use crate::error::{Error, Result};
use crate::reduction::Reduction;
use crate::route::Route;
use crate::tag::TAG_UB;
use area::{Area, SLOTS};
pub use caller::NodeCollective;
pub(super) use entries::{
    allgather, allreduce, alltoall, barrier, bcast, gather, reduce, reduce_scatter, scan, scatter,
};
pub use objects::NodeObjects;
use record::{root_code, Took};
pub(crate) use setup::NodeCell;
use smallvec::SmallVec;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
pub(crate) use watch::Watch;

/// Blocks that only move (a broadcast's, a gather's) go through the area up to a quarter of
/// the agreed size where they may be lent instead: above, one copy beats the two through the
/// area (2 ranks: 16-32 KiB broadcasts 0.3-0.5x Open MPI through the area, 1.2x as messages),
/// which [`Way::SingleCopy`] makes without a message. Where they may not (an allgather, a
/// gather or a scatter where processes outnumber cores), the area's two copies still beat
/// messages up to the whole (3-4 ranks on 2 cores, 64-128 KiB blocks: osu_allgather 32-105
/// -> 17-79 us, osu_gather 10-22 -> 6-12). A reduction, which reads every operand anyway,
/// gains up to the whole.
const MOVE_SHARE: usize = 4;

/// Checks of a word between two progress calls where this process has a core of its own.
const POLL_SPINS: u32 = 256;

/// Checks of a word between two progress calls where processes outnumber cores; after each
/// call the wait gives the core away (`sched_yield`), to the member waited for perhaps. (3-4
/// ranks on 2 cores, 8 B allreduce: 1.5-3.3 us, against 4.0-4.5 by messages.)
const SHARED_POLL_SPINS: u32 = 8;

/// Where waits may sleep (`MPICD_WAIT` resolved to sleep), a wait that has lasted
/// [`SLEEP_AFTER`] naps after each progress call, so that a member blocked in a collective
/// leaves the core to the others (nothing signals a write to the area): an eighth of the time
/// waited so far, from [`NAP_MIN`] to [`NAP_MAX`]. A nap and its wake-up cost this VM about
/// 30 us of CPU: 20 us naps kept a member blocked 3 s in a barrier busy 25% of the time.
const NAP_MIN: Duration = Duration::from_micros(20);
const NAP_MAX: Duration = Duration::from_millis(1);

/// A communicator's area and what this member knows of it.
pub(crate) struct Node {
    area: Area,
    /// Which collectives read long blocks in place ([`Way::SingleCopy`]), as the members
    /// agreed.
    single_copy: SingleCopy,
    /// This process's id, which its lent blocks' notes carry.
    pid: u32,
    me: usize,
    members: usize,
    shared: Arc<Shared>,
    /// How waits pass the time (this process's `MPICD_WAIT`, resolved).
    wait: WaitPolicy,
    /// The communicator's collective route (for its failures and revocation).
    route: Route,
    /// The number of the last node collective this member started (0: none).
    last: AtomicU64,
    /// By slot: the last collective that put this member's data there (0: none).
    wrote: [AtomicU64; SLOTS],
    /// The latest arrival seen of each member, so that a gate need not look again.
    seen: Box<[AtomicU64]>,
}

/// How a node collective moves its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// Through the area's slots: every member writes its part once, the others read it there.
    Area,
    /// Blocks that only move, too long for the area's share ([`MOVE_SHARE`]) or, where every
    /// member has a core, over [`SINGLE_COPY_FROM`], where every member may read the others'
    /// memory ([`cma`]): each member lends its buffers, and the others copy their blocks
    /// straight out of them (one copy, as UCX's cma rendezvous, but with no message).
    /// Broadcast, allgather, all-to-all, gather and scatter ([`SingleCopy`]).
    SingleCopy,
    /// Not through the node's memory: the collective goes by messages, and only arrives, so
    /// that the others can tell ([`watch`]).
    Messages,
}

/// Which collectives may take [`Way::SingleCopy`] on a communicator, as its members agreed
/// at its area's setup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SingleCopy {
    /// Some member may not read the others' memory ([`cma::available`]).
    Never,
    /// Processes outnumber cores somewhere: broadcasts, gathers, scatters and all-to-alls,
    /// whose copies are spread over the members: each of a broadcast's or a scatter's readers
    /// reads its own, a gather's givers write theirs into the root's buffer (3-4 ranks on 2
    /// cores, 64 KiB-4 MiB blocks: 1.4-2.8x faster than through the area or by messages, where
    /// the root copies them all; scatters 1.0-1.3x), an all-to-all's members each read blocks
    /// no other member reads, those lent first first (3 ranks, 64-128 KiB: 0.7-0.8x the time
    /// by messages; 4 ranks, 64-128 KiB: 0.8x; 256 KiB: 0.75-0.9x; 1-4 MiB: 4 ranks 1.0x, 3
    /// ranks 1.05-1.35x, which messages would pay too, waiting for their receivers to say they
    /// go by messages as well, [`watch`]). Not
    /// allgathers: their members would all read the same blocks at once, each yielding to the
    /// others while it waits (4 ranks on 2 cores, 64-256 KiB: 1.1-1.35x the time through the
    /// area or by messages).
    SharedCores,
    /// Broadcasts, allgathers, all-to-alls, gathers and scatters: every member has a core of
    /// its own.
    OwnCores,
}

/// The way a collective where a member puts `puts` bytes, in blocks of `block` bytes that
/// only move (0: a reduction), takes through `node`, if any: it fits the area, or its blocks
/// can be read in place; and no algorithm is forced for it.
fn way(node: &Node, coll: Option<Collective>, puts: usize, block: usize) -> Option<Way> {
    if coll.is_some_and(select::forced) {
        return None;
    }
    let cap = node.area.cap();
    let lends = block > 0
        && lend::NOTE_WORD * (node.members + 2) <= cap
        && match (coll, node.single_copy) {
            (_, SingleCopy::Never) => false,
            (Some(Collective::Alltoall | Collective::Bcast | Collective::Gather), _) => true,
            (Some(Collective::Allgather), SingleCopy::OwnCores) => true,
            _ => false,
        };
    // Long blocks that only move take the area only where they cannot be lent.
    let area = puts <= cap && (block <= cap / MOVE_SHARE || !lends);
    // Where every member has a core, a read in place beats the area's two copies from
    // SINGLE_COPY_FROM already.
    let sooner = node.single_copy == SingleCopy::OwnCores && block > SINGLE_COPY_FROM;
    match (area, lends) {
        (_, true) if sooner || !area => Some(Way::SingleCopy),
        (true, _) => Some(Way::Area),
        _ => None,
    }
}

/// Blocks that only move go in place from this length (exclusive) where every member has a
/// core of its own ([`SingleCopy::OwnCores`]), even if they fit the area's share: 2 ranks, 8 KiB
/// bcast 1.88 -> 1.31 us, all-to-all 2.44 -> 1.85, allgather 1.91 -> 1.80 (Open MPI 1.6, 2.3,
/// 1.9); at 4 KiB the two ways take the same time. Where processes outnumber cores the area
/// stays faster up to its share (3 ranks, 8 KiB bcast: 3.9 us against 5.0).
const SINGLE_COPY_FROM: usize = 4 << 10;

/// Notes in the area the processor this process runs on now ([`Area::cpu`]), and returns
/// what it noted: the processor's number plus one, 0 if unknown (`sched_getcpu` failed; the
/// area's first contents, so that a member that never noted one shares no processor).
fn note_cpu(node: &Node) -> u64 {
    // SAFETY: no arguments; reads the running processor (through rseq or the vDSO).
    let cpu = match unsafe { libc::sched_getcpu() } {
        c if c >= 0 => c as u64 + 1,
        _ => return 0,
    };
    let word = node.area.cpu(node.me);
    if word.load(Ordering::Relaxed) != cpu {
        word.store(cpu, Ordering::Relaxed);
    }
    cpu
}

/// The shape a collective that goes by messages notes ([`Way::Messages`]): no other way's.
const BY_MESSAGES: u64 = u64::MAX;

impl Node {
    /// The number of the collective whose messages have tag `tag` (or would have): the tag
    /// counts collectives modulo `TAG_UB + 1`, so the number is the first one past the last
    /// this member started that it counts to.
    fn number(&self, tag: i32) -> u64 {
        let period = TAG_UB as u64 + 1;
        let last = self.last.load(Ordering::Relaxed);
        let n = last + (tag as u64 + period - last % period) % period;
        if n == last {
            n + period
        } else {
            n
        }
    }

    /// Whether this member started the collective of tag `tag` already (a part of it).
    fn started(&self, tag: i32) -> bool {
        let last = self.last.load(Ordering::Relaxed);
        last != 0 && last % (TAG_UB as u64 + 1) == tag as u64
    }

    /// Starts the collective of tag `tag` on this member, with shape `shape` ([`Area::shape`];
    /// [`BY_MESSAGES`]: it goes by messages) and root `root`: notes its shape, way and root,
    /// then arrives. Its number.
    fn arrive(&self, tag: i32, shape: u64, root: Option<usize>) -> u64 {
        let n = self.number(tag);
        self.last.store(n, Ordering::Relaxed);
        let area = &self.area;
        area.shape(self.me).store(shape, Ordering::Release);
        let took = Took::record(n, shape == BY_MESSAGES, root_code(root));
        area.took(self.me, n).store(took, Ordering::Release);
        area.arrival(self.me).store(n, Ordering::Release);
        if self.wait != WaitPolicy::Spin {
            note_cpu(self);
        }
        n
    }
}

/// Node collective number `n` on this member.
struct Op {
    node: Arc<Node>,
    n: u64,
    /// The tag the collective's messages would have (its objects' messages have it:
    /// [`objects`]).
    tag: i32,
    /// This collective's slot of each member.
    slot: usize,
    way: Way,
    /// Its way and block length, as the other members see them ([`Area::shape`]).
    shape: u64,
    /// Its root, as its record of its way notes it ([`root_code`]).
    root: u32,
}

impl Op {
    /// The next node collective of `b`'s communicator, if it takes this path ([`way`]).
    /// (`root`: the collective's root, if it has one.)
    fn begin(
        b: &mut Builder,
        coll: Option<Collective>,
        (puts, block): (usize, usize),
        root: Option<usize>,
    ) -> Option<Op> {
        if coll.is_some_and(select::forced) {
            let node = b.direct.as_ref()?.node_cell().agreed().cloned();
            watch::by_messages(b, node, root);
            return None;
        }
        let node = setup::node(b)?;
        match way(&node, coll, puts, block) {
            Some(way) => Some(Op::start(node, b.tag, way, block, root)),
            None => {
                watch::by_messages(b, Some(node), root);
                None
            }
        }
    }

    /// Starts the collective whose messages would have tag `tag` on `node`'s communicator, the
    /// way `way` goes, with blocks of `block` bytes (0: none that only move) and root `root`
    /// (if it has one).
    fn start(node: Arc<Node>, tag: i32, way: Way, block: usize, root: Option<usize>) -> Op {
        let shape = match way {
            Way::Messages => BY_MESSAGES,
            _ => (block as u64) << 1 | u64::from(way == Way::SingleCopy),
        };
        let n = node.arrive(tag, shape, root);
        Op {
            node,
            n,
            tag,
            slot: (n % SLOTS as u64) as usize,
            way,
            shape,
            root: root_code(root),
        }
    }

    /// Fails if a member is known dead or the communicator revoked (as an exchange's start
    /// does; the engine's lock is taken only if any ever was).
    fn check(&self) -> Result<()> {
        if !any_failed() && !any_revoked() {
            return Ok(());
        }
        let route = &self.node.route;
        self.node
            .shared
            .with(|e| e.barred(route).map_or(Ok(()), Err))
    }

    /// Progresses the engine once; fails as [`Op::check`] does.
    fn poll(&self) -> Result<()> {
        let route = &self.node.route;
        self.node.shared.with(|e| {
            e.progress();
            e.barred(route).map_or(Ok(()), Err)
        })
    }

    /// Waits until `word` (of member `j`: its arrival or a sequence number) holds `n` or
    /// more; notes what member `j` reached. Fails if any member is known dead.
    fn wait_word(&self, j: usize, word: &AtomicU64, n: u64) -> Result<()> {
        self.wait_word_with(j, word, n, || self.poll())
    }

    /// [`Op::wait_word`], progressing (and failing) through `poll`.
    fn wait_word_with(
        &self,
        j: usize,
        word: &AtomicU64,
        n: u64,
        poll: impl Fn() -> Result<()>,
    ) -> Result<()> {
        let reached = self.wait_until(j, word, n, poll)?;
        self.node.seen[j].fetch_max(reached, Ordering::Relaxed);
        Ok(())
    }

    /// Waits until member `j`'s `word` holds `n` or more; the value it then holds. Every so
    /// many checks it calls `poll` (which progresses the engine, and fails the wait if it
    /// fails). Where processes outnumber cores, a wait for a member that last ran on this
    /// member's processor gives the core away at once: that member cannot be running now,
    /// and spinning only keeps it from the core.
    fn wait_until(
        &self,
        j: usize,
        word: &AtomicU64,
        n: u64,
        poll: impl Fn() -> Result<()>,
    ) -> Result<u64> {
        let shared = self.node.wait != WaitPolicy::Spin;
        let every = if shared {
            SHARED_POLL_SPINS
        } else {
            POLL_SPINS
        };
        let mut here = if shared { note_cpu(&self.node) } else { 0 };
        let mut spins = 0u32;
        let mut since = None;
        loop {
            let s = word.load(Ordering::Acquire);
            if s >= n {
                return Ok(s);
            }
            std::hint::spin_loop();
            spins += 1;
            if spins % every == 0 {
                poll()?;
                if let Some(s) = self.given_up_on(j, word, n)? {
                    return Ok(s);
                }
                self.pause(&mut since);
                if shared {
                    here = note_cpu(&self.node);
                }
            } else if here != 0 && self.node.area.cpu(j).load(Ordering::Relaxed) == here {
                std::thread::yield_now();
                here = note_cpu(&self.node);
            }
        }
    }

    /// Whether a wait for member `j`'s `word` to reach `n` can end otherwise: `j` has gone on
    /// past this collective (it writes nothing more for it: the word as it was left, or an
    /// error if it was left short), or `j` started this collective with another shape (its
    /// counts differ from this member's, an erroneous program: an error, where `j` may wait
    /// for this member in turn). `None`: keep waiting.
    fn given_up_on(&self, j: usize, word: &AtomicU64, n: u64) -> Result<Option<u64>> {
        let area = &self.node.area;
        let at = area.arrival(j).load(Ordering::Acquire);
        if at >= self.n {
            self.same_root(j)?;
        }
        if at > self.n {
            // What `j` wrote for this collective came before its later arrival.
            let s = word.load(Ordering::Acquire);
            return match s >= n {
                true => Ok(Some(s)),
                false => Err(Error::InvalidArgument(format!(
                    "member {j} left collective {} without what this member waits for \
                     (its arguments differ)",
                    self.n
                ))),
            };
        }
        if at == self.n && area.shape(j).load(Ordering::Acquire) != self.shape {
            // Another shape: this collective's, or the next one's if `j` went on just now,
            // after writing what it wrote for this one (its shape is stored after that).
            let s = word.load(Ordering::Acquire);
            if s >= n {
                return Ok(Some(s));
            }
            return Err(Error::InvalidArgument(format!(
                "collective size mismatch: member {j} gave this collective other counts"
            )));
        }
        Ok(None)
    }

    /// What a wait does after each progress call, by this process's wait policy (`since`: when
    /// the wait began, set at the first pause that needs it).
    fn pause(&self, since: &mut Option<Instant>) {
        match self.node.wait {
            WaitPolicy::Spin => {}
            // A progress call gives the core away only after many idle ones in a row; a
            // member waited for here is one that does not run.
            WaitPolicy::Yield => std::thread::yield_now(),
            WaitPolicy::Sleep => {
                std::thread::yield_now();
                let waited = since.get_or_insert_with(Instant::now).elapsed();
                // Not while one-sided operations may wait on this process (`exposed`).
                if waited >= SLEEP_AFTER && !exposed() {
                    std::thread::sleep((waited / 8).clamp(NAP_MIN, NAP_MAX));
                }
            }
        }
    }

    /// Waits until every other member has arrived past the last collective that put this
    /// member's data in this collective's slot, so that this member may write it.
    fn gate(&self) -> Result<()> {
        let node = &*self.node;
        // 0: this member never wrote the slot.
        let wrote = node.wrote[self.slot].swap(self.n, Ordering::Relaxed);
        for j in (0..node.members).filter(|&j| j != node.me && wrote > 0) {
            if node.seen[j].load(Ordering::Relaxed) <= wrote {
                self.wait_word(j, node.area.arrival(j), wrote + 1)?;
            }
        }
        Ok(())
    }

    /// Waits for member `j`'s data of this collective, which must be `whole` bytes (what this
    /// member's arguments say `j` puts): a member whose counts differ fails the collective on
    /// every member that reads it, as a message of the wrong size does.
    fn wait(&self, j: usize, whole: usize) -> Result<()> {
        let seq = self.node.area.seq(j, self.slot);
        self.wait_word(j, seq, self.n)?;
        let put = self.node.area.length(j, self.slot).load(Ordering::Relaxed);
        match put == whole as u64 {
            true => Ok(()),
            false => Err(mismatch(put as usize, whole)),
        }
    }

    /// Calls `f` for every member but `skip`, those that have published their data of this
    /// collective first, each member starting after itself: where processes outnumber cores,
    /// a member that has not published yet (it has no core now, perhaps) holds up nothing
    /// that could be done meanwhile.
    fn each_published(&self, skip: usize, mut f: impl FnMut(usize) -> Result<()>) -> Result<()> {
        let (me, n) = (self.node.me, self.node.members);
        let mut left: SmallVec<[usize; 8]> = (1..=n)
            .map(|d| (me + d) % n)
            .filter(|&j| j != skip)
            .collect();
        while !left.is_empty() {
            let published =
                |&j: &usize| self.node.area.seq(j, self.slot).load(Ordering::Acquire) >= self.n;
            let next = left.iter().position(published).unwrap_or(0);
            f(left.remove(next))?;
        }
        Ok(())
    }

    /// Waits until every other member has arrived at this collective.
    fn wait_all_arrived(&self) -> Result<()> {
        let node = &*self.node;
        (0..node.members)
            .filter(|&j| j != node.me)
            .try_for_each(|j| self.wait_word(j, node.area.arrival(j), self.n))
    }

    /// Puts `src` at `at` of this member's slot (after [`Op::gate`]); more than the slot holds
    /// (this member's counts differ from the others') is a size mismatch.
    fn put(&self, at: usize, src: &[u8]) -> Result<()> {
        let node = &*self.node;
        if at + src.len() > node.area.cap() {
            return Err(mismatch(at + src.len(), node.area.cap()));
        }
        // SAFETY: the gate passed: no member reads this slot until it is published again.
        unsafe { node.area.put(node.me, self.slot, at, src) };
        Ok(())
    }

    /// Publishes the `len` bytes this member put.
    fn publish(&self, len: usize) {
        let node = &*self.node;
        let area = &node.area;
        area.length(node.me, self.slot)
            .store(len as u64, Ordering::Relaxed);
        area.seq(node.me, self.slot)
            .store(self.n, Ordering::Release);
    }

    /// Puts `src` and publishes it (after [`Op::gate`]).
    fn put_all(&self, src: &[u8]) -> Result<()> {
        let put = self.put(0, src);
        // Published even if it did not fit: the readers then fail on the size.
        self.publish(if put.is_ok() { src.len() } else { 0 });
        put
    }

    /// Member `j`'s data `at..at + len` of this collective (after [`Op::wait`] for `j`).
    fn get(&self, j: usize, at: usize, len: usize) -> &[u8] {
        // SAFETY: `j` published this collective's data (waited for); it writes the slot again
        // only once this member has arrived at a later collective, after its last use of the
        // slice (the slice borrows `self`, which ends with this collective).
        unsafe { self.node.area.get(j, self.slot, at, len) }
    }

    /// `acc` = the reduction of members `from`'s data at `at` (as long as `acc`), in rank
    /// order, each waited for (each put `whole` bytes).
    fn fold(
        &self,
        red: &Reduction,
        acc: &mut [u8],
        from: Range<usize>,
        at: usize,
        whole: usize,
    ) -> Result<()> {
        if at + acc.len() > whole {
            return Err(mismatch(whole, at + acc.len()));
        }
        for j in from.clone() {
            if j != self.me() {
                self.wait(j, whole)?;
            }
            let x = self.get(j, at, acc.len());
            match j == from.start {
                true => acc.copy_from_slice(x),
                false => (red.combine)(acc, x)?,
            }
        }
        Ok(())
    }

    fn me(&self) -> usize {
        self.node.me
    }

    fn members(&self) -> usize {
        self.node.members
    }
}

/// A member's data is not the size this member's arguments say: the error every side gets.
fn mismatch(put: usize, expected: usize) -> Error {
    Error::InvalidArgument(format!(
        "collective size mismatch: {put} bytes arrived where {expected} were expected"
    ))
}
