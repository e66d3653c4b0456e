//! The compiled plan of a datatype: a list of pieces in type-map order, each a run of bytes
//! at a displacement or a loop repeating a shared body at a stride. Adjacent runs are merged
//! and a loop over a dense body becomes one run, so a type's plan is as short as its
//! description allows, whatever the number of bytes it moves.

use std::sync::Arc;

/// One piece of a plan.
#[derive(Debug, Clone)]
pub(crate) enum Piece {
    /// `len` bytes at `disp`.
    Run { disp: i64, len: u64 },
    /// `count` copies of `body`, the first at `disp`, each `stride` bytes after the previous.
    Loop {
        disp: i64,
        count: u64,
        stride: i64,
        body: Arc<Layout>,
    },
}

/// A plan: its pieces, where each ends in the packed stream, and its packed size.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    pub(super) pieces: Vec<Piece>,
    /// Packed offset one past each piece (for seeking by binary search).
    ends: Vec<u64>,
    pub(super) size: u64,
    runs: u64,
}

/// Bodies this short are copied into a single-pass loop instead of kept as a loop of one.
const INLINE_PIECES: usize = 16;

impl Layout {
    /// `count` consecutive copies of `body`, `stride` bytes apart.
    pub(crate) fn repeated(body: &Arc<Layout>, count: u64, stride: i64) -> Arc<Layout> {
        let mut b = Builder::default();
        b.repeat(0, count, stride, body);
        Arc::new(b.finish())
    }

    /// The plan's one run (displacement, length), if it is one.
    pub(crate) fn single_run(&self) -> Option<(i64, u64)> {
        match self.pieces.as_slice() {
            [Piece::Run { disp, len }] => Some((*disp, *len)),
            _ => None,
        }
    }

    /// Runs, loops unrolled (saturating).
    pub(crate) fn run_count(&self) -> u64 {
        self.runs
    }

    /// Number of pieces (the plan's own length).
    pub(crate) fn len(&self) -> usize {
        self.pieces.len()
    }

    /// The piece holding packed offset `offset` (< size) and the offset inside it.
    pub(super) fn seek(&self, offset: u64) -> (usize, u64) {
        if offset == 0 {
            return (0, 0);
        }
        let i = self.ends.partition_point(|&e| e <= offset);
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        (i, offset - start)
    }
}

/// Builds a plan piece by piece, merging as it goes.
#[derive(Debug, Default)]
pub(crate) struct Builder {
    pieces: Vec<Piece>,
}

impl Builder {
    /// Appends `len` bytes at `disp`.
    pub(crate) fn run(&mut self, disp: i64, len: u64) {
        if len == 0 {
            return;
        }
        if let Some(Piece::Run { disp: d, len: l }) = self.pieces.last_mut() {
            if d.wrapping_add(*l as i64) == disp {
                *l += len;
                return;
            }
        }
        self.pieces.push(Piece::Run { disp, len });
    }

    /// Appends `count` copies of `body`, the first at `disp`, `stride` bytes apart.
    pub(crate) fn repeat(&mut self, disp: i64, count: u64, stride: i64, body: &Arc<Layout>) {
        if count == 0 || body.size == 0 {
            return;
        }
        if let Some((d, l)) = body.single_run() {
            if count == 1 || l as i64 == stride {
                self.run(disp.wrapping_add(d), l * count);
                return;
            }
        }
        if count == 1 && body.pieces.len() <= INLINE_PIECES {
            for p in &body.pieces {
                match p {
                    Piece::Run { disp: d, len } => self.run(disp.wrapping_add(*d), *len),
                    Piece::Loop {
                        disp: d,
                        count,
                        stride,
                        body,
                    } => self.repeat(disp.wrapping_add(*d), *count, *stride, body),
                }
            }
            return;
        }
        self.pieces.push(Piece::Loop {
            disp,
            count,
            stride,
            body: Arc::clone(body),
        });
    }

    pub(crate) fn finish(self) -> Layout {
        let mut ends = Vec::with_capacity(self.pieces.len());
        let (mut size, mut runs) = (0u64, 0u64);
        for p in &self.pieces {
            let (bytes, r) = match p {
                Piece::Run { len, .. } => (*len, 1),
                Piece::Loop { count, body, .. } => (
                    count.saturating_mul(body.size),
                    count.saturating_mul(body.runs),
                ),
            };
            size = size.saturating_add(bytes);
            runs = runs.saturating_add(r);
            ends.push(size);
        }
        Layout {
            pieces: self.pieces,
            ends,
            size,
            runs,
        }
    }
}
