//! The copy of a contiguous sender's bytes into the buffers UCX packs a stream send into
//! (on this node, the shared-memory FIFO segments the receiver copies out of next), and the
//! per-process state that chooses between ordinary and non-temporal stores for it.
//!
//! Why: on this project's virtual machines the two cores are at times far apart on the host
//! (a cache line takes ~170 ns from one to the other instead of ~40 ns). A FIFO segment
//! written with ordinary stores is then fetched line by line out of the writer's cache, and a
//! window of long messages drops from 10-20 GB/s to ~2.3 GB/s (a plain two-process ring in C
//! does the same). Written with non-temporal stores the bytes go to memory, and the reader's
//! copy runs at 8-12 GB/s wherever the cores are; but when they are close, ordinary stores are
//! faster (the bytes stay in the shared cache). So fragments are copied with ordinary stores
//! and timed; a run of slow ones switches the process to non-temporal stores for a span of
//! fragments, after which ordinary stores are tried again.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Below this many bytes a fragment is copied with an ordinary `memcpy`, untimed.
const STREAMING_MIN: usize = 4096;
/// An ordinary copy slower than this (bytes per ns, i.e. GB/s) counts as slow: a close pair of
/// cores copies a 16 KiB fragment at 8 GB/s or more, a far pair at ~1.5 GB/s.
const SLOW_BYTES_PER_NS: usize = 3;
/// This many slow fragments in a row switch to non-temporal stores (one alone may be a page
/// fault or a preemption).
const SLOW_RUN_TO_SWITCH: usize = 16;
/// For this many fragments (64 MiB of 16 KiB fragments, a few milliseconds) before ordinary
/// stores are tried again.
const STREAMING_SPAN: u64 = 4096;

/// Fragments of `STREAMING_MIN` bytes or more copied so far by this process.
static FRAGMENTS: AtomicU64 = AtomicU64::new(0);
/// Fragments numbered below this are copied with non-temporal stores.
static STREAMING_UNTIL: AtomicU64 = AtomicU64::new(0);
/// Slow ordinary copies in a row.
static SLOW_RUN: AtomicUsize = AtomicUsize::new(0);

/// Copies `n` bytes from `src` to `dst` (a buffer of UCX's that the peer's process may read
/// next), with ordinary or non-temporal stores as the module's state says, updating it.
/// (Relaxed atomics: the state is a hint, and UCX calls pack under the engine's lock.)
///
/// # Safety
/// `src..src+n` readable, `dst..dst+n` writable, not overlapping.
pub(crate) unsafe fn copy_to_peer(dst: *mut u8, src: *const u8, n: usize) {
    if cfg!(target_arch = "x86_64") && n >= STREAMING_MIN {
        let k = FRAGMENTS.fetch_add(1, Relaxed);
        if k < STREAMING_UNTIL.load(Relaxed) {
            // SAFETY: as the caller promises.
            unsafe { copy_streaming(dst, src, n) };
            return;
        }
        let t = std::time::Instant::now();
        // SAFETY: as the caller promises.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, n) };
        let ns = usize::try_from(t.elapsed().as_nanos())
            .unwrap_or(usize::MAX)
            .max(1);
        if n / ns >= SLOW_BYTES_PER_NS {
            SLOW_RUN.store(0, Relaxed);
        } else if SLOW_RUN.fetch_add(1, Relaxed) + 1 >= SLOW_RUN_TO_SWITCH {
            SLOW_RUN.store(0, Relaxed);
            STREAMING_UNTIL.store(k + 1 + STREAMING_SPAN, Relaxed);
        }
        return;
    }
    // SAFETY: as the caller promises.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, n) };
}

/// SSE2 (part of every x86-64): an ordinary copy up to the first 64-byte boundary of `dst`,
/// then 64 bytes a step with unaligned loads and non-temporal stores, then the tail; a store
/// fence last, so that UCX's own (ordinary) store of the segment's header, which tells the
/// reader the segment is full, cannot become visible before these bytes.
///
/// # Safety
/// As for [`copy_to_peer`].
#[cfg(target_arch = "x86_64")]
unsafe fn copy_streaming(dst: *mut u8, src: *const u8, n: usize) {
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

/// Elsewhere: an ordinary copy (only the tests call it there).
///
/// # Safety
/// As for [`copy_to_peer`].
#[cfg(not(target_arch = "x86_64"))]
#[allow(dead_code)]
unsafe fn copy_streaming(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: as the caller promises.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, n) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length and misalignment around the 64-byte steps copies exactly, in both modes.
    #[test]
    fn copies_exactly() {
        let src: Vec<u8> = (0..20000u32).map(|i| (i * 7 + 3) as u8).collect();
        for &n in &[0usize, 1, 63, 64, 65, 4095, 4096, 4097, 16384, 16447, 19000] {
            for off in 0..3 {
                for streaming in [false, true] {
                    let mut dst = vec![0u8; n + 80];
                    let (d, s) = (dst[off..].as_mut_ptr(), src[off..].as_ptr());
                    // SAFETY: both ranges lie within their vectors.
                    unsafe {
                        if streaming {
                            copy_streaming(d, s, n)
                        } else {
                            copy_to_peer(d, s, n)
                        }
                    };
                    assert_eq!(&dst[off..off + n], &src[off..off + n]);
                    assert!(dst[off + n..].iter().all(|&b| b == 0));
                }
            }
        }
    }
}
