//! The stream end of a derived-typed message: UCX asks it for the sender's packed bytes
//! fragment by fragment, straight into its transport buffers, and hands it the receiver's
//! fragments, which the plan's walker ([`TypedBuf`]) places. No temporary of the message's
//! size exists on either side.

use crate::plan::derived::TypedBuf;
use crate::transport::StreamEnd;

/// A derived-typed buffer as UCX's stream datatype sees it.
pub(crate) struct TypedEnd(pub TypedBuf);

impl StreamEnd for TypedEnd {
    fn length(&self) -> usize {
        usize::try_from(self.0.packed_size()).unwrap_or(usize::MAX)
    }

    fn pack(&mut self, offset: usize, dst: &mut [u8]) {
        if let Some((at, len)) = self.0.contiguous() {
            // One dense run (a long contiguous send to this node): copied as the peer's
            // next read wants it (see `stream_copy`).
            let n = dst.len().min(len.saturating_sub(offset));
            // SAFETY: the run is readable (as below) from `offset` for `n` bytes; `dst` is
            // UCX's buffer, at least `n` bytes, apart from the user's.
            unsafe { super::stream_copy::copy_to_peer(dst.as_mut_ptr(), at.add(offset), n) };
            return;
        }
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
