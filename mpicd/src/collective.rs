//! Collective operations on a communicator's collective context, so they never match
//! point-to-point traffic. Most run as plans ([`crate::schedule`]): the algorithms are written
//! once as plans, which the engine advances during progress; a blocking collective starts its
//! plan and waits, a non-blocking one returns the request ([`Communicator::start_plan`]), a
//! persistent one starts the same plan again. The collectives on bytes here are the blocking
//! ones Rust callers use: barrier, broadcast, reduce, allreduce, scans and all-to-all on
//! plans, and gather, scatter and allgather of pieces of any size (lengths the receivers do
//! not know: binomial trees of records, found by probing). Reductions combine with a
//! [`Reduction`] (the predefined ops on [`ElementType`]s: [`Reduction::predefined`]).
//! On an inter-communicator only the barrier runs here (the C layer runs the others through
//! [`crate::schedule::inter`]); the rest fail with [`Error::CommunicatorKind`].

use crate::comm::Communicator;
use crate::datatype::ElementType;
use crate::engine::{Matched, Posted};
use crate::error::{Error, Result};
pub use crate::reduction::{reduce_local, CombineFn, Order, ReduceOp, Reduction};
use crate::request::{scope, wait_all, wait_posted, Request, Scope};
use crate::schedule::select::Collective;
use crate::schedule::{collectives, Builder, Claim, Plan};
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Communicator {
    /// Blocks until every member has called it (dissemination: ⌈log2 p⌉ rounds).
    pub fn barrier(&self) -> Result<()> {
        barrier(self)
    }

    /// The tag of the next collective on this communicator (every member starts its
    /// collectives in the same order, as MPI requires, so all agree on it).
    pub(crate) fn next_coll_tag(&self) -> i32 {
        crate::engine::tag_of(self.next_coll_seq())
    }

    /// The number of the next collective on this communicator (its tag's low bits: see
    /// [`Communicator::next_coll_tag`]).
    fn next_coll_seq(&self) -> u32 {
        self.coll_seq.fetch_add(1, Ordering::Relaxed)
    }

    /// A new plan for a collective on this communicator. Its messages' tag is taken now:
    /// every member makes its collectives' plans in the same order. On an inter-communicator
    /// the plan names the remote group's members too ([`Builder::remote`]).
    pub fn plan(&self) -> Builder {
        let claim = Claim::take(&self.coll_seq);
        match self.is_inter() {
            true => Builder::inter(self.coll.clone(), self.size(), self.rank, 0),
            false => Builder::new(self.coll.clone(), self.rank, 0),
        }
        .numbered(claim)
    }

    /// A collective on this communicator done as its algorithm writes it (see
    /// [`Builder::complete`]): for a blocking collective, which then needs no plan. Its tag is
    /// taken now, as [`Communicator::plan`] takes it. On an inter-communicator, a plan's
    /// builder ([`Communicator::plan`]).
    pub fn direct(&self) -> Builder {
        if self.is_inter() {
            return self.plan();
        }
        self.watch_members();
        Builder::direct(
            Arc::clone(&self.shared),
            self.coll.clone(),
            Arc::clone(&self.node),
            self.rank,
            Claim::take(&self.coll_seq),
        )
    }

    /// Starts a run of `plan` (made by [`Communicator::plan`] on this communicator); the
    /// request completes when the run has, and never before every message of it has.
    ///
    /// # Safety
    /// The caller's memory the plan names must stay valid (and untouched where the plan
    /// writes) until the request completes, and no other run of the plan may be in flight.
    pub unsafe fn start_plan(&self, plan: &Arc<Plan>) -> Result<Request<'static>> {
        self.watch_members();
        let posted = self.shared.with(|e| e.start_plan(plan))?;
        Ok(Request::posted(&self.shared, posted))
    }

    /// Runs `plan` to completion (a builder that did its steps as they were written,
    /// [`Communicator::direct`], waits for its messages).
    ///
    /// # Safety
    /// As [`Communicator::start_plan`], until this returns.
    pub(crate) unsafe fn run_plan(&self, mut plan: Builder) -> Result<()> {
        if plan.is_direct() {
            return plan.complete();
        }
        // SAFETY: forwarded from the caller; the run completes before this returns (a request
        // dropped unfinished is waited for).
        unsafe { self.start_plan(&plan.finish()) }?.wait().map(drop)
    }
}

/// Sends `bytes` to communicator rank `dest` on the collective context.
pub(crate) fn send(comm: &Communicator, bytes: &[u8], dest: i32, tag: i32) -> Result<()> {
    scope(|s| isend(s, comm, bytes, dest, tag)?.wait().map(drop))
}

/// Receives a message of any size from communicator rank `source` on the collective context.
pub(crate) fn recv_vec(comm: &Communicator, source: i32, tag: i32) -> Result<Vec<u8>> {
    let from = comm.world_rank(source)?;
    let (_, matched) = comm
        .shared
        .progress_until(|e| e.probe(&comm.coll, Some(from), Some(tag), true))?;
    take_vec(comm, matched)
}

/// Receives the message a matched probe on `comm` took, whatever its size.
pub(crate) fn take_vec(comm: &Communicator, matched: Option<Matched>) -> Result<Vec<u8>> {
    let length = match &matched {
        Some(Matched::Contiguous { info, .. }) => info.length,
        _ => {
            return Err(Error::Transport(
                "unexpected message kind in a collective".into(),
            ))
        }
    };
    let Some(matched) = matched else {
        return Ok(Vec::new());
    };
    let mut buf = vec![0u8; length];
    // SAFETY: `buf` outlives the request, which is waited for before returning.
    let id = comm
        .shared
        .with(|e| unsafe { e.post_mrecv(matched, buf.as_mut_ptr(), buf.len(), None) })?;
    wait_posted(&comm.shared, Posted::Pending(id))?;
    Ok(buf)
}

/// Dissemination barrier: in round k, signal rank + 2^k and wait for rank - 2^k (on an
/// inter-communicator, [`crate::schedule::inter::barrier`]).
pub(crate) fn barrier(comm: &Communicator) -> Result<()> {
    let mut b = comm.direct();
    match comm.is_inter() {
        true => crate::schedule::inter::barrier(&mut b),
        false => collectives::barrier(&mut b),
    }
    // SAFETY: the plan names no memory of the caller.
    unsafe { comm.run_plan(b) }
}

/// Every member's `mine`, indexed by rank, on every member.
pub(crate) fn allgather_bytes(comm: &Communicator, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
    comm.require_intra("allgather")?;
    let (rank, size) = (comm.rank(), comm.size());
    let tag = comm.next_coll_tag();
    // Binomial gather to rank 0 of (rank, len, bytes) records.
    let mut gathered = encode_record(rank, mine);
    let mut mask = 1;
    while mask < size {
        if rank & mask != 0 {
            send(comm, &gathered, rank - mask, tag)?;
            break;
        }
        if rank + mask < size {
            gathered.extend(recv_vec(comm, rank + mask, tag)?);
        }
        mask <<= 1;
    }
    // Binomial broadcast of the whole table from rank 0.
    let mut mask = 1;
    while mask < size {
        if rank & mask != 0 {
            gathered = recv_vec(comm, rank - mask, tag)?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rank + mask < size {
            send(comm, &gathered, rank + mask, tag)?;
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
    comm.require_intra("a rooted collective")?;
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
        e.post_coll_send(&comm.coll, dest, tag, bytes.as_ptr(), bytes.len(), false)
    })?;
    Ok(scope.request(&comm.shared, posted))
}

/// Broadcasts `buf` from `root` to every member (binomial tree, or scatter then allgather for
/// long buffers). Every member passes a buffer of the same length.
pub fn bcast(comm: &Communicator, buf: &mut [u8], root: i32) -> Result<()> {
    check_root(comm, root)?;
    let len = buf.len();
    if let Some(op) = comm.node_collective(Some(Collective::Bcast), len, len, Some(root as usize)) {
        return op.bcast(buf, root as usize);
    }
    let mut b = comm.direct();
    // SAFETY: `buf` is borrowed until the run completes.
    let buf = unsafe { b.raw(buf.as_mut_ptr(), buf.len()) };
    collectives::bcast(&mut b, buf, root);
    // SAFETY: as above.
    unsafe { comm.run_plan(b) }
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
    reduce_by(comm, send, recv, root, Reduction::predefined(op, elem))
}

/// [`reduce`] with any [`Reduction`] (the C layer's complex numbers, value-index pairs and
/// user operations; a non-commutative one reduces in rank order).
pub fn reduce_by(
    comm: &Communicator,
    send: &[u8],
    recv: Option<&mut [u8]>,
    root: i32,
    reduction: Reduction,
) -> Result<()> {
    check_root(comm, root)?;
    let recv = recv.filter(|_| comm.rank() == root);
    if comm.rank() == root && recv.as_ref().map(|r| r.len()) != Some(send.len()) {
        return Err(Error::InvalidArgument(
            "reduce: the root's receive buffer does not fit the send buffer".into(),
        ));
    }
    if let Some(op) =
        comm.node_collective(Some(Collective::Reduce), send.len(), 0, Some(root as usize))
    {
        return op.reduce(&reduction, Some(send), recv, root as usize);
    }
    let mut b = comm.direct();
    b.reduce_with(reduction);
    // SAFETY: the buffers are borrowed until the run completes; the plan only reads `send`.
    let send = unsafe { b.raw(send.as_ptr() as *mut u8, send.len()) };
    let recv = recv.map(|r| unsafe { b.raw(r.as_mut_ptr(), r.len()) });
    collectives::reduce(&mut b, send, recv, root);
    // SAFETY: as above.
    unsafe { comm.run_plan(b) }
}

/// Reduces every member's `buf` with `op`; every member gets the result in `buf` (recursive
/// doubling, or a ring for long buffers).
pub fn allreduce(
    comm: &Communicator,
    buf: &mut [u8],
    elem: ElementType,
    op: ReduceOp,
) -> Result<()> {
    allreduce_in(comm, buf, Reduction::predefined(op, elem), elem.size())
}

/// [`allreduce`] with any [`Reduction`] (see [`reduce_by`]).
pub fn allreduce_by(comm: &Communicator, buf: &mut [u8], reduction: Reduction) -> Result<()> {
    allreduce_in(comm, buf, reduction, 0)
}

/// [`allreduce_by`] of elements of `unit` bytes (0: not known, so the node's memory takes
/// only an operand that fits its share: see [`Communicator::node_allreduce`]).
fn allreduce_in(
    comm: &Communicator,
    buf: &mut [u8],
    reduction: Reduction,
    unit: usize,
) -> Result<()> {
    comm.require_intra("allreduce")?;
    if let Some(done) = comm.node_allreduce(&reduction, None, buf, unit) {
        return done;
    }
    let mut b = comm.direct();
    b.reduce_with(reduction);
    // SAFETY: `buf` is borrowed until the run completes.
    let buf = unsafe { b.raw(buf.as_mut_ptr(), buf.len()) };
    collectives::allreduce(&mut b, None, buf);
    // SAFETY: as above.
    unsafe { comm.run_plan(b) }
}

/// Prefix reductions in rank order (recursive doubling, ⌈log2 p⌉ rounds): `buf` holds this
/// member's operand on entry; on return, with `Scan::Inclusive` the reduction of members
/// 0..=rank, with `Scan::Exclusive` that of members 0..rank (member 0's `buf` is then left as
/// it was, as MPI_Exscan leaves it undefined). Any op, commutative or not.
pub fn scan_by(
    comm: &Communicator,
    buf: &mut [u8],
    reduction: Reduction,
    scan: Scan,
) -> Result<()> {
    comm.require_intra("scan")?;
    if let Some(op) = comm.node_collective(None, buf.len(), 0, None) {
        return op.scan(&reduction, None, buf, scan == Scan::Exclusive);
    }
    let mut b = comm.direct();
    b.reduce_with(reduction);
    // SAFETY: `buf` is borrowed until the run completes.
    let buf = unsafe { b.raw(buf.as_mut_ptr(), buf.len()) };
    collectives::scan(&mut b, None, buf, scan == Scan::Exclusive);
    // SAFETY: as above.
    unsafe { comm.run_plan(b) }
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
    let tag = comm.next_coll_tag();
    let (rank, size) = (comm.rank(), comm.size());
    let vr = (rank - root).rem_euclid(size);
    let mut gathered = encode_record(rank, mine);
    let mut mask = 1;
    while mask < size {
        if vr & mask != 0 {
            let parent = absolute(comm, vr - mask, root);
            send(comm, &gathered, parent, tag)?;
            return Ok(None);
        }
        if vr + mask < size {
            gathered.extend(recv_vec(comm, absolute(comm, vr + mask, root), tag)?);
        }
        mask <<= 1;
    }
    decode_records(&gathered, size as usize).map(Some)
}

/// Scatters `pieces` (one per rank, any lengths; only read at `root`) from `root` (binomial
/// tree); every member gets its own piece.
pub fn scatter(comm: &Communicator, pieces: Option<&[&[u8]]>, root: i32) -> Result<Vec<u8>> {
    check_root(comm, root)?;
    let tag = comm.next_coll_tag();
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
            &recv_vec(comm, absolute(comm, vr - low, root), tag)?,
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
            sends.push(isend(s, comm, out, *child, tag)?);
        }
        wait_all(&mut sends)
    })?;
    Ok(table[rank as usize].to_vec())
}

/// Every member's `mine` (any length), indexed by rank, on every member.
pub fn allgather(comm: &Communicator, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
    allgather_bytes(comm, mine)
}

/// All-to-all: `send[r]` goes to rank r, `recv[r]` receives exactly its length from rank r.
pub fn alltoall(comm: &Communicator, send: &[&[u8]], recv: &mut [&mut [u8]]) -> Result<()> {
    comm.require_intra("alltoall")?;
    let size = comm.size();
    if send.len() != size as usize || recv.len() != size as usize {
        return Err(Error::InvalidArgument(format!(
            "alltoall needs {size} send and receive pieces"
        )));
    }
    let me = comm.rank() as usize;
    if send[me].len() != recv[me].len() {
        return Err(Error::truncated(
            send[me].len() as u64,
            recv[me].len() as u64,
        ));
    }
    let mut b = comm.direct();
    // SAFETY: the pieces are borrowed until the run completes; the plan only reads `send`.
    let out: Vec<_> = send
        .iter()
        .map(|s| unsafe { b.raw(s.as_ptr() as *mut u8, s.len()) })
        .collect();
    let inc: Vec<_> = recv
        .iter_mut()
        .map(|r| unsafe { b.raw(r.as_mut_ptr(), r.len()) })
        .collect();
    collectives::alltoall(&mut b, &out, &inc, false);
    // SAFETY: as above.
    unsafe { comm.run_plan(b) }
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
