//! Communicators from groups through the Rust API: `create` (one group, a subgroup, disjoint
//! groups), `create_group` by the group's members alone (evens and odds at once, many times,
//! and while a user receive with the same tag waits on the parent), `split_type` by node, and
//! their argument errors. Each new communicator is checked by traffic on it.
// mpi-test: ranks=1,2,3,4

#[path = "common/mod.rs"]
mod common;

use common::CaseResult;
use mpicd::{Communicator, Error, Group, SplitType, ANY_SOURCE};

/// Checks that `c` holds the world ranks `members`, in order, by a ring and an allgather.
fn check_members(world: &Communicator, c: &Communicator, members: &[u32]) -> CaseResult {
    let me = world.rank() as u32;
    check!(c.size() as usize == members.len() && members[c.rank() as usize] == me);
    check!(c.group().members() == members);
    let (rank, size) = (c.rank(), c.size());
    let mut got = [u32::MAX];
    c.sendrecv(
        &[me],
        (rank + 1) % size,
        8,
        &mut got,
        (rank + size - 1) % size,
        8,
    )?;
    check!(got[0] == members[((rank + size - 1) % size) as usize]);
    let all = mpicd::collective::allgather(c, &me.to_le_bytes())?;
    let all: Vec<u32> = all
        .iter()
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    check!(all == members, "allgather {all:?}");
    Ok(())
}

fn parity(w: &Communicator, p: u32) -> Vec<u32> {
    (0..w.size() as u32).filter(|r| r % 2 == p).collect()
}

fn create(w: &Communicator) -> CaseResult {
    let world = w.group();
    let reversed: Vec<i32> = (0..w.size()).rev().collect();
    let g = world.incl(&reversed)?;
    let c = w.create(&g)?.ok_or("not in the reversed world")?;
    check_members(w, &c, &g.members())?;
    let mine = parity(w, w.rank() as u32 % 2);
    let evens = Group::new(parity(w, 0))?;
    match w.create(&evens)? {
        Some(c) => check_members(w, &c, &evens.members())?,
        None => check!(w.rank() % 2 == 1),
    }
    let c = w.create(&Group::new(mine.clone())?)?.ok_or("disjoint")?;
    check_members(w, &c, &mine)?;
    check!(w.create(&Group::empty())?.is_none());
    Ok(())
}

fn create_group(w: &Communicator) -> CaseResult {
    let mine = Group::new(parity(w, w.rank() as u32 % 2))?;
    for _ in 0..10 {
        let c = w.create_group(&mine, 3)?.ok_or("member")?;
        check_members(w, &c, &mine.members())?;
    }
    // A receive on the parent with the same tag is not matched by the agreement.
    let dup = w.dup()?;
    let mut inc = [0u32];
    mpicd::scope(|s| -> CaseResult {
        let mut r = dup.irecv(s, &mut inc, ANY_SOURCE, 3)?;
        let c = dup.create_group(&dup.group(), 3)?.ok_or("member")?;
        check_members(w, &c, &w.group().members())?;
        check!(r.test()?.is_none());
        dup.barrier()?;
        let next = (dup.rank() + 1) % dup.size();
        dup.send(&[dup.rank() as u32], next, 3)?;
        r.wait()?;
        Ok(())
    })?;
    check!(inc[0] == ((dup.rank() + dup.size() - 1) % dup.size()) as u32);
    let others = w.group().difference(&Group::new(vec![w.rank() as u32])?);
    check!(w.create_group(&others, 0)?.is_none());
    check!(matches!(
        w.create_group(&mine, -1),
        Err(Error::InvalidTag(-1))
    ));
    Ok(())
}

fn split_type(w: &Communicator) -> CaseResult {
    let all: Vec<u32> = (0..w.size() as u32).collect();
    let c = w.split_type(SplitType::Shared, 0)?.ok_or("shared")?;
    check_members(w, &c, &all)?; // one node
    check!(w.split_type(SplitType::SharedStrict, 0)?.is_none());
    let kind = if w.rank() % 2 == 0 {
        SplitType::Shared
    } else {
        SplitType::Undefined
    };
    match w.split_type(kind, -w.rank())? {
        Some(c) => {
            let mut evens = parity(w, 0);
            evens.reverse();
            check_members(w, &c, &evens)?;
        }
        None => check!(w.rank() % 2 == 1),
    }
    Ok(())
}

fn errors(w: &Communicator) -> CaseResult {
    if w.size() > 1 {
        let half = w.split(w.rank() % 2, 0)?.ok_or("half")?;
        check!(matches!(
            half.create(&w.group()),
            Err(Error::InvalidGroup(_))
        ));
        check!(matches!(
            half.create_group(&w.group(), 0),
            Err(Error::InvalidGroup(_))
        ));
    }
    check!(matches!(
        w.group().incl(&[0, 0]),
        Err(Error::DuplicateRank(0) | Error::InvalidRank { .. })
    ));
    Ok(())
}

fn main() {
    common::main(&[
        ("create", &create),
        ("create_group", &create_group),
        ("split_type", &split_type),
        ("errors", &errors),
    ])
}
