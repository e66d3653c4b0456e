// A buffer being received into cannot be moved away while the scope lives.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let mut buf = vec![0u8; 4];
    mpicd::scope(|s| {
        let request = world.irecv(s, &mut buf, 0, 0).unwrap();
        let moved = buf;
        request.wait().unwrap();
        moved
    });
}
