// A scoped request cannot be kept in a variable that outlives its scope.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let buf = vec![1u8; 4];
    let mut kept = Vec::new();
    mpicd::scope(|s| kept.push(world.isend(s, &buf, 0, 0).unwrap()));
    mpicd::wait_all(&mut kept).unwrap();
}
