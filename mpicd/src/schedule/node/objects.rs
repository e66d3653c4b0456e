//! Blocking collectives over objects of custom datatypes (broadcast, gather, scatter,
//! allgather, all-to-all) through the node's memory: a member writes each object it gives
//! (shape, packed part and regions) into its slot of the area, and the members it is for read
//! it there, sizing their receiving object from the shape as a message would make them: no
//! message, no plan, no matching.
//!
//! Objects differ in size from member to member, so no member can tell in advance whether all
//! will fit: each decides for its own. One whose objects do not fit its slot publishes
//! [`BY_MESSAGE`] and sends each as a custom-typed message with the collective's tag; its
//! readers, seeing that, receive it so. One that cannot pack its objects publishes [`FAILED`],
//! and its readers fail, as they would on a failed message. A gather's giver of a long object
//! puts only its shape and packed part, and writes the regions straight into the root's
//! object once the root has sized it ([`PUSHED`], [`push`]).
//!
//! A slot's layout, in native 64-bit words (writer and readers share the node): the number of
//! records, the end of each (from the slot's start), then the records. A record: the packed
//! part's bytes, the number of region runs, each run's region bytes, region count and element
//! code, then the packed part and the regions' bytes (each part padded to a word).

mod push;

use super::{setup, way, Op, Way};
use crate::comm::Communicator;
use crate::datatype::ElementType;
use crate::engine::any_failed;
use crate::engine::Posted;
use crate::error::{Error, Result};
use crate::plan::{local, PackState};
use crate::request::Request;
use crate::schedule::select::{self, Collective};
use crate::schedule::Object;
use crate::wire::{RegionShape, Shape};
use smallvec::SmallVec;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Published length: this member's objects travel as messages.
const BY_MESSAGE: u64 = 0;
/// Published length: this member could not pack its objects.
const FAILED: u64 = u64::MAX;
/// A flag of the published length: the record holds the object's shape and packed part only,
/// and its giver writes the regions into the reader's object ([`push`]).
const PUSHED: u64 = 1 << 62;
const WORD: usize = 8;

/// This member's turn in a blocking collective of objects through the node's memory
/// ([`Communicator::node_objects`]): one of its methods does the collective. `None` for this
/// member's own object means "in place".
pub struct NodeObjects(Op);

impl Communicator {
    /// The next blocking collective of objects of this communicator through the node's
    /// memory, if its members agree on an area and no algorithm is forced for `coll`. Only
    /// then does it take the collective's turn, so with `None` the caller writes a plan.
    /// Every member of the collective must call it alike (all of a collective's objects are
    /// of custom types, or none), with the same `root` (if it has one).
    pub fn node_objects(&self, coll: Collective, root: Option<usize>) -> Option<NodeObjects> {
        if select::forced(coll) || self.is_inter() {
            return None;
        }
        if !self.node.settled() {
            // The members have not decided yet (no collective of bytes came first): they
            // agree now, in a turn of its own.
            let mut b = self.direct();
            let _ = setup::node(&mut b);
            b.complete().ok()?;
        }
        let node = self.node.agreed()?;
        // Objects always go through the area, or each member's by message: a reduction's way
        // (no blocks that only move) never lends.
        (way(node, Some(coll), 0, 0)? == Way::Area).then_some(())?;
        Some(NodeObjects(Op::start(
            Arc::clone(node),
            self.next_coll_tag(),
            Way::Area,
            0,
            root,
        )))
    }
}

impl NodeObjects {
    /// Runs `body`. A member known dead does not stop the others from giving and reading
    /// theirs: a live member whose objects went by message waits for its readers, so each
    /// reader reads every live member's before it fails with the dead one's
    /// ([`Op::take`], [`Op::gate_live`]).
    fn run(self, body: impl FnOnce(&Op) -> Result<()>) -> Result<()> {
        body(&self.0)
    }

    /// The root's `obj` into every member's `obj`.
    pub fn bcast(self, obj: &dyn Object, root: usize) -> Result<()> {
        self.run(|op| match op.me() == root {
            true => op.put_objects(&[Some(obj)], |_| others(op)).wait(),
            false => op.take(root, 0, obj),
        })
    }

    /// Every member's `mine` into `all[j]` at the root (`None` elsewhere; required there).
    pub fn gather(
        self,
        mine: Option<&dyn Object>,
        all: Option<&[&dyn Object]>,
        root: usize,
    ) -> Result<()> {
        self.run(|op| {
            if op.me() != root {
                return op.give(mine.ok_or_else(no_object)?, root);
            }
            // Only the givers that push their regions wait for the root: a root whose
            // arguments fail tells them so.
            let valid = all
                .ok_or_else(no_objects)
                .and_then(|all| check_len(all, op.members()).map(|()| all));
            let all = valid.inspect_err(|_| op.refuse())?;
            op.gather_root(mine, all, root)
        })
    }

    /// The root's `all[j]` (`None` elsewhere; required there) into member j's `mine`.
    pub fn scatter(
        self,
        all: Option<&[&dyn Object]>,
        mine: Option<&dyn Object>,
        root: usize,
    ) -> Result<()> {
        self.run(|op| {
            if op.me() != root {
                return op.take(root, op.me(), mine.ok_or_else(no_object)?);
            }
            // The members wait for the root: it tells them when its arguments fail.
            let valid = all
                .ok_or_else(no_objects)
                .and_then(|all| check_len(all, op.members()).map(|()| all));
            let all = valid.inspect_err(|_| op.refuse())?;
            let records: SmallVec<[_; 8]> = (0..all.len())
                .map(|j| (j != root).then_some(all[j]))
                .collect();
            let put = op.put_objects(&records, |j| smallvec::smallvec![j]);
            let own = mine.map_or(Ok(()), |m| transfer(all[root], m));
            put.wait().and(own)
        })
    }

    /// Every member's `mine` (`None`: in `all` already) into `all[j]` on every member.
    pub fn allgather(self, mine: Option<&dyn Object>, all: &[&dyn Object]) -> Result<()> {
        self.run(|op| {
            check_len(all, op.members())?;
            let me = op.me();
            let own = mine.unwrap_or(all[me]);
            let put = op.put_objects(&[Some(own)], |_| others(op));
            let mut outcome = mine.map_or(Ok(()), |m| transfer(m, all[me]));
            for j in (0..op.members()).filter(|&j| j != me) {
                outcome = outcome.and(op.take(j, 0, all[j]));
            }
            put.wait().and(outcome)
        })
    }

    /// `send[j]` to member j, `recv[j]` from member j.
    pub fn alltoall(self, send: &[&dyn Object], recv: &[&dyn Object]) -> Result<()> {
        self.run(|op| {
            let (members, me) = (op.members(), op.me());
            check_len(send, members)?;
            check_len(recv, members)?;
            let records: SmallVec<[_; 8]> =
                (0..members).map(|j| (j != me).then_some(send[j])).collect();
            let put = op.put_objects(&records, |j| smallvec::smallvec![j]);
            let mut outcome = transfer(send[me], recv[me]);
            for j in (0..members).filter(|&j| j != me) {
                outcome = outcome.and(op.take(j, me, recv[j]));
            }
            put.wait().and(outcome)
        })
    }
}

/// The members a record goes to by message.
type Dests = SmallVec<[usize; 8]>;

fn others(op: &Op) -> Dests {
    (0..op.members()).filter(|&j| j != op.me()).collect()
}

fn no_object() -> Error {
    Error::InvalidArgument("a collective of objects without this member's object".into())
}

fn no_objects() -> Error {
    Error::InvalidArgument("the root of a gather or scatter of objects needs one per member".into())
}

fn check_len(objs: &[&dyn Object], members: usize) -> Result<()> {
    match objs.len() == members {
        true => Ok(()),
        false => Err(Error::InvalidArgument(format!(
            "{} objects for a collective of {members} members",
            objs.len()
        ))),
    }
}

/// `from`'s value into `to`, within this process.
fn transfer(from: &dyn Object, to: &dyn Object) -> Result<()> {
    local::transfer(&mut *from.pack()?, &mut *to.unpack()?)
}

fn pad(n: usize) -> usize {
    n.div_ceil(WORD) * WORD
}

fn put_word(out: &mut [u8], at: usize, v: u64) {
    out[at..at + WORD].copy_from_slice(&v.to_ne_bytes());
}

fn word(src: &[u8], at: usize) -> Result<u64> {
    src.get(at..at + WORD)
        .map(|w| u64::from_ne_bytes(w.try_into().expect("a word is 8 bytes")))
        .ok_or_else(corrupt)
}

fn corrupt() -> Error {
    Error::InvalidArgument("a node collective's object record is malformed".into())
}

/// What putting a member's objects left to wait for: the sends of the records that went by
/// message (waited for after this member's own reads, so that two members sending each other
/// long objects each receive the other's), or the failure of the put.
#[must_use]
struct Put(Result<Vec<Result<Request<'static>>>>);

impl Put {
    /// Waits for every send; the first failure, if any.
    fn wait(self) -> Result<()> {
        // Every send waited for (none left in flight), the first failure reported.
        let mut outcome = Ok(());
        for send in self.0? {
            outcome = outcome.and(send.and_then(|r| r.wait().map(drop)));
        }
        outcome
    }
}

/// A record about to be written: its state and the shape it has.
struct Packing {
    state: Box<dyn PackState>,
    shape: Shape,
    regions: Vec<crate::plan::RawRegion>,
}

impl Packing {
    fn new(obj: &dyn Object) -> Result<Packing> {
        let mut state = obj.pack()?;
        let packed = state.packed_size()?;
        let regions = state.regions()?;
        let shape = local::shape_of(packed, &regions);
        Ok(Packing {
            state,
            shape,
            regions,
        })
    }

    /// Bytes of its record.
    fn len(&self) -> usize {
        self.head_len() + pad(self.shape.region_bytes() as usize)
    }

    /// Bytes of its record's shape and packed part (all of a pushed record: [`push`]).
    fn head_len(&self) -> usize {
        WORD * (2 + 3 * self.shape.runs().len()) + pad(self.shape.packed_bytes as usize)
    }

    /// Writes the record into `out` (as long as [`Packing::len`]).
    fn write(mut self, out: &mut [u8]) -> Result<()> {
        let mut at = self.write_head(out)?;
        for r in &self.regions {
            // SAFETY: a sender state's regions are readable until it is dropped.
            let src = unsafe { std::slice::from_raw_parts(r.ptr, r.bytes) };
            out[at..at + r.bytes].copy_from_slice(src);
            at += r.bytes;
        }
        Ok(())
    }

    /// Writes the record's shape and packed part into `out` (as long as
    /// [`Packing::head_len`] at least); where the regions' bytes go.
    fn write_head(&mut self, out: &mut [u8]) -> Result<usize> {
        put_word(out, 0, self.shape.packed_bytes);
        put_word(out, WORD, self.shape.runs().len() as u64);
        let mut at = 2 * WORD;
        for (r, count) in self.shape.runs() {
            put_word(out, at, r.bytes);
            put_word(out, at + WORD, count as u64);
            put_word(out, at + 2 * WORD, r.elem.code() as u64);
            at += 3 * WORD;
        }
        let packed = self.shape.packed_bytes as usize;
        let mut done = 0;
        while done < packed {
            let dst = &mut out[at + done..at + packed];
            done += local::pack_some(&mut *self.state, done as u64, dst)?;
        }
        Ok(at + pad(packed))
    }
}

/// The shape a record `src` gives, and where its packed part starts.
fn read_shape(src: &[u8]) -> Result<(Shape, usize)> {
    let packed = word(src, 0)?;
    let runs = word(src, WORD)? as usize;
    let mut shape = Shape::new(packed, []);
    let mut at = 2 * WORD;
    for _ in 0..runs {
        let bytes = word(src, at)?;
        let count = word(src, at + WORD)? as usize;
        let elem = ElementType::from_code(word(src, at + 2 * WORD)? as u8).ok_or_else(corrupt)?;
        shape.push_run(RegionShape { bytes, elem }, count);
        at += 3 * WORD;
    }
    Ok((shape, at))
}

/// Reads the record `src` into `obj`.
fn read(src: &[u8], obj: &dyn Object) -> Result<()> {
    let (shape, at) = read_shape(src)?;
    let packed = shape.packed_bytes as usize;
    let parts = src.get(at..at + pad(packed) + shape.region_bytes() as usize);
    let parts = parts.ok_or_else(corrupt)?;
    let mut state = obj.unpack()?;
    local::prepare(&mut *state, &shape)?;
    if packed > 0 {
        state.unpack(0, &parts[..packed])?;
    }
    let mut from = pad(packed);
    let sources = shape.regions().map(|r| {
        let p = parts[from..].as_ptr();
        from += r.bytes as usize;
        (p, r.bytes as usize)
    });
    local::fill_regions(
        &mut *state,
        sources.collect::<SmallVec<[_; 8]>>().into_iter(),
    )
}

impl Op {
    /// Puts `records` (`None`: an empty one) into this member's slot and publishes them; if
    /// they do not fit, publishes [`BY_MESSAGE`] and starts sending record i to each of
    /// `dests(i)`.
    fn put_objects(&self, records: &[Option<&dyn Object>], dests: impl Fn(usize) -> Dests) -> Put {
        Put(self.try_put(records, dests))
    }

    fn try_put(
        &self,
        records: &[Option<&dyn Object>],
        dests: impl Fn(usize) -> Dests,
    ) -> Result<Vec<Result<Request<'static>>>> {
        self.gate_live()?;
        let packings: Result<SmallVec<[Option<Packing>; 8]>> = records
            .iter()
            .map(|r| r.map(Packing::new).transpose())
            .collect();
        let packings = packings.inspect_err(|_| self.publish_word(FAILED))?;
        self.put_packed(packings, records, dests)
    }

    /// [`Op::try_put`] once the records are packed (after [`Op::gate_live`]).
    fn put_packed(
        &self,
        packings: SmallVec<[Option<Packing>; 8]>,
        records: &[Option<&dyn Object>],
        dests: impl Fn(usize) -> Dests,
    ) -> Result<Vec<Result<Request<'static>>>> {
        let head = WORD * (1 + records.len());
        let whole = head + packings.iter().flatten().map(Packing::len).sum::<usize>();
        let cap = self.node.area.cap();
        if whole > cap {
            drop(packings);
            self.publish_word(BY_MESSAGE);
            return Ok(self.send_records(records, dests));
        }
        // SAFETY: the gate passed: no member reads this slot until it is published again,
        // and nothing else of this process writes it meanwhile.
        let out = unsafe {
            std::slice::from_raw_parts_mut(self.node.area.data(self.me(), self.slot), cap)
        };
        put_word(out, 0, records.len() as u64);
        let mut end = head;
        let mut written = Ok(());
        for (i, p) in packings.into_iter().enumerate() {
            if let Some(p) = p {
                let len = p.len();
                written = written.and_then(|()| p.write(&mut out[end..end + len]));
                end += len;
            }
            put_word(out, WORD * (1 + i), end as u64);
        }
        self.publish_word(if written.is_ok() { end as u64 } else { FAILED });
        written.map(|()| Vec::new())
    }

    /// Tells the readers of this member's objects that it has none to give (its arguments
    /// failed), so that they fail rather than wait.
    fn refuse(&self) {
        if self.gate_live().is_ok() {
            self.publish_word(FAILED);
        }
    }

    /// [`Op::wait_word`] for member `j`'s `word`, failing only if the communicator is revoked
    /// or `j` itself is known dead (another member's death does not stop this collective).
    fn wait_member(&self, j: usize, word: &AtomicU64, n: u64) -> Result<()> {
        self.wait_word_with(j, word, n, self.member_poll(j))
    }

    /// What a wait on member `j` does every so many checks: progress, and fail if the
    /// communicator is revoked or `j` is known dead.
    fn member_poll(&self, j: usize) -> impl Fn() -> Result<()> + '_ {
        let route = &self.node.route;
        move || {
            self.node.shared.with(|e| {
                e.progress();
                if e.is_revoked(route.context) {
                    return Err(Error::Revoked);
                }
                let dead = any_failed() && {
                    let rank = route.group.world_rank(j as i32)?;
                    e.failed_members(route).contains(&rank)
                };
                match dead {
                    true => Err(Error::ProcFailed { rank: j as i32 }),
                    false => Ok(()),
                }
            })
        }
    }

    /// [`Op::gate`] over the live members: one known dead reads this slot no more.
    fn gate_live(&self) -> Result<()> {
        let node = &*self.node;
        let wrote = node.wrote[self.slot].swap(self.n, Ordering::Relaxed);
        for j in (0..node.members).filter(|&j| j != node.me && wrote > 0) {
            if node.seen[j].load(Ordering::Relaxed) <= wrote {
                match self.wait_member(j, node.area.arrival(j), wrote + 1) {
                    Ok(()) | Err(Error::ProcFailed { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// Publishes `len` as this member's data of this collective.
    fn publish_word(&self, len: u64) {
        let area = &self.node.area;
        area.length(self.me(), self.slot)
            .store(len, Ordering::Relaxed);
        area.seq(self.me(), self.slot)
            .store(self.n, Ordering::Release);
    }

    /// Starts sending record i to each of `dests(i)` as a custom-typed message.
    fn send_records(
        &self,
        records: &[Option<&dyn Object>],
        dests: impl Fn(usize) -> Dests,
    ) -> Vec<Result<Request<'static>>> {
        let mut sends = Vec::new();
        for (i, obj) in records.iter().enumerate() {
            let Some(obj) = obj else { continue };
            for to in dests(i) {
                sends.push(self.message(to, |e, route, peer| {
                    e.post_custom_send(route, peer, self.tag, obj.pack()?, false)
                }));
            }
        }
        sends
    }

    /// Starts a message with member `j` (`post` given the engine, the route and `j`'s rank).
    fn message(
        &self,
        j: usize,
        post: impl FnOnce(
            &mut crate::engine::Engine,
            &crate::route::Route,
            u32,
        ) -> Result<crate::engine::OpId>,
    ) -> Result<Request<'static>> {
        let route = &self.node.route;
        let peer = route.group.world_rank(j as i32)?;
        let id = self.node.shared.with(|e| post(e, route, peer))?;
        Ok(Request::posted(&self.node.shared, Posted::Pending(id)))
    }

    /// Reads record `index` of member `j`'s objects into `obj`, from its slot or, where it
    /// sent them, from its message.
    fn take(&self, j: usize, index: usize, obj: &dyn Object) -> Result<()> {
        let seq = self.node.area.seq(j, self.slot);
        self.wait_member(j, seq, self.n)?;
        match self.node.area.length(j, self.slot).load(Ordering::Relaxed) {
            // As a message whose sender failed while producing it.
            FAILED => Err(Error::RemoteFailure),
            // Only a gather's root reads pushed records ([`push`]).
            len if len & PUSHED != 0 => Err(corrupt()),
            BY_MESSAGE => self
                .message(j, |e, route, peer| {
                    e.post_custom_recv(route, Some(peer), Some(self.tag), obj.unpack()?)
                })?
                .wait()
                .map(drop),
            len => {
                let slot = self.get(j, 0, (len as usize).min(self.node.area.cap()));
                let count = word(slot, 0)? as usize;
                if index >= count {
                    return Err(corrupt());
                }
                let start = match index {
                    0 => WORD * (1 + count),
                    _ => word(slot, WORD * index)? as usize,
                };
                let end = word(slot, WORD * (1 + index))? as usize;
                read(slot.get(start..end).ok_or_else(corrupt)?, obj)
            }
        }
    }
}

#[cfg(test)]
mod tests;
