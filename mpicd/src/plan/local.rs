//! A custom-typed value moved within one process without a message (a collective's own block
//! of objects): the receiver is resized to the sender's shape, the packed part goes through a
//! bounded buffer, piece by piece, and the regions are copied straight into the receiver's, as
//! one stream of bytes. What a message to oneself would do, without the transport.

use super::{PackState, UnpackState};
use crate::error::{Error, Result};
use crate::wire::{RegionShape, Shape};
use smallvec::SmallVec;

/// The most packed bytes held at once.
const CHUNK: u64 = 64 << 10;

/// Moves the value `send` describes into the one `recv` describes.
pub(crate) fn transfer(send: &mut dyn PackState, recv: &mut dyn UnpackState) -> Result<()> {
    let packed = send.packed_size()?;
    let regions = send.regions()?;
    if recv.resizes() {
        let shape = Shape::new(
            packed,
            regions.iter().map(|r| RegionShape {
                bytes: r.bytes as u64,
                elem: r.elem,
            }),
        );
        recv.resize(&shape)?;
    }
    let capacity = recv.packed_capacity()?;
    if packed > capacity {
        return Err(Error::Truncated {
            message_bytes: packed,
            buffer_bytes: capacity,
        });
    }
    // A small packed part (an object's header, say) goes through the stack.
    let mut chunk: SmallVec<[u8; 256]> = SmallVec::from_elem(0, packed.min(CHUNK) as usize);
    let mut at = 0;
    while at < packed {
        let want = (packed - at).min(CHUNK) as usize;
        let got = send.pack(at, &mut chunk[..want])?;
        if got == 0 {
            return Err(Error::InvalidDatatype(
                "the pack callback made no progress".into(),
            ));
        }
        recv.unpack(at, &chunk[..got])?;
        at += got as u64;
    }
    let targets = recv.regions()?;
    let (sent, room): (usize, usize) = (
        regions.iter().map(|r| r.bytes).sum(),
        targets.iter().map(|r| r.bytes).sum(),
    );
    if sent > room {
        return Err(Error::Truncated {
            message_bytes: sent as u64,
            buffer_bytes: room as u64,
        });
    }
    // The regions as one byte stream into the targets as one byte stream.
    let mut targets = targets.into_iter();
    let (mut into, mut used) = (targets.next(), 0usize);
    for r in &regions {
        let mut done = 0;
        while done < r.bytes {
            let Some(t) = into.filter(|t| used < t.bytes) else {
                (into, used) = (targets.next(), 0);
                continue;
            };
            let n = (r.bytes - done).min(t.bytes - used);
            // SAFETY: the states promise their regions valid (the sender's readable, the
            // receiver's writable and not overlapping anything else) until they are dropped.
            unsafe { std::ptr::copy(r.ptr.add(done), t.ptr.add(used), n) };
            done += n;
            used += n;
        }
    }
    Ok(())
}
