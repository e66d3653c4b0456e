//! A communicator's shared-memory area on one node: a shared segment ([`SharedSegment`]) that
//! every member maps, holding per member an arrival word (the last collective the member
//! started) on a line of its own, then [`SLOTS`] slots. A slot is a sequence number (the last
//! collective whose data its member put there) and that data's length, followed by the data.
//! Member `j` writes only its own words and slots; the others read them once the numbers say
//! so. Every `unsafe` of the node collectives is here: the reads and writes of the slots, whose
//! ordering the numbers give (see [`super`]).

use crate::error::Result;
use crate::shm::SharedSegment;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Bytes before a slot's data: the sequence number and the length of the data, which aligns
/// the data for any element type (16 bytes, a long double's or a double complex's).
const HEADER: usize = 16;

/// Slots start on their own pair of cache lines (the processor fetches lines in pairs).
const ALIGN: usize = 128;

/// Slots per member: collective `n` uses slot `n % SLOTS`, so a member may run up to
/// `SLOTS - 1` collectives ahead of the slowest reader of its data (a broadcast's root, a
/// reduction's non-roots) before it waits.
pub(crate) const SLOTS: usize = 8;

/// Collectives whose way each member keeps a record of ([`Area::took`]): a member that took
/// the node's path can be told from one that went by messages until it has run this many
/// collectives further.
pub(crate) const WAYS: usize = 4;

/// Bytes of the areas this process maps now, every communicator's together ([`mapped`]).
static MAPPED: AtomicUsize = AtomicUsize::new(0);

/// Bytes of the areas this process maps now.
pub(crate) fn mapped() -> usize {
    MAPPED.load(Ordering::Relaxed)
}

/// A mapped area of `members` x (an arrival line and [`SLOTS`] slots of `cap` data bytes).
pub(crate) struct Area {
    segment: SharedSegment,
    members: usize,
    cap: usize,
    slot: usize,
    /// Its length, counted in [`MAPPED`] while it is mapped.
    len: usize,
}

impl Drop for Area {
    fn drop(&mut self) {
        MAPPED.fetch_sub(self.len, Ordering::Relaxed);
    }
}

impl Area {
    /// Makes the area for `members` members of slots of `cap` data bytes, mapped here, under a
    /// new name (which [`Area::attach`] opens and [`unlink`] removes).
    pub(crate) fn create(members: usize, cap: usize) -> Result<(Area, String)> {
        let name = SharedSegment::fresh_name("coll");
        let area = Area::map(&name, members, cap, true)?;
        Ok((area, name))
    }

    /// Maps the area `name` that a member made for `members` members of `cap` bytes.
    pub(crate) fn attach(name: &str, members: usize, cap: usize) -> Result<Area> {
        Area::map(name, members, cap, false)
    }

    fn map(name: &str, members: usize, cap: usize, create: bool) -> Result<Area> {
        let slot = (HEADER + cap).div_ceil(ALIGN) * ALIGN;
        let len = members
            .checked_mul(ALIGN + SLOTS * slot)
            .filter(|&n| n > 0 && n <= isize::MAX as usize)
            .ok_or_else(|| crate::error::Error::InvalidArgument("node area too large".into()))?;
        let segment = SharedSegment::map(name, len, create)?;
        MAPPED.fetch_add(len, Ordering::Relaxed);
        Ok(Area {
            segment,
            members,
            cap,
            slot,
            len,
        })
    }

    /// Data bytes a slot holds.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// The start of member `j`'s part: its arrival line, then its slots.
    fn part(&self, j: usize) -> *mut u8 {
        assert!(
            j < self.members,
            "a node collective named member {j} of {}",
            self.members
        );
        // SAFETY: within the mapping (`members` parts).
        unsafe { self.segment.ptr().add(j * (ALIGN + SLOTS * self.slot)) }
    }

    /// The start of member `j`'s slot `k`.
    fn slot(&self, j: usize, k: usize) -> *mut u8 {
        // SAFETY: within member `j`'s part.
        unsafe { self.part(j).add(ALIGN + (k % SLOTS) * self.slot) }
    }

    /// The word at `p`.
    ///
    /// # Safety
    /// `p` is 8-byte aligned in the mapping, and only ever accessed atomically.
    unsafe fn word(&self, p: *mut u8) -> &AtomicU64 {
        // SAFETY: the caller's promise; the mapping lives as long as `self`.
        unsafe { &*(p as *const AtomicU64) }
    }

    /// Member `j`'s arrival word.
    pub(crate) fn arrival(&self, j: usize) -> &AtomicU64 {
        // SAFETY: a part starts 128-byte aligned (a page-aligned mapping, parts multiples of
        // 128 bytes); the arrival word is only accessed atomically.
        unsafe { self.word(self.part(j)) }
    }

    /// The processor member `j` last ran on, as it last noted it, plus one (0: none noted),
    /// where processes outnumber cores: on its arrival line, after the arrival word.
    pub(crate) fn cpu(&self, j: usize) -> &AtomicU64 {
        // SAFETY: 8 bytes into a part's 128-byte aligned arrival line; the word is only
        // accessed atomically.
        unsafe { self.word(self.part(j).add(8)) }
    }

    /// The shape member `j` gave its last collective (its way and block length: equal on
    /// every member of a correct program), on its arrival line, written before its arrival
    /// word.
    pub(crate) fn shape(&self, j: usize) -> &AtomicU64 {
        // SAFETY: 16 bytes into a part's 128-byte aligned arrival line; the word is only
        // accessed atomically.
        unsafe { self.word(self.part(j).add(16)) }
    }

    /// Which way member `j` took for collective `n`, among its last [`WAYS`], with which root:
    /// its record of it ([`super::record::Took`]), on its arrival line, after the shape
    /// (written before its arrival word).
    pub(crate) fn took(&self, j: usize, n: u64) -> &AtomicU64 {
        let k = (n % WAYS as u64) as usize;
        // SAFETY: 32 to 56 bytes into a part's 128-byte aligned arrival line; the words are
        // only accessed atomically.
        unsafe { self.word(self.part(j).add(32 + 8 * k)) }
    }

    /// Member `j`'s done word: twice the last collective whose lent blocks it finished
    /// reading, plus one if a read failed (on the second line of its arrival pair).
    pub(crate) fn done(&self, j: usize) -> &AtomicU64 {
        // SAFETY: 64 bytes into a part's 128-byte aligned arrival pair; the done word is only
        // accessed atomically.
        unsafe { self.word(self.part(j).add(64)) }
    }

    /// The bytes member `j` put in its slot `k` for the collective its sequence number
    /// names (written before that number, read after it).
    pub(crate) fn length(&self, j: usize, k: usize) -> &AtomicU64 {
        // SAFETY: 8 bytes after a slot's 128-byte aligned start, inside its header; only ever
        // accessed atomically.
        unsafe { self.word(self.slot(j, k).add(8)) }
    }

    /// The sequence number of member `j`'s slot `k`.
    pub(crate) fn seq(&self, j: usize, k: usize) -> &AtomicU64 {
        // SAFETY: a slot starts 128-byte aligned; its sequence number is only accessed
        // atomically.
        unsafe { self.word(self.slot(j, k)) }
    }

    /// Copies `src` into slot `k` of this process (member `me`) at `at`.
    ///
    /// # Safety
    /// No member may be reading those bytes: every other member has published a later
    /// collective than the last one that used this slot (see [`super`]).
    pub(crate) unsafe fn put(&self, me: usize, k: usize, at: usize, src: &[u8]) {
        assert!(
            at + src.len() <= self.cap,
            "a node collective overran its slot"
        );
        // SAFETY: within the slot's data (checked); the caller's promise makes it ours.
        unsafe {
            std::ptr::copy_nonoverlapping(
                src.as_ptr(),
                self.slot(me, k).add(HEADER + at),
                src.len(),
            )
        };
    }

    /// The start of the data of slot `k` of this process (member `me`): [`Area::cap`] bytes,
    /// which a node collective of objects writes in place (under [`Area::put`]'s rule).
    pub(crate) fn data(&self, me: usize, k: usize) -> *mut u8 {
        // SAFETY: the slot's header is HEADER bytes, its data `cap` more, inside the part.
        unsafe { self.slot(me, k).add(HEADER) }
    }

    /// Member `j`'s data in its slot `k`, `at..at + len`.
    ///
    /// # Safety
    /// Member `j` must have published the collective whose data is read there (its sequence
    /// number read with acquire ordering), and write the slot again only after this process
    /// has published a later collective; the slice must not be used after that.
    pub(crate) unsafe fn get(&self, j: usize, k: usize, at: usize, len: usize) -> &[u8] {
        assert!(at + len <= self.cap, "a node collective overran its slot");
        // SAFETY: within the slot's data; the caller's promise keeps it unchanged.
        unsafe { std::slice::from_raw_parts(self.slot(j, k).add(HEADER + at), len) }
    }
}

/// Removes the name of an area (the members that mapped it keep it).
pub(crate) fn unlink(name: &str) {
    SharedSegment::unlink(name);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn two_mappings_share_their_slots() {
        let (a, name) = Area::create(2, 100).unwrap();
        let b = Area::attach(&name, 2, 100).unwrap();
        unlink(&name);
        assert_eq!(b.seq(1, 1).load(Ordering::Acquire), 0);
        a.arrival(1).store(5, Ordering::Release);
        assert_eq!(b.arrival(1).load(Ordering::Acquire), 5);
        assert_eq!(b.seq(1, 0).load(Ordering::Acquire), 0);
        // SAFETY: nobody reads member 1's slot meanwhile.
        unsafe { a.put(1, 1, 3, b"node") };
        a.seq(1, 1).store(7, Ordering::Release);
        assert_eq!(b.seq(1, 1).load(Ordering::Acquire), 7);
        // SAFETY: published above, and not written again.
        assert_eq!(unsafe { b.get(1, 1, 3, 4) }, b"node");
        assert!(Area::attach(&name, 2, 100).is_err(), "the name was removed");
    }

    /// Both mappings count in what this process maps while they last (other tests' areas
    /// come and go meanwhile, so only lower bounds hold).
    #[test]
    fn mappings_are_counted() {
        let (a, name) = Area::create(3, 4096).unwrap();
        let b = Area::attach(&name, 3, 4096).unwrap();
        unlink(&name);
        assert!(a.len > 3 * SLOTS * 4096);
        assert!(mapped() >= a.len + b.len);
    }

    #[test]
    fn a_short_object_is_refused() {
        let (_a, name) = Area::create(2, 100).unwrap();
        assert!(Area::attach(&name, 4, 100).is_err());
        unlink(&name);
    }
}
