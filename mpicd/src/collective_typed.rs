//! Collectives whose blocks are derived-typed buffers ([`TypedBuf`]): each block travels as one
//! typed message on the collective context, packed and placed fragment by fragment as in
//! point-to-point (or in place when it is one run), so nothing of a block's size is staged
//! around the transfer. The byte algorithms of [`crate::collective`] serve predefined types.

use crate::comm::Communicator;
use crate::error::{Error, Result};
use crate::plan::derived::TypedBuf;
use crate::request::Request;
use crate::typed::{post_recv_on, post_send_on};

/// Bytes a local copy between two typed buffers moves per step (its only buffer).
const LOCAL_CHUNK: usize = 64 << 10;

/// Copies the data of `from` into `into` through a bounded buffer (a member's own block),
/// calling `between` after each chunk so that the transfers in flight keep moving.
///
/// # Safety
/// `from`'s type map must be readable and `into`'s writable, and the two must not overlap.
unsafe fn copy_local(from: &TypedBuf, into: &TypedBuf, mut between: impl FnMut()) -> Result<()> {
    let (n, room) = (from.packed_size(), into.packed_size());
    if n != room {
        return Err(Error::InvalidArgument(format!(
            "collective size mismatch: {n} bytes sent to self, {room} expected"
        )));
    }
    let mut chunk = vec![0u8; LOCAL_CHUNK.min(n as usize)];
    let mut at = 0u64;
    while at < n {
        // SAFETY: forwarded from the caller.
        let got = unsafe { from.pack(at, &mut chunk) };
        // SAFETY: as above; `chunk` is ours.
        unsafe { into.unpack(at, &chunk[..got]) };
        at += got as u64;
        between();
    }
    Ok(())
}

/// Every member sends `send[i]` to member `i` and receives `recv[i]` from it
/// (`MPI_Alltoall`, `_v` and `_w` with any datatypes). All receives are posted first, then the
/// sends, in pairwise order; the member's own block is copied while they travel, through a
/// 64 KiB buffer, progressing them between chunks (a peer's rendezvous is answered at once). A block must arrive with exactly its buffer's data size.
///
/// # Safety
/// Every send block's type map must be readable, and every receive block's writable and
/// untouched, until the call returns; receive blocks must not overlap each other or the sends.
pub unsafe fn alltoall_typed(
    comm: &Communicator,
    send: &[TypedBuf],
    recv: &[TypedBuf],
) -> Result<()> {
    let size = comm.size();
    if send.len() != size as usize || recv.len() != size as usize {
        return Err(Error::InvalidArgument(format!(
            "alltoall needs {size} send and receive blocks"
        )));
    }
    let rank = comm.rank();
    let tag = comm.next_coll_tag();
    let mut receives: Vec<(i32, Request<'static>)> = Vec::with_capacity(size as usize);
    for step in 1..size {
        let source = (rank - step).rem_euclid(size);
        let from = comm.world_rank(source)?;
        let block = recv[source as usize].clone();
        // SAFETY: forwarded from the caller; the request is completed before returning (or
        // cancelled and awaited when dropped on an error).
        let posted =
            unsafe { post_recv_on(&comm.shared, &comm.coll, block, Some(from), Some(tag)) }?;
        receives.push((source, Request::posted(&comm.shared, posted)));
    }
    let mut sends = Vec::with_capacity(size as usize);
    for step in 1..size {
        let dest = (rank + step) % size;
        let to = comm.world_rank(dest)?;
        let block = send[dest as usize].clone();
        // SAFETY: as above.
        let posted = unsafe { post_send_on(&comm.shared, &comm.coll, block, to, tag, false) }?;
        sends.push(Request::posted(&comm.shared, posted));
    }
    let me = rank as usize;
    // SAFETY: forwarded from the caller (the own blocks are a send and a receive block).
    let progress = || {
        let _ = comm.shared.with(|e| {
            e.progress();
            Ok(())
        });
    };
    let mut outcome = unsafe { copy_local(&send[me], &recv[me], progress) };
    for (source, r) in receives {
        let expected = recv[source as usize].packed_size();
        let got = r.wait().and_then(|st| match st.bytes {
            Some(n) if n == expected => Ok(()),
            n => Err(Error::InvalidArgument(format!(
                "collective size mismatch: rank {source} sent {n:?} bytes, {expected} expected"
            ))),
        });
        outcome = outcome.and(got);
    }
    for s in sends {
        outcome = outcome.and(s.wait().map(drop));
    }
    outcome
}
