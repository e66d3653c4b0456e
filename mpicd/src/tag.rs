//! The one tag encoder: how MPI's (communicator, source, tag) and mpicd's private data messages
//! are laid out in UCX's 64-bit tag, and the mask that receives and probes match with.
//!
//! ```text
//! user message:  0 | kind:1 | context:20 | source:20 | tag:22
//! private data:  1 | source:20 | sequence:43
//! ```
//! `kind` tells a contiguous message from the lead message of a custom-typed one. It is never
//! part of a match: as MPI requires, a receive or probe matches on (communicator, source, tag)
//! alone, so contiguous and custom-typed messages between two processes keep their order (MPI's
//! non-overtaking rule). The receiver reads `kind` from the matched message's tag; a receive
//! whose datatype does not fit it fails with [`crate::Error::DatatypeMismatch`] after draining
//! the message (see `Engine::settle_contiguous` and `ops::RecvOp`). Every user receive
//! requires the private bit to be 0, so no user receive can ever match the fragments and
//! body and regions that follow a custom message's lead. A private message goes from the
//! sender of a custom message to its receiver, numbered in the sender's sequence.

const TAG_BITS: u32 = 22;
const SOURCE_BITS: u32 = 20;
const CONTEXT_BITS: u32 = 20;
const SEQ_BITS: u32 = 43;

const TAG_SHIFT: u32 = 0;
const SOURCE_SHIFT: u32 = TAG_BITS;
const CONTEXT_SHIFT: u32 = SOURCE_SHIFT + SOURCE_BITS;
const KIND_SHIFT: u32 = CONTEXT_SHIFT + CONTEXT_BITS;
const PRIVATE_BIT: u64 = 1 << 63;

const TAG_MASK: u64 = ((1 << TAG_BITS) - 1) << TAG_SHIFT;
const SOURCE_MASK: u64 = ((1 << SOURCE_BITS) - 1) << SOURCE_SHIFT;
const CONTEXT_MASK: u64 = ((1 << CONTEXT_BITS) - 1) << CONTEXT_SHIFT;
const KIND_MASK: u64 = 1 << KIND_SHIFT;

/// A 64-bit UCX tag and the mask that selects which of its bits must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TagMatch {
    pub tag: u64,
    pub mask: u64,
}

/// The largest user tag (MPI_TAG_UB).
pub const TAG_UB: i32 = (1 << TAG_BITS) - 1;
/// The largest number of processes in a job.
pub const MAX_PROCESSES: u32 = 1 << SOURCE_BITS;
/// The number of communication contexts (each communicator uses two).
pub(crate) const MAX_CONTEXTS: u32 = 1 << CONTEXT_BITS;

/// What a user-level message carries, as told by its tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// Plain bytes of primitive elements, received directly into the user's buffer.
    Contiguous,
    /// The lead message of a custom-typed message (header, then packed bytes).
    Custom,
}

/// The fields of a user-level message tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UserTag {
    pub kind: MessageKind,
    pub context: u32,
    pub source: u32,
    pub tag: i32,
}

impl UserTag {
    pub(crate) fn encode(self) -> u64 {
        let kind = match self.kind {
            MessageKind::Contiguous => 0,
            MessageKind::Custom => 1,
        };
        (kind << KIND_SHIFT)
            | ((self.context as u64) << CONTEXT_SHIFT)
            | ((self.source as u64) << SOURCE_SHIFT)
            | ((self.tag as u64) << TAG_SHIFT)
    }

    /// Decodes a user tag; `None` for a private data tag.
    pub(crate) fn decode(bits: u64) -> Option<UserTag> {
        if bits & PRIVATE_BIT != 0 {
            return None;
        }
        Some(UserTag {
            kind: if bits & KIND_MASK != 0 {
                MessageKind::Custom
            } else {
                MessageKind::Contiguous
            },
            context: ((bits & CONTEXT_MASK) >> CONTEXT_SHIFT) as u32,
            source: ((bits & SOURCE_MASK) >> SOURCE_SHIFT) as u32,
            tag: ((bits & TAG_MASK) >> TAG_SHIFT) as i32,
        })
    }

    /// The match for a receive or probe: `source`/`tag` of `None` mean any. Both kinds of
    /// message match.
    pub(crate) fn matcher(context: u32, source: Option<u32>, tag: Option<i32>) -> TagMatch {
        let mut mask = PRIVATE_BIT | CONTEXT_MASK;
        let mut bits = (context as u64) << CONTEXT_SHIFT;
        if let Some(s) = source {
            mask |= SOURCE_MASK;
            bits |= (s as u64) << SOURCE_SHIFT;
        }
        if let Some(t) = tag {
            mask |= TAG_MASK;
            bits |= (t as u64) << TAG_SHIFT;
        }
        TagMatch {
            tag: bits & mask,
            mask,
        }
    }

    /// The kind of the user message with tag `bits` (`None` for a private tag).
    pub(crate) fn kind_of(bits: u64) -> Option<MessageKind> {
        UserTag::decode(bits).map(|t| t.kind)
    }
}

/// True if `bits` is the tag of a custom-typed message's lead (a user tag of kind
/// [`MessageKind::Custom`]).
pub(crate) const fn is_custom_lead(bits: u64) -> bool {
    bits & (PRIVATE_BIT | KIND_MASK) == KIND_MASK
}

/// The tag of private data message number `seq` from world rank `source`.
pub(crate) fn private_tag(source: u32, seq: u64) -> u64 {
    PRIVATE_BIT | ((source as u64) << SEQ_BITS) | (seq & ((1 << SEQ_BITS) - 1))
}

/// The exact match for one private data message.
pub(crate) fn private_match(source: u32, seq: u64) -> TagMatch {
    TagMatch {
        tag: private_tag(source, seq),
        mask: u64::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_tags_round_trip() {
        for kind in [MessageKind::Contiguous, MessageKind::Custom] {
            let t = UserTag {
                kind,
                context: MAX_CONTEXTS - 1,
                source: MAX_PROCESSES - 1,
                tag: TAG_UB,
            };
            assert_eq!(UserTag::decode(t.encode()), Some(t));
            let t = UserTag {
                kind,
                context: 3,
                source: 7,
                tag: 0,
            };
            assert_eq!(UserTag::decode(t.encode()), Some(t));
        }
    }

    #[test]
    fn wildcards_match_what_they_should() {
        for kind in [MessageKind::Contiguous, MessageKind::Custom] {
            let msg = UserTag {
                kind,
                context: 4,
                source: 9,
                tag: 77,
            }
            .encode();
            let hits = |m: TagMatch| msg & m.mask == m.tag;
            assert!(hits(UserTag::matcher(4, Some(9), Some(77))));
            assert!(hits(UserTag::matcher(4, None, None)));
            assert!(hits(UserTag::matcher(4, Some(9), None)));
            assert!(hits(UserTag::matcher(4, None, Some(77))));
            assert!(!hits(UserTag::matcher(5, None, None)));
            assert!(!hits(UserTag::matcher(4, Some(8), None)));
            assert!(!hits(UserTag::matcher(4, None, Some(78))));
            assert_eq!(UserTag::kind_of(msg), Some(kind));
            assert_eq!(is_custom_lead(msg), kind == MessageKind::Custom);
        }
    }

    #[test]
    fn kind_is_never_matched_on() {
        // A receive posted for either kind must take the other one too (and then fail with a
        // datatype mismatch): otherwise both sides wait forever, and messages of the two kinds
        // on one (communicator, source, tag) could overtake each other.
        let m = UserTag::matcher(MAX_CONTEXTS - 1, Some(MAX_PROCESSES - 1), Some(TAG_UB));
        assert_eq!(m.mask & KIND_MASK, 0);
        assert_eq!(m.tag & KIND_MASK, 0);
    }

    #[test]
    fn private_tags_never_match_user_receives() {
        let p = private_tag(9, 12345);
        assert_eq!(UserTag::decode(p), None);
        assert!(!is_custom_lead(p) && !is_custom_lead(p | KIND_MASK));
        let any = UserTag::matcher(0, None, None);
        assert_ne!(p & any.mask, any.tag);
        assert_eq!(p, private_match(9, 12345).tag);
        assert_ne!(private_tag(8, 12345), p);
        assert_ne!(private_tag(9, 12346), p);
    }
}
