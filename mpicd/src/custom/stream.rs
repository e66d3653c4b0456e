//! The stream of a custom-typed message: the packed part followed by the coalesced small
//! regions. [`StreamWriter`] produces it on the sender, piece by piece, from the pack callback
//! and region memory; [`StreamReader`] consumes it on the receiver, in order, into the unpack
//! callback and the receiver's regions.

use super::{PackState, UnpackState};
use crate::error::{Error, Result};

/// A coalesced region: where it sits in the stream and where its bytes live.
#[derive(Debug, Clone, Copy)]
struct Span {
    stream_offset: u64,
    bytes: usize,
    ptr: *mut u8,
}

// SAFETY: the spans point into memory that the operation's state keeps alive and that only the
// engine (under its mutex) touches while the operation runs.
unsafe impl Send for Span {}

/// Finds, for each stream offset, the coalesced spans it covers, in order.
#[derive(Debug, Default)]
struct Spans {
    spans: Vec<Span>,
    cursor: usize,
}

impl Spans {
    fn new(packed_bytes: u64, regions: impl Iterator<Item = (*mut u8, usize)>) -> Spans {
        let mut at = packed_bytes;
        let spans = regions
            .map(|(ptr, bytes)| {
                let s = Span {
                    stream_offset: at,
                    bytes,
                    ptr,
                };
                at += bytes as u64;
                s
            })
            .collect();
        Spans { spans, cursor: 0 }
    }

    /// Calls `f(span_ptr_at_offset, stream_slice_range)` for each part of `[offset, offset+len)`
    /// that falls in a span. Offsets must not go backwards between calls.
    fn visit(
        &mut self,
        offset: u64,
        len: usize,
        mut f: impl FnMut(*mut u8, std::ops::Range<usize>),
    ) {
        let end = offset + len as u64;
        while let Some(s) = self.spans.get(self.cursor) {
            let s_end = s.stream_offset + s.bytes as u64;
            if s_end <= offset {
                self.cursor += 1;
                continue;
            }
            if s.stream_offset >= end {
                break;
            }
            let from = offset.max(s.stream_offset);
            let to = end.min(s_end);
            // SAFETY of the pointer arithmetic is the caller's: `from - s.stream_offset` is
            // within the span's `bytes`.
            let ptr = s.ptr.wrapping_add((from - s.stream_offset) as usize);
            f(ptr, (from - offset) as usize..(to - offset) as usize);
            if to == s_end {
                self.cursor += 1;
            } else {
                break;
            }
        }
    }
}

/// Produces the sender's stream.
pub(crate) struct StreamWriter {
    packed_bytes: u64,
    spans: Spans,
}

impl StreamWriter {
    pub(crate) fn new(
        packed_bytes: u64,
        coalesced: impl Iterator<Item = (*const u8, usize)>,
    ) -> StreamWriter {
        StreamWriter {
            packed_bytes,
            spans: Spans::new(packed_bytes, coalesced.map(|(p, n)| (p as *mut u8, n))),
        }
    }

    /// Fills all of `dst` with the stream from `offset` (the caller never asks past the end).
    pub(crate) fn fill(
        &mut self,
        state: &mut dyn PackState,
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
        let rest_offset = offset + done as u64;
        let rest = &mut dst[done..];
        self.spans.visit(rest_offset, rest.len(), |src, range| {
            // SAFETY: src points into a region the state guarantees valid for the operation,
            // with at least range.len() bytes left in its span.
            let s = unsafe { std::slice::from_raw_parts(src as *const u8, range.len()) };
            rest[range].copy_from_slice(s);
        });
        Ok(())
    }
}

/// Consumes the receiver's stream.
pub(crate) struct StreamReader {
    packed_bytes: u64,
    spans: Spans,
    /// Next expected stream offset (pieces arrive in order).
    next: u64,
}

impl StreamReader {
    pub(crate) fn new(
        packed_bytes: u64,
        coalesced: impl Iterator<Item = (*mut u8, usize)>,
    ) -> StreamReader {
        StreamReader {
            packed_bytes,
            spans: Spans::new(packed_bytes, coalesced),
            next: 0,
        }
    }

    /// Delivers the stream piece that starts at `offset`.
    pub(crate) fn consume(
        &mut self,
        state: &mut dyn UnpackState,
        offset: u64,
        src: &[u8],
    ) -> Result<()> {
        if offset != self.next {
            return Err(Error::Transport(format!(
                "stream piece at {offset}, expected {}",
                self.next
            )));
        }
        self.next += src.len() as u64;
        let packed_end = ((self.packed_bytes.saturating_sub(offset)) as usize).min(src.len());
        if packed_end > 0 {
            state.unpack(offset, &src[..packed_end])?;
        }
        let rest = &src[packed_end..];
        self.spans
            .visit(offset + packed_end as u64, rest.len(), |dst, range| {
                // SAFETY: dst points into a receiver region (valid, exclusive for the operation)
                // with at least range.len() bytes left in its span; the plan was checked against the
                // receiver's region lengths before any byte was written.
                let d = unsafe { std::slice::from_raw_parts_mut(dst, range.len()) };
                d.copy_from_slice(&rest[range]);
            });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::custom::{RawRegion, RawRegionMut};

    /// Packs `data` 3 bytes at a time, to exercise partial fills.
    struct Slow(Vec<u8>);
    // SAFETY: no regions.
    unsafe impl PackState for Slow {
        fn packed_size(&mut self) -> Result<u64> {
            Ok(self.0.len() as u64)
        }
        fn pack(&mut self, offset: u64, dst: &mut [u8]) -> Result<usize> {
            let n = dst.len().min(3);
            dst[..n].copy_from_slice(&self.0[offset as usize..offset as usize + n]);
            Ok(n)
        }
        fn regions(&mut self) -> Result<Vec<RawRegion>> {
            Ok(vec![])
        }
    }

    struct Collect(Vec<u8>);
    // SAFETY: no regions.
    unsafe impl UnpackState for Collect {
        fn packed_capacity(&mut self) -> Result<u64> {
            Ok(u64::MAX)
        }
        fn unpack(&mut self, offset: u64, src: &[u8]) -> Result<()> {
            assert_eq!(offset as usize, self.0.len());
            self.0.extend_from_slice(src);
            Ok(())
        }
        fn regions(&mut self) -> Result<Vec<RawRegionMut>> {
            Ok(vec![])
        }
    }

    #[test]
    fn packed_then_coalesced_across_odd_pieces() {
        let packed: Vec<u8> = (0..10).collect();
        let r1 = vec![100u8, 101, 102, 103];
        let r2 = vec![200u8; 5];
        let mut writer = StreamWriter::new(10, [(r1.as_ptr(), 4), (r2.as_ptr(), 5)].into_iter());
        let mut state = Slow(packed.clone());
        let mut stream = vec![0u8; 19];
        for (at, len) in [(0, 7), (7, 5), (12, 7)] {
            writer
                .fill(&mut state, at, &mut stream[at as usize..at as usize + len])
                .unwrap();
        }
        assert_eq!(&stream[..10], &packed[..]);
        assert_eq!(&stream[10..14], &r1[..]);
        assert_eq!(&stream[14..], &r2[..]);

        let mut o1 = vec![0u8; 4];
        let mut o2 = vec![0u8; 5];
        let mut reader =
            StreamReader::new(10, [(o1.as_mut_ptr(), 4), (o2.as_mut_ptr(), 5)].into_iter());
        let mut sink = Collect(vec![]);
        for (at, len) in [(0usize, 11usize), (11, 1), (12, 7)] {
            reader
                .consume(&mut sink, at as u64, &stream[at..at + len])
                .unwrap();
        }
        assert_eq!(sink.0, packed);
        assert_eq!(o1, r1);
        assert_eq!(o2, r2);
        assert!(reader.consume(&mut sink, 3, &[1]).is_err());
    }
}
