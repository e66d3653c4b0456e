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

use super::{PackState, RawRegion, RawRegionMut, Shape, UnpackState};
use crate::datatype::{bytes_of, bytes_of_mut, Primitive};
use crate::error::{Error, Result};
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
}

type Packer<'a> = Box<dyn FnMut(u64, &mut [u8]) -> Result<usize> + Send + 'a>;
type Unpacker<'a> = Box<dyn FnMut(u64, &[u8]) -> Result<()> + Send + 'a>;

/// What one send consists of: a packed part produced on demand, and borrowed regions.
pub struct SendParts<'a> {
    packed_bytes: u64,
    packer: Option<Packer<'a>>,
    regions: Vec<RawRegion>,
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

    /// Adds a region sent without packing.
    pub fn region<T: Primitive>(mut self, data: &'a [T]) -> Self {
        self.regions.push(RawRegion {
            ptr: bytes_of(data).as_ptr(),
            bytes: std::mem::size_of_val(data),
            elem: T::TYPE,
        });
        self
    }

    /// Adds several regions.
    pub fn regions<T: Primitive>(mut self, all: impl IntoIterator<Item = &'a [T]>) -> Self {
        for r in all {
            self = self.region(r);
        }
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
        Ok(self.regions.clone())
    }
}

/// What one receive consists of: an unpacker for the packed part, and borrowed regions.
pub struct RecvParts<'a> {
    capacity: u64,
    unpacker: Option<Unpacker<'a>>,
    regions: Vec<RawRegionMut>,
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
    pub fn region<T: Primitive>(mut self, data: &'a mut [T]) -> Self {
        let bytes = std::mem::size_of_val(data);
        self.regions.push(RawRegionMut {
            ptr: bytes_of_mut(data).as_mut_ptr(),
            bytes,
            elem: T::TYPE,
        });
        self
    }

    /// Adds several regions.
    pub fn regions<T: Primitive>(mut self, all: impl IntoIterator<Item = &'a mut [T]>) -> Self {
        for r in all {
            self = self.region(r);
        }
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
        Ok(self.parts()?.regions.clone())
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
        self.resize(
            shape.regions.first().map_or(0, |r| r.len()) as usize,
            unsafe_zero(),
        );
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
        self.resize_with(shape.regions.len(), Vec::new);
        for (v, r) in self.iter_mut().zip(&shape.regions) {
            v.resize(r.len() as usize, unsafe_zero());
        }
        Ok(())
    }
    fn parts(&mut self) -> Result<RecvParts<'_>> {
        Ok(RecvParts::new().regions(self.iter_mut().map(|v| &mut v[..])))
    }
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
        if shape.regions.len() > n {
            return Err(Error::Truncated {
                message_bytes: shape.total_bytes(),
                buffer_bytes: 0,
            });
        }
    }
    match shape.regions.iter().find(|r| r.elem != T::TYPE) {
        Some(r) => Err(Error::InvalidDatatype(format!(
            "region of {:?} received as {:?}",
            r.elem,
            T::TYPE
        ))),
        None => Ok(()),
    }
}
