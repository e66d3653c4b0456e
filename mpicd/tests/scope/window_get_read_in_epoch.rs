// The buffer of a get cannot be read before the epoch ends: the data is there only then.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let win = mpicd::Window::allocate(&world, 8, 8).unwrap();
    let mut into = [0u64; 1];
    win.fence_epoch(|e| {
        e.get(&mut into, 0, 0)?;
        println!("{}", into[0]);
        Ok(())
    })
    .unwrap();
}
