//! A copy with non-temporal stores, for bytes another process reads next out of shared memory
//! (see `ops::stream_copy`, which decides when to use it).

/// Copies `n` bytes from `src` to `dst` with non-temporal stores: the bytes go to memory, not
/// into this core's cache. SSE2 (part of every x86-64): an ordinary copy up to the first 64-byte boundary of `dst`,
/// then 64 bytes a step with unaligned loads and non-temporal stores, then the tail; a store
/// fence last, so that a later ordinary store (UCX's store of a shared-memory segment's header,
/// which tells the reader the segment is full) cannot become visible before these bytes.
///
/// # Safety
/// `src..src+n` readable, `dst..dst+n` writable, not overlapping.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn copy_streaming(dst: *mut u8, src: *const u8, n: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    let head = dst.align_offset(64).min(n);
    // SAFETY: every access is within the caller's ranges; the non-temporal stores go to
    // 16-byte aligned addresses (dst + head is 64-byte aligned, each store 16 bytes further).
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, head);
        let mut at = head;
        while at + 64 <= n {
            let s = src.add(at) as *const __m128i;
            let d = dst.add(at) as *mut __m128i;
            let (a, b, c, e) = (
                _mm_loadu_si128(s),
                _mm_loadu_si128(s.add(1)),
                _mm_loadu_si128(s.add(2)),
                _mm_loadu_si128(s.add(3)),
            );
            _mm_stream_si128(d, a);
            _mm_stream_si128(d.add(1), b);
            _mm_stream_si128(d.add(2), c);
            _mm_stream_si128(d.add(3), e);
            at += 64;
        }
        std::ptr::copy_nonoverlapping(src.add(at), dst.add(at), n - at);
        _mm_sfence();
    }
}

/// Elsewhere: an ordinary copy.
///
/// # Safety
/// `src..src+n` readable, `dst..dst+n` writable, not overlapping.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) unsafe fn copy_streaming(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: as the caller promises.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, n) };
}

#[cfg(test)]
mod tests {
    use super::copy_streaming;

    /// Every length and misalignment around the 64-byte steps copies exactly.
    #[test]
    fn copies_exactly() {
        let src: Vec<u8> = (0..20000u32).map(|i| (i * 7 + 3) as u8).collect();
        for &n in &[0usize, 1, 63, 64, 65, 4095, 4096, 4097, 16384, 16447, 19000] {
            for off in 0..3 {
                let mut dst = vec![0u8; n + 80];
                // SAFETY: both ranges lie within their vectors.
                unsafe { copy_streaming(dst[off..].as_mut_ptr(), src[off..].as_ptr(), n) };
                assert_eq!(&dst[off..off + n], &src[off..off + n]);
                assert!(dst[off + n..].iter().all(|&b| b == 0));
            }
        }
    }
}
