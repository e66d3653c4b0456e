//! A collective's number, as its builder holds it until the collective begins. A call whose
//! arguments fail before any other member could see it (no message went, nothing was published
//! in the node's area) gives its number back: the call then had no effect, as MPI has a call
//! that returns an error for its arguments, and this member's next collective takes the same
//! number, so it pairs with the call the other members made (MPICH's `errors/coll` tests post
//! such a make-up call on the member that failed). A collective that began keeps its number:
//! the others may have seen it.

use super::Builder;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// The number a builder took from its communicator's count of collectives: given back when
/// dropped, unless kept ([`Claim::keep`]). Only the last number taken can be given back, so a
/// later collective's number is never reused.
pub(crate) struct Claim {
    count: Option<Arc<AtomicU32>>,
    seq: u32,
}

impl Claim {
    /// The next number of `count`.
    pub(crate) fn take(count: &Arc<AtomicU32>) -> Claim {
        Claim {
            seq: count.fetch_add(1, Ordering::Relaxed),
            count: Some(Arc::clone(count)),
        }
    }

    /// No number (a builder not numbered from a communicator's count).
    pub(crate) fn none() -> Claim {
        Claim {
            count: None,
            seq: 0,
        }
    }

    pub(crate) fn seq(&self) -> u32 {
        self.seq
    }

    /// The collective began: its number stays taken.
    pub(crate) fn keep(&mut self) {
        self.count = None;
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(count) = self.count.take() {
            // A collective taken since keeps its number and this one's: nothing to give back.
            let next = self.seq.wrapping_add(1);
            let _ = count.compare_exchange(next, self.seq, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
}

impl Builder {
    /// A builder of the collective numbered by `claim` on its communicator (its messages'
    /// tag).
    pub(crate) fn numbered(mut self, claim: Claim) -> Builder {
        let seq = claim.seq();
        (self.tag, self.seq, self.claim) = (crate::engine::tag_of(seq), Some(seq), claim);
        self
    }

    /// The collective began (other members may see it): it keeps its number.
    pub(crate) fn began(&mut self) {
        self.claim.keep();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_not_kept_is_given_back_if_it_was_the_last() {
        let count = Arc::new(AtomicU32::new(7));
        drop(Claim::take(&count));
        assert_eq!(count.load(Ordering::Relaxed), 7);
        let mut kept = Claim::take(&count);
        kept.keep();
        drop(kept);
        assert_eq!(count.load(Ordering::Relaxed), 8);
        let first = Claim::take(&count);
        let second = Claim::take(&count);
        drop(first);
        assert_eq!(
            count.load(Ordering::Relaxed),
            10,
            "a later number was taken"
        );
        drop(second);
        assert_eq!(count.load(Ordering::Relaxed), 9);
    }
}
