//! The byte buffers of serde messages, kept when a message is done for the next ones.
//!
//! A large message's encoding (on the sender) and packed part (on the receiver) each take a
//! buffer as large as the message. Freed, such a buffer goes back to the operating system
//! (glibc trims the heap, or unmaps a large block), and the next message's buffer costs a page
//! fault and a zeroed page per 4 KiB, which measured as much as encoding the message (64
//! messages of 8 MiB in flight: 131072 faults per window). So buffers of at least
//! [`POOLED_MIN`] bytes are kept here and handed out again.
//!
//! The pool never makes the bridge's buffers take more memory than they took at once at their
//! peak: a new buffer is allocated only when no kept one fits, and then kept ones too small
//! for it are freed first, as many bytes of them as the new one takes (so kept plus in-use
//! bytes grow only while every kept buffer is in use). It holds at most [`POOL_BYTES`];
//! [`release`] frees what it holds.

use std::cell::Cell;
use std::sync::Mutex;

/// Buffers smaller than this are left to the allocator (which reuses them well).
pub(super) const POOLED_MIN: usize = 64 << 10;
/// The most bytes of buffers kept (their capacities): a window of 64 messages of 8 MiB in
/// flight, on each side, twice over.
pub(super) const POOL_BYTES: usize = 1 << 30;

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

/// A buffer with room for at least `bytes`: the smallest kept one that fits (emptied; of
/// equal ones, the last kept), or a new one, for which kept buffers too small for it are freed first (see the module doc).
pub(super) fn take(bytes: usize) -> Vec<u8> {
    if bytes >= POOLED_MIN {
        let mut freed = Vec::new();
        if let Ok(mut pool) = POOL.lock() {
            // The smallest that fits, the last kept of those (its memory is the likeliest to
            // be in cache still).
            let fit = (0..pool.buffers.len())
                .rev()
                .filter(|&i| pool.buffers[i].capacity() >= bytes)
                .min_by_key(|&i| pool.buffers[i].capacity());
            if let Some(i) = fit {
                let mut buf = pool.buffers.remove(i); // keeps the others in the order kept
                pool.bytes -= buf.capacity();
                buf.clear();
                return buf;
            }
            // None fits, so every kept buffer is smaller: free the largest ones until as many
            // bytes as the new buffer takes are gone (outside the lock).
            pool.buffers.sort_unstable_by_key(Vec::capacity);
            let mut gone = 0;
            while gone < bytes {
                let Some(buf) = pool.buffers.pop() else { break };
                gone += buf.capacity();
                freed.push(buf);
            }
            pool.bytes -= gone;
        }
        drop(freed);
    }
    Vec::with_capacity(bytes)
}

/// Frees every buffer the pool holds (they are kept for the next messages otherwise).
pub(super) fn release() {
    let all = match POOL.lock() {
        Ok(mut pool) => {
            pool.bytes = 0;
            std::mem::take(&mut pool.buffers)
        }
        Err(_) => Vec::new(),
    };
    drop(all);
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
    take(LAST_ENCODING.with(Cell::get).max(64))
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
