//! Collectives over custom-typed values through the Rust API (`mpicd::collective_custom`):
//! vectors of a different length on every rank (some long enough to travel as zero-copy
//! regions), gathered, scattered, broadcast, allgathered and exchanged all-to-all into empty
//! vectors that resize from the messages; and the argument errors.
// mpi-test: ranks=1,2,3,4

#[path = "common/mod.rs"]
mod common;

use common::CaseResult;
use mpicd::{Communicator, Error};

/// Rank `r`'s vector: its length differs per rank; odd ranks' are long.
fn vector_of(r: i32, salt: f64) -> Vec<f64> {
    let n = if r % 2 == 1 {
        50_000 + r as usize
    } else {
        3 * r as usize + 1
    };
    (0..n).map(|i| salt + r as f64 * 1e6 + i as f64).collect()
}

fn gather_scatter(world: &Communicator) -> CaseResult {
    let (rank, size) = (world.rank(), world.size());
    let mine = vector_of(rank, 0.5);
    for root in 0..size {
        let mut all: Vec<Vec<f64>> = vec![Vec::new(); size as usize];
        let at_root = (rank == root).then_some(&mut all[..]);
        world.gather_custom(&mine, at_root, root)?;
        if rank == root {
            for (r, v) in all.iter().enumerate() {
                check!(*v == vector_of(r as i32, 0.5));
            }
        }
        let mut back: Vec<f64> = Vec::new();
        let from = (rank == root).then_some(&all[..]);
        world.scatter_custom(from, &mut back, root)?;
        check!(back == mine);
    }
    Ok(())
}

fn bcast_allgather_alltoall(world: &Communicator) -> CaseResult {
    let (rank, size) = (world.rank(), world.size());
    for root in 0..size {
        let mut v = if rank == root {
            vector_of(root, 2.0)
        } else {
            Vec::new()
        };
        world.bcast_custom(&mut v, root)?;
        check!(v == vector_of(root, 2.0));
    }
    let mut all: Vec<Vec<f64>> = vec![Vec::new(); size as usize];
    world.allgather_custom(&vector_of(rank, 3.0), &mut all)?;
    for (r, v) in all.iter().enumerate() {
        check!(*v == vector_of(r as i32, 3.0));
    }
    let out: Vec<Vec<u32>> = (0..size)
        .map(|d| vec![(rank * 100 + d) as u32; (d + rank) as usize])
        .collect();
    let mut inc: Vec<Vec<u32>> = vec![Vec::new(); size as usize];
    world.alltoall_custom(&out, &mut inc)?;
    for (s, v) in inc.iter().enumerate() {
        check!(*v == vec![(s as i32 * 100 + rank) as u32; (rank + s as i32) as usize]);
    }
    Ok(())
}

fn errors(world: &Communicator) -> CaseResult {
    let size = world.size();
    let mine = vec![1.0f64];
    let r = world.gather_custom(&mine, None::<&mut [Vec<f64>]>, size);
    check!(matches!(r, Err(Error::InvalidRank { .. })));
    let mut short: Vec<Vec<f64>> = vec![Vec::new(); size as usize + 1];
    check!(matches!(
        world.allgather_custom(&mine, &mut short),
        Err(Error::InvalidArgument(_))
    ));
    Ok(())
}

fn main() {
    common::main(&[
        ("gather and scatter", &gather_scatter),
        ("bcast, allgather, alltoall", &bcast_allgather_alltoall),
        ("errors", &errors),
    ])
}
