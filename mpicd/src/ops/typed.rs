//! The stream ends of derived-typed and of long node-local contiguous messages: UCX asks them
//! for the sender's packed bytes fragment by fragment, straight into its transport buffers, and
//! hands the receiver's fragments to a derived type's end, which the plan's walker
//! ([`TypedBuf`]) places. No temporary of the message's size exists on either side.

use crate::plan::derived::TypedBuf;
use crate::transport::StreamEnd;

/// A derived-typed buffer as UCX's stream datatype sees it.
pub(crate) struct TypedEnd(pub TypedBuf);

impl StreamEnd for TypedEnd {
    fn length(&self) -> usize {
        usize::try_from(self.0.packed_size()).unwrap_or(usize::MAX)
    }

    fn pack(&mut self, offset: usize, dst: &mut [u8]) {
        // SAFETY: the operation's caller keeps every byte of the buffer's type map readable
        // until the operation completes (MPI's rule for send buffers).
        unsafe { self.0.pack(offset as u64, dst) };
    }

    fn unpack(&mut self, offset: usize, src: &[u8]) {
        // SAFETY: the caller keeps the type map's bytes writable and untouched until the
        // receive completes; `src` is UCX's buffer, not the user's.
        unsafe { self.0.unpack(offset as u64, src) };
    }

    fn poisoned(&mut self) {}
}

/// The send side of a contiguous message to a process of this node from
/// [`crate::config::LOCAL_STREAM`] bytes up. UCX 1.13's rendezvous would read it with
/// one cross-memory copy (`cma`, `process_vm_readv`) on the receiver's core; through the stream
/// datatype it moves in shared-memory segments instead, the sender copying the next segment
/// while the receiver copies the last one out, which measured 1.1-2.4x faster from 64 KiB to
/// 8 MiB on this machine (`bench/results`); the price is that the message moves only while its
/// sender makes progress. The receiver's side is unchanged: a contiguous receive takes these
/// bytes like any others.
pub(crate) struct BytesEnd {
    buf: *const u8,
    len: usize,
}

// SAFETY: the bytes are the user's send buffer, read only from UCX callbacks under the engine's
// lock, as the buffer of a contiguous send is.
unsafe impl Send for BytesEnd {}

impl BytesEnd {
    /// # Safety
    /// `buf..buf+len` must stay readable and unchanged until the send completes.
    pub(crate) unsafe fn new(buf: *const u8, len: usize) -> BytesEnd {
        BytesEnd { buf, len }
    }
}

impl StreamEnd for BytesEnd {
    fn length(&self) -> usize {
        self.len
    }

    fn pack(&mut self, offset: usize, dst: &mut [u8]) {
        let n = dst.len().min(self.len.saturating_sub(offset));
        // SAFETY: `new`'s caller keeps the bytes readable; `n` stays inside them.
        let src = unsafe { std::slice::from_raw_parts(self.buf.add(offset.min(self.len)), n) };
        dst[..n].copy_from_slice(src);
        dst[n..].fill(0);
    }

    fn unpack(&mut self, _offset: usize, _src: &[u8]) {
        // A send-side end: UCX never unpacks into it.
    }

    fn poisoned(&mut self) {}
}
