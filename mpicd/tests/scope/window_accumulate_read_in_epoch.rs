// The result of a get-accumulate cannot be read before the epoch ends: it is promised only
// then (a fetch_and_op returns its value instead).
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let win = mpicd::Window::allocate(&world, 8, 8).unwrap();
    let mut result = [0u64; 1];
    win.fence_epoch(|e| {
        e.get_accumulate(&[], &mut result, 0, 0, mpicd::Op::NoOp)?;
        println!("{}", result[0]);
        Ok(())
    })
    .unwrap();
}
