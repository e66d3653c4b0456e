// A buffer being sent cannot be changed.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let mut buf = vec![1u8; 4];
    mpicd::scope(|s| {
        let request = world.isend(s, &buf, 0, 0).unwrap();
        buf.push(2);
        request.wait().unwrap();
    });
}
