//! Started without a launcher, a program is a job of one process: it can message itself,
//! finalize reports what was left pending, and every call after finalize fails cleanly.
// mpi-test: ranks=1

#[path = "common/mod.rs"]
mod common;

use common::{pattern, CaseResult};
use mpicd::{Communicator, Error};

fn self_messages(w: &Communicator) -> CaseResult {
    check!(w.size() == 1 && w.rank() == 0);
    for len in [0usize, 10, 1 << 20] {
        let out = pattern(len as u64, len);
        let mut inc = vec![0u8; len];
        let st = mpicd::scope(|s| {
            let r = w.irecv(s, &mut inc, 0, 1)?;
            w.send(&out, 0, 1)?;
            r.wait()
        })?;
        check!(st.bytes == Some(len as u64) && inc == out);
    }
    Ok(())
}

fn main() {
    let mpi = mpicd::init().expect("init");
    let world = mpi.world();
    let me = mpi.self_comm();
    let mut ok = mpi.is_singleton() == Ok(true);
    if !ok {
        eprintln!("not detected as a singleton");
    }
    ok &= common::run(&world, &[("self messages", &self_messages)]);

    // A message on COMM_SELF is not visible on COMM_WORLD.
    me.send(&[5u8], 0, 3).expect("send on self");
    ok &= world.iprobe(0, 3).expect("iprobe").is_none();
    let mut b = [0u8];
    ok &= me.recv(&mut b, 0, 3).is_ok() && b == [5];

    // A receive still pending at finalize is reported, and finalize completes. The request
    // lives on past finalize, which ends the operation; dropping it then has nothing to wait for.
    let mut never = [0u8; 4];
    let fin = mpicd::scope(|s| {
        let pending = world.irecv(s, &mut never, 0, 77).expect("irecv");
        let fin = mpi.finalize();
        drop(pending);
        fin
    });
    println!("finalize with a pending receive: {fin:?}");
    ok &= matches!(fin, Err(Error::PendingOperations(1)));
    ok &= matches!(world.send(&[1u8], 0, 0), Err(Error::Finalized));
    ok &= matches!(mpicd::init(), Err(Error::Finalized));
    ok &= mpicd::is_finalized();
    println!(
        "{}",
        if ok {
            "singleton: all checks passed"
        } else {
            "singleton: FAILED"
        }
    );
    std::process::exit(if ok { 0 } else { 1 });
}
