// A matched message's receive borrows its buffer for the scope too.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let mut buf = vec![0u8; 4];
    mpicd::scope(|s| {
        let (message, _) = world.mprobe(0, 0).unwrap();
        let request = message.irecv(s, &mut buf).unwrap();
        buf.clear();
        request.wait().unwrap();
    });
}
