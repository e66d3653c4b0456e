//! The plan layer: what a datatype moves and how it is cut for the wire. A datatype becomes
//! an operation state ([`PackState`] on the sender, [`UnpackState`] on the receiver) that tells
//! its packed size and hands over its regions; [`choose`](mod@choose) turns that shape into a
//! [`WirePlan`](crate::wire::WirePlan) (which regions go zero-copy, how much of the stream
//! rides in the lead), and the stream [`StreamWriter`]/[`StreamReader`] produce and consume the
//! packed stream piece by piece. Custom types compile into it (the C callbacks, the Rust [`crate::custom`] traits, serde),
//! and so do derived types ([`derived`]: MPI's type constructors, compiled into flat plans of
//! runs and loops).
//!
//! It knows the wire formats ([`crate::wire`]) and nothing below them: no UCX, no operation,
//! no engine.

mod choose;
pub mod derived;
pub(crate) mod local;
mod nt_copy;
mod stream;
#[cfg(test)]
mod tests;

pub use choose::CustomConfig;
pub(crate) use choose::{choose, Reach};
pub(crate) use nt_copy::copy_streaming;
pub(crate) use stream::{RegionList, StreamReader, StreamWriter};

use crate::datatype::ElementType;
use crate::error::Result;
use crate::wire::Shape;

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
    /// The regions sent without packing (region count and regions callbacks). Called once per
    /// operation, after [`PackState::packed_size`]: an implementation may hand over its own
    /// list (`std::mem::take`) instead of copying it.
    fn regions(&mut self) -> Result<Vec<RawRegion>>;
    /// The lengths and element types of the regions [`PackState::regions`] returned, if the
    /// state tracked them while building its list (as [`SendParts`](crate::custom::SendParts) does): it saves the engine
    /// a pass over a long list. Called once, after `regions`; `packed_bytes` is ignored. It must
    /// describe exactly those regions (a wrong shape sends wrong data, never reads out of
    /// bounds). The default, `None`, lets the engine compute it.
    fn shape_hint(&mut self) -> Option<Shape> {
        None
    }
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
    /// False for a state of fixed shape, which `resize` would not change: the engine then asks
    /// for `packed_capacity`, `regions` and `shape_hint` as soon as the receive is posted,
    /// overlapping that work with the sender's, and never calls `resize`. The default, true,
    /// waits for the sender's shape.
    fn resizes(&self) -> bool {
        true
    }
    /// The largest packed part this receive accepts (the paper's query on the receiver).
    fn packed_capacity(&mut self) -> Result<u64>;
    /// Unpacks one piece of the packed part, at virtual offset `offset`. Pieces arrive in
    /// increasing, gap-free order.
    fn unpack(&mut self, offset: u64, src: &[u8]) -> Result<()>;
    /// The regions the incoming regions are written into. Called once per operation, after
    /// [`UnpackState::packed_capacity`]: an implementation may hand over its own list
    /// (`std::mem::take`) instead of copying it.
    fn regions(&mut self) -> Result<Vec<RawRegionMut>>;
    /// The lengths and element types of the regions [`UnpackState::regions`] returned, if the
    /// state tracked them while building its list (as [`RecvParts`](crate::custom::RecvParts) does): the engine then
    /// checks the incoming shape against it run by run instead of region by region. Called
    /// once, after `regions`; `packed_bytes` is ignored. The engine still never writes past a
    /// region whatever this says: a wrong shape only gives a wrong or late truncation error. The
    /// default, `None`, lets the engine walk the list.
    fn shape_hint(&mut self) -> Option<Shape> {
        None
    }
}
