// A buffer that dies inside the scope cannot be lent to it, even though the request is waited
// for: the scope's lifetime is invariant and outlives its closure.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    mpicd::scope(|s| {
        let mut buf = vec![0u8; 4];
        world.irecv(s, &mut buf, 0, 0).unwrap().wait().unwrap();
    });
}
