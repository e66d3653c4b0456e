//! The serde bridge: any `T: Serialize + DeserializeOwned` travels as one custom-typed message.
//!
//! The value is encoded with [postcard] into the message's packed part. Fields wrapped in
//! [`Region`] are not encoded: their arrays travel as regions of the same message (zero-copy when
//! large, coalesced into the stream when small), and on the receiver they land in freshly
//! allocated vectors that the decoded value takes over without a copy. The receiver needs to know
//! nothing in advance: the shape of the message (encoded size, region lengths and element types)
//! sizes its buffers.
//!
//! ```no_run
//! use mpicd::custom::serde::{Region, Serde, SerdeBuffer};
//! use mpicd::SerdeExt;
//!
//! #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
//! struct Frame {
//!     name: String,
//!     step: u64,
//!     samples: Region<f64>, // sent as a region, never encoded
//! }
//!
//! let mpi = mpicd::init()?;
//! let world = mpi.world();
//! if world.rank() == 0 {
//!     let frame = Frame { name: "t0".into(), step: 1, samples: vec![0.5; 1 << 20].into() };
//!     world.send_serde(&frame, 1, 0)?;                 // or send_custom(&Serde(&frame), 1, 0)
//!     world.send_serde(&frame, 1, 1)?;
//! } else if world.rank() == 1 {
//!     let frame: Frame = world.recv_serde(0, 0)?;
//!     assert_eq!(frame.samples.len(), 1 << 20);
//!     // Non-blocking: a SerdeBuffer receives any serde message, decode() yields the value.
//!     let mut buf = SerdeBuffer::new();
//!     mpicd::scope(|s| world.irecv_custom(s, &mut buf, 0, 1)?.wait())?;
//!     assert_eq!(buf.decode::<Frame>()?, frame);
//! }
//! # Ok::<(), mpicd::Error>(())
//! ```
//!
//! # Why postcard
//! - It is maintained (1.x since 2022, with regular releases) and its wire format is specified
//!   and stable across 1.x, so two builds of mpicd agree on the encoding.
//! - It is compact (variable-length integers, no field names or type tags) and fast, and without
//!   its default features it depends only on serde and `cobs`.
//! - bincode, the usual alternative, was declared unmaintained by its authors (RUSTSEC-2025-0141,
//!   which names postcard among the replacements).
//!
//! Like bincode, postcard is not self-describing: `deserialize_any` (untagged enums,
//! `serde_json::Value`, `#[serde(flatten)]`) is not supported, and both sides must use the same
//! Rust type (a mismatch is usually, not always, detected as a decoding error).
//!
//! # Memory
//! A serializer pushes bytes and cannot pause at a fragment boundary, and a deserializer pulls
//! from complete input, so the encoded part is produced in one buffer before the send starts and
//! received into one buffer before decoding: a serde message costs its encoded size on each side,
//! on top of the engine's fixed bound. Put large arrays in [`Region`]s: they are never encoded or
//! copied, so the encoded part stays small whatever the payload.
//!
//! # Region outside the bridge
//! [`Region<T>`] serializes as a plain sequence of `T` with any other serializer (JSON, postcard
//! used directly, ...), so a type can use it and still be stored or logged as usual.

use super::parts::{CustomRecv, CustomSend, RecvParts, SendParts};
use super::{RegionShape, Shape};
use crate::datatype::{ElementType, Primitive};
use crate::error::{Error, Result};
use ::serde::de::{DeserializeOwned, Error as _};
use ::serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::any::Any;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;

/// Sends a serde value through [`crate::Communicator::send_custom`]:
/// `world.send_custom(&Serde(&value), dest, tag)`. Receive it with a [`SerdeBuffer`] or
/// [`crate::SerdeExt::recv_serde`].
pub struct Serde<'a, T: ?Sized>(pub &'a T);

impl<T: Serialize + Sync + ?Sized> CustomSend for Serde<'_, T> {
    fn parts(&self) -> Result<SendParts<'_>> {
        Ok(encode(self.0)?.into_parts())
    }
}

/// An array of primitives that a serde message carries as a region instead of encoding it.
///
/// It derefs to `[T]`; the array is shared (cheap to clone), and writing through
/// [`Region::make_mut`] or `DerefMut` copies it first if a send still uses it.
pub struct Region<T: Primitive>(Arc<Vec<T>>);

impl<T: Primitive> Region<T> {
    /// Wraps a vector (no copy).
    pub fn new(data: Vec<T>) -> Region<T> {
        Region(Arc::new(data))
    }

    /// The vector, without a copy unless a clone of this region is still alive.
    pub fn into_vec(self) -> Vec<T> {
        Arc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone())
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

impl<T: Primitive> Clone for Region<T> {
    fn clone(&self) -> Self {
        Region(Arc::clone(&self.0))
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
                regions.push(Arc::clone(&self.0) as Arc<dyn SharedRegion>);
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
            .map(|v| Region(Arc::new(v)))
            .map_err(D::Error::custom)
    }
}

/// The next received region as a `Vec<T>` of `len` elements.
fn take_region<T: Primitive>(
    regions: &mut VecDeque<Box<dyn ReceivedRegion>>,
    len: u64,
) -> std::result::Result<Vec<T>, String> {
    let region = regions
        .pop_front()
        .ok_or_else(|| "the message has fewer regions than the type".to_string())?;
    let elem = region.elem();
    if elem != T::TYPE {
        return Err(format!(
            "a region of {elem:?} was received for a Region of {:?}",
            T::TYPE
        ));
    }
    let data = region
        .into_any()
        .downcast::<Vec<T>>()
        .map_err(|_| "region buffer of an unexpected type".to_string())?;
    if data.len() as u64 != len {
        return Err(format!(
            "a region of {} elements was received where the encoding says {len}",
            data.len()
        ));
    }
    Ok(*data)
}

// ----- sending -----

/// A region's array, shared with the value it came from.
trait SharedRegion: Send + Sync {
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

thread_local! {
    /// The regions met while the bridge encodes a value on this thread.
    static ENCODING: RefCell<Option<Vec<Arc<dyn SharedRegion>>>> = const { RefCell::new(None) };
    /// The received regions while the bridge decodes a value on this thread.
    static DECODING: RefCell<Option<DecodeState>> = const { RefCell::new(None) };
}

/// A value encoded for sending: the packed part and the regions it refers to.
pub(crate) struct Encoded {
    bytes: Vec<u8>,
    regions: Vec<Arc<dyn SharedRegion>>,
}

/// Encodes `value` for the bridge; [`Region`]s inside it are collected, not encoded.
pub(crate) fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Encoded> {
    let scope = EncodeScope::enter();
    let bytes = postcard::to_allocvec(value);
    let regions = scope.finish();
    let bytes = bytes.map_err(|e| Error::InvalidArgument(format!("serde encoding failed: {e}")))?;
    Ok(Encoded { bytes, regions })
}

impl Encoded {
    /// The parts of one send, owning everything they point to.
    pub(crate) fn into_parts(self) -> SendParts<'static> {
        let Encoded { bytes, regions } = self;
        let mut parts = SendParts::new();
        for r in &regions {
            // SAFETY: `regions` moves into the packer below, which the parts own, so every
            // array stays alive (and, being shared, unchanged) as long as the parts.
            parts = unsafe { r.add_to(parts) };
        }
        let len = bytes.len();
        parts.packed(len, move |offset, dst| {
            let _owners = &regions;
            let start = usize::try_from(offset).unwrap_or(usize::MAX).min(len);
            let n = dst.len().min(len - start);
            dst[..n].copy_from_slice(&bytes[start..start + n]);
            Ok(n)
        })
    }
}

/// Collects regions while in scope; restores the enclosing encoding (if any) when left, also
/// on a panic in a `Serialize` impl.
struct EncodeScope {
    outer: Option<Vec<Arc<dyn SharedRegion>>>,
    done: bool,
}

impl EncodeScope {
    fn enter() -> EncodeScope {
        let outer = ENCODING.with(|e| e.replace(Some(Vec::new())));
        EncodeScope { outer, done: false }
    }

    fn finish(mut self) -> Vec<Arc<dyn SharedRegion>> {
        self.done = true;
        let outer = self.outer.take();
        ENCODING.with(|e| e.replace(outer)).unwrap_or_default()
    }
}

impl Drop for EncodeScope {
    fn drop(&mut self) {
        if !self.done {
            let outer = self.outer.take();
            ENCODING.with(|e| e.replace(outer));
        }
    }
}

// ----- receiving -----

/// A received region: a vector of the element type the sender announced.
trait ReceivedRegion: Send {
    fn elem(&self) -> ElementType;
    fn add_to<'a>(&'a mut self, parts: RecvParts<'a>) -> RecvParts<'a>;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Primitive> ReceivedRegion for Vec<T> {
    fn elem(&self) -> ElementType {
        T::TYPE
    }
    fn add_to<'a>(&'a mut self, parts: RecvParts<'a>) -> RecvParts<'a> {
        parts.region(&mut self[..])
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// A zeroed vector for an incoming region.
fn region_buffer(shape: &RegionShape) -> Result<Box<dyn ReceivedRegion>> {
    let size = shape.elem.size() as u64;
    if shape.bytes % size != 0 {
        return Err(Error::InvalidDatatype(format!(
            "a region of {} bytes is not a whole number of {:?}",
            shape.bytes, shape.elem
        )));
    }
    let n = usize::try_from(shape.bytes / size).map_err(|_| Error::NoMemory)?;
    Ok(match shape.elem {
        ElementType::Byte | ElementType::U8 => Box::new(vec![0u8; n]),
        ElementType::I8 => Box::new(vec![0i8; n]),
        ElementType::I16 => Box::new(vec![0i16; n]),
        ElementType::U16 => Box::new(vec![0u16; n]),
        ElementType::I32 => Box::new(vec![0i32; n]),
        ElementType::U32 => Box::new(vec![0u32; n]),
        ElementType::I64 => Box::new(vec![0i64; n]),
        ElementType::U64 => Box::new(vec![0u64; n]),
        ElementType::F32 => Box::new(vec![0f32; n]),
        ElementType::F64 => Box::new(vec![0f64; n]),
    })
}

/// What the bridge's decoding of one value uses.
struct DecodeState {
    regions: VecDeque<Box<dyn ReceivedRegion>>,
    /// The first region mismatch, reported instead of the deserializer's generic error.
    error: Option<String>,
}

/// Receives any serde message (its buffers sized from the message itself); [`SerdeBuffer::decode`]
/// then yields the value. For non-blocking receives and matched probes:
/// `world.irecv_custom(scope, &mut buffer, source, tag)` / `message.recv_custom(&mut buffer)`.
#[derive(Default)]
pub struct SerdeBuffer {
    packed: Vec<u8>,
    regions: Vec<Box<dyn ReceivedRegion>>,
}

impl SerdeBuffer {
    /// An empty buffer; it sizes itself to the message it receives.
    pub fn new() -> SerdeBuffer {
        SerdeBuffer::default()
    }

    /// Decodes the received message as a `T` (the buffer is emptied). Fails if the message does
    /// not hold a `T`: undecodable bytes, bytes left over, or regions that do not fit the
    /// type's [`Region`]s.
    pub fn decode<T: DeserializeOwned>(&mut self) -> Result<T> {
        let bytes = std::mem::take(&mut self.packed);
        let regions: VecDeque<_> = std::mem::take(&mut self.regions).into();
        let scope = DecodeScope::enter(regions);
        let result = postcard::take_from_bytes::<T>(&bytes);
        let state = scope.finish();
        let bad = |why: String| Error::InvalidDatatype(format!("serde decoding failed: {why}"));
        let (value, rest) = match (result, state.error) {
            (Ok(done), _) => done,
            (Err(_), Some(why)) => return Err(bad(why)),
            (Err(e), None) => return Err(bad(e.to_string())),
        };
        if !rest.is_empty() {
            return Err(bad(format!(
                "{} bytes left over: the message holds another type",
                rest.len()
            )));
        }
        if !state.regions.is_empty() {
            return Err(bad(format!(
                "{} regions left over: the message holds another type",
                state.regions.len()
            )));
        }
        Ok(value)
    }
}

impl CustomRecv for SerdeBuffer {
    fn resize(&mut self, shape: &Shape) -> Result<()> {
        let packed = usize::try_from(shape.packed_bytes).map_err(|_| Error::NoMemory)?;
        self.packed.clear();
        self.packed.resize(packed, 0);
        self.regions.clear();
        self.regions
            .try_reserve_exact(shape.region_count())
            .map_err(|_| Error::NoMemory)?;
        for r in shape.regions() {
            self.regions.push(region_buffer(&r)?);
        }
        Ok(())
    }

    fn parts(&mut self) -> Result<RecvParts<'_>> {
        let packed = &mut self.packed;
        let mut parts = RecvParts::new().packed(packed.len(), move |offset, src| {
            let start = usize::try_from(offset).map_err(|_| Error::InvalidMessage)?;
            packed
                .get_mut(start..start + src.len())
                .ok_or(Error::InvalidMessage)?
                .copy_from_slice(src);
            Ok(())
        });
        for r in self.regions.iter_mut() {
            parts = r.add_to(parts);
        }
        Ok(parts)
    }
}

/// Makes received regions available to [`Region`]'s `Deserialize` while in scope; restores the
/// enclosing decoding (if any) when left, also on a panic.
struct DecodeScope {
    outer: Option<DecodeState>,
    done: bool,
}

impl DecodeScope {
    fn enter(regions: VecDeque<Box<dyn ReceivedRegion>>) -> DecodeScope {
        let mine = DecodeState {
            regions,
            error: None,
        };
        let outer = DECODING.with(|d| d.replace(Some(mine)));
        DecodeScope { outer, done: false }
    }

    fn finish(mut self) -> DecodeState {
        self.done = true;
        let outer = self.outer.take();
        DECODING.with(|d| d.replace(outer)).unwrap_or(DecodeState {
            regions: VecDeque::new(),
            error: None,
        })
    }
}

impl Drop for DecodeScope {
    fn drop(&mut self) {
        if !self.done {
            let outer = self.outer.take();
            DECODING.with(|d| d.replace(outer));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::custom::parts::RecvAdapter;
    use crate::custom::{PackState, UnpackState};
    use ::serde::{Deserialize, Serialize};
    use std::collections::{BTreeMap, HashMap};

    /// Moves `value` through the bridge as the engine would (packed part in 7-byte pieces,
    /// regions copied into the receiver's buffers), without a transport.
    fn through_bridge<T: Serialize + ?Sized, U: DeserializeOwned>(value: &T) -> Result<U> {
        let mut sent = encode(value)?.into_parts();
        let packed_bytes = sent.packed_size()?;
        let regions = PackState::regions(&mut sent)?;
        let shape = Shape::new(
            packed_bytes,
            regions.iter().map(|r| RegionShape {
                bytes: r.bytes as u64,
                elem: r.elem,
            }),
        );
        let mut buffer = SerdeBuffer::new();
        {
            let mut recv = RecvAdapter::new(&mut buffer);
            recv.resize(&shape)?;
            assert!(recv.packed_capacity()? >= packed_bytes);
            let mut offset = 0u64;
            while offset < packed_bytes {
                let mut piece = vec![0u8; (packed_bytes - offset).min(7) as usize];
                let n = sent.pack(offset, &mut piece)?;
                recv.unpack(offset, &piece[..n])?;
                offset += n as u64;
            }
            let mine = UnpackState::regions(&mut recv)?;
            assert_eq!(mine.len(), regions.len());
            for (from, to) in regions.iter().zip(&mine) {
                assert_eq!(from.bytes, to.bytes);
                assert_eq!(from.elem, to.elem);
                // SAFETY: both regions are valid for `bytes` bytes and do not overlap.
                unsafe { std::ptr::copy_nonoverlapping(from.ptr, to.ptr, from.bytes) };
            }
        }
        drop(sent);
        buffer.decode()
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    enum Shape3 {
        Empty,
        Circle(f64),
        Rect { w: u32, h: u32 },
        Poly(Vec<(i32, i32)>),
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct Inner {
        name: String,
        tags: Vec<String>,
        shape: Shape3,
        weight: Option<f32>,
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct Outer {
        id: u64,
        inner: Vec<Inner>,
        by_name: BTreeMap<String, Inner>,
        counts: HashMap<u16, i64>,
        samples: Vec<f64>,
        big: Region<f64>,
        bytes: Region<u8>,
        nested: Vec<Region<i32>>,
        unit: (),
        text: String,
    }

    fn outer() -> Outer {
        let inner = |i: u32| Inner {
            name: format!("inner {i} ✓"),
            tags: (0..i).map(|t| "t".repeat(t as usize)).collect(),
            shape: match i % 4 {
                0 => Shape3::Empty,
                1 => Shape3::Circle(i as f64 / 3.0),
                2 => Shape3::Rect { w: i, h: i * 2 },
                _ => Shape3::Poly(vec![(1, -1), (i as i32, 7)]),
            },
            weight: (i % 2 == 0).then_some(i as f32),
        };
        Outer {
            id: u64::MAX - 3,
            inner: (0..6).map(inner).collect(),
            by_name: (0..4).map(|i| (format!("k{i}"), inner(i + 10))).collect(),
            counts: (0..50).map(|i| (i, -(i as i64) * 1000)).collect(),
            samples: (0..1000).map(|i| i as f64 * 0.1).collect(),
            big: (0..100_000).map(|i| i as f64).collect(),
            bytes: Region::new(b"raw bytes".to_vec()),
            nested: vec![
                Region::new(vec![1, 2, 3]),
                Region::default(),
                Region::new(vec![-9; 5000]),
            ],
            unit: (),
            text: String::new(),
        }
    }

    #[test]
    fn nested_structs_strings_maps_enums_round_trip() {
        let v = outer();
        let back: Outer = through_bridge(&v).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn regions_are_not_encoded() {
        let v = outer();
        let enc = encode(&v).unwrap();
        assert_eq!(enc.regions.len(), 5);
        // The 100 000 f64 of `big` are not in the encoding; the 1000 of `samples` are.
        assert!(
            enc.bytes.len() < 20_000,
            "encoded {} bytes",
            enc.bytes.len()
        );
        assert!(enc.bytes.len() > 8000);
    }

    #[test]
    fn plain_values_and_empty_encodings() {
        let s: String = through_bridge("hello, world").unwrap();
        assert_eq!(s, "hello, world");
        let u: () = through_bridge(&()).unwrap();
        assert_eq!(u, ());
        let v: Vec<Shape3> = through_bridge(&vec![Shape3::Empty; 3]).unwrap();
        assert_eq!(v, vec![Shape3::Empty; 3]);
        let r: Region<u16> = through_bridge(&Region::<u16>::default()).unwrap();
        assert!(r.is_empty());
    }

    #[test]
    fn mismatches_are_errors() {
        // A string read as an integer: bytes left over.
        let e = through_bridge::<_, u8>(&"abc".to_string()).unwrap_err();
        assert!(matches!(e, Error::InvalidDatatype(_)), "{e}");
        // A Region<f64> read as a Region<i32>: element types differ.
        let e = through_bridge::<_, Region<i32>>(&Region::new(vec![1.0f64])).unwrap_err();
        assert!(e.to_string().contains("F64"), "{e}");
        // Regions the type does not claim.
        let e = through_bridge::<_, u64>(&(7u64, Region::new(vec![1u8]))).unwrap_err();
        assert!(matches!(e, Error::InvalidDatatype(_)), "{e}");
        // Fewer regions than the type wants: the sender encoded a plain Vec.
        let e = through_bridge::<_, Region<u8>>(&vec![1u8, 2]).unwrap_err();
        assert!(e.to_string().contains("fewer regions"), "{e}");
    }

    #[test]
    fn region_is_a_plain_sequence_outside_the_bridge() {
        let r = Region::new(vec![1i32, -2, 3]);
        let direct = postcard::to_allocvec(&r).unwrap();
        assert_eq!(direct, postcard::to_allocvec(&vec![1i32, -2, 3]).unwrap());
        let back: Region<i32> = postcard::from_bytes(&direct).unwrap();
        assert_eq!(back, r);
        // Nothing leaks into the bridge's thread-local state.
        assert!(ENCODING.with(|e| e.borrow().is_none()));
        assert!(DECODING.with(|d| d.borrow().is_none()));
    }

    #[test]
    fn sending_shares_and_writing_copies() {
        let mut r = Region::new(vec![5u32; 4]);
        let parts = encode(&r).unwrap().into_parts();
        let before = r.as_ptr();
        r[0] = 6; // the send still holds the array: this copies
        assert_ne!(r.as_ptr(), before);
        drop(parts);
        r[1] = 7; // no longer shared: in place
        assert_eq!(&r[..], &[6, 7, 5, 5]);
        assert_eq!(r.into_vec(), vec![6, 7, 5, 5]);
    }
}
