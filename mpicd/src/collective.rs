//! Collective operations over a communicator's collective context, so they never match
//! point-to-point traffic: the barrier (dissemination) and the byte allgather (binomial gather
//! then binomial broadcast) that communicator creation uses, and the public collectives on
//! bytes (what the C library calls): broadcast and reduce on binomial trees, allreduce by
//! recursive doubling, gather and scatter of any-sized pieces on binomial trees, all-to-all by
//! pairwise exchange, prefix scans by recursive doubling. Reductions combine with a
//! [`Combine`] function (the predefined ops on [`ElementType`]s: [`reduce_local`]).

use crate::comm::Communicator;
use crate::datatype::ElementType;
use crate::engine::Matched;
use crate::error::{Error, Result};
pub use crate::reduction::{reduce_local, Combine, Order, ReduceOp};
use crate::request::{scope, wait_all, Request, Scope};

const BARRIER_TAG: i32 = 1;
const GATHER_TAG: i32 = 2;
const BCAST_TAG: i32 = 3;
const BCAST_DATA_TAG: i32 = 10;
const REDUCE_TAG: i32 = 11;
const ALLREDUCE_TAG: i32 = 12;
const GATHERV_TAG: i32 = 13;
const SCATTERV_TAG: i32 = 14;
const ALLTOALL_TAG: i32 = 15;
const SCAN_TAG: i32 = 17;

impl Communicator {
    /// Blocks until every member has called it (dissemination: ⌈log2 p⌉ rounds).
    pub fn barrier(&self) -> Result<()> {
        barrier(self)
    }
}

/// Sends `bytes` to communicator rank `dest` on the collective context.
fn send(comm: &Communicator, bytes: &[u8], dest: i32, tag: i32) -> Result<()> {
    scope(|s| isend(s, comm, bytes, dest, tag)?.wait().map(drop))
}

/// Receives a message of any size from communicator rank `source` on the collective context.
fn recv_vec(comm: &Communicator, source: i32, tag: i32) -> Result<Vec<u8>> {
    let from = comm.world_rank(source)?;
    let (status, matched) = comm
        .shared
        .progress_until(|e| e.probe(&comm.coll, Some(from), Some(tag), true))?;
    let Some(matched @ Matched::Contiguous { .. }) = matched else {
        return Err(Error::Transport(
            "unexpected message kind in a collective".into(),
        ));
    };
    let mut buf = vec![0u8; status.bytes.unwrap_or(0) as usize];
    // SAFETY: `buf` outlives the request, which is waited for before returning.
    let id = comm
        .shared
        .with(|e| unsafe { e.post_mrecv(matched, buf.as_mut_ptr(), buf.len(), None) })?;
    Request::pending(&comm.shared, id).wait()?;
    Ok(buf)
}

/// Dissemination barrier: in round k, signal rank + 2^k and wait for rank - 2^k.
pub(crate) fn barrier(comm: &Communicator) -> Result<()> {
    let (rank, size) = (comm.rank(), comm.size());
    let mut distance = 1;
    while distance < size {
        let (to, from) = ((rank + distance) % size, (rank - distance).rem_euclid(size));
        exchange(comm, &[], to, &mut [], from, BARRIER_TAG)?;
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
        let word = |at: usize| -> Result<usize> {
            let bytes = buf.get(at..at + 4).ok_or_else(bad)?;
            Ok(u32::from_le_bytes(bytes.try_into().map_err(|_| bad())?) as usize)
        };
        let (rank, len) = (word(0)?, word(4)?);
        let bytes = buf.get(8..8 + len).ok_or_else(bad)?;
        *out.get_mut(rank).ok_or_else(bad)? = bytes.to_vec();
        buf = &buf[8 + len..];
    }
    Ok(out)
}

// ----- public collectives on bytes -----

fn check_root(comm: &Communicator, root: i32) -> Result<()> {
    if (0..comm.size()).contains(&root) {
        Ok(())
    } else {
        Err(Error::InvalidRank {
            rank: root,
            size: comm.size(),
        })
    }
}

/// Communicator rank of relative rank `vr` in a tree rooted at `root`.
fn absolute(comm: &Communicator, vr: i32, root: i32) -> i32 {
    (vr + root) % comm.size()
}

/// Starts a send on the collective context, in `scope`.
fn isend<'s, 'a>(
    scope: &'s Scope<'a>,
    comm: &Communicator,
    bytes: &'a [u8],
    dest: i32,
    tag: i32,
) -> Result<Request<'s>> {
    let dest = comm.world_rank(dest)?;
    // SAFETY: `bytes` is borrowed for the scope's 'a, and the scope completes the operation
    // before it returns.
    let posted = comm.shared.with(|e| unsafe {
        e.post_send(&comm.coll, dest, tag, bytes.as_ptr(), bytes.len(), false)
    })?;
    Ok(scope.request(&comm.shared, posted))
}

/// Starts a receive of exactly `buf.len()` bytes on the collective context, in `scope`.
fn irecv<'s, 'a>(
    scope: &'s Scope<'a>,
    comm: &Communicator,
    buf: &'a mut [u8],
    source: i32,
    tag: i32,
) -> Result<Request<'s>> {
    let from = comm.world_rank(source)?;
    // SAFETY: `buf` is borrowed exclusively for the scope's 'a, and the scope completes the
    // operation before it returns.
    let posted = comm.shared.with(|e| unsafe {
        e.post_recv(
            &comm.coll,
            Some(from),
            Some(tag),
            buf.as_mut_ptr(),
            buf.len(),
        )
    })?;
    Ok(scope.request(&comm.shared, posted))
}

/// Waits for a receive of `expected` bytes from `source` and checks its size.
fn finish_recv(request: Request<'_>, expected: usize, source: i32) -> Result<()> {
    let status = request.wait()?;
    match status.bytes {
        Some(n) if n == expected as u64 => Ok(()),
        got => Err(Error::InvalidArgument(format!(
            "collective size mismatch: rank {source} sent {got:?} bytes, {expected} expected"
        ))),
    }
}

fn recv_into(comm: &Communicator, buf: &mut [u8], source: i32, tag: i32) -> Result<()> {
    let expected = buf.len();
    scope(|s| finish_recv(irecv(s, comm, buf, source, tag)?, expected, source))
}

/// Sends `out` to `dest` while receiving exactly `into.len()` bytes from `source`.
fn exchange(
    comm: &Communicator,
    out: &[u8],
    dest: i32,
    into: &mut [u8],
    source: i32,
    tag: i32,
) -> Result<()> {
    let expected = into.len();
    scope(|s| {
        let recv = irecv(s, comm, into, source, tag)?;
        let send = isend(s, comm, out, dest, tag)?;
        let received = finish_recv(recv, expected, source);
        send.wait()?;
        received
    })
}

/// Broadcasts `buf` from `root` to every member (binomial tree, ⌈log2 p⌉ rounds). Every member
/// passes a buffer of the same length.
pub fn bcast(comm: &Communicator, buf: &mut [u8], root: i32) -> Result<()> {
    check_root(comm, root)?;
    let (rank, size) = (comm.rank(), comm.size());
    let vr = (rank - root).rem_euclid(size);
    let mut mask = 1;
    while mask < size {
        if vr & mask != 0 {
            recv_into(comm, buf, absolute(comm, vr - mask, root), BCAST_DATA_TAG)?;
            break;
        }
        mask <<= 1;
    }
    let buf: &[u8] = buf;
    scope(|s| {
        let mut sends = Vec::new();
        mask >>= 1;
        while mask > 0 {
            if vr + mask < size {
                let child = absolute(comm, vr + mask, root);
                sends.push(isend(s, comm, buf, child, BCAST_DATA_TAG)?);
            }
            mask >>= 1;
        }
        wait_all(&mut sends).map(drop)
    })
}

/// Reduces every member's `send` with `op` into `recv` at `root` (binomial tree). `recv` is
/// used only at the root, where it must be as long as `send`.
pub fn reduce(
    comm: &Communicator,
    send: &[u8],
    recv: Option<&mut [u8]>,
    elem: ElementType,
    op: ReduceOp,
    root: i32,
) -> Result<()> {
    reduce_by(
        comm,
        send,
        recv,
        root,
        &|acc, inc| reduce_local(op, elem, acc, inc),
        Order::Any,
    )
}

/// [`reduce`] with any combination of the bytes: `combine(acc, incoming)` sets `acc` to
/// `acc op incoming` (the C layer's reductions of complex numbers and value-index pairs).
pub fn reduce_by(
    comm: &Communicator,
    send: &[u8],
    recv: Option<&mut [u8]>,
    root: i32,
    combine: &Combine<'_>,
    order: Order,
) -> Result<()> {
    check_root(comm, root)?;
    let (rank, size) = (comm.rank(), comm.size());
    // In rank order, the tree is rooted at rank 0 (every partial result then covers a range of
    // ranks in order) and its result goes on to `root`.
    let tree_root = match order {
        Order::Any => root,
        Order::Ranks => 0,
    };
    let mut acc = send.to_vec();
    let mut incoming = vec![0u8; send.len()];
    let vr = (rank - tree_root).rem_euclid(size);
    let mut mask = 1;
    while mask < size {
        if vr & mask != 0 {
            let parent = absolute(comm, vr - mask, tree_root);
            self::send(comm, &acc, parent, REDUCE_TAG)?;
            if rank != root {
                return Ok(());
            }
            recv_into(comm, &mut acc, tree_root, REDUCE_TAG)?;
            break;
        }
        if vr + mask < size {
            let child = absolute(comm, vr + mask, tree_root);
            recv_into(comm, &mut incoming, child, REDUCE_TAG)?;
            combine(&mut acc, &incoming)?;
        }
        mask <<= 1;
    }
    if rank != root {
        // The tree's root, holding the result for `root`.
        return self::send(comm, &acc, root, REDUCE_TAG);
    }
    match recv {
        Some(out) if out.len() == acc.len() => {
            out.copy_from_slice(&acc);
            Ok(())
        }
        _ => Err(Error::InvalidArgument(
            "reduce: the root's receive buffer does not fit the send buffer".into(),
        )),
    }
}

/// Reduces every member's `buf` with `op`; every member gets the result in `buf` (recursive
/// doubling; with p not a power of two, the first 2(p - 2^k) ranks pair up first).
pub fn allreduce(
    comm: &Communicator,
    buf: &mut [u8],
    elem: ElementType,
    op: ReduceOp,
) -> Result<()> {
    allreduce_by(
        comm,
        buf,
        &|acc, inc| reduce_local(op, elem, acc, inc),
        Order::Any,
    )
}

/// [`allreduce`] with any combination of the bytes (see [`reduce_by`]).
pub fn allreduce_by(
    comm: &Communicator,
    buf: &mut [u8],
    combine: &Combine<'_>,
    order: Order,
) -> Result<()> {
    let (rank, size) = (comm.rank(), comm.size());
    // Each partial result covers a range of ranks; in rank order, one from lower ranks goes first.
    let merge = |buf: &mut [u8], incoming: &mut [u8], from_lower: bool| -> Result<()> {
        if order == Order::Ranks && from_lower {
            combine(incoming, buf)?;
            buf.copy_from_slice(incoming);
            Ok(())
        } else {
            combine(buf, incoming)
        }
    };
    let mut pof2 = 1;
    while pof2 * 2 <= size {
        pof2 *= 2;
    }
    let rem = size - pof2;
    let mut incoming = vec![0u8; buf.len()];
    let newrank = if rank < 2 * rem {
        if rank % 2 == 0 {
            send(comm, buf, rank + 1, ALLREDUCE_TAG)?;
            None
        } else {
            recv_into(comm, &mut incoming, rank - 1, ALLREDUCE_TAG)?;
            merge(buf, &mut incoming, true)?;
            Some(rank / 2)
        }
    } else {
        Some(rank - rem)
    };
    if let Some(newrank) = newrank {
        let mut mask = 1;
        while mask < pof2 {
            let peer = newrank ^ mask;
            let peer = if peer < rem { peer * 2 + 1 } else { peer + rem };
            exchange(comm, buf, peer, &mut incoming, peer, ALLREDUCE_TAG)?;
            merge(buf, &mut incoming, peer < rank)?;
            mask <<= 1;
        }
    }
    if rank < 2 * rem {
        if rank % 2 == 1 {
            send(comm, buf, rank - 1, ALLREDUCE_TAG)?;
        } else {
            recv_into(comm, buf, rank + 1, ALLREDUCE_TAG)?;
        }
    }
    Ok(())
}

/// Prefix reductions in rank order (recursive doubling, ⌈log2 p⌉ rounds): `buf` holds this
/// member's operand on entry; on return, with `Scan::Inclusive` the reduction of members
/// 0..=rank, with `Scan::Exclusive` that of members 0..rank (member 0's `buf` is then left as
/// it was, as MPI_Exscan leaves it undefined). Any op, commutative or not.
pub fn scan_by(
    comm: &Communicator,
    buf: &mut [u8],
    combine: &Combine<'_>,
    scan: Scan,
) -> Result<()> {
    let (rank, size) = (comm.rank(), comm.size());
    // `partial`: the reduction of the block of members this one has heard from, itself included.
    let mut partial = buf.to_vec();
    let mut incoming = vec![0u8; buf.len()];
    let mut have_lower = false;
    let mut mask = 1;
    while mask < size {
        let peer = rank ^ mask;
        if peer < size {
            exchange(comm, &partial, peer, &mut incoming, peer, SCAN_TAG)?;
            if peer < rank {
                // A block of lower members: it goes first.
                let mut lower = incoming.clone();
                combine(&mut lower, &partial)?;
                partial.copy_from_slice(&lower);
                match (scan, have_lower) {
                    (Scan::Inclusive, _) | (Scan::Exclusive, true) => {
                        let mut lower = incoming.clone();
                        combine(&mut lower, buf)?;
                        buf.copy_from_slice(&lower);
                    }
                    (Scan::Exclusive, false) => buf.copy_from_slice(&incoming),
                }
                have_lower = true;
            } else {
                combine(&mut partial, &incoming)?;
            }
        }
        mask <<= 1;
    }
    Ok(())
}

/// Which prefix [`scan_by`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// Members 0..=rank (MPI_Scan).
    Inclusive,
    /// Members 0..rank (MPI_Exscan).
    Exclusive,
}

/// Gathers every member's `mine` (any length, may differ) at `root` (binomial tree): the root
/// gets them indexed by rank, the others `None`.
pub fn gather(comm: &Communicator, mine: &[u8], root: i32) -> Result<Option<Vec<Vec<u8>>>> {
    check_root(comm, root)?;
    let (rank, size) = (comm.rank(), comm.size());
    let vr = (rank - root).rem_euclid(size);
    let mut gathered = encode_record(rank, mine);
    let mut mask = 1;
    while mask < size {
        if vr & mask != 0 {
            let parent = absolute(comm, vr - mask, root);
            send(comm, &gathered, parent, GATHERV_TAG)?;
            return Ok(None);
        }
        if vr + mask < size {
            gathered.extend(recv_vec(
                comm,
                absolute(comm, vr + mask, root),
                GATHERV_TAG,
            )?);
        }
        mask <<= 1;
    }
    decode_records(&gathered, size as usize).map(Some)
}

/// Scatters `pieces` (one per rank, any lengths; only read at `root`) from `root` (binomial
/// tree); every member gets its own piece.
pub fn scatter(comm: &Communicator, pieces: Option<&[&[u8]]>, root: i32) -> Result<Vec<u8>> {
    check_root(comm, root)?;
    let (rank, size) = (comm.rank(), comm.size());
    let vr = (rank - root).rem_euclid(size);
    let received;
    let (table, span): (Vec<&[u8]>, i32) = if rank == root {
        let pieces = pieces.filter(|p| p.len() == size as usize).ok_or_else(|| {
            Error::InvalidArgument(format!("scatter needs {size} pieces at the root"))
        })?;
        let mut span = 1;
        while span < size {
            span <<= 1;
        }
        (pieces.to_vec(), span)
    } else {
        let low = vr & -vr;
        received = decode_records(
            &recv_vec(comm, absolute(comm, vr - low, root), SCATTERV_TAG)?,
            size as usize,
        )?;
        (received.iter().map(|v| &v[..]).collect(), low)
    };
    let mut mask = span >> 1;
    let mut outgoing = Vec::new();
    while mask > 0 {
        if vr + mask < size {
            let mut out = Vec::new();
            for r in vr + mask..(vr + 2 * mask).min(size) {
                let abs = absolute(comm, r, root);
                out.extend(encode_record(abs, table[abs as usize]));
            }
            outgoing.push((absolute(comm, vr + mask, root), out));
        }
        mask >>= 1;
    }
    scope(|s| {
        let mut sends = Vec::new();
        for (child, out) in &outgoing {
            sends.push(isend(s, comm, out, *child, SCATTERV_TAG)?);
        }
        wait_all(&mut sends)
    })?;
    Ok(table[rank as usize].to_vec())
}

/// Every member's `mine` (any length), indexed by rank, on every member.
pub fn allgather(comm: &Communicator, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
    allgather_bytes(comm, mine)
}

/// All-to-all: `send[r]` goes to rank r, `recv[r]` receives exactly its length from rank r
/// (pairwise exchange, p - 1 rounds).
pub fn alltoall(comm: &Communicator, send: &[&[u8]], recv: &mut [&mut [u8]]) -> Result<()> {
    let (rank, size) = (comm.rank(), comm.size());
    if send.len() != size as usize || recv.len() != size as usize {
        return Err(Error::InvalidArgument(format!(
            "alltoall needs {size} send and receive pieces"
        )));
    }
    let me = rank as usize;
    if send[me].len() != recv[me].len() {
        return Err(Error::Truncated {
            message_bytes: send[me].len() as u64,
            buffer_bytes: recv[me].len() as u64,
        });
    }
    recv[me].copy_from_slice(send[me]);
    for step in 1..size {
        let dest = (rank + step) % size;
        let source = (rank - step).rem_euclid(size);
        exchange(
            comm,
            send[dest as usize],
            dest,
            recv[source as usize],
            source,
            ALLTOALL_TAG,
        )?;
    }
    Ok(())
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

    #[test]
    fn reductions_combine_elements() {
        let mut a: Vec<u8> = [1i32, -5, 7].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let b: Vec<u8> = [2i32, 3, -9].iter().flat_map(|v| v.to_ne_bytes()).collect();
        reduce_local(ReduceOp::Max, ElementType::I32, &mut a, &b).unwrap();
        let got: Vec<i32> = a
            .chunks(4)
            .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, vec![2, 3, 7]);
        let mut x = 1.5f64.to_ne_bytes().to_vec();
        reduce_local(
            ReduceOp::Prod,
            ElementType::F64,
            &mut x,
            &4.0f64.to_ne_bytes(),
        )
        .unwrap();
        assert_eq!(f64::from_ne_bytes(x[..].try_into().unwrap()), 6.0);
        assert!(reduce_local(ReduceOp::Band, ElementType::F32, &mut [0; 4], &[0; 4]).is_err());
        assert!(reduce_local(ReduceOp::Sum, ElementType::I16, &mut [0; 3], &[0; 3]).is_err());
        let mut l = vec![0u8, 2, 0];
        reduce_local(ReduceOp::Lor, ElementType::U8, &mut l, &[0, 0, 9]).unwrap();
        assert_eq!(l, vec![0, 1, 1]);
    }
}
