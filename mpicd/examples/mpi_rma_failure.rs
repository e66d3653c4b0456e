//! A window target that dies does not leave its origin hanging: rank 1 exits abruptly, and
//! rank 0's passive-target epoch on it fails with `ProcFailed` within seconds, at the latest
//! at the synchronization call (unlock), and so does a later lock.
// mpi-test: ranks=2 modes=shm,tcp,remote pass=RMA-FAILURE-OK

use mpicd::{Datatype, ElementType, Error, LockKind, TypedBuf, Window};
use std::time::{Duration, Instant};

fn main() {
    let mpi = mpicd::init().expect("init");
    let world = mpi.world();
    let win = Window::allocate(&world, 64, 1).expect("window");
    let bytes = Datatype::of(ElementType::U8);
    let data = [7u8; 8];
    let origin = TypedBuf::new(data.as_ptr(), 8, &bytes);
    let target = TypedBuf::new(std::ptr::null(), 8, &bytes);
    // One epoch while both live, so the connection and the keys exist.
    win.lock(LockKind::Exclusive, 1 - world.rank(), false)
        .expect("lock");
    // SAFETY: `data` outlives the epoch.
    unsafe { win.put(&origin, 1 - world.rank(), 0, &target) }.expect("put");
    win.unlock(1 - world.rank()).expect("unlock");
    world.barrier().expect("barrier");
    if world.rank() == 1 {
        // Die without finalizing, like a crash.
        std::process::exit(0);
    }
    std::thread::sleep(Duration::from_millis(200));
    let start = Instant::now();
    let mut outcome = Ok(());
    // Epochs on the dead target until one fails (the first may still succeed: the target's
    // memory can outlive it in this process's mapping until the death is noticed).
    while outcome.is_ok() && start.elapsed() < Duration::from_secs(20) {
        outcome = win
            .lock(LockKind::Exclusive, 1, false)
            // SAFETY: as above.
            .and_then(|()| unsafe { win.put(&origin, 1, 0, &target) })
            .and_then(|()| win.unlock(1));
    }
    let took = start.elapsed();
    println!("epoch on the dead target: {outcome:?} after {took:?}");
    let ok =
        matches!(outcome, Err(Error::ProcFailed { rank: 1 })) && took < Duration::from_secs(10);
    // Close the epoch if the failure came before the unlock (the unlock reports it again).
    let _ = win.unlock(1);
    let again = win.lock(LockKind::Shared, 1, false);
    println!("lock after the failure: {again:?}");
    let ok = ok && matches!(again, Err(Error::ProcFailed { rank: 1 }));
    // mpirun ends the job because rank 1 exited without finalizing: report before that.
    println!(
        "{}",
        if ok {
            "RMA-FAILURE-OK"
        } else {
            "RMA-FAILURE-WRONG"
        }
    );
    drop(win); // releases its registrations (no collective: the peer is gone)
    let fin = mpi.finalize();
    println!("finalize: {fin:?}");
    std::process::exit(if ok { 0 } else { 1 });
}
