//! [`Region<T>`]: an array a serde message carries as a region of the message instead of
//! encoding it, and the region lists of the bridge's sending and receiving sides.

use super::spare::{self, AnyVec};
use super::{DECODING, ENCODING};
use crate::custom::parts::{RecvParts, SendParts};
use crate::custom::RegionShape;
use crate::datatype::{ElementType, Primitive};
use crate::error::{Error, Result};
use ::serde::de::Error as _;
use ::serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::VecDeque;
use std::mem::ManuallyDrop;
use std::sync::Arc;

/// An array of primitives that a serde message carries as a region instead of encoding it.
///
/// It derefs to `[T]`; the array is shared (cheap to clone), and writing through
/// [`Region::make_mut`] or `DerefMut` copies it first if a send still uses it.
///
/// Dropped whole (no clone left), a large region's vector is kept on its thread for the next
/// region of the same type and length the bridge receives there (see `custom/serde/spare.rs`;
/// [`super::release_buffers`] frees them).
pub struct Region<T: Primitive>(ManuallyDrop<Arc<Vec<T>>>);

impl<T: Primitive> Region<T> {
    /// Wraps a vector (no copy).
    pub fn new(data: Vec<T>) -> Region<T> {
        Region::shared(Arc::new(data))
    }

    fn shared(data: Arc<Vec<T>>) -> Region<T> {
        Region(ManuallyDrop::new(data))
    }

    /// The vector, without a copy unless a clone of this region is still alive.
    pub fn into_vec(self) -> Vec<T> {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped nor used again, so its array is taken only once.
        let data = unsafe { ManuallyDrop::take(&mut this.0) };
        Arc::try_unwrap(data).unwrap_or_else(|shared| (*shared).clone())
    }

    /// The vector, for changes (copied first if shared).
    pub fn make_mut(&mut self) -> &mut Vec<T> {
        Arc::make_mut(&mut self.0)
    }

    /// The elements.
    pub fn as_slice(&self) -> &[T] {
        &self.0
    }
}

impl<T: Primitive> Drop for Region<T> {
    fn drop(&mut self) {
        // SAFETY: dropping: the field is not used again.
        let mut data = unsafe { ManuallyDrop::take(&mut self.0) };
        if Arc::get_mut(&mut data).is_some() {
            let bytes = data.capacity() * std::mem::size_of::<T>();
            spare::keep(T::TYPE, data.len(), bytes, data);
        }
    }
}

impl<T: Primitive> Clone for Region<T> {
    fn clone(&self) -> Self {
        Region::shared(Arc::clone(&self.0))
    }
}

impl<T: Primitive> Default for Region<T> {
    fn default() -> Self {
        Region::new(Vec::new())
    }
}

impl<T: Primitive + std::fmt::Debug> std::fmt::Debug for Region<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Region").field(&self.0).finish()
    }
}

impl<T: Primitive + PartialEq> PartialEq for Region<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<T: Primitive> std::ops::Deref for Region<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T: Primitive> std::ops::DerefMut for Region<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.make_mut()
    }
}

impl<T: Primitive> From<Vec<T>> for Region<T> {
    fn from(data: Vec<T>) -> Self {
        Region::new(data)
    }
}

impl<T: Primitive> FromIterator<T> for Region<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Region::new(iter.into_iter().collect())
    }
}

impl<T: Primitive + Serialize> Serialize for Region<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let in_bridge = ENCODING.with(|e| match e.borrow_mut().as_mut() {
            Some(regions) => {
                regions.push(Arc::clone(&*self.0) as Arc<dyn SharedRegion>);
                true
            }
            None => false,
        });
        if in_bridge {
            // The array goes as the next region; the encoding keeps its length as a check.
            serializer.serialize_u64(self.0.len() as u64)
        } else {
            self.0.as_slice().serialize(serializer)
        }
    }
}

impl<'de, T: Primitive + Deserialize<'de>> Deserialize<'de> for Region<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let in_bridge = DECODING.with(|d| d.borrow().is_some());
        if !in_bridge {
            return Vec::<T>::deserialize(deserializer).map(Region::new);
        }
        let len = u64::deserialize(deserializer)?;
        DECODING
            .with(|d| {
                let mut d = d.borrow_mut();
                let state = d.as_mut().ok_or("no decoding in progress")?;
                let taken = take_region::<T>(&mut state.regions, len);
                if let Err(why) = &taken {
                    state.error.get_or_insert_with(|| why.clone());
                }
                taken
            })
            .map(Region::shared)
            .map_err(D::Error::custom)
    }
}

/// The next received region, of `len` elements of `T`.
pub(super) fn take_region<T: Primitive>(
    regions: &mut VecDeque<ReceivedRegion>,
    len: u64,
) -> std::result::Result<Arc<Vec<T>>, String> {
    let region = regions
        .pop_front()
        .ok_or_else(|| "the message has fewer regions than the type".to_string())?;
    if region.elem != T::TYPE {
        return Err(format!(
            "a region of {:?} was received for a Region of {:?}",
            region.elem,
            T::TYPE
        ));
    }
    let data = region
        .data
        .downcast::<Vec<T>>()
        .map_err(|_| "region buffer of an unexpected type".to_string())?;
    if data.len() as u64 != len {
        return Err(format!(
            "a region of {} elements was received where the encoding says {len}",
            data.len()
        ));
    }
    Ok(data)
}

// ----- sending -----

/// A region's array, shared with the value it came from.
pub(super) trait SharedRegion: Send + Sync {
    /// Adds the array to `parts` as a region.
    ///
    /// # Safety
    /// The caller keeps `self` alive, and so the array unchanged (it is shared), for as long as
    /// the returned parts exist.
    unsafe fn add_to(&self, parts: SendParts<'static>) -> SendParts<'static>;
}

impl<T: Primitive> SharedRegion for Vec<T> {
    unsafe fn add_to(&self, parts: SendParts<'static>) -> SendParts<'static> {
        // SAFETY: forwarded from the caller: the memory outlives the parts and is not written
        // while shared (Region copies a shared array before any write).
        let data: &'static [T] = unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len()) };
        parts.region(data)
    }
}

/// A received region: a vector of the element type the sender announced (`elem`), allocated
/// where the decoded [`Region`] will keep it (no copy, no allocation when decoding).
pub(super) struct ReceivedRegion {
    elem: ElementType,
    /// An `Arc<Vec<T>>` for `elem`'s `T`, not shared until decoded.
    data: AnyVec,
}

/// Calls `$body` with `$t` the Rust type of the element type `$elem` (bytes as `u8`).
macro_rules! with_elem {
    ($elem:expr, $t:ident => $body:expr) => {
        match $elem {
            ElementType::Byte | ElementType::U8 => {
                type $t = u8;
                $body
            }
            ElementType::I8 => {
                type $t = i8;
                $body
            }
            ElementType::I16 => {
                type $t = i16;
                $body
            }
            ElementType::U16 => {
                type $t = u16;
                $body
            }
            ElementType::I32 => {
                type $t = i32;
                $body
            }
            ElementType::U32 => {
                type $t = u32;
                $body
            }
            ElementType::I64 => {
                type $t = i64;
                $body
            }
            ElementType::U64 => {
                type $t = u64;
                $body
            }
            ElementType::F32 => {
                type $t = f32;
                $body
            }
            ElementType::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}

/// A vector for an incoming region: a spare one of its type and length (with the values of its
/// last use), or a new, zeroed one.
pub(super) fn region_buffer(shape: &RegionShape) -> Result<ReceivedRegion> {
    let size = shape.elem.size() as u64;
    if shape.bytes % size != 0 {
        return Err(Error::InvalidDatatype(format!(
            "a region of {} bytes is not a whole number of {:?}",
            shape.bytes, shape.elem
        )));
    }
    let n = usize::try_from(shape.bytes / size).map_err(|_| Error::NoMemory)?;
    let bytes = usize::try_from(shape.bytes).map_err(|_| Error::NoMemory)?;
    let data = match spare::take(shape.elem, n, bytes) {
        Some(data) => data,
        None => with_elem!(shape.elem, T => Arc::new(vec![T::default(); n]) as AnyVec),
    };
    Ok(ReceivedRegion {
        elem: shape.elem,
        data,
    })
}

/// Adds the received regions' vectors to `parts`, each run of one element type at once.
pub(super) fn add_received<'a>(
    mut parts: RecvParts<'a>,
    mut regions: &'a mut [ReceivedRegion],
) -> RecvParts<'a> {
    while let Some(first) = regions.first() {
        let elem = first.elem;
        let n = regions
            .iter()
            .position(|r| r.elem != elem)
            .unwrap_or(regions.len());
        let (run, rest) = std::mem::take(&mut regions).split_at_mut(n);
        regions = rest;
        // Every vector is of `elem`'s type and not shared yet (made by `region_buffer`), so
        // none is skipped.
        parts = with_elem!(elem, T => parts.regions(run.iter_mut().filter_map(|r| {
            let v = Arc::get_mut(&mut r.data)?.downcast_mut::<Vec<T>>()?;
            Some(&mut v[..])
        })));
    }
    parts
}
