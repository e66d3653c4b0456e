//! ULFM's revocation from Rust: rank 0 revokes a communicator while the others wait in it (a
//! plain receive, a custom-typed receive); both waits end with `Error::Revoked`, every later
//! operation on it fails the same way, and agreement (blocking and not) and shrink still run
//! on it.
// mpi-test: ranks=3 modes=shm,tcp pass=REVOKE-OK

use mpicd::collective::{allreduce, ReduceOp};
use mpicd::{ElementType, Error};
use std::time::Duration;

fn main() {
    let mpi = mpicd::init().expect("init");
    let world = mpi.world();
    let comm = world.dup().expect("dup");
    let rank = comm.rank();
    let mut ok = !comm.is_revoked().expect("is_revoked");
    if rank == 0 {
        std::thread::sleep(Duration::from_millis(200));
        comm.revoke().expect("revoke");
    } else if rank == 1 {
        let mut b = [0u8; 8];
        let waited = comm.recv(&mut b, mpicd::ANY_SOURCE, 1);
        println!("rank 1: receive waiting when revoked: {waited:?}");
        ok &= matches!(waited, Err(Error::Revoked));
    } else {
        let mut rows: Vec<Vec<i32>> = vec![vec![0; 16]; 4];
        let waited = comm.recv_custom(&mut rows, 0, 2);
        println!("rank {rank}: custom receive waiting when revoked: {waited:?}");
        ok &= matches!(waited, Err(Error::Revoked));
    }
    ok &= comm.is_revoked().expect("is_revoked");
    ok &= matches!(comm.barrier(), Err(Error::Revoked));
    ok &= matches!(comm.send(&[1u8], 0, 3), Err(Error::Revoked));
    let (flag, agreed) = comm.agree(if rank == 0 { 3 } else { 1 });
    ok &= agreed.is_ok() && flag == 1;
    let pending = comm.iagree(if rank == 1 { 4 } else { 6 }).expect("iagree");
    while !pending.is_done() {
        std::thread::yield_now();
    }
    let (flag, agreed) = pending.wait().expect("iagree's thread");
    ok &= agreed.is_ok() && flag == if world.size() > 1 { 4 } else { 6 };
    let shrunk = comm.ishrink().expect("ishrink").wait().expect("shrink");
    ok &= shrunk.size() == world.size() && !shrunk.is_revoked().expect("is_revoked");
    shrunk
        .barrier()
        .expect("barrier on the shrunk communicator");
    let mut all = u32::from(ok).to_ne_bytes();
    let reduced = allreduce(&world, &mut all, ElementType::U32, ReduceOp::Min);
    if rank == 0 {
        match (reduced, u32::from_ne_bytes(all)) {
            (Ok(()), 1) => println!("REVOKE-OK"),
            other => println!("REVOKE-FAILED: {other:?}"),
        }
    }
}
