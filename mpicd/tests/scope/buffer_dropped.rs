// A buffer being sent cannot be dropped inside the scope.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let buf = vec![1u8; 4];
    mpicd::scope(|s| {
        let request = world.isend(s, &buf, 0, 0).unwrap();
        drop(buf);
        request.wait().unwrap();
    });
}
