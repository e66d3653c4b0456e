// A buffer that lives inside the epoch's closure cannot be lent to a put: the put is complete
// only at the closing synchronization, after the buffer would be gone.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let win = mpicd::Window::allocate(&world, 8, 8).unwrap();
    win.fence_epoch(|e| {
        let local = vec![1u64];
        e.put(&local, 0, 0)
    })
    .unwrap();
}
