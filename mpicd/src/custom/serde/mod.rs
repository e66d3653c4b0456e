//! The serde bridge: any `T: Serialize + DeserializeOwned` travels as one custom-typed message.
//!
//! The value is encoded into the message's packed part: postcard's encoding, except that a
//! sequence or tuple of at least 16 numbers of one kind (a `Vec<f64>`, `Vec<u8>`, `[i32; 64]`,
//! each inner vector of a `Vec<Vec<f32>>`, the vectors of a struct) is a raw little-endian array,
//! copied in and read back without varint encoding (`custom/serde/format.rs` tells the format).
//! Fields wrapped in [`Region`] are not encoded: their arrays travel as regions of the same
//! message (zero-copy when large, coalesced into the stream when small), and on the receiver
//! they land in freshly allocated vectors that the decoded value takes over without a copy. The
//! receiver needs to know nothing in advance: the shape of the message (encoded size, region
//! lengths and element types) sizes its buffers.
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
//! # Memory and copies
//! A serializer pushes bytes and cannot pause at a fragment boundary, and a deserializer pulls
//! from complete input, so the encoded part is produced in one buffer before the send starts and
//! received into one buffer before decoding: a serde message costs its encoded size on each side,
//! on top of the engine's fixed bound. The arrays of numbers in it are copied once into that
//! buffer (from the values `Serialize` hands over, in a loop specialised for the element type,
//! which the compiler vectorises for a `Vec` of numbers) and once out of it into the decoded
//! value (element by element: serde's `Vec` visitors take one element per call); only
//! [`Region`]s travel without either copy. The bridge cannot send a plain `Vec<f64>` from the
//! caller's memory: serde hands each element by a reference that is valid only during that call
//! (a `Serialize` impl may serialize a temporary, or a `Mutex`'s contents whose lock it then
//! releases), so nothing proves the memory outlives the send. A [`Region`]'s array is shared
//! with the send instead (an `Arc`), which is what makes it safe to send in place, also from
//! `isend_serde`, which returns before the send completes and does not borrow the value. Use
//! [`Region`]s for the large arrays of a message sent often; plain vectors of numbers cost two
//! copies, no longer a varint per element. A receiver that gets the same kind of value again
//! and again decodes into the previous one ([`SerdeBuffer::decode_into`],
//! [`crate::SerdeExt::recv_serde_into`]) and so reuses its vectors.
//!
//! Freeing a large buffer and faulting in fresh pages for the next one cost as much as
//! encoding it, so the bridge keeps what it frees for the next messages:
//! - the buffers of large encodings and packed parts (64 KiB and more) go back to a pool when
//!   their message is done. The pool holds at most what the bridge had in use at once at its
//!   peak (it allocates only when no kept buffer fits, and then first frees kept ones too small,
//!   as many bytes as it allocates), and at most 1 GiB: a sender with 64 messages of 8 MiB in
//!   flight keeps 512 MiB for its next window. A receiver takes its buffer when the first piece
//!   of the packed part arrives, not when the message is matched, so a receiver with many
//!   receives posted holds about one buffer per message being received or decoded, not one per
//!   posted receive; the buffer is filled as the pieces arrive (never zeroed first).
//! - the vector of a [`Region`] dropped whole (no clone left, 512 bytes or more) is kept on its
//!   thread, up to 1 GiB, for the next received region of the same element type and length,
//!   which the message then overwrites (every bit pattern is a valid number).
//!
//! [`release_buffers`] frees both. `isend_serde` also lets the engine progress every 256 KiB of
//! a large encoding, so the transfers of the messages sent before go on meanwhile. This runs
//! the callbacks of other operations (packing and unpacking) in the middle of the value's
//! `Serialize`: a `Serialize` impl must not hold a lock that such a callback takes.
//!
//! # Region outside the bridge
//! [`Region<T>`] serializes as a plain sequence of `T` with any other serializer (JSON, postcard
//! used directly, ...), so a type can use it and still be stored or logged as usual.

mod de;
mod format;
mod pool;
mod probe;
mod region;
mod ser;
mod spare;

pub use region::Region;

/// Frees the buffers the bridge keeps for its next large messages, and the vectors of dropped
/// [`Region`]s this thread keeps for its next received regions (see *Memory and copies*): for
/// a process done with serde messages for a while, or low on memory.
pub fn release_buffers() {
    pool::release();
    spare::release();
}

use super::parts::{CustomRecv, CustomSend, RecvParts, SendParts};
use super::Shape;
use crate::error::{Error, Result};
use ::serde::de::DeserializeOwned;
use ::serde::Serialize;
use region::{add_received, region_buffer, ReceivedRegion, SharedRegion};
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
    encode_progressing(value, None)
}

/// [`encode`], calling `progress` every 256 KiB of output (a sender moves its earlier messages
/// on meanwhile).
pub(crate) fn encode_progressing<T: Serialize + ?Sized>(
    value: &T,
    progress: Option<&mut dyn FnMut()>,
) -> Result<Encoded> {
    let scope = EncodeScope::enter();
    // Whatever progress runs (other operations' callbacks) serializes outside this encoding:
    // the regions met so far are put aside meanwhile.
    let mut outside = progress.map(|progress| {
        move || {
            let mine = ENCODING.with(|e| e.take());
            progress();
            ENCODING.with(|e| *e.borrow_mut() = mine);
        }
    });
    let bytes = ser::to_bytes(value, outside.as_mut().map(|p| p as &mut dyn FnMut()));
    let regions = scope.finish();
    let bytes = bytes.map_err(|e| Error::InvalidArgument(format!("serde encoding failed: {e}")))?;
    Ok(Encoded { bytes, regions })
}

impl Encoded {
    /// The parts of one send, owning everything they point to.
    pub(crate) fn into_parts(self) -> SendParts<'static> {
        let Encoded { bytes, regions } = self;
        let bytes = pool::Pooled(bytes); // back to the pool when the send is done
        let mut parts = SendParts::new();
        for r in &regions {
            // SAFETY: `regions` moves into the packer below, which the parts own, so every
            // array stays alive (and, being shared, unchanged) as long as the parts.
            parts = unsafe { r.add_to(parts) };
        }
        let len = bytes.0.len();
        parts.packed(len, move |offset, dst| {
            let _owners = &regions;
            let start = usize::try_from(offset).unwrap_or(usize::MAX).min(len);
            let n = dst.len().min(len - start);
            dst[..n].copy_from_slice(&bytes.0[start..start + n]);
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

/// What the bridge's decoding of one value uses.
struct DecodeState {
    regions: VecDeque<ReceivedRegion>,
    /// The first region mismatch, reported instead of the deserializer's generic error.
    error: Option<String>,
}

/// Receives any serde message (its buffers sized from the message itself); [`SerdeBuffer::decode`]
/// then yields the value. For non-blocking receives and matched probes:
/// `world.irecv_custom(scope, &mut buffer, source, tag)` / `message.recv_custom(&mut buffer)`.
#[derive(Default)]
pub struct SerdeBuffer {
    /// The packed part received so far.
    packed: Vec<u8>,
    /// The size of the packed part the sender announced.
    expected: usize,
    regions: Vec<ReceivedRegion>,
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
        self.decode_with(de::from_bytes::<T>)
    }

    /// Decodes the received message into `place`, reusing its allocations where the type can
    /// (serde's `deserialize_in_place`: a `Vec` keeps its buffer, and so do the vectors in it),
    /// which saves allocating and faulting in a new value for each message received into the
    /// same object. Fails as [`SerdeBuffer::decode`] does; `place` then holds an unspecified
    /// (valid) value.
    pub fn decode_into<T: DeserializeOwned>(&mut self, place: &mut T) -> Result<()> {
        self.decode_with(|bytes| de::from_bytes_in_place(bytes, place))
    }

    fn decode_with<R>(&mut self, run: impl FnOnce(&[u8]) -> format::FormatResult<R>) -> Result<R> {
        let bytes = std::mem::take(&mut self.packed);
        if bytes.len() != std::mem::take(&mut self.expected) {
            pool::give(bytes);
            self.regions.clear();
            return Err(Error::InvalidDatatype(
                "serde decoding failed: the message was not received whole".into(),
            ));
        }
        let regions: VecDeque<_> = std::mem::take(&mut self.regions).into();
        let scope = DecodeScope::enter(regions);
        let result = run(&bytes);
        pool::give(bytes);
        let state = scope.finish();
        let bad = |why: String| Error::InvalidDatatype(format!("serde decoding failed: {why}"));
        let value = match (result, state.error) {
            (Ok(value), _) => value,
            (Err(_), Some(why)) => return Err(bad(why)),
            (Err(e), None) => return Err(bad(e.0)),
        };
        if !state.regions.is_empty() {
            return Err(bad(format!(
                "{} regions left over: the message holds another type",
                state.regions.len()
            )));
        }
        Ok(value)
    }
}

impl Drop for SerdeBuffer {
    fn drop(&mut self) {
        pool::give(std::mem::take(&mut self.packed));
    }
}

impl CustomRecv for SerdeBuffer {
    fn resize(&mut self, shape: &Shape) -> Result<()> {
        let packed = usize::try_from(shape.packed_bytes).map_err(|_| Error::NoMemory)?;
        // Filled as the pieces arrive (never zeroed first); `expected` tells a complete part.
        // A buffer too small goes back now, and its replacement is taken when the first piece
        // arrives: with many receives posted, a message then takes the buffer that the one
        // before it just left (warm in cache) instead of each holding one from its match on.
        if self.packed.capacity() < packed {
            pool::give(std::mem::take(&mut self.packed));
        }
        self.packed.clear();
        self.expected = packed;
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
        let (packed, expected) = (&mut self.packed, self.expected);
        let parts = RecvParts::new().packed(expected, move |offset, src| {
            // Pieces arrive in order and without gaps (the engine's contract): each one extends
            // the part, within the capacity `resize` made.
            let start = usize::try_from(offset).map_err(|_| Error::InvalidMessage)?;
            if start != packed.len() || src.len() > expected - start {
                return Err(Error::InvalidMessage);
            }
            if packed.capacity() < expected {
                *packed = pool::take(expected);
            }
            packed.extend_from_slice(src);
            Ok(())
        });
        Ok(add_received(parts, &mut self.regions))
    }
}

/// Makes received regions available to [`Region`]'s `Deserialize` while in scope; restores the
/// enclosing decoding (if any) when left, also on a panic.
struct DecodeScope {
    outer: Option<DecodeState>,
    done: bool,
}

impl DecodeScope {
    fn enter(regions: VecDeque<ReceivedRegion>) -> DecodeScope {
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
mod tests;
#[cfg(test)]
mod tests_paths;
#[cfg(test)]
mod timing;
