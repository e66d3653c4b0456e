//! The shape of a custom-typed message: its packed size and its regions' lengths and element
//! types, run-length compressed. Both sides know it: the sender builds it from its state's
//! regions, the receiver decodes it from the lead (see [`super::WirePlan`]).

use crate::datatype::ElementType;
use smallvec::SmallVec;

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
    /// neighbours (so that equal shapes compare equal). The usual one run (an object's
    /// regions all alike, or a single region) needs no allocation.
    runs: SmallVec<[ShapeRun; 1]>,
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

    /// Bytes coalesced into the stream and number of zero-copy regions when regions of at
    /// least `threshold` bytes travel zero-copy (`None` on overflow).
    pub(crate) fn split(&self, threshold: u64) -> Option<(u64, u64)> {
        let (mut coalesced, mut zero_copy) = (0u64, 0u64);
        for (r, n) in self.runs() {
            if r.bytes >= threshold {
                zero_copy = zero_copy.checked_add(n as u64)?;
            } else {
                coalesced = coalesced.checked_add(r.bytes.checked_mul(n as u64)?)?;
            }
        }
        Some((coalesced, zero_copy))
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
