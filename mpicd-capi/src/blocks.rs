//! C buffer arguments of the collective calls: byte slices over C pointers (MPI_IN_PLACE
//! refused where it cannot be), a collective's datatype ([`Elem`]: a predefined type read and
//! written in place, or a derived type packed and unpacked through its plan), a block's
//! (buffer, count, datatype), and the per-member blocks of a uniform or v-layout. Knows
//! nothing of the algorithms.
//!
//! The collective algorithms move contiguous bytes; a derived type's block is packed into, or
//! unpacked from, a buffer of its data's size around them (the point-to-point path streams
//! instead: no such buffer).

use crate::abi::*;
use crate::errors::{fail, CResult};
use crate::p2p::count_of;
use crate::types::{self, byte_len, Basic, Dtype};
use mpicd::{Datatype, TypedBuf};
use std::borrow::Cow;
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

/// A collective's datatype.
#[derive(Clone)]
pub(crate) enum Elem {
    Basic(Basic),
    Derived(Datatype),
}

impl Elem {
    /// The datatype of a handle (custom types are refused).
    pub(crate) fn of(h: MPI_Datatype) -> CResult<Elem> {
        match types::get(h)? {
            Dtype::Basic(b) => Ok(Elem::Basic(b)),
            Dtype::Derived(t) => Ok(Elem::Derived(t)),
            Dtype::Custom(_) => Err(fail(
                MPI_ERR_TYPE,
                "custom datatypes are only supported in point-to-point calls",
            )),
        }
    }

    /// Bytes of data in `count` elements.
    pub(crate) fn packed(&self, count: i64) -> CResult<usize> {
        let count = count_of(count)?;
        match self {
            Elem::Basic(b) => byte_len(count, *b),
            Elem::Derived(t) => (count as u64)
                .checked_mul(t.size())
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| fail(MPI_ERR_COUNT, format!("count {count} overflows"))),
        }
    }

    /// The distance between consecutive elements in memory.
    fn stride(&self) -> i64 {
        match self {
            Elem::Basic(b) => b.size as i64,
            Elem::Derived(t) => t.extent(),
        }
    }

    /// The predefined type a reduction works on: the type itself, or the one basic type a
    /// derived type is made of.
    pub(crate) fn reduction_basic(&self) -> CResult<Basic> {
        let one = match self {
            Elem::Basic(b) => return Ok(*b),
            Elem::Derived(t) => t
                .homogeneous()
                .and_then(|b| types::basic(b.id as MPI_Datatype)),
        };
        one.ok_or_else(|| {
            fail(
                MPI_ERR_OP,
                "reductions on derived types need one predefined element type throughout",
            )
        })
    }

    /// The data of `count` elements at `p`: in place for a predefined type, packed for a
    /// derived one.
    ///
    /// # Safety
    /// `p` must hold `count` elements while the result lives.
    pub(crate) unsafe fn read<'a>(&self, p: *const c_void, count: i64) -> CResult<Cow<'a, [u8]>> {
        let len = self.packed(count)?;
        match self {
            // SAFETY: forwarded from the caller.
            Elem::Basic(_) => Ok(Cow::Borrowed(unsafe { bytes(p, len) }?)),
            Elem::Derived(t) => {
                if in_place(p) {
                    return Err(fail(MPI_ERR_BUFFER, "MPI_IN_PLACE buffer here"));
                }
                let mut v = vec![0u8; len];
                // SAFETY: forwarded from the caller: the type map is readable.
                unsafe { TypedBuf::new(p as *const u8, count as u64, t).pack(0, &mut v) };
                Ok(Cow::Owned(v))
            }
        }
    }

    /// Writes `data` (at most `count` elements' data) into the elements at `p`.
    ///
    /// # Safety
    /// `p` must hold `count` writable elements.
    pub(crate) unsafe fn write(&self, p: *mut c_void, count: i64, data: &[u8]) -> CResult<()> {
        let len = self.packed(count)?;
        if data.len() > len {
            return Err(fail(
                MPI_ERR_TRUNCATE,
                format!("{} bytes arrived for a {len}-byte buffer", data.len()),
            ));
        }
        match self {
            // SAFETY: forwarded from the caller.
            Elem::Basic(_) => unsafe { bytes_mut(p, data.len()) }?.copy_from_slice(data),
            Elem::Derived(t) => {
                if in_place(p) {
                    return Err(fail(MPI_ERR_BUFFER, "MPI_IN_PLACE buffer here"));
                }
                // SAFETY: forwarded from the caller: the type map is writable.
                unsafe { TypedBuf::new(p as *const u8, count as u64, t).unpack(0, data) };
            }
        }
        Ok(())
    }

    /// Runs `f` on the data of `count` elements at `p` as contiguous bytes (in place for a
    /// predefined type; packed before, with `load`, and unpacked after for a derived one).
    ///
    /// # Safety
    /// `p` must hold `count` writable elements.
    pub(crate) unsafe fn staged<R>(
        &self,
        p: *mut c_void,
        count: i64,
        load: bool,
        f: impl FnOnce(&mut [u8]) -> CResult<R>,
    ) -> CResult<R> {
        let len = self.packed(count)?;
        match self {
            // SAFETY: forwarded from the caller.
            Elem::Basic(_) => f(unsafe { bytes_mut(p, len) }?),
            Elem::Derived(_) => {
                let mut v = if load {
                    // SAFETY: forwarded from the caller.
                    unsafe { self.read(p, count) }?.into_owned()
                } else {
                    vec![0u8; len]
                };
                let r = f(&mut v)?;
                // SAFETY: forwarded from the caller.
                unsafe { self.write(p, count, &v) }?;
                Ok(r)
            }
        }
    }
}

/// Where block `i` of a v-layout (or the uniform layout) is, and how much data it holds.
#[derive(Clone)]
pub(crate) struct Layout {
    elem: Elem,
    /// Byte displacement of each block.
    offsets: Vec<isize>,
    counts: Vec<i64>,
    /// Bytes of data of each block.
    pub lens: Vec<usize>,
}

impl Layout {
    fn uniform(n: usize, count: c_int, elem: Elem) -> CResult<Layout> {
        let len = elem.packed(count as i64)?;
        let step = count as i64 * elem.stride();
        Ok(Layout {
            offsets: (0..n).map(|i| (i as i64 * step) as isize).collect(),
            counts: vec![count as i64; n],
            lens: vec![len; n],
            elem,
        })
    }

    /// # Safety
    /// `counts` and `displs` must hold `n` entries each.
    unsafe fn varying(
        n: usize,
        counts: *const c_int,
        displs: *const c_int,
        elem: Elem,
    ) -> CResult<Layout> {
        if n > 0 && (counts.is_null() || displs.is_null()) {
            return Err(fail(MPI_ERR_ARG, "null counts or displacements"));
        }
        let mut l = Layout {
            offsets: Vec::with_capacity(n),
            counts: Vec::with_capacity(n),
            lens: Vec::with_capacity(n),
            elem,
        };
        for i in 0..n {
            // SAFETY: n entries per the caller.
            let (c, d) = unsafe { (*counts.add(i), *displs.add(i)) };
            l.lens.push(l.elem.packed(c as i64)?);
            l.counts.push(c as i64);
            l.offsets.push((d as i64 * l.elem.stride()) as isize);
        }
        Ok(l)
    }

    fn at(base: *const c_void, offset: isize) -> *mut c_void {
        (base as *mut u8).wrapping_offset(offset) as *mut c_void
    }

    /// Writes the received pieces into their blocks at `base` (a piece longer than its block:
    /// truncation).
    ///
    /// # Safety
    /// `base` must hold every block, writable.
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
            // SAFETY: block i of `base`, per the caller.
            unsafe {
                self.elem
                    .write(Self::at(base, self.offsets[i]), self.counts[i], piece)
            }
            .map_err(|_| {
                fail(
                    MPI_ERR_TRUNCATE,
                    format!(
                        "rank {i} sent {} bytes for a {}-byte block",
                        piece.len(),
                        self.lens[i]
                    ),
                )
            })?;
        }
        Ok(())
    }

    /// The data of block `i` of `base`.
    ///
    /// # Safety
    /// `base` must hold every block, readable.
    pub(crate) unsafe fn block<'a>(&self, base: *const c_void, i: usize) -> CResult<Cow<'a, [u8]>> {
        // SAFETY: block i of `base`, per the caller.
        unsafe {
            self.elem
                .read(Self::at(base, self.offsets[i]), self.counts[i])
        }
    }

    /// A copy of every block's data (what MPI_IN_PLACE leaves to be sent from the receive
    /// buffer), as a buffer and the layout of the blocks in it.
    ///
    /// # Safety
    /// `base` must hold every block, readable.
    pub(crate) unsafe fn copy_blocks(&self, base: *const c_void) -> CResult<Vec<Vec<u8>>> {
        (0..self.offsets.len())
            // SAFETY: forwarded from the caller.
            .map(|i| unsafe { self.block(base, i) }.map(Cow::into_owned))
            .collect()
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

    /// The block's data.
    ///
    /// # Safety
    /// `buf` must hold the block while the result lives.
    pub(crate) unsafe fn bytes<'a>(&self) -> CResult<Cow<'a, [u8]>> {
        // SAFETY: forwarded from the caller.
        unsafe { Elem::of(self.datatype)?.read(self.buf, self.count as i64) }
    }

    /// Writes received data into the block.
    ///
    /// # Safety
    /// `buf` must hold the block, writable.
    pub(crate) unsafe fn write(&self, data: &[u8]) -> CResult<()> {
        // SAFETY: forwarded from the caller.
        unsafe { Elem::of(self.datatype)?.write(self.buf as *mut c_void, self.count as i64, data) }
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

    /// The `n` blocks as typed buffers (each travels as one message, nothing staged).
    ///
    /// # Safety
    /// Varying counts and displacements must hold `n` entries each.
    pub(crate) unsafe fn typed(&self, n: usize) -> CResult<Vec<TypedBuf>> {
        // SAFETY: forwarded from the caller.
        let l = unsafe { self.layout(n) }?;
        let ty = types::datatype(self.datatype)?;
        Ok((0..n)
            .map(|i| {
                let at = Layout::at(self.buf, l.offsets[i]) as *const u8;
                TypedBuf::new(at, l.counts[i] as u64, &ty)
            })
            .collect())
    }

    /// The layout of `n` blocks.
    ///
    /// # Safety
    /// Varying counts and displacements must hold `n` entries each.
    pub(crate) unsafe fn layout(&self, n: usize) -> CResult<Layout> {
        let elem = Elem::of(self.datatype)?;
        match self.counts {
            Counts::Uniform(count) => Layout::uniform(n, count, elem),
            // SAFETY: forwarded from the caller.
            Counts::Varying(counts, displs) => unsafe { Layout::varying(n, counts, displs, elem) },
        }
    }
}
