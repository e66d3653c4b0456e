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

use crate::plan::copy_streaming;
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

/// Runs `fill`, which writes one fragment of `n` bytes into UCX's buffer, telling it whether to
/// use non-temporal stores; an ordinary fill of `STREAMING_MIN` bytes or more is timed and
/// updates the state. (Relaxed atomics: the state is a hint, and UCX calls pack under the
/// engine's lock.)
pub(crate) fn fragment<R>(n: usize, fill: impl FnOnce(bool) -> R) -> R {
    if !cfg!(target_arch = "x86_64") || n < STREAMING_MIN {
        return fill(false);
    }
    let k = FRAGMENTS.fetch_add(1, Relaxed);
    if k < STREAMING_UNTIL.load(Relaxed) {
        return fill(true);
    }
    let t = std::time::Instant::now();
    let r = fill(false);
    let ns = usize::try_from(t.elapsed().as_nanos())
        .unwrap_or(usize::MAX)
        .max(1);
    if n / ns >= SLOW_BYTES_PER_NS {
        SLOW_RUN.store(0, Relaxed);
    } else if SLOW_RUN.fetch_add(1, Relaxed) + 1 >= SLOW_RUN_TO_SWITCH {
        SLOW_RUN.store(0, Relaxed);
        STREAMING_UNTIL.store(k + 1 + STREAMING_SPAN, Relaxed);
    }
    r
}

/// Copies one fragment of `n` bytes from `src` to `dst` (a buffer of UCX's that the peer's
/// process may read next), with ordinary or non-temporal stores as [`fragment`] decides.
///
/// # Safety
/// `src..src+n` readable, `dst..dst+n` writable, not overlapping.
pub(crate) unsafe fn copy_to_peer(dst: *mut u8, src: *const u8, n: usize) {
    fragment(n, |streaming| {
        // SAFETY: as the caller promises.
        unsafe {
            if streaming {
                copy_streaming(dst, src, n)
            } else {
                std::ptr::copy_nonoverlapping(src, dst, n)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fragment copies exactly whichever stores it uses.
    #[test]
    fn copies_exactly() {
        let src: Vec<u8> = (0..20000u32).map(|i| (i * 7 + 3) as u8).collect();
        for &n in &[0usize, 1, 4095, 4096, 16384, 19000] {
            let mut dst = vec![0u8; n + 64];
            // SAFETY: both ranges lie within their vectors.
            unsafe { copy_to_peer(dst[1..].as_mut_ptr(), src.as_ptr(), n) };
            assert_eq!(&dst[1..1 + n], &src[..n]);
        }
    }
}
