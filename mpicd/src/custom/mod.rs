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
//! regions in [`stream`], the send and receive state machines in [`send`] and [`recv`]; the
//! serde bridge (feature `serde`, on by default) in [`serde`](mod@serde).

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
/// the packed size and the length and element type of each region.
///
/// Regions are kept run-length compressed (equal consecutive regions form one run), so the
/// shape of a `Vec<Vec<i32>>` with equal inner lengths costs a few bytes whatever its length.
/// Read it with [`Shape::region_count`], [`Shape::regions`], [`Shape::region`] or
/// [`Shape::runs`]; build one with [`Shape::new`] or [`Shape::push`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Shape {
    /// Bytes in the packed part.
    pub packed_bytes: u64,
    /// Runs of equal regions, in the sender's order; never empty runs, never two equal
    /// neighbours (so that equal shapes compare equal).
    runs: Vec<ShapeRun>,
    /// Number of regions.
    region_count: usize,
    /// Bytes of all regions (saturating).
    region_bytes: u64,
}

/// `count` consecutive regions of the same shape; `end` is the index after the last of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShapeRun {
    pub region: RegionShape,
    pub count: usize,
    pub end: usize,
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
    /// The shape of a message with `packed_bytes` packed bytes and these regions, in order.
    pub fn new(packed_bytes: u64, regions: impl IntoIterator<Item = RegionShape>) -> Shape {
        let mut shape = Shape {
            packed_bytes,
            ..Shape::default()
        };
        // Count equal neighbours locally; the run table is touched once per run.
        let mut regions = regions.into_iter();
        if let Some(mut current) = regions.next() {
            let mut count = 1usize;
            for r in regions {
                if r == current {
                    count += 1;
                } else {
                    shape.push_run(current, count);
                    (current, count) = (r, 1);
                }
            }
            shape.push_run(current, count);
        }
        shape
    }

    /// Appends one region.
    #[inline]
    pub fn push(&mut self, region: RegionShape) {
        match self.runs.last_mut() {
            Some(last) if last.region == region => {
                last.count += 1;
                last.end += 1;
                self.region_count += 1;
                self.region_bytes = self.region_bytes.saturating_add(region.bytes);
            }
            _ => self.push_run(region, 1),
        }
    }

    /// Appends `count` regions of the same shape (merged into the last run if it is equal).
    pub(crate) fn push_run(&mut self, region: RegionShape, count: usize) {
        if count == 0 {
            return;
        }
        self.region_count += count;
        self.region_bytes = self
            .region_bytes
            .saturating_add(region.bytes.saturating_mul(count as u64));
        match self.runs.last_mut() {
            Some(last) if last.region == region => {
                last.count += count;
                last.end = self.region_count;
            }
            _ => self.runs.push(ShapeRun {
                region,
                count,
                end: self.region_count,
            }),
        }
    }

    /// Number of regions.
    pub fn region_count(&self) -> usize {
        self.region_count
    }

    /// The regions, in order.
    pub fn regions(&self) -> ShapeRegions<'_> {
        ShapeRegions {
            runs: self.runs.iter(),
            current: None,
            left: self.region_count,
        }
    }

    /// Region `i`, if there is one.
    pub fn region(&self, i: usize) -> Option<RegionShape> {
        let run = self.runs.partition_point(|r| r.end <= i);
        self.runs.get(run).map(|r| r.region)
    }

    /// The runs of equal consecutive regions, in order: each region's shape and how many times
    /// it repeats.
    pub fn runs(&self) -> impl ExactSizeIterator<Item = (RegionShape, usize)> + '_ {
        self.runs.iter().map(|r| (r.region, r.count))
    }

    /// The runs with their end indices, for the engine's cursors.
    pub(crate) fn run_slice(&self) -> &[ShapeRun] {
        &self.runs
    }

    /// Bytes of all regions.
    pub fn region_bytes(&self) -> u64 {
        self.region_bytes
    }

    /// Total bytes of the message: packed part and all regions.
    pub fn total_bytes(&self) -> u64 {
        self.packed_bytes.saturating_add(self.region_bytes)
    }
}

/// The regions of a [`Shape`], in order (see [`Shape::regions`]).
#[derive(Debug, Clone)]
pub struct ShapeRegions<'a> {
    runs: std::slice::Iter<'a, ShapeRun>,
    /// The run being expanded and how many of its regions are left.
    current: Option<(RegionShape, usize)>,
    /// Regions left in all.
    left: usize,
}

impl Iterator for ShapeRegions<'_> {
    type Item = RegionShape;

    fn next(&mut self) -> Option<RegionShape> {
        loop {
            match &mut self.current {
                Some((region, n)) if *n > 0 => {
                    *n -= 1;
                    self.left -= 1;
                    return Some(*region);
                }
                _ => {
                    let run = self.runs.next()?;
                    self.current = Some((run.region, run.count));
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for ShapeRegions<'_> {}

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
    /// state tracked them while building its list (as [`SendParts`] does): it saves the engine
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
    /// state tracked them while building its list (as [`RecvParts`] does): the engine then
    /// checks the incoming shape against it run by run instead of region by region. Called
    /// once, after `regions`; `packed_bytes` is ignored. The engine still never writes past a
    /// region whatever this says: a wrong shape only gives a wrong or late truncation error. The
    /// default, `None`, lets the engine walk the list.
    fn shape_hint(&mut self) -> Option<Shape> {
        None
    }
}
