// A buffer being received into cannot be written by the program.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let mut buf = [0u8; 4];
    mpicd::scope(|s| {
        let request = world.irecv(s, &mut buf, 0, 0).unwrap();
        buf[0] = 1;
        request.wait().unwrap();
    });
}
