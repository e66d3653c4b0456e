//! Single-copy lending ([`Way::SingleCopy`]): a member lends blocks of its own memory to the
//! others through a note in its slot (its process and the blocks' addresses), the others copy
//! their blocks straight out of it ([`cma`]) and say when they are done (each member's done
//! word, beside its arrival word), and the lender waits for that before its buffers may
//! change. The steps of [`super::bodies`]' single-copy collectives.

use super::{cma, Op, SingleCopy, Way};
use crate::engine::WaitPolicy;
use crate::error::{Error, Result};
use smallvec::SmallVec;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Where waits may sleep, a broadcast's root (the only lender there that reads nothing) that
/// lent a block of at least this many bytes naps first, for about half the time one read of
/// it takes ([`LEND_NAP_BYTES_PER_US`]), instead of yielding to the readers that need the
/// cores (3 ranks on 2 cores, 1-4 MiB bcasts: 267 / 496 / 953 us yielding, 173 / 350 / 624
/// after a first nap). Below it, a nap outlasts the reads (a nap costs this VM 50 us and more).
const LEND_NAP_FROM: usize = 1 << 20;

/// Bytes a reader copies per microsecond, doubled (a reader's copy runs at 6-10 GB/s here):
/// the first nap of a lender, in microseconds, is its block's length over this.
const LEND_NAP_BYTES_PER_US: usize = 32 << 10;

/// How long a lender whose reader gave up looks for the death that made it give up (a
/// process finds a dead peer of its node within about 0.2 s).
const GIVE_UP_GRACE: Duration = Duration::from_millis(500);

/// Whether other members may write this process's memory ([`cma::write`]): not under
/// valgrind, which cannot see them do it (it would take the bytes for uninitialised ones).
pub(super) fn may_be_written() -> bool {
    !cma::under_valgrind()
}

/// The shortest broadcast whose root helps its readers copy ([`Op::root_helps`]).
const HELP_FROM: usize = 32 << 10;

/// Bytes of one word of a lender's note in its slot (its process, then the address of each
/// block it lends).
pub(super) const NOTE_WORD: usize = 8;

impl Op {
    /// Whether this collective's blocks are read in place ([`Way::SingleCopy`]).
    pub(super) fn single_copy(&self) -> bool {
        self.way == Way::SingleCopy
    }

    /// Lends `blocks` of `len` bytes each to the others' single-copy reads ([`cma`], after
    /// [`Op::gate`]): this process and each block's address in this member's slot, published
    /// with `len`. The blocks must stay as they are until [`Op::wait_returned`].
    pub(super) fn lend(
        &self,
        blocks: impl ExactSizeIterator<Item = *const u8>,
        len: usize,
    ) -> Result<()> {
        self.lend_noting(blocks.map(|p| p as u64), len)
    }

    /// [`Op::lend`] with a note of `words` after this process's id: the blocks' addresses,
    /// then what else the readers need to know alike.
    pub(super) fn lend_noting(
        &self,
        words: impl IntoIterator<Item = u64>,
        len: usize,
    ) -> Result<()> {
        let mut note: SmallVec<[u8; 8 * NOTE_WORD]> = SmallVec::new();
        note.extend_from_slice(&u64::from(self.node.pid).to_le_bytes());
        for w in words {
            note.extend_from_slice(&w.to_le_bytes());
        }
        let put = self.put(0, &note);
        // Published even if it did not fit: the readers then fail on the size.
        self.publish(if put.is_ok() { len } else { 0 });
        put
    }

    /// Waits for what member `j` lent for this collective, blocks of `into.len()` bytes, and
    /// copies its block `k` into `into` from `j`'s memory.
    pub(super) fn read_lent(&self, j: usize, k: usize, into: &mut [u8]) -> Result<()> {
        let (pid, at) = self.lent(j, k, into.len())?;
        cma::read(pid, at, into)
    }

    /// Waits for what member `j` lent for this collective, blocks of `len` bytes: its process
    /// and the address of its block `k`. Fails if `j` named another root: its note then means
    /// something else (a gather's root lends where its givers should write, not a block).
    pub(super) fn lent(&self, j: usize, k: usize, len: usize) -> Result<(u32, u64)> {
        self.wait(j, len)?;
        self.same_root(j)?;
        Ok((self.note_word(j, 0) as u32, self.note_word(j, 1 + k)))
    }

    /// Word `at` of the note member `j` published (after [`Op::wait`]).
    pub(super) fn note_word(&self, j: usize, at: usize) -> u64 {
        let mut w = [0u8; NOTE_WORD];
        w.copy_from_slice(self.get(j, at * NOTE_WORD, NOTE_WORD));
        u64::from_le_bytes(w)
    }

    /// Whether a broadcast of `len` bytes read in place has its root copy a share of every
    /// reader's buffer while they copy the rest: where every member has a core, the root
    /// would otherwise wait idle through the readers' copies, and two copies at once move
    /// the bytes sooner than one. Alike on every member (the members agreed on the way, and
    /// the length is the same on all); the root then says in its note how much it copies.
    pub(super) fn root_helps(&self, len: usize) -> bool {
        self.node.single_copy == SingleCopy::OwnCores && len >= HELP_FROM
    }

    /// What a broadcast's root copies into each reader's buffer of `len` bytes where it helps
    /// ([`Op::root_helps`]): the last 1/p, in whole cache lines; none where the readers may
    /// not be written to.
    pub(super) fn root_share(&self, len: usize) -> usize {
        match may_be_written() {
            true => len / self.node.members / 64 * 64,
            false => 0,
        }
    }

    /// Tells the members whose blocks this member read that it is done with them (`ok`: every
    /// read succeeded). Every reader says so, whatever happened, so that no lender waits for
    /// ever.
    pub(super) fn done_reading(&self, ok: bool) {
        let node = &*self.node;
        node.area
            .done(node.me)
            .store(2 * self.n + u64::from(!ok), Ordering::Release);
    }

    /// Naps once, where waits may sleep, while the readers copy the `lent` bytes (see
    /// [`LEND_NAP_FROM`]).
    pub(super) fn nap_while_read(&self, lent: usize) {
        if self.node.wait == WaitPolicy::Sleep && lent >= LEND_NAP_FROM {
            std::thread::sleep(Duration::from_micros((lent / LEND_NAP_BYTES_PER_US) as u64));
        }
    }

    /// Waits until every other member is done reading what this member lent; an error if one
    /// could not read it.
    pub(super) fn wait_returned(&self) -> Result<()> {
        let me = self.node.me;
        self.wait_returned_by((0..self.node.members).filter(|&j| j != me))
    }

    /// Why member `j` gave up on its copies of this collective (reading this member's block,
    /// or a broadcast's root writing its share): another root than this member's, a member's
    /// death, which this process learns of within [`GIVE_UP_GRACE`] (then that death, so that
    /// a survivor knows to recover); else a copy that failed.
    fn given_up_by(&self, j: usize) -> Error {
        // Where some member named another root, `j` gave up on that disagreement (with this
        // member or with another): it is the error.
        if let Err(e) = self.same_roots() {
            return e;
        }
        let until = Instant::now() + GIVE_UP_GRACE;
        loop {
            if let Err(e) = self.poll() {
                return e;
            }
            if Instant::now() >= until {
                return Error::Transport(format!("member {j} could not copy its blocks"));
            }
            std::thread::yield_now();
        }
    }

    /// [`Op::wait_returned`] for the members `readers` only (a gather's root; a broadcast's
    /// reader waiting for the root's share, [`Op::root_helps`]).
    pub(super) fn wait_returned_by(&self, readers: impl Iterator<Item = usize>) -> Result<()> {
        let done = 2 * self.n;
        for j in readers {
            // (Not noted as j's arrival: the done word counts twice as fast.) A later
            // collective's word: that member went on, so it was done with this one.
            if self.wait_until(j, self.node.area.done(j), done, || self.poll())? == done + 1 {
                return Err(self.given_up_by(j));
            }
        }
        Ok(())
    }
}
