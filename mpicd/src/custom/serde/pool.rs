//! The byte buffers of serde messages, kept when a message is done for the next ones.
//!
//! A large message's encoding (on the sender) and packed part (on the receiver) each take a
//! buffer as large as the message. Freed, such a buffer goes back to the operating system
//! (glibc trims the heap, or unmaps a large block), and the next message's buffer costs a page
//! fault and a zeroed page per 4 KiB, which measured as much as encoding the message. So buffers
//! of at least [`POOLED_MIN`] bytes are kept here, up to [`POOL_BYTES`] in all per process, and
//! handed out again.

use std::cell::Cell;
use std::sync::Mutex;

/// Buffers smaller than this are left to the allocator (which reuses them well).
pub(super) const POOLED_MIN: usize = 64 << 10;
/// The most bytes of buffers kept (their capacities).
pub(super) const POOL_BYTES: usize = 64 << 20;

struct Pool {
    buffers: Vec<Vec<u8>>,
    bytes: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    buffers: Vec::new(),
    bytes: 0,
});

thread_local! {
    /// The size of the last encoding made on this thread: the guess for the next one.
    static LAST_ENCODING: Cell<usize> = const { Cell::new(0) };
}

/// A buffer with room for at least `bytes`: the smallest kept one that fits (with the bytes of
/// its last use still in it, so that a receiver zeroes only what was never written), or a new,
/// empty one.
pub(super) fn take(bytes: usize) -> Vec<u8> {
    if bytes >= POOLED_MIN {
        if let Ok(mut pool) = POOL.lock() {
            let fit = (0..pool.buffers.len())
                .filter(|&i| pool.buffers[i].capacity() >= bytes)
                .min_by_key(|&i| pool.buffers[i].capacity());
            if let Some(i) = fit {
                let buf = pool.buffers.swap_remove(i);
                pool.bytes -= buf.capacity();
                return buf;
            }
        }
    }
    Vec::with_capacity(bytes)
}

/// Keeps `buf` for a later [`take`] if it is large and the pool has room; frees it otherwise.
pub(super) fn give(buf: Vec<u8>) {
    let cap = buf.capacity();
    if cap < POOLED_MIN {
        return;
    }
    if let Ok(mut pool) = POOL.lock() {
        if pool.bytes + cap <= POOL_BYTES {
            pool.bytes += cap;
            pool.buffers.push(buf);
        }
    }
}

/// A buffer for a new encoding on this thread, sized like the previous one.
pub(super) fn take_for_encoding() -> Vec<u8> {
    let mut buf = take(LAST_ENCODING.with(Cell::get).max(64));
    buf.clear();
    buf
}

/// Records the size of an encoding just made on this thread.
pub(super) fn encoded(bytes: usize) {
    LAST_ENCODING.with(|c| c.set(bytes));
}

/// A buffer that goes back to the pool when dropped (an encoding, owned by its send).
pub(super) struct Pooled(pub(super) Vec<u8>);

impl Drop for Pooled {
    fn drop(&mut self) {
        give(std::mem::take(&mut self.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_buffers_come_back() {
        let buf = take(POOLED_MIN * 3);
        assert!(buf.capacity() >= POOLED_MIN * 3);
        let ptr = buf.as_ptr();
        give(buf);
        // Other tests may take it meanwhile: only check that a fitting one comes back.
        let again = take(POOLED_MIN * 2);
        assert!(again.capacity() >= POOLED_MIN * 2);
        assert!(take_for_encoding().is_empty());
        let _ = ptr;
        give(vec![0u8; 10]); // too small: freed, not kept
        assert!(POOL.lock().unwrap().bytes <= POOL_BYTES);
    }
}
