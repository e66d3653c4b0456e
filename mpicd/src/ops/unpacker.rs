//! The receiver's end of a custom-typed message's data: the [`Unpacker`] that UCX hands the
//! body to (and the lead's inline bytes go through), what the receive state provides
//! ([`Provided`]), and the checks that incoming sizes fit (truncation is an error, never an
//! overrun).

use crate::error::{Error, Result};
use crate::plan::{RawRegionMut, RegionList, StreamReader, UnpackState};
use crate::transport::{RecvInfo, StreamEnd};
use crate::wire::{Shape, WirePlan, TRAILER_BYTES};

/// Where the receiver's stream goes: the state and its regions, and the reader that walks
/// the sender's shape. UCX hands it the body message as it arrives (see [`StreamEnd`]); the
/// lead's inline bytes go through [`Unpacker::consume`] too.
#[derive(Default)]
pub(super) struct Unpacker {
    reader: Option<StreamReader>,
    /// The sender's shape.
    shape: Shape,
    /// The receiver's regions, taken once from the state.
    pub(super) regions: RegionList<RawRegionMut>,
    /// Stream offset where the body starts, and the body's stream bytes.
    start: u64,
    bytes: u64,
    /// The body's trailer: zero unless the sender's pack failed.
    trailer: [u8; TRAILER_BYTES],
    pub(super) error: Option<Error>,
    pub(super) state: Option<Box<dyn UnpackState>>,
}

impl Unpacker {
    /// An unpacker for `state` (none yet for a matched message), set up later by
    /// [`Unpacker::prepare`].
    pub(super) fn new(state: Option<Box<dyn UnpackState>>) -> Unpacker {
        Unpacker {
            state,
            ..Unpacker::default()
        }
    }

    /// Delivers stream bytes from stream offset `offset` to the state and the coalesced
    /// regions (nothing after an error).
    pub(super) fn consume(&mut self, offset: u64, src: &[u8]) {
        if self.error.is_some() {
            return;
        }
        if let (Some(reader), Some(state)) = (&mut self.reader, &mut self.state) {
            if let Err(e) = reader.consume(&mut **state, &self.shape, &self.regions, offset, src) {
                self.error = Some(e);
            }
        }
    }

    /// The body's outcome once it arrived whole: a sender's failure first (what the
    /// receiver's callbacks made of the zeros that followed it does not matter), then ours.
    pub(super) fn outcome(&mut self) -> Result<()> {
        if self.trailer != [0; TRAILER_BYTES] {
            return Err(Error::RemoteFailure);
        }
        self.error.take().map_or(Ok(()), Err)
    }
}

impl StreamEnd for Unpacker {
    fn length(&self) -> usize {
        self.bytes as usize + TRAILER_BYTES
    }

    fn pack(&mut self, _offset: usize, dst: &mut [u8]) {
        dst.fill(0);
    }

    fn unpack(&mut self, offset: usize, src: &[u8]) {
        let offset = offset as u64;
        let in_stream = (self.bytes.saturating_sub(offset) as usize).min(src.len());
        let (body, trailer) = src.split_at(in_stream);
        if !body.is_empty() {
            self.consume(self.start + offset, body);
        }
        if !trailer.is_empty() {
            let from = (offset + in_stream as u64 - self.bytes) as usize;
            if let Some(word) = self.trailer.get_mut(from..from + trailer.len()) {
                word.copy_from_slice(trailer);
            }
        }
    }

    fn poisoned(&mut self) {
        self.error.get_or_insert(Error::Callback {
            callback: "unpack",
            code: crate::error::class::ERR_OTHER,
        });
    }
}

impl Unpacker {
    /// Sets up the stream for `plan`: checks the incoming shape against what the receiver
    /// `provided` (the state's parts), then takes the stream reader and the receiver's regions.
    pub(super) fn prepare(&mut self, plan: &WirePlan, provided: Provided) -> Result<()> {
        let shape = &plan.shape;
        let Provided {
            capacity,
            regions,
            hint,
        } = provided;
        let fits = shape.packed_bytes <= capacity
            && shape.region_count() <= regions.len()
            && match &hint {
                Some(mine) => runs_fit(shape, mine),
                None => shape.run_slice().iter().all(|run| {
                    let start = run.end - run.count;
                    regions[start..run.end]
                        .iter()
                        .all(|mine| run.region.bytes <= mine.bytes as u64)
                }),
            };
        if !fits {
            let buffer_bytes =
                capacity.min(u64::MAX / 2) + regions.iter().map(|r| r.bytes as u64).sum::<u64>();
            return Err(Error::truncated(shape.total_bytes(), buffer_bytes));
        }
        // A coalesced region occupies the sender's length in the stream; the receiver's region
        // may be longer (checked above), and the rest of it is left untouched.
        self.reader = Some(StreamReader::new(shape.packed_bytes, plan.zcopy_threshold));
        self.shape = shape.clone();
        self.regions = regions;
        self.start = plan.inline_bytes;
        self.bytes = plan.body_bytes();
        Ok(())
    }
}

/// What a receive's state provides: its packed capacity, its regions and (if it tracked them)
/// their shape.
pub(super) struct Provided {
    capacity: u64,
    regions: RegionList<RawRegionMut>,
    hint: Option<Shape>,
}

impl Provided {
    pub(super) fn from(state: &mut dyn UnpackState) -> Result<Provided> {
        let capacity = state.packed_capacity()?;
        let regions = state.regions()?;
        let hint = state
            .shape_hint()
            .filter(|h| h.region_count() == regions.len());
        Ok(Provided {
            capacity,
            regions: RegionList(regions),
            hint,
        })
    }
}

/// True if every region of `sent` fits the region at the same index of `mine` (which may have
/// more regions): a walk over both run lists, not over the regions.
pub(super) fn runs_fit(sent: &Shape, mine: &Shape) -> bool {
    let mut ours = mine.run_slice().iter().peekable();
    let mut at = 0usize; // regions of `sent` checked so far
    for run in sent.run_slice() {
        while at < run.end {
            let Some(m) = ours.peek() else {
                return false;
            };
            if m.end <= at {
                ours.next();
                continue;
            }
            if run.region.bytes > m.region.bytes {
                return false;
            }
            at = run.end.min(m.end);
        }
    }
    true
}

/// A private message must be exactly as long as announced; an empty one means the sender
/// failed after its lead left.
pub(super) fn check_length(info: RecvInfo, expected: usize) -> Result<()> {
    if expected == usize::MAX || info.length == expected {
        Ok(())
    } else if info.length == 0 {
        Err(Error::RemoteFailure)
    } else {
        Err(Error::Transport(format!(
            "private message of {} bytes, expected {expected}",
            info.length
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::ElementType;
    use crate::wire::RegionShape;

    fn shape(lens: &[u64]) -> Shape {
        Shape::new(
            0,
            lens.iter().map(|&bytes| RegionShape {
                bytes,
                elem: ElementType::U8,
            }),
        )
    }

    fn brute(sent: &[u64], mine: &[u64]) -> bool {
        sent.len() <= mine.len() && sent.iter().zip(mine).all(|(s, m)| s <= m)
    }

    #[test]
    fn runs_fit_agrees_with_region_by_region() {
        let cases: &[(&[u64], &[u64])] = &[
            (&[8, 8, 8, 16, 16], &[8, 8, 16, 16, 16]),
            (&[8, 8, 8, 16, 16], &[8, 8, 8, 8, 16]),
            (&[8, 8], &[8]),
            (&[8, 8], &[8, 8, 0, 0]),
            (&[], &[]),
            (&[], &[1]),
            (&[0, 0, 5], &[0, 0, 4]),
        ];
        for (sent, mine) in cases {
            let fits = runs_fit(&shape(sent), &shape(mine));
            assert_eq!(fits, brute(sent, mine), "{sent:?} into {mine:?}");
        }
        // Random run structures.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..2000 {
            let gen = |next: &mut dyn FnMut(u64) -> u64| {
                let mut v = Vec::new();
                for _ in 0..next(6) {
                    let len = next(4);
                    v.extend(std::iter::repeat(len).take(1 + next(4) as usize));
                }
                v
            };
            let sent = gen(&mut next);
            let mine = gen(&mut next);
            assert_eq!(
                runs_fit(&shape(&sent), &shape(&mine)),
                brute(&sent, &mine),
                "{sent:?} into {mine:?}"
            );
        }
    }
}
