//! C buffer arguments of the collective calls: byte slices over C pointers (MPI_IN_PLACE
//! refused where it cannot be), a block's (buffer, count, datatype), and the per-member blocks
//! of a uniform or v-layout with their byte offsets. Knows nothing of the algorithms.

use crate::abi::*;
use crate::errors::{fail, CResult};
use crate::p2p::count_of;
use crate::types::{byte_len, get_basic, Basic};
use std::ffi::{c_int, c_void};

pub(crate) fn in_place(p: *const c_void) -> bool {
    std::ptr::eq(p, MPI_IN_PLACE)
}

/// A readable byte slice of `len` bytes at `p` (empty for len 0).
///
/// # Safety
/// `p` must be readable for `len` bytes while the slice lives.
pub(crate) unsafe fn bytes<'a>(p: *const c_void, len: usize) -> CResult<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() || in_place(p) {
        return Err(fail(MPI_ERR_BUFFER, "null or MPI_IN_PLACE buffer here"));
    }
    // SAFETY: forwarded from the caller.
    Ok(unsafe { std::slice::from_raw_parts(p as *const u8, len) })
}

/// A writable byte slice of `len` bytes at `p`.
///
/// # Safety
/// `p` must be writable for `len` bytes and not otherwise accessed while the slice lives.
pub(crate) unsafe fn bytes_mut<'a>(p: *mut c_void, len: usize) -> CResult<&'a mut [u8]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() || in_place(p) {
        return Err(fail(MPI_ERR_BUFFER, "null or MPI_IN_PLACE buffer here"));
    }
    // SAFETY: forwarded from the caller.
    Ok(unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) })
}

/// The byte offset and length of block `i` of a v-layout (or the uniform layout).
#[derive(Clone)]
pub(crate) struct Layout {
    offsets: Vec<usize>,
    pub lens: Vec<usize>,
}

impl Layout {
    fn uniform(n: usize, count: c_int, b: Basic) -> CResult<Layout> {
        let len = byte_len(count_of(count as i64)?, b)?;
        Ok(Layout {
            offsets: (0..n).map(|i| i * len).collect(),
            lens: vec![len; n],
        })
    }

    /// # Safety
    /// `counts` and `displs` must hold `n` entries each.
    unsafe fn varying(
        n: usize,
        counts: *const c_int,
        displs: *const c_int,
        b: Basic,
    ) -> CResult<Layout> {
        if n > 0 && (counts.is_null() || displs.is_null()) {
            return Err(fail(MPI_ERR_ARG, "null counts or displacements"));
        }
        let mut l = Layout {
            offsets: Vec::with_capacity(n),
            lens: Vec::with_capacity(n),
        };
        for i in 0..n {
            // SAFETY: n entries per the caller.
            let (c, d) = unsafe { (*counts.add(i), *displs.add(i)) };
            if d < 0 {
                return Err(fail(MPI_ERR_ARG, format!("negative displacement {d}")));
            }
            l.lens.push(byte_len(c as i64, b)?);
            l.offsets.push(byte_len(d as i64, b)?);
        }
        Ok(l)
    }

    pub(crate) fn end(&self) -> usize {
        self.offsets
            .iter()
            .zip(&self.lens)
            .map(|(o, l)| o + l)
            .max()
            .unwrap_or(0)
    }

    /// Copies the received pieces into `base` (pieces longer than their block: truncation).
    ///
    /// # Safety
    /// `base` must be writable for `self.end()` bytes.
    pub(crate) unsafe fn scatter_into(
        &self,
        base: *mut c_void,
        pieces: &[Vec<u8>],
        skip: Option<usize>,
    ) -> CResult<()> {
        for (i, piece) in pieces.iter().enumerate() {
            if Some(i) == skip {
                continue;
            }
            if piece.len() > self.lens[i] {
                return Err(fail(
                    MPI_ERR_TRUNCATE,
                    format!(
                        "rank {i} sent {} bytes for a {}-byte block",
                        piece.len(),
                        self.lens[i]
                    ),
                ));
            }
            // SAFETY: within `end()` bytes per the caller.
            let dst = unsafe {
                bytes_mut(
                    (base as *mut u8).add(self.offsets[i]) as *mut c_void,
                    piece.len(),
                )
            }?;
            dst.copy_from_slice(piece);
        }
        Ok(())
    }

    /// The block `i` of `base`.
    ///
    /// # Safety
    /// `base` must be readable for `self.end()` bytes.
    pub(crate) unsafe fn block<'a>(&self, base: *const c_void, i: usize) -> CResult<&'a [u8]> {
        // SAFETY: within `end()` bytes per the caller.
        unsafe {
            bytes(
                (base as *const u8).add(self.offsets[i]) as *const c_void,
                self.lens[i],
            )
        }
    }
}

/// A block's C arguments: `count` elements of `datatype` at `buf`.
#[derive(Clone, Copy)]
pub(crate) struct Block {
    pub buf: *const c_void,
    pub count: c_int,
    pub datatype: MPI_Datatype,
}

impl Block {
    pub(crate) fn new(buf: *const c_void, count: c_int, datatype: MPI_Datatype) -> Block {
        Block {
            buf,
            count,
            datatype,
        }
    }

    /// The block's bytes.
    ///
    /// # Safety
    /// `buf` must hold the block while the slice lives.
    pub(crate) unsafe fn bytes<'a>(&self) -> CResult<&'a [u8]> {
        let len = byte_len(count_of(self.count as i64)?, get_basic(self.datatype)?)?;
        // SAFETY: forwarded from the caller.
        unsafe { bytes(self.buf, len) }
    }
}

/// How blocks are counted: all alike, or each with its count and displacement (in elements).
#[derive(Clone, Copy)]
pub(crate) enum Counts {
    Uniform(c_int),
    Varying(*const c_int, *const c_int),
}

/// One block per member at `buf`, of `datatype` elements, laid out as `counts` says.
#[derive(Clone, Copy)]
pub(crate) struct Blocks {
    pub buf: *mut c_void,
    counts: Counts,
    datatype: MPI_Datatype,
}

impl Blocks {
    pub(crate) fn new(buf: *const c_void, counts: Counts, datatype: MPI_Datatype) -> Blocks {
        let buf = buf as *mut c_void;
        Blocks {
            buf,
            counts,
            datatype,
        }
    }

    /// The byte layout of `n` blocks.
    ///
    /// # Safety
    /// Varying counts and displacements must hold `n` entries each.
    pub(crate) unsafe fn layout(&self, n: usize) -> CResult<Layout> {
        let b = get_basic(self.datatype)?;
        match self.counts {
            Counts::Uniform(count) => Layout::uniform(n, count, b),
            // SAFETY: forwarded from the caller.
            Counts::Varying(counts, displs) => unsafe { Layout::varying(n, counts, displs, b) },
        }
    }
}
