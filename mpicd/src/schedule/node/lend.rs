//! Single-copy lending ([`Way::SingleCopy`]): a member lends blocks of its own memory to the
//! others through a note in its slot (its process and the blocks' addresses), the others copy
//! their blocks straight out of it ([`cma`]) and say when they are done (each member's done
//! word, beside its arrival word), and the lender waits for that before its buffers may
//! change. The steps of [`super::bodies`]' single-copy collectives.

use super::{cma, Op, Way};
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
        let mut note: SmallVec<[u8; 8 * NOTE_WORD]> =
            SmallVec::with_capacity(NOTE_WORD * (1 + blocks.len()));
        note.extend_from_slice(&u64::from(self.node.pid).to_le_bytes());
        for p in blocks {
            note.extend_from_slice(&(p as u64).to_le_bytes());
        }
        let put = self.put(0, &note);
        // Published even if it did not fit: the readers then fail on the size.
        self.publish(if put.is_ok() { len } else { 0 });
        put
    }

    /// Waits for what member `j` lent for this collective, blocks of `into.len()` bytes, and
    /// copies its block `k` into `into` from `j`'s memory.
    pub(super) fn read_lent(&self, j: usize, k: usize, into: &mut [u8]) -> Result<()> {
        self.wait(j, into.len())?;
        let word = |at: usize| {
            let mut w = [0u8; NOTE_WORD];
            w.copy_from_slice(self.get(j, at * NOTE_WORD, NOTE_WORD));
            u64::from_le_bytes(w)
        };
        cma::read(word(0) as u32, word(1 + k), into)
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

    /// Why reader `j` gave up on this member's block: mostly a member's death, which this
    /// process learns of within [`GIVE_UP_GRACE`] (then that death, so that a survivor knows to
    /// recover); else a read that failed.
    fn given_up_by(&self, j: usize) -> Error {
        let until = Instant::now() + GIVE_UP_GRACE;
        loop {
            if let Err(e) = self.poll() {
                return e;
            }
            if Instant::now() >= until {
                return Error::Transport(format!("member {j} could not read this member's block"));
            }
            std::thread::yield_now();
        }
    }

    /// [`Op::wait_returned`] for the members `readers` only (a gather's root).
    pub(super) fn wait_returned_by(&self, readers: impl Iterator<Item = usize>) -> Result<()> {
        let done = 2 * self.n;
        for j in readers {
            // (Not noted as j's arrival: the done word counts twice as fast.) A later
            // collective's word: that member went on, so it was done with this one.
            if self.wait_until(self.node.area.done(j), done, || self.poll())? == done + 1 {
                return Err(self.given_up_by(j));
            }
        }
        Ok(())
    }
}
