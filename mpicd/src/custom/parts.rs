//! The safe Rust API of the custom datatype: a type says how it splits into a packed part and
//! regions ([`SendParts`], [`RecvParts`]), borrowing its own fields, without raw pointers.
//!
//! ```
//! use mpicd::custom::{CustomRecv, CustomSend, RecvParts, SendParts};
//! use mpicd::Result;
//!
//! /// A header worth packing and a payload worth sending as a region.
//! struct Particle { id: u32, mass: f64, samples: Vec<f32> }
//!
//! impl CustomSend for Particle {
//!     fn parts(&self) -> Result<SendParts<'_>> {
//!         let (id, mass) = (self.id, self.mass);
//!         Ok(SendParts::new()
//!             .packed(12, move |offset, dst| {
//!                 let mut all = [0u8; 12];
//!                 all[..4].copy_from_slice(&id.to_le_bytes());
//!                 all[4..].copy_from_slice(&mass.to_le_bytes());
//!                 let n = dst.len().min(12 - offset as usize);
//!                 dst[..n].copy_from_slice(&all[offset as usize..offset as usize + n]);
//!                 Ok(n)
//!             })
//!             .region(&self.samples[..]))
//!     }
//! }
//! ```

use crate::datatype::{bytes_of, bytes_of_mut, ElementType, Primitive};
use crate::error::{Error, Result};
use crate::plan::{PackState, RawRegion, RawRegionMut, UnpackState};
use crate::wire::{RegionShape, Shape};
use std::marker::PhantomData;

/// A type that can be sent through the custom datatype engine.
pub trait CustomSend: Sync {
    /// Splits `self` into a packed part and regions for one send.
    fn parts(&self) -> Result<SendParts<'_>>;
}

/// A type that can be received through the custom datatype engine.
pub trait CustomRecv: Send {
    /// Called with the sender's shape before [`CustomRecv::parts`]: a dynamic type resizes here
    /// (allocates its vectors) so that its parts can hold what arrives.
    fn resize(&mut self, shape: &Shape) -> Result<()> {
        let _ = shape;
        Ok(())
    }
    /// Splits `self` into an unpacker and regions for one receive.
    fn parts(&mut self) -> Result<RecvParts<'_>>;
    /// False for a type whose [`CustomRecv::resize`] does nothing (its parts do not depend on
    /// what arrives): a receive then takes the parts as soon as it is posted, so that building
    /// them overlaps with the sender's work, and `resize` is not called. The default, true,
    /// suits every type; return false only from a type that does not implement `resize`.
    fn resizes(&self) -> bool {
        true
    }
}

type Packer<'a> = Box<dyn FnMut(u64, &mut [u8]) -> Result<usize> + Send + 'a>;
type Unpacker<'a> = Box<dyn FnMut(u64, &[u8]) -> Result<()> + Send + 'a>;

/// What one send consists of: a packed part produced on demand, and borrowed regions.
pub struct SendParts<'a> {
    packed_bytes: u64,
    packer: Option<Packer<'a>>,
    regions: Vec<RawRegion>,
    /// The regions' lengths, tracked as they are added (the engine's shape hint).
    shape: Shape,
    _borrow: PhantomData<&'a [u8]>,
}

// SAFETY: the regions are shared borrows of `Sync` data for 'a, and the packer is `Send`.
unsafe impl Send for SendParts<'_> {}

impl Default for SendParts<'_> {
    fn default() -> Self {
        SendParts {
            packed_bytes: 0,
            packer: None,
            regions: Vec::new(),
            shape: Shape::default(),
            _borrow: PhantomData,
        }
    }
}

impl<'a> SendParts<'a> {
    /// No packed part, no regions.
    pub fn new() -> Self {
        Self::default()
    }

    /// A packed part of `bytes` bytes: `pack(offset, dst)` writes the bytes from `offset` into
    /// `dst` and returns how many it wrote (at least one, at most `dst.len()`).
    pub fn packed(
        mut self,
        bytes: usize,
        pack: impl FnMut(u64, &mut [u8]) -> Result<usize> + Send + 'a,
    ) -> Self {
        self.packed_bytes = bytes as u64;
        self.packer = Some(Box::new(pack));
        self
    }

    /// The shape a receiver learns of this message: the packed size and the regions.
    /// With [`crate::CustomConfig::memory_bound_for`], the memory its transfer may use.
    pub fn shape(&self) -> Shape {
        let mut shape = self.shape.clone();
        shape.packed_bytes = self.packed_bytes;
        shape
    }

    /// Adds a region sent without packing.
    pub fn region<T: Primitive>(self, data: &'a [T]) -> Self {
        self.regions(std::iter::once(data))
    }

    /// Adds several regions.
    pub fn regions<T: Primitive>(mut self, all: impl IntoIterator<Item = &'a [T]>) -> Self {
        push_regions(&mut self.regions, &mut self.shape, T::TYPE, all, |data| {
            let bytes = std::mem::size_of_val(data);
            let ptr = bytes_of(data).as_ptr();
            (
                RawRegion {
                    ptr,
                    bytes,
                    elem: T::TYPE,
                },
                bytes,
            )
        });
        self
    }
}

// SAFETY: the regions borrow memory for 'a, and the engine drops the parts (completing the
// operation) before the borrow that produced them ends (the request holds it).
unsafe impl PackState for SendParts<'_> {
    fn packed_size(&mut self) -> Result<u64> {
        Ok(self.packed_bytes)
    }
    fn pack(&mut self, offset: u64, dst: &mut [u8]) -> Result<usize> {
        match &mut self.packer {
            Some(p) => p(offset, dst),
            None => Err(Error::InvalidDatatype(
                "pack called on a type without a packed part".into(),
            )),
        }
    }
    fn regions(&mut self) -> Result<Vec<RawRegion>> {
        // Called once per operation: the list is handed over, not copied.
        Ok(std::mem::take(&mut self.regions))
    }
    fn shape_hint(&mut self) -> Option<Shape> {
        Some(std::mem::take(&mut self.shape))
    }
}

/// Counts runs of equal region lengths while a list is built, touching the shape once per run.
/// Appends a region entry (made by `entry`, which also gives its length) for each of `all`,
/// and their lengths to `shape`, counting runs of equal lengths locally.
fn push_regions<S, R>(
    list: &mut Vec<R>,
    shape: &mut Shape,
    elem: ElementType,
    all: impl IntoIterator<Item = S>,
    mut entry: impl FnMut(S) -> (R, usize),
) {
    let all = all.into_iter();
    list.reserve(all.size_hint().0);
    let mut runs = RunCounter::new(shape, elem);
    list.extend(all.map(|data| {
        let (region, bytes) = entry(data);
        runs.add(bytes);
        region
    }));
    runs.finish();
}

struct RunCounter<'s> {
    shape: &'s mut Shape,
    elem: ElementType,
    bytes: usize,
    count: usize,
}

impl<'s> RunCounter<'s> {
    fn new(shape: &'s mut Shape, elem: ElementType) -> Self {
        RunCounter {
            shape,
            elem,
            bytes: 0,
            count: 0,
        }
    }

    #[inline]
    fn add(&mut self, bytes: usize) {
        if bytes != self.bytes {
            self.flush();
            self.bytes = bytes;
        }
        self.count += 1;
    }

    fn flush(&mut self) {
        let region = RegionShape {
            bytes: self.bytes as u64,
            elem: self.elem,
        };
        self.shape.push_run(region, std::mem::take(&mut self.count));
    }

    fn finish(mut self) {
        self.flush();
    }
}

/// What one receive consists of: an unpacker for the packed part, and borrowed regions.
pub struct RecvParts<'a> {
    capacity: u64,
    unpacker: Option<Unpacker<'a>>,
    regions: Vec<RawRegionMut>,
    /// The regions' lengths, tracked as they are added (the engine's shape hint).
    shape: Shape,
    _borrow: PhantomData<&'a mut [u8]>,
}

// SAFETY: the regions are exclusive borrows of `Send` data for 'a, and the unpacker is `Send`.
unsafe impl Send for RecvParts<'_> {}

impl Default for RecvParts<'_> {
    fn default() -> Self {
        RecvParts {
            capacity: 0,
            unpacker: None,
            regions: Vec::new(),
            shape: Shape::default(),
            _borrow: PhantomData,
        }
    }
}

impl<'a> RecvParts<'a> {
    /// No packed part, no regions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts a packed part of up to `capacity` bytes: `unpack(offset, src)` is called for each
    /// piece, in order.
    pub fn packed(
        mut self,
        capacity: usize,
        unpack: impl FnMut(u64, &[u8]) -> Result<()> + Send + 'a,
    ) -> Self {
        self.capacity = capacity as u64;
        self.unpacker = Some(Box::new(unpack));
        self
    }

    /// Adds a region received in place.
    pub fn region<T: Primitive>(self, data: &'a mut [T]) -> Self {
        self.regions(std::iter::once(data))
    }

    /// Adds several regions.
    pub fn regions<T: Primitive>(mut self, all: impl IntoIterator<Item = &'a mut [T]>) -> Self {
        push_regions(&mut self.regions, &mut self.shape, T::TYPE, all, |data| {
            let bytes = std::mem::size_of_val(data);
            let ptr = bytes_of_mut(data).as_mut_ptr();
            (
                RawRegionMut {
                    ptr,
                    bytes,
                    elem: T::TYPE,
                },
                bytes,
            )
        });
        self
    }
}

/// Drives a [`CustomRecv`] for the engine: resize first, then the parts.
pub(crate) struct RecvAdapter<'a, T: CustomRecv + ?Sized> {
    target: *mut T,
    parts: Option<RecvParts<'a>>,
    _borrow: PhantomData<&'a mut T>,
}

// SAFETY: the adapter holds the only access to an exclusive borrow of a `Send` value.
unsafe impl<T: CustomRecv + ?Sized> Send for RecvAdapter<'_, T> {}

impl<'a, T: CustomRecv + ?Sized> RecvAdapter<'a, T> {
    pub(crate) fn new(target: &'a mut T) -> Self {
        RecvAdapter {
            target,
            parts: None,
            _borrow: PhantomData,
        }
    }

    fn parts(&mut self) -> Result<&mut RecvParts<'a>> {
        if self.parts.is_none() {
            // SAFETY: `target` came from an exclusive borrow for 'a; from here on only the
            // parts (which borrow it for 'a) are used, never `target` again.
            let target: &'a mut T = unsafe { &mut *self.target };
            self.parts = Some(target.parts()?);
        }
        self.parts.as_mut().ok_or(Error::InvalidMessage)
    }
}

// SAFETY: regions come from `RecvParts`, i.e. from exclusive borrows that live for 'a, which
// the request holding this adapter outlives.
unsafe impl<T: CustomRecv + ?Sized> UnpackState for RecvAdapter<'_, T> {
    fn resizes(&self) -> bool {
        if self.parts.is_some() {
            return true; // the target is borrowed by its parts: not looked at again
        }
        // SAFETY: no parts exist yet, so this is the only live access to the target.
        unsafe { &*self.target }.resizes()
    }
    fn resize(&mut self, shape: &Shape) -> Result<()> {
        if self.parts.is_some() {
            return Err(Error::InvalidArgument(
                "resize after the parts were taken".into(),
            ));
        }
        // SAFETY: no parts exist yet, so this is the only live access to the target.
        unsafe { &mut *self.target }.resize(shape)
    }
    fn packed_capacity(&mut self) -> Result<u64> {
        Ok(self.parts()?.capacity)
    }
    fn unpack(&mut self, offset: u64, src: &[u8]) -> Result<()> {
        match &mut self.parts()?.unpacker {
            Some(u) => u(offset, src),
            None => Err(Error::InvalidDatatype(
                "unpack called on a type without a packed part".into(),
            )),
        }
    }
    fn regions(&mut self) -> Result<Vec<RawRegionMut>> {
        // Called once per operation: the list is handed over, not copied.
        Ok(std::mem::take(&mut self.parts()?.regions))
    }
    fn shape_hint(&mut self) -> Option<Shape> {
        let parts = self.parts.as_mut()?;
        Some(std::mem::take(&mut parts.shape))
    }
}

impl<T: Primitive> CustomSend for Vec<T> {
    fn parts(&self) -> Result<SendParts<'_>> {
        Ok(SendParts::new().region(&self[..]))
    }
}

/// A `Vec<T>` receive takes whatever length arrives.
impl<T: Primitive> CustomRecv for Vec<T> {
    fn resize(&mut self, shape: &Shape) -> Result<()> {
        check_regions::<T>(shape, Some(1))?;
        let n = elements(shape.region(0).map_or(0, |r| r.len()))?;
        self.try_reserve(n.saturating_sub(self.len()))
            .map_err(|_| Error::NoMemory)?;
        self.resize(n, unsafe_zero());
        Ok(())
    }
    fn parts(&mut self) -> Result<RecvParts<'_>> {
        Ok(RecvParts::new().region(&mut self[..]))
    }
}

impl<T: Primitive> CustomSend for Vec<Vec<T>> {
    fn parts(&self) -> Result<SendParts<'_>> {
        Ok(SendParts::new().regions(self.iter().map(|v| &v[..])))
    }
}

/// A `Vec<Vec<T>>` receive takes whatever shape arrives: one receive, no size message.
impl<T: Primitive> CustomRecv for Vec<Vec<T>> {
    fn resize(&mut self, shape: &Shape) -> Result<()> {
        check_regions::<T>(shape, None)?;
        let n = shape.region_count();
        self.try_reserve(n.saturating_sub(self.len()))
            .map_err(|_| Error::NoMemory)?;
        self.resize_with(n, Vec::new);
        for (v, r) in self.iter_mut().zip(shape.regions()) {
            let len = elements(r.len())?;
            v.try_reserve(len.saturating_sub(v.len()))
                .map_err(|_| Error::NoMemory)?;
            v.resize(len, unsafe_zero());
        }
        Ok(())
    }
    fn parts(&mut self) -> Result<RecvParts<'_>> {
        Ok(RecvParts::new().regions(self.iter_mut().map(|v| &mut v[..])))
    }
}

/// A length in elements as a `usize`.
fn elements(len: u64) -> Result<usize> {
    usize::try_from(len).map_err(|_| Error::NoMemory)
}

/// The zero value of a primitive.
fn unsafe_zero<T: Primitive>() -> T {
    // SAFETY: every bit pattern, all-zero included, is a valid Primitive.
    unsafe { std::mem::zeroed() }
}

/// Refuses a shape whose regions are not made of `T` (or, with `count`, not that many).
fn check_regions<T: Primitive>(shape: &Shape, count: Option<usize>) -> Result<()> {
    if shape.packed_bytes != 0 {
        return Err(Error::InvalidDatatype(format!(
            "{} unexpected packed bytes",
            shape.packed_bytes
        )));
    }
    if let Some(n) = count {
        if shape.region_count() > n {
            return Err(Error::truncated(shape.total_bytes(), 0));
        }
    }
    match shape.runs().find(|(r, _)| r.elem != T::TYPE) {
        Some((r, _)) => Err(Error::InvalidDatatype(format!(
            "region of {:?} received as {:?}",
            r.elem,
            T::TYPE
        ))),
        None => Ok(()),
    }
}

/// The send state of a borrowed custom-typed value, its borrow erased.
///
/// # Safety
/// `value` must stay borrowed until the operation given the state has completed (the engine
/// drops the state then).
pub(crate) unsafe fn pack_borrowed<S: CustomSend + ?Sized>(
    value: &S,
) -> Result<Box<dyn PackState>> {
    let state: Box<dyn PackState + '_> = Box::new(value.parts()?);
    // SAFETY: only the lifetime changes; the caller keeps the borrow alive long enough.
    Ok(unsafe { std::mem::transmute::<Box<dyn PackState + '_>, Box<dyn PackState>>(state) })
}

/// The receive state of a borrowed custom-typed value, its borrow erased.
///
/// # Safety
/// As for [`pack_borrowed`], with an exclusive borrow.
pub(crate) unsafe fn unpack_borrowed<R: CustomRecv + ?Sized>(
    value: &mut R,
) -> Box<dyn UnpackState> {
    let state: Box<dyn UnpackState + '_> = Box::new(RecvAdapter::new(value));
    // SAFETY: as in `pack_borrowed`.
    unsafe { std::mem::transmute::<Box<dyn UnpackState + '_>, Box<dyn UnpackState>>(state) }
}
