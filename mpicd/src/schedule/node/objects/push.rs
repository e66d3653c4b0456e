//! A gather's long objects, pushed by their givers. A giver whose object has at least
//! [`PUSH_FROM`] bytes of regions puts only its shape and packed part in its slot (published
//! with [`PUSHED`]); the root sizes its receiving object from them, as a message would make it,
//! and answers in its own slot where that object's regions lie; the giver then writes its
//! regions straight into them ([`cma::write`]) and says so in its done word. Each byte is
//! copied once (the area copies it twice), and the givers copy at once, beside the root's copy
//! of its own object (messages leave every copy to the root).
//!
//! The root's answer, in native words: the root's process, then for each member where its
//! list starts (0: the root takes none of it: its object failed there), then the lists: a count,
//! then each region's address and length.

use super::super::{cma, lend, SingleCopy};
use super::{
    corrupt, local, put_word, read_shape, transfer, word, Object, Op, Packing, Put, FAILED, PUSHED,
    WORD,
};
use crate::error::{Error, Result};
use crate::plan::{RawRegionMut, UnpackState};
use smallvec::{smallvec, SmallVec};
use std::sync::atomic::Ordering;

/// Bytes of regions from which a giver pushes its object where every member has a core of
/// its own ([`SingleCopy::OwnCores`]): below, the area's two copies cost less than the round trip
/// to the root (2 ranks, a vector of 2 Ki doubles: 2.3 us either way; of 8 Ki: 4.6 against
/// 7.2). Where processes outnumber cores, a giver pushes only an object too long for its
/// slot, which would otherwise go as a message: there each wait of the round trip goes
/// through the scheduler (3 ranks on 2 cores, 2 Ki doubles: 7.9 us pushed against 5.1
/// through the area; 32 Ki: 28 against 48 as a message).
const PUSH_FROM: usize = 16 << 10;

/// The most regions a pushed object has (the root's answer lists them in its slot).
const MOST_REGIONS: usize = 64;

/// A giver that pushes, as the root sees it: its receiving object's state and regions, or
/// `None` where the root could not size that object.
type Pusher = (usize, Option<(Box<dyn UnpackState>, Vec<RawRegionMut>)>);

impl Op {
    /// A gather's giver: puts `mine` in its slot for `root`, or pushes it there if it is long.
    pub(super) fn give(&self, mine: &dyn Object, root: usize) -> Result<()> {
        self.gate_live()?;
        let mut p = Packing::new(mine).inspect_err(|_| self.publish_word(FAILED))?;
        if !self.pushes(&p) {
            return Put(self.put_packed(smallvec![Some(p)], &[Some(mine)], |_| smallvec![root]))
                .wait();
        }
        let cap = self.node.area.cap();
        // SAFETY: the gate passed: no member reads this slot until it is published again,
        // and nothing else of this process writes it meanwhile.
        let out = unsafe {
            std::slice::from_raw_parts_mut(self.node.area.data(self.me(), self.slot), cap)
        };
        let end = 2 * WORD + p.head_len();
        put_word(out, 0, 1);
        put_word(out, WORD, end as u64);
        if let Err(e) = p.write_head(&mut out[2 * WORD..end]) {
            self.publish_word(FAILED);
            return Err(e);
        }
        self.publish_word(PUSHED | end as u64);
        let outcome = self.push_to(root, &p);
        let done = 2 * self.n;
        let me = self.node.area.done(self.me());
        me.store(done + u64::from(outcome.is_err()), Ordering::Release);
        if outcome.is_err() {
            // Until the root has read it: no later done word of this member hides the failure.
            let _ = self.wait_until(
                root,
                self.node.area.done(root),
                done,
                self.member_poll(root),
            );
        }
        outcome
    }

    /// Whether this giver pushes `p`: long ([`PUSH_FROM`]), in few regions, where the members
    /// may write each other's memory.
    fn pushes(&self, p: &Packing) -> bool {
        let cap = self.node.area.cap();
        let long = match self.node.single_copy {
            SingleCopy::Never => return false,
            SingleCopy::OwnCores => p.shape.region_bytes() as usize >= PUSH_FROM,
            SingleCopy::SharedCores => 2 * WORD + p.len() > cap,
        };
        long && p.regions.len() <= MOST_REGIONS
            && 2 * WORD + p.head_len() <= cap
            && lend::may_be_written()
    }

    /// Waits for the root's answer, then writes the regions of `p` where it says. A root
    /// that takes none of them (its arguments or its object failed) fails alone, as a
    /// receiver whose message is truncated does.
    fn push_to(&self, root: usize, p: &Packing) -> Result<()> {
        self.wait_member(root, self.node.area.seq(root, self.slot), self.n)?;
        let len = self
            .node
            .area
            .length(root, self.slot)
            .load(Ordering::Relaxed);
        if len == FAILED {
            return Ok(());
        }
        let answer = self.get(root, 0, (len as usize).min(self.node.area.cap()));
        let at = word(answer, WORD * (1 + self.me()))? as usize;
        if at == 0 {
            return Ok(());
        }
        let to = (0..word(answer, at)? as usize)
            .map(|i| {
                let pair = at + WORD * (1 + 2 * i);
                Ok((word(answer, pair)?, word(answer, pair + WORD)? as usize))
            })
            .collect::<Result<SmallVec<[_; 8]>>>()?;
        let from: SmallVec<[_; 8]> = p.regions.iter().map(|r| (r.ptr, r.bytes)).collect();
        cma::write(word(answer, 0)? as u32, &from, &to)
    }

    /// A gather's root: every giver's object into `all[j]`, `mine` into its own.
    pub(super) fn gather_root(
        &self,
        mine: Option<&dyn Object>,
        all: &[&dyn Object],
        root: usize,
    ) -> Result<()> {
        let mut outcome = Ok(());
        let mut pushers: SmallVec<[Pusher; 8]> = SmallVec::new();
        let mut others: SmallVec<[usize; 8]> = SmallVec::new();
        for j in (0..self.members()).filter(|&j| j != root) {
            let len = self
                .wait_member(j, self.node.area.seq(j, self.slot), self.n)
                .map(|()| self.node.area.length(j, self.slot).load(Ordering::Relaxed));
            match len {
                Ok(len) if len != FAILED && len & PUSHED != 0 => {
                    match self.size_pushed(j, (len & !PUSHED) as usize, all[j]) {
                        Ok(sized) => pushers.push((j, Some(sized))),
                        Err(e) => {
                            pushers.push((j, None));
                            outcome = outcome.and(Err(e));
                        }
                    }
                }
                Ok(_) => others.push(j),
                Err(e) => outcome = outcome.and(Err(e)),
            }
        }
        if !pushers.is_empty() {
            outcome = outcome.and(self.answer(&mut pushers));
        }
        // The root's own copy and the other givers' records, while the pushers write.
        if let Some(m) = mine {
            outcome = outcome.and(transfer(m, all[root]));
        }
        for j in others {
            outcome = outcome.and(self.take(j, 0, all[j]));
        }
        let done = 2 * self.n;
        for (j, _) in pushers.iter().filter(|(_, s)| s.is_some()) {
            let got = self.wait_until(*j, self.node.area.done(*j), done, self.member_poll(*j));
            outcome = outcome.and(match got {
                Ok(v) if v == done + 1 => Err(Error::Transport(format!(
                    "member {j} could not write its object into the root's"
                ))),
                got => got.map(drop),
            });
        }
        // Read every pusher's done word: those that failed may go on.
        let me = self.node.area.done(self.me());
        me.fetch_max(done, Ordering::Release);
        drop(pushers);
        outcome
    }

    /// Sizes `obj` for member `j`'s pushed record (`len` bytes in its slot) and unpacks its
    /// packed part; the object's state and the regions `j` is to write.
    fn size_pushed(
        &self,
        j: usize,
        len: usize,
        obj: &dyn Object,
    ) -> Result<(Box<dyn UnpackState>, Vec<RawRegionMut>)> {
        let slot = self.get(j, 0, len.min(self.node.area.cap()));
        let record = slot.get(2 * WORD..word(slot, WORD)? as usize);
        let record = record.ok_or_else(corrupt)?;
        let (shape, at) = read_shape(record)?;
        let packed = shape.packed_bytes as usize;
        let mut state = obj.unpack()?;
        local::prepare(&mut *state, &shape)?;
        if packed > 0 {
            state.unpack(0, record.get(at..at + packed).ok_or_else(corrupt)?)?;
        }
        let regions = state.regions()?;
        let room: usize = regions.iter().map(|r| r.bytes).sum();
        if shape.region_bytes() > room as u64 || regions.len() > MOST_REGIONS {
            return Err(Error::truncated(shape.region_bytes(), room as u64));
        }
        Ok((state, regions))
    }

    /// Answers the pushers in the root's slot: where each one's regions go (after the gate),
    /// published whatever happens, so that none waits for ever.
    fn answer(&self, pushers: &mut [Pusher]) -> Result<()> {
        self.gate_live()?;
        let cap = self.node.area.cap();
        // SAFETY: the gate passed: no member reads this slot until it is published again.
        let out = unsafe {
            std::slice::from_raw_parts_mut(self.node.area.data(self.me(), self.slot), cap)
        };
        let head = WORD * (1 + self.members());
        if head > cap {
            self.publish_word(FAILED);
            pushers.iter_mut().for_each(|p| p.1 = None);
            return Err(Error::truncated(head as u64, cap as u64));
        }
        out[..head].fill(0);
        put_word(out, 0, u64::from(self.node.pid));
        let (mut end, mut outcome) = (head, Ok(()));
        for (j, sized) in pushers.iter_mut() {
            let Some((_, regions)) = sized else { continue };
            let list = WORD * (1 + 2 * regions.len());
            if end + list > cap {
                // The root takes none of it (too many pushers' regions for its slot).
                outcome = Err(Error::truncated((end + list) as u64, cap as u64));
                *sized = None;
                continue;
            }
            put_word(out, WORD * (1 + *j), end as u64);
            put_word(out, end, regions.len() as u64);
            for (i, r) in regions.iter().enumerate() {
                put_word(out, end + WORD * (1 + 2 * i), r.ptr as u64);
                put_word(out, end + WORD * (2 + 2 * i), r.bytes as u64);
            }
            end += list;
        }
        self.publish_word(end as u64);
        outcome
    }
}
