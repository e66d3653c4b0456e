//! The custom serialization datatype (the paper's sections III-IV): per-operation state that
//! packs the scattered parts of an object and exposes its large contiguous parts as regions.
//!
//! Two layers:
//! - [`PackState`] / [`UnpackState`]: what the engine drives, one object per operation (the
//!   paper's state, query, pack, unpack, region count and regions callbacks). The C library
//!   implements them over C callbacks. Dropping the object is the paper's "state free": it
//!   happens exactly once, when the operation completes, whatever the outcome.
//! - [`CustomSend`] / [`CustomRecv`] (in [`parts`]): the safe API a Rust user implements for
//!   their own types, without raw pointers.
//!
//! The wire format and plan live in [`wire`], the streaming of packed bytes and coalesced
//! regions in [`stream`], the send and receive state machines in [`send`] and [`recv`]; the serde
//! bridge (feature `serde`, on by default) in [`serde`](mod@serde).

pub mod parts;
pub(crate) mod recv;
pub(crate) mod send;
#[cfg(feature = "serde")]
pub mod serde;
pub(crate) mod stream;
pub(crate) mod wire;

use crate::datatype::ElementType;
use crate::error::Result;

pub use parts::{CustomRecv, CustomSend, RecvParts, SendParts};
pub use wire::CustomConfig;

/// A memory region sent without packing: `bytes` bytes at `ptr`, made of elements of `elem`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRegion {
    pub ptr: *const u8,
    pub bytes: usize,
    pub elem: ElementType,
}

/// A memory region a receive writes into directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRegionMut {
    pub ptr: *mut u8,
    pub bytes: usize,
    pub elem: ElementType,
}

/// The shape of an incoming custom-typed message, known before any buffer is provided:
/// the packed size and the length of each region.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Shape {
    /// Bytes in the packed part.
    pub packed_bytes: u64,
    /// Each region's length in bytes and element type, in the sender's order.
    pub regions: Vec<RegionShape>,
}

/// One region of a [`Shape`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionShape {
    pub bytes: u64,
    pub elem: ElementType,
}

impl RegionShape {
    /// Length in elements of the region's type.
    pub fn len(&self) -> u64 {
        self.bytes / self.elem.size() as u64
    }

    /// True for an empty region.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
}

impl Shape {
    /// Total bytes of the message: packed part and all regions.
    pub fn total_bytes(&self) -> u64 {
        self.packed_bytes + self.regions.iter().map(|r| r.bytes).sum::<u64>()
    }
}

/// Send-side state of one custom-typed operation.
///
/// # Safety
/// Every region returned by [`PackState::regions`] must stay valid and unchanged until the
/// state is dropped (the operation completed).
pub unsafe trait PackState: Send {
    /// Bytes of the packed part (the paper's query).
    fn packed_size(&mut self) -> Result<u64>;
    /// Packs from virtual offset `offset` into `dst`; returns the bytes used, which may be fewer
    /// than `dst.len()` but not zero while bytes remain.
    fn pack(&mut self, offset: u64, dst: &mut [u8]) -> Result<usize>;
    /// The regions sent without packing (region count and regions callbacks).
    fn regions(&mut self) -> Result<Vec<RawRegion>>;
}

/// Receive-side state of one custom-typed operation.
///
/// # Safety
/// Every region returned by [`UnpackState::regions`] must be writable, must not alias the
/// packed part or another region, and must stay valid until the state is dropped.
pub unsafe trait UnpackState: Send {
    /// Called once the sender's shape is known, before `packed_capacity` and `regions`: a
    /// dynamic type allocates here. The default accepts any shape.
    fn resize(&mut self, _shape: &Shape) -> Result<()> {
        Ok(())
    }
    /// The largest packed part this receive accepts (the paper's query on the receiver).
    fn packed_capacity(&mut self) -> Result<u64>;
    /// Unpacks one piece of the packed part, at virtual offset `offset`. Pieces arrive in
    /// increasing, gap-free order.
    fn unpack(&mut self, offset: u64, src: &[u8]) -> Result<()>;
    /// The regions the incoming regions are written into.
    fn regions(&mut self) -> Result<Vec<RawRegionMut>>;
}
