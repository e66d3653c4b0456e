//! The custom serialization datatype (the paper's sections III-IV) as Rust users meet it: a type
//! packs its scattered parts and exposes its large contiguous parts as regions.
//!
//! - [`CustomSend`] / [`CustomRecv`] (in [`parts`]): the safe API a Rust user implements for
//!   their own types, without raw pointers.
//! - [`PackState`] / [`UnpackState`]: the per-operation state the engine drives (the paper's
//!   state, query, pack, unpack, region count and regions callbacks); the C library implements
//!   them over C callbacks. Dropping the object is the paper's "state free": it happens exactly
//!   once, when the operation completes, whatever the outcome. They belong to the plan layer
//!   ([`crate::plan`]) and are re-exported here.
//! - the serde bridge (feature `serde`, on by default) in [`serde`](mod@serde).
//!
//! How a custom-typed message travels is told in `docs/ARCHITECTURE.md`: its plan in
//! [`crate::plan`], its formats in [`crate::wire`], its send and receive in `crate::ops`.

pub mod parts;
#[cfg(feature = "serde")]
pub mod serde;

pub use crate::plan::{CustomConfig, PackState, RawRegion, RawRegionMut, UnpackState};
pub use crate::wire::{RegionShape, Shape, ShapeRegions};
pub use parts::{CustomRecv, CustomSend, RecvParts, SendParts};
