//! A custom-typed value moved within one process without a message (a collective's own block
//! of objects): the receiver is resized to the sender's shape, the packed part goes through a
//! bounded buffer, piece by piece, and the regions are copied straight into the receiver's, as
//! one stream of bytes. What a message to oneself would do, without the transport. The node
//! collectives of objects (`schedule/node`) take the receiving half, [`prepare`] and
//! [`fill_regions`], for an object whose parts lie in shared memory.

use super::{PackState, RawRegion, UnpackState};
use crate::error::{Error, Result};
use crate::wire::{RegionShape, Shape};
use smallvec::SmallVec;

/// The most packed bytes held at once.
const CHUNK: u64 = 64 << 10;

/// Moves the value `send` describes into the one `recv` describes.
pub(crate) fn transfer(send: &mut dyn PackState, recv: &mut dyn UnpackState) -> Result<()> {
    let packed = send.packed_size()?;
    let regions = send.regions()?;
    prepare(recv, &shape_of(packed, &regions))?;
    // A small packed part (an object's header, say) goes through the stack.
    let mut chunk: SmallVec<[u8; 256]> = SmallVec::from_elem(0, packed.min(CHUNK) as usize);
    let mut at = 0;
    while at < packed {
        let want = (packed - at).min(CHUNK) as usize;
        let got = pack_some(send, at, &mut chunk[..want])?;
        recv.unpack(at, &chunk[..got])?;
        at += got as u64;
    }
    fill_regions(recv, regions.iter().map(|r| (r.ptr, r.bytes)))
}

/// The shape of a value of `packed` bytes and `regions`.
pub(crate) fn shape_of(packed: u64, regions: &[RawRegion]) -> Shape {
    Shape::new(
        packed,
        regions.iter().map(|r| RegionShape {
            bytes: r.bytes as u64,
            elem: r.elem,
        }),
    )
}

/// Packs bytes of `send` from `at` into `dst`: how many (never 0: a callback that makes no
/// progress fails).
pub(crate) fn pack_some(send: &mut dyn PackState, at: u64, dst: &mut [u8]) -> Result<usize> {
    match send.pack(at, dst)? {
        0 => Err(Error::InvalidDatatype(
            "the pack callback made no progress".into(),
        )),
        got => Ok(got),
    }
}

/// Sizes `recv` for a value of `shape` (its resize callback, if it has one) and checks that it
/// then holds the packed part.
pub(crate) fn prepare(recv: &mut dyn UnpackState, shape: &Shape) -> Result<()> {
    if recv.resizes() {
        recv.resize(shape)?;
    }
    let capacity = recv.packed_capacity()?;
    if shape.packed_bytes > capacity {
        return Err(Error::truncated(shape.packed_bytes, capacity));
    }
    Ok(())
}

/// Copies `sources` (address and length of each, in order) into `recv`'s regions as one
/// stream of bytes; more bytes than those regions hold is a truncation.
///
/// The sources must be readable for their lengths and share no byte with `recv`'s regions.
pub(crate) fn fill_regions(
    recv: &mut dyn UnpackState,
    sources: impl Iterator<Item = (*const u8, usize)> + Clone,
) -> Result<()> {
    let targets = recv.regions()?;
    let (sent, room): (usize, usize) = (
        sources.clone().map(|(_, n)| n).sum(),
        targets.iter().map(|r| r.bytes).sum(),
    );
    if sent > room {
        return Err(Error::truncated(sent as u64, room as u64));
    }
    let mut targets = targets.into_iter();
    let (mut into, mut used) = (targets.next(), 0usize);
    for (ptr, bytes) in sources {
        let mut done = 0;
        while done < bytes {
            let Some(t) = into.filter(|t| used < t.bytes) else {
                (into, used) = (targets.next(), 0);
                continue;
            };
            let n = (bytes - done).min(t.bytes - used);
            // SAFETY: the sources are readable (the caller's promise: a sender state's
            // regions, valid until it is dropped, or shared memory published to this reader);
            // the receiver's regions are writable and overlap nothing else until it is dropped.
            unsafe { std::ptr::copy(ptr.add(done), t.ptr.add(used), n) };
            done += n;
            used += n;
        }
    }
    Ok(())
}
