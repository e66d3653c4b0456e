//! A window forgotten with `mem::forget` (its destructor never runs) does not break the
//! runtime: a put through a fence epoch works, the window is forgotten with the data still
//! registered with UCX, and finalize then releases the registration before the UCX context
//! goes (UCX would otherwise stop the process at exit).
// mpi-test: ranks=2 modes=shm,tcp

use mpicd::{Datatype, ElementType, TypedBuf, Window};

fn main() {
    let mpi = mpicd::init().expect("init");
    let world = mpi.world();
    let peer = 1 - world.rank().min(1);
    let win = Window::allocate(&world, 64, 1).expect("window");
    let bytes = Datatype::of(ElementType::U8);
    let data = [world.rank() as u8 + 1; 8];
    let origin = TypedBuf::new(data.as_ptr(), 8, &bytes);
    let target = TypedBuf::new(std::ptr::null(), 8, &bytes);
    win.fence(false, false).expect("fence");
    if world.rank() < 2 {
        // SAFETY: `data` outlives the epoch, which the next fence closes.
        unsafe { win.put(&origin, peer, 0, &target) }.expect("put");
    }
    win.fence(false, false).expect("fence");
    // SAFETY: base() is the window's own memory of 64 bytes, alive until the window goes.
    let got = unsafe { std::slice::from_raw_parts(win.base(), 8) }.to_vec();
    let ok = world.rank() >= 2 || got == [peer as u8 + 1; 8];
    world.barrier().expect("barrier");
    std::mem::forget(win);
    let fin = mpi.finalize();
    println!(
        "window forgotten, finalize: {fin:?}, data {}",
        if ok { "ok" } else { "WRONG" }
    );
    std::process::exit(if ok && fin.is_ok() { 0 } else { 1 });
}
