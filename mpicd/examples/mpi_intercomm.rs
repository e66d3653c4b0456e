//! Inter-communicators through the Rust API: `intercomm_create` between the lower and the upper
//! half of the world (leaders meeting on the world), point-to-point to remote ranks (sources
//! are remote ranks), `dup`, `split`, `create`, `merge` with both orders, the barrier, and the
//! errors of calls that need the other kind of communicator. Alone, only the errors.
// mpi-test: ranks=1,2,3,4

#[path = "common/mod.rs"]
mod common;

use common::CaseResult;
use mpicd::{Communicator, Error, Group, ANY_SOURCE};

/// The lower half's members and the upper half's.
fn halves(w: &Communicator) -> (Vec<u32>, Vec<u32>) {
    let half = w.size() as u32 / 2;
    ((0..half).collect(), (half..w.size() as u32).collect())
}

/// An inter-communicator between the halves (leaders: rank 0 of each).
fn make(w: &Communicator) -> Result<(Communicator, bool), Error> {
    let half = w.size() / 2;
    let lower = w.rank() < half;
    let local = w.split(lower as i32, 0)?.expect("a color");
    let leader = if lower { half } else { 0 };
    let peer = (local.rank() == 0).then_some(w);
    Ok((local.intercomm_create(0, peer, leader, 9)?, lower))
}

/// Checks that `ic` joins `local` (with this process) to `remote`, by messages both ways.
fn check_inter(w: &Communicator, ic: &Communicator, local: &[u32], remote: &[u32]) -> CaseResult {
    check!(ic.is_inter() && ic.group().members() == local);
    check!(ic.remote_group().map(|g| g.members()) == Some(remote.to_vec()));
    check!(local[ic.rank() as usize] == w.rank() as u32);
    let out = [w.rank() as u32];
    mpicd::scope(|s| -> CaseResult {
        let mut sends = Vec::new();
        for r in 0..remote.len() as i32 {
            sends.push(ic.isend(s, &out, r, 4)?);
        }
        for _ in 0..remote.len() {
            let mut got = [0u32];
            let st = ic.recv(&mut got, ANY_SOURCE, 4)?;
            check!(remote[st.source as usize] == got[0], "from {}", st.source);
        }
        mpicd::wait_all(&mut sends)?;
        Ok(())
    })?;
    ic.barrier()?;
    Ok(())
}

fn create_and_talk(w: &Communicator) -> CaseResult {
    if w.size() < 2 {
        return Ok(());
    }
    let (ic, lower) = make(w)?;
    let (a, b) = halves(w);
    let (mine, theirs) = if lower { (&a, &b) } else { (&b, &a) };
    check_inter(w, &ic, mine, theirs)?;
    check_inter(w, &ic.dup()?, mine, theirs)?;
    // Split: the even ranks of each group, in reverse order.
    let color = ic.rank() % 2;
    let pick = |g: &[u32]| -> Vec<u32> {
        let mut v: Vec<u32> = (0..g.len())
            .filter(|i| i % 2 == color as usize)
            .map(|i| g[i])
            .collect();
        v.reverse();
        v
    };
    match ic.split(color, -ic.rank())? {
        Some(sp) => check_inter(w, &sp, &pick(mine), &pick(theirs))?,
        None => check!(pick(theirs).is_empty()),
    }
    // Create: each group without its rank 0.
    let sub = ic.group().excl(&[0])?;
    match ic.create(&sub)? {
        Some(c) => check_inter(w, &c, &mine[1..], &theirs[1..])?,
        None => check!(ic.rank() == 0 || mine.len() == 1 || theirs.len() == 1),
    }
    // Merge: the lower half first, then the upper half first.
    for upper_first in [false, true] {
        let m = ic.merge(lower == upper_first)?;
        let order: Vec<u32> = match upper_first {
            false => a.iter().chain(&b).copied().collect(),
            true => b.iter().chain(&a).copied().collect(),
        };
        check!(!m.is_inter() && m.group().members() == order);
        let sum = mpicd::collective::allgather(&m, &[1])?.len();
        check!(sum == w.size() as usize);
    }
    // Intra-only calls.
    let kind = |r: Result<_, Error>| matches!(r, Err(Error::CommunicatorKind(_)));
    check!(kind(mpicd::collective::allgather(&ic, &[1]).map(drop)));
    check!(kind(mpicd::collective::bcast(&ic, &mut [0u8], 0)));
    check!(kind(ic.create_group(&Group::empty(), 0).map(drop)));
    check!(kind(ic.bcast_custom(&mut vec![0u32; 2], 0)));
    Ok(())
}

fn errors(w: &Communicator) -> CaseResult {
    check!(!w.is_inter() && w.remote_group().is_none());
    check!(matches!(w.merge(false), Err(Error::CommunicatorKind(_))));
    check!(matches!(
        w.intercomm_create(w.size(), Some(w), 0, 0),
        Err(Error::InvalidRank { .. })
    ));
    Ok(())
}

fn main() {
    common::main(&[("create_and_talk", &create_and_talk), ("errors", &errors)])
}
