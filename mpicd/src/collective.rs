//! Collective operations over a communicator's collective context, so they never match
//! point-to-point traffic: the barrier (dissemination) and the byte allgather (binomial gather
//! then binomial broadcast) that communicator creation uses.

use crate::comm::Communicator;
use crate::engine::Matched;
use crate::error::{Error, Result};
use crate::request::Request;

const BARRIER_TAG: i32 = 1;
const GATHER_TAG: i32 = 2;
const BCAST_TAG: i32 = 3;

/// Sends `bytes` to communicator rank `dest` on the collective context.
fn send(comm: &Communicator, bytes: &[u8], dest: i32, tag: i32) -> Result<()> {
    let dest = comm.world_rank(dest)?;
    // SAFETY: the bytes outlive the request, which is waited for before returning.
    let id = comm.shared.with(|e| unsafe {
        e.post_send(&comm.coll, dest, tag, bytes.as_ptr(), bytes.len(), false)
    })?;
    match id {
        Some(id) => Request::pending(&comm.shared, id).wait().map(drop),
        None => Ok(()),
    }
}

/// Receives a message of any size from communicator rank `source` on the collective context.
fn recv_vec(comm: &Communicator, source: i32, tag: i32) -> Result<Vec<u8>> {
    let from = comm.world_rank(source)?;
    let (status, matched) = comm
        .shared
        .progress_until(|e| Ok(e.probe(&comm.coll, Some(from), Some(tag), true)?))?;
    let Some(matched @ Matched::Contiguous { .. }) = matched else {
        return Err(Error::Transport(
            "unexpected message kind in a collective".into(),
        ));
    };
    let mut buf = vec![0u8; status.bytes.unwrap_or(0) as usize];
    // SAFETY: `buf` outlives the request, which is waited for before returning.
    let id = comm
        .shared
        .with(|e| unsafe { e.post_mrecv(matched, buf.as_mut_ptr(), buf.len()) })?;
    Request::pending(&comm.shared, id).wait()?;
    Ok(buf)
}

/// Dissemination barrier: in round k, signal rank + 2^k and wait for rank - 2^k.
pub(crate) fn barrier(comm: &Communicator) -> Result<()> {
    let (rank, size) = (comm.rank(), comm.size());
    let mut distance = 1;
    while distance < size {
        let to = comm.world_rank((rank + distance) % size)?;
        let from = comm.world_rank((rank - distance).rem_euclid(size))?;
        let empty: [u8; 0] = [];
        let mut incoming: [u8; 0] = [];
        // SAFETY: zero-byte buffers; both requests are waited for below.
        let recv = comm.shared.with(|e| unsafe {
            e.post_recv(
                &comm.coll,
                Some(from),
                Some(BARRIER_TAG),
                incoming.as_mut_ptr(),
                0,
            )
        })?;
        let recv = Request::pending(&comm.shared, recv);
        let sent = comm.shared.with(|e| unsafe {
            e.post_send(&comm.coll, to, BARRIER_TAG, empty.as_ptr(), 0, false)
        })?;
        if let Some(id) = sent {
            Request::pending(&comm.shared, id).wait()?;
        }
        recv.wait()?;
        distance *= 2;
    }
    Ok(())
}

/// Every member's `mine`, indexed by rank, on every member.
pub(crate) fn allgather_bytes(comm: &Communicator, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
    let (rank, size) = (comm.rank(), comm.size());
    // Binomial gather to rank 0 of (rank, len, bytes) records.
    let mut gathered = encode_record(rank, mine);
    let mut mask = 1;
    while mask < size {
        if rank & mask != 0 {
            send(comm, &gathered, rank - mask, GATHER_TAG)?;
            break;
        }
        if rank + mask < size {
            gathered.extend(recv_vec(comm, rank + mask, GATHER_TAG)?);
        }
        mask <<= 1;
    }
    // Binomial broadcast of the whole table from rank 0.
    let mut mask = 1;
    while mask < size {
        if rank & mask != 0 {
            gathered = recv_vec(comm, rank - mask, BCAST_TAG)?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rank + mask < size {
            send(comm, &gathered, rank + mask, BCAST_TAG)?;
        }
        mask >>= 1;
    }
    decode_records(&gathered, size as usize)
}

fn encode_record(rank: i32, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + bytes.len());
    out.extend_from_slice(&(rank as u32).to_le_bytes());
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
    out
}

fn decode_records(mut buf: &[u8], size: usize) -> Result<Vec<Vec<u8>>> {
    let bad = || Error::Transport("malformed allgather record".into());
    let mut out = vec![Vec::new(); size];
    while !buf.is_empty() {
        let rank = u32::from_le_bytes(
            buf.get(0..4)
                .ok_or_else(bad)?
                .try_into()
                .map_err(|_| bad())?,
        ) as usize;
        let len = u32::from_le_bytes(
            buf.get(4..8)
                .ok_or_else(bad)?
                .try_into()
                .map_err(|_| bad())?,
        ) as usize;
        let bytes = buf.get(8..8 + len).ok_or_else(bad)?;
        *out.get_mut(rank).ok_or_else(bad)? = bytes.to_vec();
        buf = &buf[8 + len..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let mut all = encode_record(2, b"cc");
        all.extend(encode_record(0, b""));
        all.extend(encode_record(1, b"b"));
        assert_eq!(
            decode_records(&all, 3).unwrap(),
            vec![b"".to_vec(), b"b".to_vec(), b"cc".to_vec()]
        );
        assert!(decode_records(&all[..5], 3).is_err());
        assert!(decode_records(&encode_record(7, b"x"), 3).is_err());
    }
}
