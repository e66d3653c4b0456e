//! The lock-free calls of mapped windows ([`super::direct`]) on contiguous bytes of one
//! predefined type: put, get, the accumulate family and the flushes, without the state's
//! mutex, without an allocation or a reference count. Each either does the whole operation and
//! returns true, or does nothing and returns false, and the caller then makes the general call
//! ([`Window::put`], [`Window::flush`] ...), which checks everything again and reports what was
//! wrong (no epoch, a rank or range out of bounds, `MPI_PROC_NULL`, a dead target).
//!
//! The epoch checks read [`super::epoch::AccessMap`]; the accumulates change each element
//! with [`super::element::apply`], as the general path of a mapped window does, so the two
//! paths are atomic with each other per element.

use super::element;
use super::epoch::Access;
use super::{AccumulateOp, Window};

/// Copies `len` bytes from `src` to `dst`, which may overlap (a process's own window):
/// the sizes of single elements inline, the rest through `memmove`.
///
/// # Safety
/// Both ranges must be valid for `len` bytes.
#[inline(always)]
unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: forwarded from the caller; each small case reads everything before it writes.
    unsafe {
        match len {
            8 => std::ptr::write_unaligned(
                dst as *mut u64,
                std::ptr::read_unaligned(src as *const u64),
            ),
            4 => std::ptr::write_unaligned(
                dst as *mut u32,
                std::ptr::read_unaligned(src as *const u32),
            ),
            16 => std::ptr::write_unaligned(
                dst as *mut u128,
                std::ptr::read_unaligned(src as *const u128),
            ),
            2049.. if apart(src, dst, len) => chunks(src, dst, len),
            _ => std::ptr::copy(src, dst, len),
        }
    }
}

/// Whether the ranges of `len` bytes at `a` and `b` do not overlap.
#[inline(always)]
fn apart(a: *const u8, b: *mut u8, len: usize) -> bool {
    (a as usize).abs_diff(b as usize) >= len
}

/// Copies `len` bytes in 64-byte pieces, every copy above 2 KiB: `memcpy`'s string
/// instructions ran at half the speed for a few KiB to a destination off the cache line and
/// off the source's alignment (glibc 2.36 on AMD EPYC: 4 KiB gets into a `malloc`ed buffer at
/// 36-42 GB/s; 32-byte aligned stores after a short head at 77), and 3-12% behind from 4 KiB
/// to 1 MiB at any alignment (a copy loop measured beside `memcpy` on this machine).
///
/// # Safety
/// Both ranges valid for `len` bytes, not overlapping.
#[inline(never)]
unsafe fn chunks(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the caller's promise; the processor has AVX.
        return unsafe { chunks_avx(src, dst, len) };
    }
    let mut at = 0;
    // SAFETY: the caller's promise; every piece lies within `len`.
    unsafe {
        while at + 64 <= len {
            let v = std::ptr::read_unaligned(src.add(at) as *const [u128; 4]);
            std::ptr::write_unaligned(dst.add(at) as *mut [u128; 4], v);
            at += 64;
        }
        std::ptr::copy_nonoverlapping(src.add(at), dst.add(at), len - at);
    }
}

/// [`chunks`] with AVX: unaligned 32-byte loads, aligned 32-byte stores after a head that
/// aligns the destination.
///
/// # Safety
/// As [`chunks`]; the processor must have AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn chunks_avx(src: *const u8, dst: *mut u8, len: usize) {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_store_si256};
    let head = dst.align_offset(32).min(len);
    // SAFETY: the caller's promise; every piece lies within `len`, and the stores are at
    // `dst + head + 32k`, aligned to 32.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, head);
        let mut at = head;
        while at + 64 <= len {
            let a = _mm256_loadu_si256(src.add(at) as *const __m256i);
            let b = _mm256_loadu_si256(src.add(at + 32) as *const __m256i);
            _mm256_store_si256(dst.add(at) as *mut __m256i, a);
            _mm256_store_si256(dst.add(at + 32) as *mut __m256i, b);
            at += 64;
        }
        std::ptr::copy_nonoverlapping(src.add(at), dst.add(at), len - at);
    }
}

impl Window {
    /// Where `len` bytes at displacement `disp` of member `rank` are mapped in this process,
    /// when the window is mapped, an epoch allows accessing `rank`, and the bytes lie in its
    /// window.
    #[inline(always)]
    fn hot_target(&self, rank: i32, disp: i64, len: usize) -> Option<*mut u8> {
        let m = self.mapped.as_ref()?;
        let r = usize::try_from(rank).ok()?;
        if self.access.get(r) == Access::Closed {
            return None;
        }
        let rec = &self.targets.get(r)?.rec;
        let at = u64::try_from(disp.checked_mul(rec.disp_unit as i64)?).ok()?;
        if at.checked_add(len as u64)? > rec.size {
            return None;
        }
        Some(m.base(r).wrapping_add(at as usize) as *mut u8)
    }

    /// `MPI_Put` of the `len` contiguous bytes at `origin` to displacement `disp` of member
    /// `rank` (a target of one predefined type, contiguous), on a mapped window: copied now.
    /// False when this window or call does not take this path (nothing happened).
    ///
    /// # Safety
    /// `origin` must be readable for `len` bytes.
    #[inline(always)]
    pub unsafe fn try_put_mapped(
        &self,
        origin: *const u8,
        len: usize,
        rank: i32,
        disp: i64,
    ) -> bool {
        let Some(at) = self.hot_target(rank, disp, len) else {
            return false;
        };
        // SAFETY: the range is in the target's mapped window.
        unsafe { copy(origin, at, len) };
        true
    }

    /// `MPI_Get` into the `len` contiguous bytes at `origin`, as [`Window::try_put_mapped`].
    ///
    /// # Safety
    /// `origin` must be writable for `len` bytes.
    #[inline(always)]
    pub unsafe fn try_get_mapped(&self, origin: *mut u8, len: usize, rank: i32, disp: i64) -> bool {
        let Some(at) = self.hot_target(rank, disp, len) else {
            return false;
        };
        // SAFETY: as in `try_put_mapped`.
        unsafe { copy(at, origin, len) };
        true
    }

    /// An accumulate-class operation (`MPI_Accumulate`, `MPI_Get_accumulate`,
    /// `MPI_Fetch_and_op`) of `op` on `len` bytes of elements of `width` bytes, contiguous at
    /// the origin (not read for `NoOp`), the target and, unless null, the result (the target's
    /// old elements), on a mapped window: each element changed atomically now. False when this
    /// window or call does not take this path (nothing happened): an element size the CPU's
    /// atomics do not take, a misaligned target, an op that could fail.
    ///
    /// # Safety
    /// `origin` must be readable and `result` (unless null) writable for `len` bytes.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn try_accumulate_mapped(
        &self,
        origin: *const u8,
        result: *mut u8,
        len: usize,
        width: usize,
        rank: i32,
        disp: i64,
        op: &AccumulateOp,
    ) -> bool {
        if !element::atomic_width(width) || len % width != 0 || !element::infallible(op, width) {
            return false;
        }
        let Some(at) = self.hot_target(rank, disp, len) else {
            return false;
        };
        if at as usize % width != 0 {
            return false;
        }
        let mut k = 0;
        while k < len {
            let old = match result.is_null() {
                true => result,
                false => result.wrapping_add(k),
            };
            // SAFETY: an aligned element of the checked range; the origin and result hold
            // `len` bytes (the caller's promise); `infallible` said the op cannot fail.
            let _ = unsafe { element::apply(at.add(k), width, op, origin.wrapping_add(k), old) };
            k += width;
        }
        true
    }

    /// `MPI_Compare_and_swap` on one element of `n` bytes (`origin`, `compare` and `result`
    /// hold one each), on a mapped window: one atomic compare-and-swap now. False when this
    /// window or call does not take this path (nothing happened).
    pub fn try_compare_and_swap_mapped(
        &self,
        origin: &[u8],
        compare: &[u8],
        result: &mut [u8],
        rank: i32,
        disp: i64,
    ) -> bool {
        let n = origin.len();
        if !element::atomic_width(n) || compare.len() != n || result.len() != n {
            return false;
        }
        let Some(at) = self.hot_target(rank, disp, n) else {
            return false;
        };
        if at as usize % n != 0 {
            return false;
        }
        // SAFETY: an aligned element of the checked range.
        unsafe { element::compare_swap(at, n, origin, compare, result) };
        true
    }

    /// `MPI_Win_flush` (and its local form) on member `rank` of a mapped window in a
    /// passive-target epoch on it: a memory fence. False when this window or call does not
    /// take this path, or the target's liveness must be looked at now (nothing happened).
    #[inline(always)]
    pub fn try_flush_mapped(&self, rank: i32) -> bool {
        let Ok(r) = usize::try_from(rank) else {
            return false;
        };
        if self.mapped.is_none() || self.access.get(r) != Access::Passive || !self.direct_quiet() {
            return false;
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        true
    }

    /// `MPI_Win_flush_all` (and its local form), as [`Window::try_flush_mapped`].
    #[inline(always)]
    pub fn try_flush_all_mapped(&self) -> bool {
        if self.mapped.is_none() || !self.access.any_passive() || !self.direct_quiet() {
            return false;
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        true
    }
}
