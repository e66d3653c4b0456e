//! The stream of a custom-typed message: the packed part followed by the coalesced small
//! regions. [`StreamWriter`] produces it on the sender, piece by piece, from the pack callback
//! and region memory; [`StreamReader`] consumes it on the receiver, in order, into the unpack
//! callback and the receiver's regions.
//!
//! Both walk the region list with a cursor (region index and bytes done in it), skipping the
//! zero-copy regions, so a message costs no per-region bookkeeping beyond the list the type
//! provides. The writer walks the sender's own regions; the reader walks the sender's region
//! runs (from the lead) and the receiver's regions in lockstep: a coalesced region occupies the
//! sender's length in the stream, which the receive checked to fit the receiver's region.

use super::{PackState, RawRegion, RawRegionMut, UnpackState};
use crate::error::{Error, Result};
use crate::wire::{Shape, ShapeRun};
use std::ptr;

/// Copies `n` bytes from `src` to `dst`; regions of a few bytes are copied inline, without a
/// call to `memcpy`.
///
/// # Safety
/// `src` must be readable and `dst` writable for `n` bytes, and the two must not overlap.
#[inline(always)]
pub(in crate::plan) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: every access below stays within the first `n` bytes of `src` and `dst` (the
    // pairs of loads and stores overlap each other, never the other buffer).
    unsafe {
        if n > 32 {
            ptr::copy_nonoverlapping(src, dst, n);
        } else if n >= 16 {
            let a = ptr::read_unaligned(src as *const u128);
            let b = ptr::read_unaligned(src.add(n - 16) as *const u128);
            ptr::write_unaligned(dst as *mut u128, a);
            ptr::write_unaligned(dst.add(n - 16) as *mut u128, b);
        } else if n >= 8 {
            let a = ptr::read_unaligned(src as *const u64);
            let b = ptr::read_unaligned(src.add(n - 8) as *const u64);
            ptr::write_unaligned(dst as *mut u64, a);
            ptr::write_unaligned(dst.add(n - 8) as *mut u64, b);
        } else if n >= 4 {
            let a = ptr::read_unaligned(src as *const u32);
            let b = ptr::read_unaligned(src.add(n - 4) as *const u32);
            ptr::write_unaligned(dst as *mut u32, a);
            ptr::write_unaligned(dst.add(n - 4) as *mut u32, b);
        } else if n > 0 {
            let (a, b, c) = (*src, *src.add(n / 2), *src.add(n - 1));
            *dst = a;
            *dst.add(n / 2) = b;
            *dst.add(n - 1) = c;
        }
    }
}

/// The region list of one operation, kept by the engine until the operation completes.
#[derive(Debug)]
pub(crate) struct RegionList<T>(pub(crate) Vec<T>);

impl<T> Default for RegionList<T> {
    fn default() -> Self {
        RegionList(Vec::new())
    }
}

// SAFETY: the pointers point into memory that the operation's state keeps alive and that only
// the engine (under its mutex) touches while the operation runs.
unsafe impl Send for RegionList<RawRegion> {}
// SAFETY: as above.
unsafe impl Send for RegionList<RawRegionMut> {}

impl<T> std::ops::Deref for RegionList<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

fn out_of_order(offset: u64, expected: u64) -> Error {
    Error::Transport(format!("stream piece at {offset}, expected {expected}"))
}

fn past_the_regions() -> Error {
    Error::Transport("stream longer than its coalesced regions".into())
}

/// Where a walk over the coalesced regions stands: the run of the shape, the region (an index
/// into the region list) and how many bytes of that region the stream already holds.
#[derive(Debug, Default, Clone, Copy)]
struct Cursor {
    run: usize,
    region: usize,
    offset: usize,
}

/// Walks `len` stream bytes over the coalesced regions (those of `runs` shorter than
/// `threshold`), from `cursor` on, and moves the cursor past them. For every region it enters,
/// `region_at(region, bytes)` checks the region against its run's length `bytes` and gives its
/// address; then `copy(address, at, pos, n)` moves `n` bytes between offset `at` of the region
/// and offset `pos` of the piece. The walk guarantees `at + n <= bytes` and `pos + n <= len`:
/// the writer and the reader share it and differ only in the direction of the copy.
#[inline(always)]
fn walk<R, P: Copy>(
    cursor: &mut Cursor,
    runs: &[ShapeRun],
    threshold: u64,
    regions: &[R],
    len: usize,
    region_at: impl Fn(&R, usize) -> Result<P>,
    mut copy: impl FnMut(P, usize, usize, usize),
) -> Result<()> {
    // The cursor lives in locals while bytes are copied (stores through the copy could
    // otherwise alias it, as far as the compiler knows).
    let Cursor {
        mut run,
        mut region,
        mut offset,
    } = *cursor;
    let mut pos = 0;
    let walked = 'walk: loop {
        if pos == len {
            break Ok(());
        }
        let Some(r) = runs.get(run) else {
            break Err(past_the_regions());
        };
        let bytes = r.region.bytes;
        if region >= r.end || bytes == 0 || bytes >= threshold {
            // Done with this run, or nothing of it is in the stream.
            region = region.max(r.end);
            run += 1;
            continue;
        }
        let bytes = bytes as usize;
        let Some(these) = regions.get(region..r.end) else {
            break Err(past_the_regions());
        };
        let mut these = these.iter();
        if offset > 0 {
            // The rest of a region an earlier piece started.
            let Some(m) = these.next() else {
                break Err(past_the_regions());
            };
            let p = match region_at(m, bytes) {
                Ok(p) => p,
                Err(e) => break Err(e),
            };
            let n = (bytes - offset).min(len - pos);
            copy(p, offset, pos, n);
            pos += n;
            offset += n;
            if offset < bytes {
                continue; // the piece ended inside this region
            }
            region += 1;
            offset = 0;
        }
        // Whole regions, as many as the piece holds.
        let whole = ((len - pos) / bytes).min(these.len());
        for m in these.by_ref().take(whole) {
            let p = match region_at(m, bytes) {
                Ok(p) => p,
                Err(e) => break 'walk Err(e),
            };
            copy(p, 0, pos, bytes);
            pos += bytes;
        }
        region += whole;
        if pos < len {
            if let Some(m) = these.next() {
                // The start of a region the piece ends in.
                let p = match region_at(m, bytes) {
                    Ok(p) => p,
                    Err(e) => break Err(e),
                };
                offset = len - pos;
                copy(p, 0, pos, offset);
                pos = len;
            }
        }
    };
    *cursor = Cursor {
        run,
        region,
        offset,
    };
    walked
}

/// Produces the sender's stream.
pub(crate) struct StreamWriter {
    packed_bytes: u64,
    zcopy_threshold: u64,
    /// Stream offset of the next coalesced byte.
    at: u64,
    cursor: Cursor,
    /// Coalesced regions are copied with non-temporal stores (see [`Self::set_streaming`]).
    streaming: bool,
}

/// Pieces of at least this many bytes are copied with non-temporal stores when the writer
/// streams (shorter ones would mostly be partial cache lines).
const STREAMING_PIECE: usize = 1024;

impl StreamWriter {
    /// A writer for a stream of `packed_bytes` packed bytes followed by the regions shorter
    /// than `zcopy_threshold`.
    pub(crate) fn new(packed_bytes: u64, zcopy_threshold: u64) -> StreamWriter {
        StreamWriter {
            packed_bytes,
            zcopy_threshold,
            at: packed_bytes,
            cursor: Cursor::default(),
            streaming: false,
        }
    }

    /// Whether the stream from `offset` on is coalesced regions only (no packed bytes).
    pub(crate) fn past_packed(&self, offset: u64) -> bool {
        offset >= self.packed_bytes
    }

    /// Whether the next [`Self::fill`] copies long coalesced regions with non-temporal stores
    /// (`ops::stream_copy` decides, fragment by fragment).
    pub(crate) fn set_streaming(&mut self, on: bool) {
        self.streaming = on;
    }

    /// Fills all of `dst` with the stream from `offset` (the caller never asks past the end).
    /// Pieces beyond the packed part must follow each other without gaps. `regions` is the
    /// sender's region list and `shape` its shape, the same at every call; a region whose
    /// length differs from its shape's is an error (nothing is read past a region).
    pub(crate) fn fill(
        &mut self,
        state: &mut dyn PackState,
        shape: &Shape,
        regions: &[RawRegion],
        offset: u64,
        dst: &mut [u8],
    ) -> Result<()> {
        let mut done = 0usize;
        while done < dst.len() && offset + (done as u64) < self.packed_bytes {
            let at = offset + done as u64;
            let want = ((self.packed_bytes - at) as usize).min(dst.len() - done);
            let used = state.pack(at, &mut dst[done..done + want])?;
            if used == 0 || used > want {
                return Err(Error::Callback {
                    callback: "pack",
                    code: crate::error::class::ERR_OTHER,
                });
            }
            done += used;
        }
        let rest = &mut dst[done..];
        if rest.is_empty() {
            return Ok(());
        }
        let rest_offset = offset + done as u64;
        if rest_offset != self.at {
            return Err(out_of_order(rest_offset, self.at));
        }
        let (out, len, streaming) = (rest.as_mut_ptr(), rest.len(), self.streaming);
        let source = |r: &RawRegion, bytes: usize| {
            if r.bytes == bytes {
                Ok(r.ptr)
            } else {
                Err(Error::InvalidDatatype(format!(
                    "a region of {} bytes where its shape says {bytes}",
                    r.bytes
                )))
            }
        };
        walk(
            &mut self.cursor,
            shape.run_slice(),
            self.zcopy_threshold,
            regions,
            len,
            source,
            // SAFETY: the region is readable for its `bytes` bytes (PackState's contract, its
            // length checked by `source`) and `walk` keeps `at + n <= bytes` and
            // `pos + n <= len`; a region never overlaps our buffer.
            |src: *const u8, at, pos, n| unsafe {
                if streaming && n >= STREAMING_PIECE {
                    super::copy_streaming(out.add(pos), src.add(at), n)
                } else {
                    copy_bytes(src.add(at), out.add(pos), n)
                }
            },
        )?;
        self.at += len as u64;
        Ok(())
    }
}

/// Consumes the receiver's stream.
pub(crate) struct StreamReader {
    packed_bytes: u64,
    zcopy_threshold: u64,
    /// Next expected stream offset (pieces arrive in order).
    next: u64,
    /// The sender's run the next coalesced byte belongs to, its region (an index into both
    /// region lists), and how many bytes of that region arrived already.
    cursor: Cursor,
}

impl StreamReader {
    /// A reader for a stream of `packed_bytes` packed bytes followed by the regions (of the
    /// sender's shape) shorter than `zcopy_threshold`.
    pub(crate) fn new(packed_bytes: u64, zcopy_threshold: u64) -> StreamReader {
        StreamReader {
            packed_bytes,
            zcopy_threshold,
            next: 0,
            cursor: Cursor::default(),
        }
    }

    /// Delivers the stream piece that starts at `offset`. `shape` is the sender's shape and
    /// `regions` the receiver's regions, the same at every call.
    pub(crate) fn consume(
        &mut self,
        state: &mut dyn UnpackState,
        shape: &Shape,
        regions: &[RawRegionMut],
        offset: u64,
        src: &[u8],
    ) -> Result<()> {
        if offset != self.next {
            return Err(out_of_order(offset, self.next));
        }
        self.next += src.len() as u64;
        let packed_end = ((self.packed_bytes.saturating_sub(offset)) as usize).min(src.len());
        if packed_end > 0 {
            state.unpack(offset, &src[..packed_end])?;
        }
        let rest = &src[packed_end..];
        let (input, len) = (rest.as_ptr(), rest.len());
        let fits = |m: &RawRegionMut, bytes: usize| {
            // Checked when the receive started; never write past a region.
            if m.bytes < bytes {
                Err(Error::truncated(bytes as u64, m.bytes as u64))
            } else {
                Ok(m.ptr)
            }
        };
        walk(
            &mut self.cursor,
            shape.run_slice(),
            self.zcopy_threshold,
            regions,
            len,
            fits,
            // SAFETY: the region is writable for at least `bytes` bytes (UnpackState's
            // contract, checked by `fits`) and `walk` keeps `at + n <= bytes` and
            // `pos + n <= len`; a region never overlaps the fragment buffer.
            |dst: *mut u8, at, pos, n| unsafe { copy_bytes(input.add(pos), dst.add(at), n) },
        )
    }
}

#[cfg(test)]
mod tests;
