//! The wire layer: the formats of a custom-typed message (lead, shape, region table, body
//! trailer) as pure encode and decode functions. It does no I/O and makes no choice: which
//! regions travel zero-copy and how the stream is cut is decided by [`crate::plan`]; how bytes
//! move is [`crate::transport`]'s business. It must not know UCX, operations or the engine.
//!
//! One user message is one lead message under the user's tag, then private data messages that
//! no user receive can match (see [`crate::tag`]):
//!
//! ```text
//! lead:      header | region runs | first `inline` bytes of the stream    (at most LEAD_MAX)
//! table:     region runs, only when they do not fit in the lead (private tag seq)
//! body:      the rest of the stream and an 8-byte status trailer, ONE message (the next
//!            private tag) that UCX packs and unpacks through our callbacks (a generic
//!            datatype): the stream goes from the sender's pack callback straight into UCX's
//!            transport buffers and from those into the receiver's unpack callback, in UCX's
//!            own fragments, with no buffer of ours in between
//! regions:   one contiguous message per zero-copy region (the private tags after those)
//! stream:    packed part (pack callback) | coalesced regions, in region order
//! ```
//! Which regions travel zero-copy is the sender's plan ([`crate::plan::choose`]); the header
//! carries its threshold, so the receiver derives the same decision from the runs alone.
//!
//! A private message of zero bytes where data was expected, or a body whose trailer is not
//! zero, means the sender failed after the lead left; the receiver then completes with
//! [`Error::RemoteFailure`](crate::Error::RemoteFailure). (A body cannot be cut short once UCX sends it: after a pack
//! failure the rest of it is zeros, which the receiver's unpack callback may see before the
//! trailer fails the receive.)
//!
//! The lead is never longer than [`LEAD_MAX`], and its fixed header alone tells which private
//! messages follow (`seq_base` and their number). Both are what lets a receive that is not
//! custom-typed still drain a custom message it matched by mistake (so that the sender
//! completes): a contiguous receive of at least [`LEAD_MAX`] bytes always holds a whole lead,
//! and a smaller one keeps the first [`HEADER_BYTES`] of whatever arrives (see
//! `crate::transport::RecvTarget`, given [`HEADER_BYTES`] by the engine).
//!
//! Regions are described by run-length encoded words (`bytes | elem << 56`, then a count), so a
//! `Vec<Vec<i32>>` with equal inner lengths costs 16 bytes of header whatever its length. The
//! header carries the sender's zero-copy threshold: a region travels zero-copy exactly when its
//! length reaches it, so both sides derive every per-region decision from the runs alone and
//! nothing per region is ever stored or expanded.

mod message;
mod shape;

pub(crate) use message::{Lead, WirePlan};
pub(crate) use shape::ShapeRun;
pub use shape::{RegionShape, Shape, ShapeRegions};

/// The first word of every lead ("MPCD").
pub(crate) const MAGIC: u32 = 0x4443_504d;
/// The wire version; a receiver refuses any other.
pub(crate) const VERSION: u16 = 6;
/// Fixed part of the lead: magic, version, flags, five sizes, the run count and the number of
/// zero-copy regions.
pub(crate) const HEADER_BYTES: usize = 64;
/// The status word at the end of a body message: zero when every byte before it is the
/// sender's stream, anything else when its pack failed.
pub(crate) const TRAILER_BYTES: usize = 8;
/// The longest lead message any mpicd process sends (a protocol constant, not a tunable: a
/// receiver relies on it whatever the sender's configuration).
pub(crate) const LEAD_MAX: usize = 8192;
/// The most stream bytes a lead can carry.
pub(crate) const MAX_INLINE_BYTES: usize = LEAD_MAX - HEADER_BYTES;
/// Header flag: the sender failed before sending data (see [`WirePlan::failure`]).
pub(crate) const FLAG_FAILED: u16 = 1;
/// Header flag: the region runs travel as their own private message (`seq_base`), because the
/// lead would otherwise exceed [`LEAD_MAX`].
pub(crate) const FLAG_TABLE_APART: u16 = 2;
/// A run's first word: region bytes in the low 56 bits, element type code above.
pub(crate) const ELEM_SHIFT: u32 = 56;
pub(crate) const BYTES_MASK: u64 = (1 << ELEM_SHIFT) - 1;
/// Bytes of one encoded run.
pub(crate) const RUN_BYTES: usize = 16;
/// The most regions one message may announce (a guard against absurd headers).
pub(crate) const MAX_RUN: u64 = u32::MAX as u64;
