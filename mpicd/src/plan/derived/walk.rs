//! Moving the bytes of a derived-typed buffer: [`TypedBuf`] (`count` instances of a type at an
//! address) packs into and unpacks from a stream, from any packed offset, in pieces of any
//! size, without a temporary: the plan is walked with loop counters and seeks by division, so a
//! piece costs its bytes plus the depth of the plan.

use super::layout::{Layout, Piece};
use super::{Basic, Constructor, Datatype};
use crate::plan::stream::copy_bytes;

/// `count` instances of `ty` whose type map starts at address `base` (displacements are added
/// to it; with `base` 0 they are absolute addresses, as with `MPI_BOTTOM`).
#[derive(Debug, Clone)]
pub struct TypedBuf {
    base: usize,
    count: u64,
    ty: Datatype,
}

/// The stream side of a walk: where the next byte goes or comes from, and how many are left.
struct Cursor {
    at: *mut u8,
    left: usize,
}

/// Which way bytes move between memory and the stream.
trait Direction {
    /// Moves `n` bytes between memory at address `mem` and the stream at `stream`.
    ///
    /// # Safety
    /// Both sides must be valid for `n` bytes and not overlap.
    unsafe fn copy(mem: usize, stream: *mut u8, n: usize);
}

/// Memory to stream.
struct Gather;
/// Stream to memory.
struct Scatter;

impl Direction for Gather {
    #[inline(always)]
    unsafe fn copy(mem: usize, stream: *mut u8, n: usize) {
        // SAFETY: as the caller promises.
        unsafe { copy_bytes(mem as *const u8, stream, n) }
    }
}

impl Direction for Scatter {
    #[inline(always)]
    unsafe fn copy(mem: usize, stream: *mut u8, n: usize) {
        // SAFETY: as the caller promises.
        unsafe { copy_bytes(stream, mem as *mut u8, n) }
    }
}

/// Moves a run's bytes from `skip` on; true once the cursor is full.
///
/// # Safety
/// The run's memory and the cursor must be valid.
#[inline(always)]
unsafe fn run<D: Direction>(addr: usize, len: u64, skip: u64, cur: &mut Cursor) -> bool {
    let n = (len - skip).min(cur.left as u64) as usize;
    // SAFETY: forwarded from the caller.
    unsafe {
        D::copy(addr.wrapping_add(skip as usize), cur.at, n);
        cur.at = cur.at.add(n);
    }
    cur.left -= n;
    cur.left == 0
}

/// Moves `n` whole blocks of `len` bytes, the first at `addr`, `stride` apart, into or out of
/// the cursor (which has room for them).
///
/// # Safety
/// The blocks' memory and the cursor must be valid.
#[inline(always)]
unsafe fn blocks<D: Direction>(addr: usize, stride: i64, len: usize, n: usize, cur: &mut Cursor) {
    /// The loop with the block length known at compile time (one load and store per block).
    #[inline(always)]
    unsafe fn fixed<D: Direction, const L: usize>(
        mut a: usize,
        stride: i64,
        n: usize,
        mut at: *mut u8,
    ) {
        for _ in 0..n {
            // SAFETY: forwarded from the caller.
            unsafe {
                D::copy(a, at, L);
                at = at.add(L);
            }
            a = a.wrapping_add(stride as usize);
        }
    }
    let at = cur.at;
    // SAFETY: forwarded from the caller.
    unsafe {
        match len {
            4 => fixed::<D, 4>(addr, stride, n, at),
            8 => fixed::<D, 8>(addr, stride, n, at),
            16 => fixed::<D, 16>(addr, stride, n, at),
            24 => fixed::<D, 24>(addr, stride, n, at),
            32 => fixed::<D, 32>(addr, stride, n, at),
            _ => {
                let mut a = addr;
                let mut to = at;
                for _ in 0..n {
                    D::copy(a, to, len);
                    to = to.add(len);
                    a = a.wrapping_add(stride as usize);
                }
            }
        }
        cur.at = at.add(n * len);
    }
    cur.left -= n * len;
}

/// Moves the bytes of `count` copies of `body` (the first at `at`, `stride` apart) from packed
/// offset `skip` on; true once the cursor is full.
///
/// # Safety
/// The memory the plan names and the cursor must be valid.
unsafe fn repeat<D: Direction>(
    at: usize,
    count: u64,
    stride: i64,
    body: &Layout,
    skip: u64,
    cur: &mut Cursor,
) -> bool {
    if body.size == 0 {
        return false;
    }
    let (mut k, mut s) = (skip / body.size, skip % body.size);
    let step = |k: u64| at.wrapping_add((k as i64).wrapping_mul(stride) as usize);
    if let Some((d, l)) = body.single_run() {
        if l as i64 == stride {
            // Dense copies (a count of a predefined or contiguous type): one run.
            let len = l.saturating_mul(count);
            // SAFETY: forwarded from the caller.
            return unsafe { run::<D>(at.wrapping_add(d as usize), len, skip, cur) };
        }
        let at_block = |k: u64| step(k).wrapping_add(d as usize);
        if s > 0 {
            // SAFETY: forwarded from the caller.
            if unsafe { run::<D>(at_block(k), l, s, cur) } {
                return true;
            }
            k += 1;
        }
        // Whole blocks, as many as fit, in a loop specialised for short blocks.
        let whole = (count - k.min(count)).min(cur.left as u64 / l);
        // SAFETY: forwarded from the caller; `whole` blocks fit in the cursor.
        unsafe { blocks::<D>(at_block(k), stride, l as usize, whole as usize, cur) };
        k += whole;
        if k < count && cur.left > 0 {
            // SAFETY: forwarded from the caller: the start of the next block.
            unsafe { run::<D>(at_block(k), l, 0, cur) };
        }
        return cur.left == 0;
    }
    while k < count {
        // SAFETY: forwarded from the caller.
        if unsafe { walk::<D>(body, step(k), s, cur) } {
            return true;
        }
        (k, s) = (k + 1, 0);
    }
    false
}

/// Moves the bytes of `layout` placed at `base` from packed offset `skip` on; true once the
/// cursor is full.
///
/// # Safety
/// As for [`repeat`].
unsafe fn walk<D: Direction>(layout: &Layout, base: usize, skip: u64, cur: &mut Cursor) -> bool {
    let (first, mut skip) = layout.seek(skip);
    for p in &layout.pieces[first.min(layout.pieces.len())..] {
        // SAFETY: forwarded from the caller.
        let full = unsafe {
            match p {
                Piece::Run { disp, len } => {
                    run::<D>(base.wrapping_add(*disp as usize), *len, skip, cur)
                }
                Piece::Loop {
                    disp,
                    count,
                    stride,
                    body,
                } => repeat::<D>(
                    base.wrapping_add(*disp as usize),
                    *count,
                    *stride,
                    body,
                    skip,
                    cur,
                ),
            }
        };
        if full {
            return true;
        }
        skip = 0;
    }
    false
}

/// Calls `f` with each run (address, length) of `layout` placed at `base`, in order.
fn visit(layout: &Layout, base: usize, f: &mut dyn FnMut(usize, u64)) {
    for p in &layout.pieces {
        match p {
            Piece::Run { disp, len } => f(base.wrapping_add(*disp as usize), *len),
            Piece::Loop {
                disp,
                count,
                stride,
                body,
            } => {
                let at = base.wrapping_add(*disp as usize);
                for k in 0..*count {
                    visit(
                        body,
                        at.wrapping_add((k as i64).wrapping_mul(*stride) as usize),
                        f,
                    );
                }
            }
        }
    }
}

impl TypedBuf {
    /// `count` instances of `ty` at `base`.
    pub fn new(base: *const u8, count: u64, ty: &Datatype) -> TypedBuf {
        TypedBuf {
            base: base as usize,
            count,
            ty: ty.clone(),
        }
    }

    /// The datatype.
    pub fn datatype(&self) -> &Datatype {
        &self.ty
    }

    /// Bytes of the packed stream (the data of every instance), saturating.
    pub fn packed_size(&self) -> u64 {
        self.count.saturating_mul(self.ty.size())
    }

    /// The address and length of the one contiguous run the buffer is, if it is one.
    pub fn contiguous(&self) -> Option<(*mut u8, usize)> {
        let at = self.ty.contiguous_at(self.count)?;
        let len = usize::try_from(self.packed_size()).ok()?;
        Some((self.base.wrapping_add(at as usize) as *mut u8, len))
    }

    /// Packs the stream's bytes from `offset` into `dst`; returns how many were written (fewer
    /// than `dst.len()` only at the end of the stream).
    ///
    /// # Safety
    /// Every byte the type map names must be readable.
    pub unsafe fn pack(&self, offset: u64, dst: &mut [u8]) -> usize {
        let want = (self.packed_size().saturating_sub(offset)).min(dst.len() as u64) as usize;
        let mut cur = Cursor {
            at: dst.as_mut_ptr(),
            left: want,
        };
        if want > 0 {
            let t = &self.ty;
            // SAFETY: the caller's promise; the cursor covers `want` bytes of `dst`.
            unsafe {
                repeat::<Gather>(
                    self.base,
                    self.count,
                    t.extent(),
                    t.layout(),
                    offset,
                    &mut cur,
                )
            };
        }
        want
    }

    /// Unpacks `src`, the stream's bytes from `offset`, into memory; bytes past the end of the
    /// stream are ignored. Returns how many were taken.
    ///
    /// # Safety
    /// Every byte the type map names must be writable, and must not overlap `src`.
    pub unsafe fn unpack(&self, offset: u64, src: &[u8]) -> usize {
        let want = (self.packed_size().saturating_sub(offset)).min(src.len() as u64) as usize;
        let mut cur = Cursor {
            at: src.as_ptr() as *mut u8,
            left: want,
        };
        if want > 0 {
            let t = &self.ty;
            // SAFETY: the caller's promise; the cursor only reads `src` (Scatter copies from it).
            unsafe {
                repeat::<Scatter>(
                    self.base,
                    self.count,
                    t.extent(),
                    t.layout(),
                    offset,
                    &mut cur,
                )
            };
        }
        want
    }

    /// Calls `f` with the address and length of each run of the buffer, in stream order
    /// (consecutive runs that touch are not merged across instances).
    pub fn for_each_run(&self, mut f: impl FnMut(*mut u8, usize)) {
        let (layout, ext) = (self.ty.layout(), self.ty.extent());
        for k in 0..self.count {
            let at = self
                .base
                .wrapping_add((k as i64).wrapping_mul(ext) as usize);
            visit(layout, at, &mut |a, l| f(a as *mut u8, l as usize));
        }
    }

    /// Calls `f` with each run of basic elements (address, count, element) in type-map order:
    /// what a conversion of representation (such as `external32`) walks.
    pub fn for_each_basic(&self, mut f: impl FnMut(*mut u8, u64, Basic)) {
        let ext = self.ty.extent();
        for k in 0..self.count {
            let at = self
                .base
                .wrapping_add((k as i64).wrapping_mul(ext) as usize);
            basics(&self.ty, at, &mut f);
        }
    }
}

/// Walks the constructor tree of `ty` placed at `at`, calling `f` on each run of basics.
fn basics(ty: &Datatype, at: usize, f: &mut dyn FnMut(*mut u8, u64, Basic)) {
    use Constructor as C;
    let off = |d: i64| at.wrapping_add(d as usize);
    let block = |old: &Datatype, n: u64, a: usize, f: &mut dyn FnMut(*mut u8, u64, Basic)| {
        if let C::Basic(b) = old.constructor() {
            if n > 0 {
                f(a as *mut u8, n, *b);
            }
            return;
        }
        for k in 0..n {
            basics(
                old,
                a.wrapping_add((k as i64).wrapping_mul(old.extent()) as usize),
                f,
            );
        }
    };
    match ty.constructor() {
        C::Basic(b) => f(at as *mut u8, 1, *b),
        C::Contiguous { count, old } => block(old, *count, at, f),
        C::Vector {
            count,
            blocklength,
            stride,
            old,
        } => {
            for k in 0..*count as i64 {
                block(old, *blocklength, off(k * stride * old.extent()), f);
            }
        }
        C::Hvector {
            count,
            blocklength,
            stride,
            old,
        } => {
            for k in 0..*count as i64 {
                block(old, *blocklength, off(k * stride), f);
            }
        }
        C::Indexed {
            blocklengths,
            displacements,
            old,
        } => {
            for (n, d) in blocklengths.iter().zip(displacements) {
                block(old, *n, off(d * old.extent()), f);
            }
        }
        C::Hindexed {
            blocklengths,
            displacements,
            old,
        } => {
            for (n, d) in blocklengths.iter().zip(displacements) {
                block(old, *n, off(*d), f);
            }
        }
        C::IndexedBlock {
            blocklength,
            displacements,
            old,
        } => {
            for d in displacements {
                block(old, *blocklength, off(d * old.extent()), f);
            }
        }
        C::HindexedBlock {
            blocklength,
            displacements,
            old,
        } => {
            for d in displacements {
                block(old, *blocklength, off(*d), f);
            }
        }
        C::Struct {
            blocklengths,
            displacements,
            types,
        } => {
            for ((n, d), t) in blocklengths.iter().zip(displacements).zip(types) {
                block(t, *n, off(*d), f);
            }
        }
        C::Subarray { .. } | C::Darray { .. } => {
            if let Some(eq) = ty.expansion() {
                basics(eq, at, f);
            }
        }
        C::Resized { old, .. } | C::Dup(old) => basics(old, at, f),
    }
}
