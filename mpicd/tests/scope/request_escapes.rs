// A scoped request cannot be returned from its scope.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let buf = vec![1u8; 4];
    let request = mpicd::scope(|s| world.isend(s, &buf, 0, 0).unwrap());
    request.wait().unwrap();
}
