// A result buffer that lives inside the epoch's closure cannot be lent to a get-accumulate:
// its result is promised only at the closing synchronization, after the buffer would be gone.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let win = mpicd::Window::allocate(&world, 8, 8).unwrap();
    win.fence_epoch(|e| {
        let mut result = vec![0u64];
        e.get_accumulate(&[1u64], &mut result, 0, 0, mpicd::ReduceOp::Sum)
    })
    .unwrap();
}
